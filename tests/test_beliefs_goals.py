"""Goal sentences and JSON atoms, and when they hold along a replayed story."""
from __future__ import annotations

import pytest

from app.beliefs.engine import CONTAINER, KNOWLEDGE, ROOM
from app.beliefs.goals import (
    ANY_LOCATION, ANY_STATE, FALSE_BELIEF, TRUE_BELIEF, GoalAtom, GoalError, Vocabulary, evaluate_goal,
    goal_from_json, parse_goal_sentence,
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
