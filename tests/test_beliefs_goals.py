"""Goal sentences and JSON atoms, and when they hold along a replayed story."""
from __future__ import annotations

import pytest

from app.beliefs.engine import CONTAINER, KNOWLEDGE, ROOM
from app.beliefs.goals import (
    ANY_LOCATION, ANY_STATE, FALSE_BELIEF, TRUE_BELIEF, GoalAtom, GoalError, Vocabulary, atom_from_json,
    evaluate_goal, goal_from_json, parse_goal_sentence, vocabulary_from_steps,
)
from app.beliefs.replay import replay_steps

TOMI = [
    {"action": "enter_room", "args": ["Anne", "living room"]},
    {"action": "enter_room", "args": ["Beth", "living room"]},
    {"action": "move_object_container", "args": ["Beth"], "kwargs": {"obj": "ball", "container": "box"}},
    {"action": "leave_room", "args": ["Beth", "living room"]},
    {"action": "move_object_container", "args": ["Anne"], "kwargs": {"obj": "ball", "container": "basket"}},
    {"action": "enter_room", "args": ["Beth", "living room"]},
]
VOCAB = Vocabulary(rooms=frozenset({"living room", "kitchen"}), containers=frozenset({"box", "basket"}),
                   entities=frozenset({"ball", "patient file", "Anne", "Beth"}))


@pytest.mark.parametrize("text,holders,entity,prop,value", [
    ("ball is in the basket", (), "ball", CONTAINER, "basket"),
    ("Beth is in the kitchen", (), "Beth", ROOM, "kitchen"),
    ("Beth believes that ball is in the box", ("Beth",), "ball", CONTAINER, "box"),
    ("Anne believes that Beth believes that ball is in the box.", ("Anne", "Beth"), "ball", CONTAINER, "box"),
    ("Anne believes Beth believes the ball is in the box", ("Anne", "Beth"), "ball", CONTAINER, "box"),
    ("Beth believes that Anne is in the not(living room)", ("Beth",), "Anne", ROOM, "not(living room)"),
    ("Anne believes that patient file covered in chocolate", ("Anne",), "patient file", ANY_STATE, "covered in chocolate"),
    ("Anne believes that Beth heard about the topic1", ("Anne", "Beth"), "", KNOWLEDGE, "topic1"),
])
def test_reference_surface_sentences_parse_to_atoms(text, holders, entity, prop, value):
    atom = parse_goal_sentence(text, VOCAB)
    assert (atom.holders, atom.entity, atom.property, atom.value) == (holders, entity, prop, value)


def test_without_vocabulary_in_the_means_room_or_container():
    atom = parse_goal_sentence("Beth believes that ball is in the box")
    assert atom.property == ANY_LOCATION


def test_unreadable_and_third_order_sentences_are_rejected():
    with pytest.raises(GoalError):
        parse_goal_sentence("ball")
    with pytest.raises(GoalError):
        parse_goal_sentence("A believes that B believes that C believes that ball is in the box")


def test_structured_atoms_and_sentences_mix_in_one_goal():
    goal = goal_from_json({"atoms": [
        "Beth believes that ball is in the box",
        {"holders": ["Anne", "Beth"], "entity": "ball", "property": "container", "value": "box"},
    ], "false_belief": True}, VOCAB)
    assert goal.kind == FALSE_BELIEF
    assert goal.atoms[1] == GoalAtom(("Anne", "Beth"), "ball", CONTAINER, "box")
    assert goal.atoms[1].text == "Anne believes that Beth believes that ball is in the box"


def test_false_belief_goal_becomes_true_when_the_ball_is_moved_behind_beths_back():
    replay = replay_steps(TOMI)
    goal = goal_from_json({"atoms": ["Beth believes that ball is in the box"], "kind": FALSE_BELIEF}, VOCAB)
    timeline = evaluate_goal(goal, replay)
    history = timeline.atoms[0]
    assert history.holds == (False, False, True, True, True, True)
    assert history.became_true == (2,) and history.stopped_being_true == ()
    assert timeline.satisfied == (False, False, False, False, True, True)
    assert timeline.first_satisfied() == 4


def test_true_belief_goal_needs_the_world_to_agree():
    replay = replay_steps(TOMI)
    goal = goal_from_json({"atoms": ["Anne believes that ball is in the box"], "kind": TRUE_BELIEF}, VOCAB)
    timeline = evaluate_goal(goal, replay)
    assert timeline.atoms[0].holds == (False, False, True, True, False, False)
    assert timeline.atoms[0].stopped_being_true == (4,)
    assert timeline.satisfied == (False, False, True, True, False, False)


