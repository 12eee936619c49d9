"""AgentViSS's rules: role-play replies are open text, judged on Expr, Char, Int-Reg and Int-Out.

A reply is kept as it is (judges score it, not a parser); the release's judged scores are read as they are.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from app.benchmarks.generic import open_answer
from app.dashboard_tables import ChartSpec, DashboardTable, table_of
from app.metrics import AGENTVISS_TASKS, JUDGE_MEANS_METHOD, agentviss_task_scores
from app.prompt_template import PromptTemplate
from storage.importers.common import ProblemLog
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames

NAME = "agentviss"
RUN_KEY = ("model", "vision_mode")   # what one run is, in the failure filters

# The prompt a live model plays a character with; judges score the reply.
ROLE_PLAY_PROMPT = PromptTemplate(
    name="agentviss.role_play",
    benchmark="AgentViSS",
    description="Play one character in a Friends scene; the task says what to produce (Expr, Char, Int-Reg, Int-Out).",
    system=(
        "You are {character} in a scene from the TV show Friends. Stay in character.\n"
        "Your profile: {profile}\nYour emotional state: {emotional_state}"
    ),
    user="Scene: {scene}\n\nDialogue so far:\n{dialogue}\n\nTask: {task}",
)


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(the reply trimmed, None): a role-play reply is judged, not parsed."""
    return open_answer(text), None


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Nothing to do: judged scores are numbers the release states."""


def dashboard_tables(frames: AnalysisFrames, correction: str, notes: list[str]) -> list[DashboardTable]:
    """Mean judged score per task and vision mode."""
    judged = frames.judgments.filter(pl.col("criterion").is_in(list(AGENTVISS_TASKS)))
    if not judged.height:
        return []
    scores = agentviss_task_scores(judged, ["model", "vision_mode"])
    scale = judged["scale_max"].drop_nulls()
    top = float(scale.max()) if scale.len() else None
    source = judged.rename({"criterion": "task"})
    scores = scores.with_columns(pl.concat_str([pl.col("model"), pl.col("vision_mode")], separator=" · ")
                                 .alias("model_mode"))
    return [table_of(
        "agentviss.tasks", "AgentViSS judged scores by task and vision mode",
        "Mean judge score per task (Expr, Char, Int-Reg, Int-Out) in verbalized (VV) and direct (DV) vision; "
        f"{JUDGE_MEANS_METHOD}.", scores, source, ["model", "vision_mode", "task"],
        ChartSpec("bars", value_col="mean", low_col="ci_low", high_col="ci_high", category_cols=("task",),
                  series_col="model_mode", y_label="mean score", y_range=(0.0, top) if top else None),
        describe=("model", "vision_mode", "task"))]
