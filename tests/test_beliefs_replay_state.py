"""What a replay keeps from the tracker that ran it, and who the tracker finds in a room, agree with a plain
reading of the steps, for random stories with peekers, the distracted, talk and declarations: the state after
the last step is the steps' changes applied in order, each cell's last write is the last step that names it,
the witnesses of a room's action are the people the world has in that room, and an entrant sees everyone and
everything in plain sight there."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.beliefs.engine import CONTAINER, ROOM
from app.beliefs.replay import BeliefState, Replay, replay_steps

PEOPLE = ["Anne", "Beth", "Carl", "Dana"]
OBJECTS = ["ball", "apple"]
ROOMS = ["kitchen", "garden"]
CONTAINERS = ["box", "basket"]


def _step_strategy():
    person = st.sampled_from(PEOPLE)
    obj = st.sampled_from(OBJECTS)
    room = st.sampled_from(ROOMS)
    container = st.sampled_from(CONTAINERS)
    watchers = st.lists(person, max_size=2, unique=True)
    topic = st.one_of(st.sampled_from(["news", "rumour"]),
                      st.tuples(obj, st.just(CONTAINER), container, st.booleans()).map(list),
                      st.tuples(person, st.just(ROOM), room, st.booleans()).map(list))
    watched = st.one_of(
        st.tuples(st.just("enter_room"), st.tuples(person, room)),
        st.tuples(st.just("leave_room"), st.tuples(person, room)),
        st.tuples(st.just("location_declaration"), st.tuples(st.sampled_from(PEOPLE + OBJECTS), room)),
        st.tuples(st.just("move_object_container"), st.tuples(person, obj, container)),
        st.tuples(st.just("leave_container"), st.tuples(obj, container)),
        st.tuples(st.just("update_object_state"),
                  st.tuples(person, obj, st.sampled_from(["peeled", "wet"]), st.just("<s>"), st.just("x."),
                            st.booleans())),
        st.tuples(st.just("broadcast_communication"), st.tuples(person, topic)),
        st.tuples(st.just("private_communication"), st.tuples(person, person, topic)),
    )
    return st.one_of(
        st.tuples(watched, watchers, watchers).map(
            lambda t: {"action": t[0][0], "args": list(t[0][1]),
                       "kwargs": {"people_peeking": t[1], "people_distracted": t[2]}}),
        watched.map(lambda t: {"action": t[0], "args": list(t[1]), "kwargs": {}}),
        st.tuples(person, obj, room).map(lambda t: {"action": "move_object_room", "args": list(t), "kwargs": {}}),
    )


stories = st.lists(_step_strategy(), min_size=1, max_size=40)


def _states(replay: Replay) -> list[BeliefState]:
    """The state before the first step, then after each step, rebuilt from the steps' changes alone."""
    cells: dict = {}
    states = [BeliefState(dict(cells))]
    for record in replay.records:
        for key, _old, new in record.outcome.changes:
            cells[key] = new
        states.append(BeliefState(dict(cells)))
    return states


def _in_room(state: BeliefState, room: str) -> list[str]:
    return [p for p in state.people() if state.world(p, ROOM) == room]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_the_final_state_and_last_writes_are_the_steps_changes_read_in_order(steps):
    replay = replay_steps(steps)
    expected = _states(replay)[-1].cells
    assert list(replay.final_state().cells.items()) == list(expected.items())   # keys in the same order too
    last = {key: record.index for record in replay.records for key, _old, _new in record.outcome.changes}
    assert {key: replay.last_write(key) for key in expected} == last
    assert replay.last_write(("first", "Nobody", "ball", ROOM)) is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_witnesses_are_the_people_in_the_room_and_an_entrant_sees_what_is_in_plain_sight(steps):
    replay = replay_steps(steps)
    states = _states(replay)
    for record in replay.records:
        outcome = record.outcome
        if not outcome.returned or outcome.peeking or outcome.distracted:
            continue
        before, after = states[record.index], states[record.index + 1]
        action, args = outcome.action, outcome.args
        if action == "leave_room":
            assert list(outcome.witnesses) == _in_room(before, args[1])
        elif action in ("move_object_container", "update_object_state"):
            assert list(outcome.witnesses) == _in_room(before, before.world(args[0], ROOM))
        elif action == "broadcast_communication":
            assert list(outcome.witnesses) == _in_room(before, before.world(args[0], ROOM))
        elif action == "enter_room":
            entrant, room = args
            assert list(outcome.witnesses) == _in_room(after, room)
            for entity in after.entities():
                if entity != entrant and after.world(entity, ROOM) == room and after.world(entity, CONTAINER) is None:
                    assert after.first(entrant, entity, ROOM) == room, entity