def test_negative_knowledge_never_satisfies_a_positive_atom():
    replay = replay_steps(TOMI)
    goal = goal_from_json(["Anne believes that Beth is in the living room"], VOCAB)
    holds = evaluate_goal(goal, replay).atoms[0].holds
    assert holds == (False, True, True, False, False, True)


def test_object_state_atom_is_resolved_against_the_trace():
    replay = replay_steps([
        {"action": "enter_room", "args": ["Anne", "kitchen"]},
        {"action": "update_object_state", "args": ["Anne", "apple", "poisoned", "<is_edible>", "Anne poisoned the apple.", False]},
    ])
    timeline = evaluate_goal(goal_from_json(["Anne believes that apple poisoned"]), replay)
    assert timeline.goal.atoms[0].property == "<state_update> <is_edible>"
    assert timeline.atoms[0].holds == (False, True)


# ----- the one goal parser: every form imports and the stepper read ------------------------------------
def test_sentences_without_a_vocabulary_keep_an_unknown_place_open():
    assert parse_goal_sentence("ball is in the basket") == GoalAtom((), "ball", ANY_LOCATION, "basket",
                                                                     "ball is in the basket")
    person = parse_goal_sentence("Anne believes that Beth is in the kitchen")
    assert (person.holders, person.entity, person.property, person.value) == (("Anne",), "Beth", ROOM, "kitchen")
    room = parse_goal_sentence("patient file is in the activity room")
    assert (room.entity, room.property) == ("patient file", ROOM)
    plain = parse_goal_sentence("apple covered in chocolate")
    assert (plain.entity, plain.property, plain.value) == ("apple", ANY_STATE, "covered in chocolate")
    assert parse_goal_sentence("Anne believes that Beth believes that ball is in the box").order == 2


def test_a_vocabulary_from_steps_names_states_rooms_and_containers():
    vocab = vocabulary_from_steps([
        ("location_declaration", ["red apple", "hall"], {"is_thinking_entity": False}),
        ("update_object_state", ["Beth", "red apple", "poisoned", "<is_edible>", "x", False], {}),
        ("move_object_container", ["Beth"], {"obj": "red apple", "container": "tin"}),
    ])
    assert "Beth" in vocab.people and "red apple" not in vocab.people
    state = parse_goal_sentence("Anne believes that Beth believes that red apple poisoned", vocab)
    assert (state.holders, state.entity, state.property, state.value) == (
        ("Anne", "Beth"), "red apple", "<state_update> <is_edible>", "poisoned")
    assert parse_goal_sentence("red apple is in the hall", vocab).property == ROOM
    assert parse_goal_sentence("red apple is in the tin", vocab).property == CONTAINER
    assert parse_goal_sentence("red apple is in the shed", vocab).property == ANY_LOCATION


def test_structured_atoms_and_their_surface_form():
    atom = atom_from_json({"holders": ["Kofi", "Maren"], "entity": "apple", "property": "<is_peeled>",
                           "value": "peeled"})
    assert atom.property == "<state_update> <is_peeled>"
    assert atom.text == "Kofi believes that Maren believes that apple peeled"
    assert atom_from_json({"entity": "Bo", "property": "room", "value": "hall"}).text == "Bo is in the hall"
    assert atom_from_json({"holders": "Kofi", "entity": "Bo", "property": "room", "value": "hall"}).holders == ("Kofi",)
    for bad in ("", "Anne believes that Beth believes that Carl believes that x is in the box", "apple"):
        with pytest.raises(GoalError):
            parse_goal_sentence(bad)
    with pytest.raises(GoalError, match="entity"):
        atom_from_json({"holders": ["A"], "property": "room", "value": "x"})


# The table: sentences one parser used to misread.
@pytest.mark.parametrize("text, holders, entity, prop, value", [
    ("Anne thinks that ball is in the box", ("Anne",), "ball", CONTAINER, "box"),
    ("Beth heard about the party", ("Beth",), "", KNOWLEDGE, "party"),
    ("Anne believes ball is in the kitchen", ("Anne",), "ball", ROOM, "kitchen"),
    ("Anne believes that Beth heard about the party", ("Anne", "Beth"), "", KNOWLEDGE, "party"),
    ("Anne thinks that Beth thinks that the ball is in the basket.", ("Anne", "Beth"), "ball", CONTAINER, "basket"),
    ("apple is peeled", (), "apple", ANY_STATE, "peeled"),
])
def test_every_form_reads_the_same_through_one_parser(text, holders, entity, prop, value):
    atom = parse_goal_sentence(text, VOCAB)
    assert (atom.holders, atom.entity, atom.property, atom.value) == (holders, entity, prop, value)
