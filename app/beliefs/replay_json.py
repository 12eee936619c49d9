"""The replay command's JSON output: every step's action and state after it, plus the goal's status when the
trace names a goal. It sits above both the replay and the goals (the goals build on the replay, so the replay
cannot reach up to them)."""
from __future__ import annotations

from typing import Any

from app.beliefs.goals import evaluate_goal, goal_or_trace_error, vocabulary_from_steps
from app.beliefs.replay import BeliefState, StepRecord, parse_steps, replay_steps


def step_to_json(record: StepRecord, state: BeliefState) -> dict:
    """One element of the replay output (see the CLI contract)."""
    outcome = record.outcome
    return {
        "index": record.index,
        "action": outcome.action,
        "args": list(outcome.args),
        "kwargs": dict(outcome.kwargs),
        "returned": outcome.returned,
        "story_sentences_added": list(outcome.story_sentences),
        "state_after": state.to_nested(),
    }


def replay_to_json(trace: Any) -> list[dict]:
    """The replay CLI's output for a parsed trace: one element per step, plus goal status if a goal is given."""
    replay = replay_steps(trace)
    goal_spec = trace.get("goal") if isinstance(trace, dict) else None
    timeline = None
    if goal_spec is not None:
        goal = goal_or_trace_error(goal_spec, vocabulary_from_steps(parse_steps(trace)))
        timeline = evaluate_goal(goal, replay)
    out = []
    for record in replay.records:
        element = step_to_json(record, replay.state_at(record.index))
        if timeline is not None:
            element["goal"] = timeline.step_json(record.index)
        out.append(element)
    return out
