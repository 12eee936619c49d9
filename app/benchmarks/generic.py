"""Rules for a dataset of no known benchmark: a reply is an open answer, kept as it is and not scored.

An imported generic table says its own answers and correctness (the generic reader reads them column by
column), so there is nothing left to interpret. Its dashboard is accuracy per model and condition.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.benchmarks.friendbench import FORCED_CHOICE_PROMPT
from app.benchmarks.profile import BenchmarkProfile, KindProfile, Page, PlayerLayout
from app.dashboard_tables import ChartSpec, DashboardTable, QueriedRowStimuli
from app.metrics import accuracy_table
from storage.importers.common import ProblemLog
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames

NAME = "generic"
RUN_KEY = ("model", "modality")   # what one run is, in the failure filters
GENERIC_KIND = "generic"


def open_answer(text: str | None) -> str:
    """An open reply as it is, trimmed."""
    return (text or "").strip()


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(the reply trimmed, None): an open reply has no correctness of its own."""
    return open_answer(text), None


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Nothing to do: the table's own columns are the answers."""


def dashboard_tables(frames: AnalysisFrames, correction: str, notes: list[str]) -> list[DashboardTable]:
    """Accuracy per model and condition, over the predictions that are scored.

    From the predictions counted per run and correctness in the store; the stimuli behind a row are looked up
    when asked."""
    table = accuracy_table(frames.correct_counts, ["model", "modality"], count_col="n")
    if not table.height:
        return []

    def find(row: dict[str, Any]) -> list[int]:
        return frames.predicted_stimulus_ids(row["model"], row["modality"], scored_only=True)

    return [DashboardTable("generic.accuracy", "Accuracy by model and condition", "95% Wilson intervals.",
                           table, QueriedRowStimuli(find, ["model", "modality"], table),
                           ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high",
                                     category_cols=("model",), series_col="modality", y_label="accuracy",
                                     y_range=(0.0, 1.0)),
                           ("model", "modality"))]


# A stimulus of a kind no benchmark declares (a generic table's stimuli say nothing of theirs) in a dataset
# whose benchmark does not ask such kinds as its own, and the media kinds a table may name. They are asked
# with FriendBench's question and the stimulus's text, the forced choice being the one question that needs
# no field of its own.
UNDECLARED = KindProfile(GENERIC_KIND, template=FORCED_CHOICE_PROMPT)
KINDS = (KindProfile("video", page=Page.MEDIA, player=PlayerLayout.VIDEO, template=FORCED_CHOICE_PROMPT),
         KindProfile("audio", page=Page.MEDIA, player=PlayerLayout.AUDIO, template=FORCED_CHOICE_PROMPT))
PROFILE = BenchmarkProfile(NAME, "Generic", interpret, score_reply, dashboard_tables, RUN_KEY, kinds=KINDS)
