"""Story structures read back into traces: every sentence form, errors naming the sentence, round trips."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.beliefs.engine import BeliefTracker
from app.beliefs.replay import replay_steps
from app.beliefs.story import StoryParseError, names_in, parse_story
from tests.conftest import REFERENCE_DATA, ROOT

PEOPLE = ["Anne", "Beth", "Carl", "Dana"]
OBJECTS = ["apple", "ball"]
ROOMS = ["kitchen", "living room"]
CONTAINERS = ["box", "red basket"]


def _actions(text: str) -> list[tuple]:
    return [(s["action"], *s["args"], s["kwargs"]) for s in parse_story(text)]


def test_every_sentence_form_reads_as_its_action():
    story = ("Anne is in the kitchen. apple is in the kitchen. Beth entered the kitchen. "
             "Beth moved the apple to the red basket, which is also located in the kitchen. "
             "While this action was happening, Carl witnessed this action in secret (and only this action); also, "
             "Anne got distracted and did not realize what happened, without anyone noticing the brief lack of "
             "attention, and going back to paying attention immediately after the action was finished. "
             "apple left the red basket. Beth peeled the apple. Anne covered the apple in chocolate. "
             "Anne moved the apple to the box, which is also located in the kitchen. "
             "Anne moved the apple to the living room, leaving the box in its original location. "
             "Beth told privately to Anne about the secret recipe. Beth told out loud that the apple is in the box. "
             "Anne told out loud about the party. Beth told privately to Carl that Anne is in the living room. "
             "Beth left the kitchen. Anne moved the apple to the kitchen.")
    assert _actions(story) == [
        ("location_declaration", "Anne", "kitchen", {}),
        ("location_declaration", "apple", "kitchen", {"is_thinking_entity": False}),
        ("enter_room", "Beth", "kitchen", {}),
        ("move_object_container", "Beth", "apple", "red basket", {"people_peeking": ["Carl"],
                                                                 "people_distracted": ["Anne"]}),
        ("leave_container", "apple", "red basket", {}),
        ("update_object_state", "Beth", "apple", "peeled", "<is_peeled>", "Beth peeled the apple.", True, {}),
        ("update_object_state", "Anne", "apple", "covered in chocolate", "<is_covered_in_chocolate>",
         "Anne covered the apple in chocolate.", True, {}),
        ("move_object_container", "Anne", "apple", "box", {}),
        ("move_object_room", "Anne", "apple", "living room", {}),
        ("private_communication", "Beth", "Anne", "secret recipe", {}),
        ("broadcast_communication", "Beth", ["apple", "container_location", "box", True], {}),
        ("broadcast_communication", "Anne", "party", {}),
        ("private_communication", "Beth", "Carl", ["Anne", "room_location", "living room", True], {}),
        ("leave_room", "Beth", "kitchen", {}),
        ("move_object_room", "Anne", "apple", "kitchen", {}),
    ]


def test_a_told_fact_about_a_room_is_a_room_fact():
    assert _actions("Anne entered the kitchen. Anne told out loud that the ball is in the kitchen.")[1] == (
        "broadcast_communication", "Anne", ["ball", "room_location", "kitchen", True], {})


def test_state_types_named_by_the_questions_are_used():
    steps = parse_story("Beth entered the hall. Beth poisoned the apple.", {"poisoned": "<is_edible>"})
    assert steps[1]["args"][3] == "<is_edible>"


@pytest.mark.parametrize("names,expected", [("Anne", ["Anne"]), ("Anne and Beth", ["Anne", "Beth"]),
                                            ("Anne, Beth, and Carl", ["Anne", "Beth", "Carl"]),
                                            ("Anne, Beth and Carl", ["Anne", "Beth", "Carl"])])
def test_lists_of_names(names, expected):
    assert names_in(names) == expected


@pytest.mark.parametrize("story,position", [
    ("Anne entered the kitchen. The kettle sang loudly.", 2),
    ("Anne entered the kitchen. Anne flew.", 2),
    ("While this action was happening, Beth witnessed this action in secret (and only this action).", 1),
    ("Anne entered the kitchen. While this action was happening, Beth sneezed.", 2),
])
def test_an_unreadable_sentence_is_named_with_its_position(story, position):
    with pytest.raises(StoryParseError) as info:
        parse_story(story)
    assert info.value.position == position
    assert f"sentence {position}" in str(info.value) and info.value.sentence in str(info.value)


# ----- round trip: the engine's own sentences give back its actions --------------------------------------
def _step_strategy():
    person = st.sampled_from(PEOPLE)
    obj = st.sampled_from(OBJECTS)
    room = st.sampled_from(ROOMS)
    container = st.sampled_from(CONTAINERS)
    watchers = st.lists(st.sampled_from(PEOPLE), max_size=2, unique=True)
    topic = st.one_of(st.sampled_from(["plan", "secret recipe"]),
                      st.tuples(obj, st.just("container_location"), container, st.just(True)).map(list),
                      st.tuples(st.just(SPEAKER), st.just("room_location"), room, st.just(True)).map(list))
    state = st.sampled_from(["peeled", "washed"])
    return st.one_of(
        st.tuples(st.just("location_declaration"), st.tuples(person, room), st.just({})),
        st.tuples(st.just("location_declaration"), st.tuples(obj, room), st.just({"is_thinking_entity": False})),
        st.tuples(st.just("enter_room"), st.tuples(person, room), st.just({})),
        st.tuples(st.just("leave_room"), st.tuples(person, room), st.just({})),
        st.tuples(st.just("move_object_container"), st.tuples(person, obj, container), st.just({})),
        st.tuples(st.just("move_object_room"), st.tuples(person, obj, room), st.just({})),
        st.tuples(st.just("leave_container"), st.tuples(obj, container), st.just({})),
        st.tuples(person, obj, state).map(lambda t: ("update_object_state", (
            t[0], t[1], t[2], f"<is_{t[2]}>", f"{t[0]} {t[2]} the {t[1]}.", True), {})),
        st.tuples(st.just("private_communication"), st.tuples(person, person, topic).map(_said_by), st.just({})),
        st.tuples(st.just("broadcast_communication"), st.tuples(person, topic).map(_said_by), st.just({})),
        st.tuples(st.sampled_from(["move_object_container", "enter_room", "broadcast_communication"]),
                  st.tuples(person, obj, container), watchers, watchers).map(_watched),
    ).map(lambda t: {"action": t[0], "args": list(t[1]), "kwargs": t[2]})


SPEAKER = "<speaker>"


def _said_by(args: tuple) -> tuple:
    """A told fact about a person is about the speaker: someone the story has introduced, so named as a person."""
    topic = args[-1]
    if isinstance(topic, list) and topic[0] == SPEAKER:
        return (*args[:-1], [args[0], *topic[1:]])
    return args


def _watched(t: tuple) -> tuple:
    action, (person, obj, container), peeking, distracted = t
    args = {"move_object_container": (person, obj, container), "enter_room": (person, ROOMS[0]),
            "broadcast_communication": (person, "plan")}[action]
    kwargs = {name: value for name, value in (("people_peeking", peeking), ("people_distracted", distracted))
              if value}
    return action, args, kwargs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step_strategy(), min_size=1, max_size=25))
def test_reading_the_engines_story_gives_back_its_actions_and_states(steps):
    tracker = BeliefTracker()
    done, states, story = [], [], []
    for step in steps:
        outcome = tracker.apply(step["action"], step["args"], step["kwargs"])
        if outcome.returned:
            done.append(step)
            states.append(dict(tracker.cells))
            story.extend(outcome.story_sentences)
        elif outcome.changes:
            return   # a failed step that still wrote (a peeker's quirk) leaves no sentence to read it back from
    parsed = parse_story(" ".join(story))
    assert parsed == done
    replay = replay_steps(parsed)
    assert all(record.returned for record in replay.records)
    for index, cells in enumerate(states):
        assert replay.state_at(index).cells == cells


# ----- the reference's own stories -------------------------------------------------------------------------
def _golden_scenarios() -> list[tuple[str, dict]]:
    out = []
    for name, groups in (("exploretom_golden_traces.json", ("upstream", "helper_authored")),
                         ("exploretom_golden_comm_traces.json", ("communication",)),
                         ("exploretom_golden_declare_after_talk.json", ("communication",))):
        path = REFERENCE_DATA / "exploretom" / name
        if path.exists():
            data = json.loads(path.read_text())
            out += [(f"{g}.{n}", s) for g in groups for n, s in data[g].items()]
    return out


GOLDEN = _golden_scenarios()
# The sentences do not say these: a state's type and visibility, a told fact that adds to a set, and what a
# peeker learnt from talk that failed.
NOT_SAID = {"upstream.test_apple", "communication.fact_added_to_a_set",
            "communication.abstract_peeker_learns_on_failure",
            "communication.declare_object_after_talk_a", "communication.declare_object_after_talk_b"}


@pytest.mark.parametrize("name,scenario", GOLDEN, ids=[n for n, _ in GOLDEN])
def test_reference_stories_read_back_into_their_final_state(reference_data, name, scenario):
    story = scenario["story"] if isinstance(scenario["story"], str) else " ".join(scenario["story"])
    replay = replay_steps(parse_story(story))
    assert all(record.returned for record in replay.records)
    if name not in NOT_SAID:
        assert replay.state_at(len(replay) - 1).to_nested() == scenario["final"]


def test_ncp_story_command_prints_a_trace_replay_reads(tmp_path):
    story = tmp_path / "story.txt"
    story.write_text("Anne entered the kitchen. Beth entered the kitchen. "
                     "Anne moved the ball to the box, which is also located in the kitchen.")
    run = [sys.executable, str(ROOT / "main.py"), "ncp"]
    printed = subprocess.run([*run, "story", str(story)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    trace = tmp_path / "trace.json"
    trace.write_text(printed.stdout)
    replayed = subprocess.run([*run, "replay", str(trace)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert replayed.returncode == 0, replayed.stderr
    last = json.loads(replayed.stdout)[-1]
    assert last["state_after"]["first_order"]["Beth"]["ball"]["container_location"] == "box"
    broken = subprocess.run([*run, "story", "-"], input="Anne entered the kitchen. Anne flew.", cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert broken.returncode == 2 and "sentence 2" in broken.stderr and "Anne flew." in broken.stderr
    assert "Traceback" not in broken.stderr and broken.stdout == ""
