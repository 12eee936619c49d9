"""Private and broadcast communication as BELIEFS.md ("Communication") describes them, without the reference."""
from __future__ import annotations

import pytest

from app.beliefs.engine import KNOWLEDGE, ActionArgumentError, BeliefTracker, Quirk

TOPICS = ("first", "Beth", "", KNOWLEDGE)


def _tracker(*steps: tuple) -> BeliefTracker:
    tracker = BeliefTracker()
    for action, *args in steps:
        assert tracker.apply(action, args).returned, (action, args)
    return tracker


def test_broadcast_needs_someone_to_hear_it():
    tracker = _tracker(("enter_room", "Anne", "kitchen"))
    alone = tracker.apply("broadcast_communication", ["Anne", "the plan"])
    assert not alone.returned and alone.story_sentences == () and alone.changes == ()
    assert tracker.apply("enter_room", ["Beth", "kitchen"]).returned
    told = tracker.apply("broadcast_communication", ["Anne", "the plan"])
    assert told.returned and told.story_sentences == ("Anne told out loud about the the plan.",)
    assert tracker.get(TOPICS) == frozenset({"the plan"})
    assert tracker.get(("second", "Beth", "Anne", "", KNOWLEDGE)) == frozenset({"the plan"})
    assert tracker.topics == ["the plan"]
    # Saying it again is news to nobody: it fails and the story does not grow.
    assert not tracker.apply("broadcast_communication", ["Beth", "the plan"]).returned


def test_broadcast_needs_a_known_positive_room():
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"),
                       ("leave_room", "Anne", "kitchen"))
    outcome = tracker.apply("broadcast_communication", ["Anne", "recipe"])
    assert not outcome.returned and "not(kitchen)" in outcome.failed_preconditions[0]


def test_private_talk_reaches_another_room_and_only_the_two():
    tracker = _tracker(("enter_room", "Anne", "garden"), ("enter_room", "Beth", "hall"),
                       ("enter_room", "Carl", "hall"))
    outcome = tracker.apply("private_communication", ["Anne", "Beth", "recipe"])
    assert outcome.returned and outcome.story_sentences == ("Anne told privately to Beth about the recipe.",)
    assert tracker.get(TOPICS) == frozenset({"recipe"})
    assert tracker.get(("second", "Anne", "Beth", "", KNOWLEDGE)) == frozenset({"recipe"})
    assert tracker.get(("first", "Carl", "", KNOWLEDGE)) is None
    # Anne believes Beth knows, so she does not tell her again; Beth knows Anne knows.
    assert not tracker.apply("private_communication", ["Anne", "Beth", "recipe"]).returned
    assert not tracker.apply("private_communication", ["Beth", "Anne", "recipe"]).returned
    assert not tracker.apply("private_communication", ["Anne", "Anne", "other"]).returned


def test_private_talk_makes_belief_tables_for_someone_never_seen():
    tracker = _tracker(("enter_room", "Anne", "kitchen"))
    outcome = tracker.apply("private_communication", ["Anne", "Eve", ["ball", "container_location", "box", False]])
    assert outcome.returned
    assert ("first", "Eve") in tracker.cells and ("second", "Anne", "Eve") in tracker.cells
    # A fact that does not replace is believed as a set of values.
    assert tracker.get(("first", "Eve", "ball", "container_location")) == frozenset({"box"})
    assert tracker.world("ball", "container_location") is None


def test_fact_that_replaces_changes_belief_not_world():
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"),
                       ("move_object_container", "Anne", "key", "box"), ("leave_room", "Beth", "kitchen"),
                       ("move_object_container", "Anne", "key", "drawer"))
    assert tracker.first("Beth", "key", "container_location") == "box"
    outcome = tracker.apply("private_communication", ["Anne", "Beth", ["key", "container_location", "drawer", True]])
    assert outcome.story_sentences == ("Anne told privately to Beth that the key is in the drawer.",)
    assert tracker.first("Beth", "key", "container_location") == "drawer"
    assert tracker.get(("second", "Beth", "Anne", "key", "container_location")) == "drawer"
    assert tracker.world("key", "container_location") == "drawer"
    # Anne now believes Beth knows: the same fact is not told twice.
    assert not tracker.apply("private_communication",
                             ["Anne", "Beth", ["key", "container_location", "drawer", True]]).returned


