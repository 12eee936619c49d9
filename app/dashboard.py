"""The metrics dashboard's tables, per benchmark, computed from a dataset's frames (Qt-free).

`load_frames(store, dataset_id)` reads a dataset's frames (`app.analysis_frames`: SQL -> polars, see
`storage.analysis`), each at most once: what only some tables need (the stimuli, every prediction, the answers
counted in the store) when first asked; `compute_dashboard(frames, correction)` asks the dataset's benchmark
(`app.benchmarks`) for its tables, each carrying for every row the stimulus ids behind it, so a click on a bar can
show exactly those stimuli; `dashboard(frames, correction)` keeps each correction's dashboard with its frames.
`dashboard_json` is the same for the command line; the window keeps a dataset's frames until its data changes
(`app.dashboard_cache`).

What each benchmark shows:
- FriendBench: accuracy with 95% Wilson intervals, d' and c per model x modality and for the human crowd
  per condition (signal = familiar; the rate correction is named in every row and in the table's note).
- EchoMind: WER recomputed from the ASR outputs against the script text; MCQ accuracy by task
  (understanding / reasoning) and by question subtype; judge means C1-C4 and VES; BLEU and ROUGE-L F when
  reference responses exist (the BLEU tokenizer is named); published leaderboard figures as imported.
- AgentViSS: judged scores per task (Expr, Char, Int-Reg, Int-Out) and vision mode (VV, DV).
- NCP-ExploreToM: goal success by order, goal size and true/false belief; an attempt without a stored
  outcome is replayed through the belief engine (set-up steps, then the model's) and succeeds when the
  goal holds after its last step.
- ExploreToM story questions: accuracy by order, by true or false belief and by story type, with 95% Wilson
  intervals; an answer without a stored verdict is scored by the benchmark's rule
  (`app.benchmarks.ncp.score_story`).
- Any other dataset: accuracy per model x modality.

FriendBench's and any other dataset's accuracy come from the answers counted per run in one DuckDB GROUP BY, so
a million predictions are not read into a frame for them; the statistics are computed from those counts.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from app.analysis_frames import AnalysisFrames, ImportedFrames
from app.benchmarks import kinds, profile_for
from app.benchmarks.profile import Asking, Frames
from app.benchmarks.ncp import score_attempt
# the views read the table pieces here too
from app.dashboard_tables import CORRECTION_NAMES, ChartSpec, DashboardTable, RowStimuli  # noqa: F401
from app.metrics import CORRECTIONS
from app.ncp import NcpAttempt, dataset_attempts
from storage import analysis, lookups
from storage.attached import attachment_problems
from storage.records import Dataset
from storage.store import Store

@dataclass
class Dashboard:
    dataset: Dataset
    correction: str
    tables: list[DashboardTable]
    notes: list[str] = field(default_factory=list)

    def table(self, key: str) -> DashboardTable:
        for t in self.tables:
            if t.key == key:
                return t
        raise KeyError(key)

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset.name, "benchmark": self.dataset.benchmark, "correction": self.correction,
                "notes": self.notes, "tables": [t.to_json() for t in self.tables]}


# ----- loading -----------------------------------------------------------------------------------------
def load_frames(store: Store, dataset_id: int, imported: ImportedFrames | None = None) -> AnalysisFrames:
    """Read one dataset's frames with this thread's cursor (safe to call on a worker); with `imported` (of the
    same dataset, read since the last import) only what answers make is read."""
    cur = store.cursor()
    if imported is None or imported.dataset.id != dataset_id:
        dataset = lookups.dataset_by_id(cur, dataset_id)
        has_ncp_tasks = (Frames.ATTEMPTS in profile_for(dataset.benchmark).frames
                         or any(analysis.has_stimuli_of_kind(cur, dataset_id, kind.name)
                                for kind in kinds() if kind.asking is Asking.TOOLS))
        imported = ImportedFrames(dataset, analysis.human_ratings_frame(cur, dataset_id),
                                  analysis.aggregate_results_frame(cur, dataset_id), has_ncp_tasks)
    dataset = imported.dataset
    frames = AnalysisFrames(dataset, imported.ratings, store, aggregates=imported.aggregates,
                            has_ncp_tasks=imported.has_ncp_tasks, _imported=imported)
    frames.notes += attachment_problems(cur, dataset_id)   # its Parquet files moved or changed since attached
    if Frames.SPEECH in profile_for(dataset.benchmark).frames:
        frames.asr = analysis.asr_frame(cur, dataset_id)
        frames.conversation = analysis.conversation_frame(cur, dataset_id)
    if imported.has_ncp_tasks:
        frames.ncp, replay_notes = ncp_outcomes(dataset_attempts(cur, dataset_id), frames.stimuli)
        frames.notes += replay_notes
    return frames


def ncp_outcome(attempt: NcpAttempt) -> tuple[bool | None, str | None]:
    """(reached the goal, what was wrong). The stored outcome wins; otherwise the attempt is scored as an
    import scores it (`app.benchmarks.ncp.score_attempt`)."""
    if attempt.correct is not None:
        return attempt.correct, None
    score = score_attempt(attempt.steps, attempt.goal)
    return score.reached, score.problem


def ncp_outcomes(attempts: Sequence[NcpAttempt], stimuli: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """One row per attempt: stimulus_id, prediction_id, model, correct, and the task's goal_order,
    goal_size and false_belief; plus notes on attempts that could not be scored."""
    rows, problems = [], {}
    for attempt in attempts:
        correct, why = ncp_outcome(attempt)
        if why:
            problems[why.split(":")[0]] = problems.get(why.split(":")[0], 0) + 1
        rows.append({"stimulus_id": attempt.stimulus_id, "prediction_id": attempt.prediction_id,
                     "model": attempt.model, "correct": correct})
    frame = pl.DataFrame(rows, schema={"stimulus_id": pl.Int64, "prediction_id": pl.Int64, "model": pl.String,
                                       "correct": pl.Boolean})
    factors = [c for c in ("goal_order", "goal_size", "false_belief") if c in stimuli.columns]
    frame = frame.join(stimuli.select("stimulus_id", *factors), on="stimulus_id", how="left")
    notes = [f"NCP: {n} attempt(s) with {what}" for what, n in sorted(problems.items())]
    return frame, notes


def imported_table(frames: AnalysisFrames) -> list[DashboardTable]:
    agg = frames.aggregates
    if agg is None or not agg.height:
        return []
    return [DashboardTable("imported", "Published figures (imported, not recomputed)",
                           "As the release's result files state them; '-' means not reported.",
                           agg, RowStimuli(None, (), agg), None, ("model", "metric_group", "metric"))]


def compute_dashboard(frames: AnalysisFrames, correction: str = "loglinear") -> Dashboard:
    """Every table of the dataset's benchmark (pure: no store access)."""
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}")
    notes = list(frames.notes)
    tables = profile_for(frames.benchmark).dashboard_tables(frames, correction, notes)
    tables += imported_table(frames)
    if not tables:
        notes.append("No scored predictions or judge scores in this dataset.")
    return Dashboard(frames.dataset, correction, tables, notes)


