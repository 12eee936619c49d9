"""NCP-ExploreToM belief tracking: the engine, trace replay and belief-state goals (no Qt here)."""
from app.beliefs.engine import BeliefTracker, Quirk, QuirkNote, StepOutcome
from app.beliefs.goals import Goal, GoalAtom, GoalTimeline, evaluate_goal, goal_from_json, parse_goal_sentence
from app.beliefs.replay import BeliefState, Replay, StepRecord, TraceError, replay_steps, replay_to_json

__all__ = [
    "BeliefState", "BeliefTracker", "Goal", "GoalAtom", "GoalTimeline", "Quirk", "QuirkNote", "Replay",
    "StepOutcome", "StepRecord", "TraceError", "evaluate_goal", "goal_from_json", "parse_goal_sentence",
    "replay_steps", "replay_to_json",
]