def test_facts_that_do_not_replace_collect_in_a_set():
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"),
                       ("broadcast_communication", "Anne", ["ball", "container_location", "box", False]),
                       ("broadcast_communication", "Beth", ["ball", "container_location", "basket", False]))
    assert tracker.first("Anne", "ball", "container_location") == frozenset({"box", "basket"})
    assert tracker.world("ball", "container_location") is None


def test_person_fact_reads_with_a_name():
    tracker = _tracker(("enter_room", "Anne", "garden"), ("enter_room", "Beth", "hall"))
    outcome = tracker.apply("private_communication", ["Anne", "Beth", ["Anne", "room_location", "garden", True]])
    assert outcome.story_sentences == ("Anne told privately to Beth that Anne is in the garden.",)


def test_peekers_and_distracted_during_talk():
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"),
                       ("enter_room", "Carl", "kitchen"), ("enter_room", "Dana", "hall"))
    outcome = tracker.apply("broadcast_communication", ["Anne", "plan"],
                            {"people_peeking": ["Dana"], "people_distracted": ["Carl"]})
    assert outcome.returned
    assert outcome.story_sentences[1].startswith("While this action was happening, Dana witnessed this action")
    assert tracker.get(("first", "Dana", "", KNOWLEDGE)) == frozenset({"plan"})
    assert tracker.get(("first", "Carl", "", KNOWLEDGE)) is None
    # Anne believes Carl heard it; nobody believes Dana did.
    assert tracker.get(("second", "Anne", "Carl", "", KNOWLEDGE)) == frozenset({"plan"})
    assert tracker.get(("second", "Anne", "Dana", "", KNOWLEDGE)) is None
    assert tracker.get(("second", "Carl", "Anne", "", KNOWLEDGE)) is None


@pytest.mark.parametrize("kwargs", [{"people_peeking": ["Anne"]}, {"people_distracted": ["Carl"]},
                                    {"people_distracted": ["Anne"]}, {"people_peeking": ["Beth"]}])
def test_private_talk_checks_peekers_and_distracted(kwargs):
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "hall"),
                       ("enter_room", "Carl", "garden"))
    outcome = tracker.apply("private_communication", ["Anne", "Beth", "plan"], kwargs)
    assert not outcome.returned and outcome.changes == ()


def test_peeker_of_an_abstract_topic_learns_although_the_talk_fails():
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"),
                       ("broadcast_communication", "Anne", "plan"), ("enter_room", "Dana", "hall"))
    outcome = tracker.apply("broadcast_communication", ["Anne", "plan"], {"people_peeking": ["Dana"]})
    assert not outcome.returned and outcome.story_sentences == ()
    assert tracker.get(("first", "Dana", "", KNOWLEDGE)) == frozenset({"plan"})
    assert Quirk.PEEKER_LEARNS_FAILED_TALK in {note.quirk for note in outcome.quirks}


def test_news_only_to_a_peeker_counts_for_a_fact():
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"),
                       ("broadcast_communication", "Anne", ["ball", "container_location", "box", True]),
                       ("enter_room", "Dana", "hall"))
    outcome = tracker.apply("broadcast_communication", ["Anne", ["ball", "container_location", "box", True]],
                            {"people_peeking": ["Dana"]})
    assert outcome.returned
    assert tracker.first("Dana", "ball", "container_location") == "box"
    assert Quirk.PEEKER_NEWS_COUNTS in {note.quirk for note in outcome.quirks}


@pytest.mark.parametrize("topic", [["ball", "<state_update> colour", "red", True], ["ball", "room_location", "hall"],
                                   ["ball", "room_location", "hall", "yes"], 3])
def test_malformed_topics_are_rejected(topic):
    tracker = _tracker(("enter_room", "Anne", "kitchen"), ("enter_room", "Beth", "kitchen"))
    with pytest.raises(ActionArgumentError):
        tracker.apply("broadcast_communication", ["Anne", topic])
