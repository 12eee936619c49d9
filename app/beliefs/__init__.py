"""NCP-ExploreToM belief tracking: the engine, trace replay, belief-state goals, ExploreToM stories read into
traces and their questions answered (no Qt here)."""
from app.beliefs.engine import BeliefTracker, Quirk, QuirkNote, StepOutcome
from app.beliefs.goals import Goal, GoalAtom, GoalTimeline, evaluate_goal, goal_from_json, parse_goal_sentence
from app.beliefs.questions import Answer, Question, QuestionError, answer_question, parse_question
from app.beliefs.replay import BeliefState, Replay, StepRecord, TraceError, replay_steps
from app.beliefs.replay_json import replay_to_json
from app.beliefs.story import StoryParseError, parse_story

__all__ = [
    "Answer", "BeliefState", "BeliefTracker", "Goal", "GoalAtom", "GoalTimeline", "Question", "QuestionError", "Quirk",
    "QuirkNote", "Replay", "StepOutcome", "StepRecord", "StoryParseError", "TraceError", "answer_question",
    "evaluate_goal", "goal_from_json", "parse_goal_sentence", "parse_question", "parse_story", "replay_steps",
    "replay_to_json",
]