def dashboard(frames: AnalysisFrames, correction: str = "loglinear") -> Dashboard:
    """`compute_dashboard` of `frames`, computed once per frames and correction: showing it again, or going back
    to a correction shown before, costs nothing."""
    return frames.computed_once(f"dashboard:{correction}", lambda: compute_dashboard(frames, correction))


def dashboard_json(store: Store, dataset_name: str | None = None, correction: str = "loglinear") -> dict[str, Any]:
    """The dashboards of one dataset (or every dataset) as plain JSON values (NaN becomes null)."""
    cur = store.cursor()
    chosen = lookups.datasets(cur, dataset_name)
    return {"store": str(store.path), "correction": correction,
            "datasets": [compute_dashboard(load_frames(store, d.id), correction).to_json() for d in chosen]}


# ----- per-stimulus frame for failure filters and slices ---------------------------------------------------
def run_key_columns(benchmark: str) -> tuple[str, ...]:
    """What one run of the benchmark is (the columns that tell its runs apart), for the failure filters."""
    return profile_for(benchmark).run_key


def failure_frame(frames: AnalysisFrames, human_condition: str | None = None) -> pl.DataFrame:
    """The wide per-stimulus frame (`app.metrics.per_stimulus_frame`) the failure filters and slice finder
    read: one correctness column per run key, the human majority, mean judge scores and stimulus meta."""
    from app.metrics import per_stimulus_frame

    keys = run_key_columns(frames.benchmark)
    preds = frames.predictions
    if frames.ncp is not None and frames.ncp.height:
        preds = frames.ncp.with_columns(*(pl.lit("").alias(k) for k in keys if k not in frames.ncp.columns))
    preds = preds.filter(pl.col("correct").is_not_null())
    if not preds.height:
        preds = frames.predictions.head(0)
    meta = frames.stimuli.drop([c for c in ("split",) if c in frames.stimuli.columns])
    wide = per_stimulus_frame(preds.select("stimulus_id", *keys, "correct"), keys,
                              human=frames.ratings if frames.ratings.height else None, human_condition=human_condition,
                              judgments=frames.judgments if frames.judgments.height else None, stimuli=meta)
    return wide
