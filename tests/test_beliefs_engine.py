"""Engine behaviour a reader of a trace relies on: failed actions, quirks, witnesses, and invariants."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.beliefs.engine import CONTAINER, ROOM, BeliefTracker, Quirk, is_positive
from app.beliefs.replay import TraceError, replay_steps

PEOPLE = ["Anne", "Beth", "Carl"]
OBJECTS = ["ball", "apple"]
ROOMS = ["kitchen", "garden"]
CONTAINERS = ["box", "basket"]


def test_failed_precondition_reports_reason_and_changes_nothing():
    tracker = BeliefTracker()
    tracker.apply("enter_room", ["Anne", "kitchen"])
    before = dict(tracker.cells)
    outcome = tracker.apply("move_object_container", ["Bob", "apple", "box"])
    assert outcome.returned is False
    assert outcome.changes == () and outcome.story_sentences == ()
    assert "Bob's room is not known" in outcome.failed_preconditions
    assert tracker.cells == before


def test_old_room_not_left_quirk_names_who_keeps_the_stale_belief():
    replay = replay_steps([
        {"action": "enter_room", "args": ["Anne", "kitchen"]},
        {"action": "enter_room", "args": ["Bob", "kitchen"]},
        {"action": "enter_room", "args": ["Anne", "garden"]},
    ])
    quirks = replay.records[2].quirks
    assert [note.quirk for note in quirks] == [Quirk.OLD_ROOM_NOT_LEFT]
    assert "Bob still believes Anne is in the kitchen" in quirks[0].detail
    assert replay.state_at(2).first("Bob", "Anne", ROOM) == "kitchen"


def test_taken_out_object_stays_hidden_from_an_entrant():
    replay = replay_steps([
        {"action": "enter_room", "args": ["Anne", "kitchen"]},
        {"action": "move_object_container", "args": ["Anne", "apple", "box"]},
        {"action": "leave_container", "args": ["apple", "box"]},
        {"action": "enter_room", "args": ["Bob", "kitchen"]},
    ])
    assert replay.records[2].outcome.logged_action == "leave_room"
    assert Quirk.LEAVE_CONTAINER_LOGGED_AS_LEAVE_ROOM in [n.quirk for n in replay.records[2].quirks]
    assert Quirk.EMPTIED_CONTAINER_STILL_HIDES in [n.quirk for n in replay.records[3].quirks]
    assert replay.state_at(3).first("Bob", "apple", ROOM) is None


def test_peeker_and_distracted_witness_are_named_and_treated_asymmetrically():
    replay = replay_steps([
        {"action": "enter_room", "args": ["Ben", "office"]},
        {"action": "enter_room", "args": ["Sara", "office"]},
        {"action": "move_object_container", "args": ["Ben", "file", "cabinet"],
         "kwargs": {"people_peeking": ["John"], "people_distracted": ["Sara"]}},
    ])
    record = replay.records[2]
    state = replay.state_at(2)
    assert set(record.outcome.witnesses) == {"Ben", "John"}
    assert record.outcome.peeking == ("John",) and record.outcome.distracted == ("Sara",)
    assert state.first("John", "file", CONTAINER) == "cabinet"
    assert state.first("Sara", "file", CONTAINER) is None
    assert state.second("Sara", "Ben", "file", CONTAINER) == "cabinet"
    assert state.second("Ben", "John", "file", CONTAINER) is None
    assert Quirk.DISTRACTED_GET_SECOND_ORDER in [n.quirk for n in record.quirks]


def test_entrant_who_expected_an_object_no_longer_knows_where_it_is():
    replay = replay_steps([
        {"action": "enter_room", "args": ["Anne", "kitchen"]},
        {"action": "enter_room", "args": ["Beth", "kitchen"]},
        {"action": "update_object_state", "args": ["Anne", "apple", "peeled", "<is_peeled>", "Anne peeled the apple.", True]},
        {"action": "leave_room", "args": ["Beth", "kitchen"]},
        {"action": "move_object_container", "args": ["Anne", "apple", "fridge"]},
        {"action": "enter_room", "args": ["Beth", "kitchen"]},
    ])
    state = replay.state_at(5)
    assert state.first("Beth", "apple", ROOM) == "not(???)"
    assert state.second("Anne", "Beth", "apple", ROOM) == "not(???)"
    assert replay.records[2].outcome.story_sentences == ("Anne peeled the apple.",)


def test_invisible_state_is_not_seen_by_later_entrants():
    replay = replay_steps([
        {"action": "enter_room", "args": ["Anne", "kitchen"]},
        {"action": "update_object_state", "args": ["Anne", "apple", "poisoned", "<is_edible>", "Anne poisoned the apple.", False]},
        {"action": "update_object_state", "args": ["Anne", "apple", "peeled", "<is_peeled>", "Anne peeled the apple.", True]},
        {"action": "enter_room", "args": ["Beth", "kitchen"]},
    ])
    state = replay.state_at(3)
    assert state.first("Beth", "apple", "<state_update> <is_peeled>") == "peeled"
    assert state.first("Beth", "apple", "<state_update> <is_edible>") is None


def test_object_declared_into_a_room_shows_its_people_each_others_view_of_it_second_order_only():
    """As the reference does: an arriving object looks around for the people present, though it sees nothing."""
    replay = replay_steps([
        {"action": "enter_room", "args": ["Anne", "garden"]},
        {"action": "enter_room", "args": ["Beth", "garden"]},
        {"action": "move_object_container", "args": ["Anne", "ball", "basket"]},
        {"action": "leave_room", "args": ["Beth", "garden"]},
        {"action": "location_declaration", "args": ["key", "garden"], "kwargs": {"is_thinking_entity": False}},
    ])
    before, after = replay.state_at(3), replay.state_at(4)
    # the basket's room was written in the world only when the ball went in; the key's arrival shows it to
    # Anne's model of herself, not to Anne herself
    assert before.second("Anne", "Anne", "basket", ROOM) is None
    assert after.second("Anne", "Anne", "basket", ROOM) == "garden"
    assert after.first("Anne", "basket", ROOM) is None
    assert after.second("Anne", "Anne", "key", ROOM) == after.first("Anne", "key", ROOM) == "garden"
    # Beth has left: she records nothing, and the key itself gets no beliefs
    assert after.second("Beth", "Beth", "basket", ROOM) == before.second("Beth", "Beth", "basket", ROOM)
    assert "key" not in after.people()
    notes = replay.records[4].quirks
    assert [note.quirk for note in notes] == [Quirk.ENTRY_SEEN_SECOND_ORDER_ONLY]
    assert "basket (Anne)" in notes[0].detail


@pytest.mark.parametrize("step,message", [
    ({"action": "teleport", "args": ["Anne"]}, "unknown action 'teleport'"),
    ({"action": "enter_room", "args": ["Anne"]}, "missing a required argument"),
    ({"action": "enter_room", "args": ["Anne", "kitchen"], "kwargs": {"colour": "red"}}, "unexpected keyword"),
    ({"action": "enter_room", "args": ["Anne", ["kitchen"]]}, "room must be a string"),
    ({"args": ["Anne", "kitchen"]}, "missing or non-string 'action'"),
])
def test_malformed_step_raises_trace_error_naming_the_step(step, message):
    with pytest.raises(TraceError) as info:
        replay_steps([{"action": "enter_room", "args": ["Bob", "hall"]}, step])
    assert info.value.step == 1
    assert "step 1" in str(info.value) and message in str(info.value)


# ----- invariants over random stories -----------------------------------------------------------
def _step_strategy():
    person = st.sampled_from(PEOPLE)
    obj = st.sampled_from(OBJECTS)
    room = st.sampled_from(ROOMS)
    container = st.sampled_from(CONTAINERS)
    watchers = st.lists(st.sampled_from(PEOPLE + ["Dana"]), max_size=1, unique=True)
    return st.one_of(
        st.tuples(st.just("enter_room"), st.tuples(person, room)),
        st.tuples(st.just("leave_room"), st.tuples(person, room)),
        st.tuples(st.just("move_object_container"), st.tuples(person, obj, container)),
        st.tuples(st.just("move_object_room"), st.tuples(person, obj, room)),
        st.tuples(st.just("leave_container"), st.tuples(obj, container)),
        st.tuples(st.just("update_object_state"),
                  st.tuples(person, obj, st.sampled_from(["peeled", "wet"]), st.just("<s>"), st.just("x."), st.booleans())),
        st.tuples(st.just("broadcast_communication"), st.tuples(person, st.sampled_from(["news", "rumour"]))),
        st.tuples(st.just("move_object_container"), st.tuples(person, obj, container), watchers, watchers),
    ).map(lambda t: {"action": t[0], "args": list(t[1]),
                     "kwargs": {"people_peeking": t[2], "people_distracted": t[3]} if len(t) == 4 else {}})


stories = st.lists(_step_strategy(), min_size=1, max_size=30)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_failed_action_changes_nothing_and_states_replay_consistently(steps):
    replay = replay_steps(steps)
    for record in replay.records:
        before = replay.state_at(record.index - 1).cells
        after = replay.state_at(record.index).cells
        if not record.returned:
            assert after == before and not record.outcome.changes
            assert record.outcome.failed_preconditions
        else:
            assert {k for k in set(before) | set(after) if before.get(k) != after.get(k)} == record.changed_keys


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_nobody_believes_an_object_is_somewhere_without_having_witnessed_it(steps):
    """A positive location belief about an object needs a step where that person was a witness."""
    replay = replay_steps(steps)
    witnessed: dict[str, set[str]] = {}
    for record in replay.records:
        for key, _old, _new in record.outcome.changes:
            if key[0] == "first" and len(key) == 4 and key[2] in OBJECTS:
                witnessed.setdefault(key[1], set()).add(key[2])
        # Whoever acquired a belief this step must have been a witness of this step.
        for key, _old, new in record.outcome.changes:
            if key[0] == "first" and len(key) == 4 and key[2] in OBJECTS and is_positive(new):
                assert key[1] in record.outcome.witnesses
    final = replay.state_at(len(replay) - 1)
    for person in final.people():
        for obj in OBJECTS:
            for prop in (ROOM, CONTAINER):
                if is_positive(final.first(person, obj, prop)):
                    assert obj in witnessed.get(person, set())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_what_a_person_saw_they_believe_they_believe(steps):
    """Every first-order change of someone present is mirrored in their own second-order self-model.

    Peekers are the exception, by design: a secret observer models only the people in the room.
    """
    replay = replay_steps(steps)
    for record in replay.records:
        state = replay.state_at(record.index)
        # a composite action (move_object_room) may change a cell twice: only its last value stands
        final = {key: new for key, _old, new in record.outcome.changes}
        for key, new in final.items():
            if key[0] == "first" and len(key) == 4 and key[1] not in record.outcome.peeking:
                person, entity, prop = key[1:]
                assert state.second(person, person, entity, prop) == new


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_every_thinking_pair_has_a_belief_table(steps):
    state = replay_steps(steps).state_at(len(steps) - 1)
    nested = state.to_nested()
    people = state.people()
    for p in people:
        assert p in nested["first_order"]
        for q in people:
            assert q in nested["second_order"][p]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stories)
def test_everyone_knows_which_room_they_are_in(steps):
    replay = replay_steps(steps)
    for record in replay.records:
        state = replay.state_at(record.index)
        for person in state.people():
            assert state.first(person, person, ROOM) == state.world(person, ROOM)
