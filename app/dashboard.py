"""The metrics dashboard's tables, per benchmark, computed from a dataset's frames (Qt-free).

`load_frames(store, dataset_id)` reads everything once (SQL -> polars, see `storage.analysis`);
`compute_dashboard(frames, correction)` turns it into `DashboardTable`s, each carrying for every row the
stimulus ids behind it, so a click on a bar can show exactly those stimuli. `dashboard_json` is the same
for the command line.

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
- Any other dataset: accuracy per model x modality.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from app.benchmarks.ncp import score_attempt
from app.metrics import (AGENTVISS_TASKS, BLEU_TOKENIZERS, CORRECTIONS, ECHOMIND_JUDGE_CRITERIA, accuracy_table,
                         agentviss_task_scores, human_signal_detection, judge_means, mcq_accuracy_by_type,
                         ncp_success, signal_detection_table, text_overlap_table, wer_table)
from app.ncp import NcpAttempt, dataset_attempts
from storage import analysis, lookups
from storage.records import Dataset
from storage.store import Store

HUMANS = "humans"
LIVE_SUFFIX = " (live)"
CORRECTION_NAMES = {"loglinear": "log-linear (k+0.5)/(n+1)", "half_over_n": "1/(2N) for rates of 0 or 1"}
BLEU_TOKENIZER = "nltk_word"


@dataclass
class AnalysisFrames:
    """One dataset's data as frames (see `storage.analysis` for the columns).

    The per-prediction frames are read from `store` when first asked (on whichever thread asks, once):
    the dashboards work from counts aggregated in the store, so a million predictions are only turned
    into a frame when a view needs each one (failure filters, slices)."""

    dataset: Dataset
    stimuli: pl.DataFrame
    ratings: pl.DataFrame
    judgments: pl.DataFrame
    store: Store
    asr: pl.DataFrame | None = None
    conversation: pl.DataFrame | None = None
    aggregates: pl.DataFrame | None = None
    ncp: pl.DataFrame | None = None   # one row per NCP attempt with its outcome and the task's factors
    notes: list[str] = field(default_factory=list)
    _predictions: pl.DataFrame | None = field(default=None, repr=False)
    _answer_counts: pl.DataFrame | None = field(default=None, repr=False)
    _reading: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def benchmark(self) -> str:
        return self.dataset.benchmark

    @property
    def predictions(self) -> pl.DataFrame:
        """Every prediction (`analysis.predictions_frame`, live runs' models named "... (live)")."""
        with self._reading:
            if self._predictions is None:
                self._predictions = _label_live(analysis.predictions_frame(self.store.cursor(), self.dataset.id))
            return self._predictions

    @property
    def answer_counts(self) -> pl.DataFrame:
        """Predictions counted per model (live runs labelled), modality, ground_truth and answer (`n`)."""
        with self._reading:
            if self._answer_counts is None:
                self._answer_counts = analysis.prediction_answer_counts(self.store.cursor(), self.dataset.id,
                                                                        LIVE_SUFFIX)
            return self._answer_counts

    def predicted_stimulus_ids(self, model: str, modality: str | None,
                               ground_truths: list[str] | None = None) -> list[int]:
        """Sorted ids of the stimuli `model` (live runs labelled) answered in `modality`, read from the store."""
        return analysis.predicted_stimulus_ids(self.store.cursor(), self.dataset.id, model, modality, ground_truths,
                                               LIVE_SUFFIX)


@dataclass
class ChartSpec:
    """How a table is drawn: `bars` (value with optional whiskers, one bar per row, grouped by
    `category_cols` and coloured by `series_col`) or `scatter` (x against y, each point labelled)."""

    kind: str
    value_col: str = ""
    low_col: str | None = None
    high_col: str | None = None
    category_cols: tuple[str, ...] = ()
    series_col: str | None = None
    x_col: str = ""
    y_col: str = ""
    label_cols: tuple[str, ...] = ()
    y_label: str = ""
    x_label: str = ""
    y_range: tuple[float, float] | None = None
    reference_line: float | None = None


class RowStimuli(Sequence[list[int]]):
    """For each row of a table, the sorted ids of the stimuli behind it, found when asked (a million
    predictions make a million ids; a click needs one row's)."""

    def __init__(self, source: pl.DataFrame | None, keys: Sequence[str], table: pl.DataFrame) -> None:
        self._source = source
        self._keys = list(keys)
        self._rows = table.select(self._keys).to_dicts() if source is not None and not table.is_empty() else []
        self._height = table.height

    def __len__(self) -> int:
        return self._height

    def __getitem__(self, row: int) -> list[int]:  # type: ignore[override]
        if self._source is None or not self._rows:
            return []
        if not -self._height <= row < self._height:
            raise IndexError(row)
        values = self._rows[row]
        match = pl.lit(True)
        for key in self._keys:
            value = values[key]
            match = match & (pl.col(key).is_null() if value is None else pl.col(key) == value)
        return self._source.filter(match)["stimulus_id"].unique().sort().to_list()


class QueriedRowStimuli(Sequence[list[int]]):
    """For each row of a table, the sorted ids of the stimuli behind it, asked of `find` (given the row's
    `keys` values) when first wanted and then remembered."""

    def __init__(self, find: Callable[[dict[str, Any]], list[int]], keys: Sequence[str], table: pl.DataFrame) -> None:
        self._find = find
        self._rows = table.select(list(keys)).to_dicts() if not table.is_empty() else []
        self._found: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, row: int) -> list[int]:  # type: ignore[override]
        if not -len(self._rows) <= row < len(self._rows):
            raise IndexError(row)
        row %= len(self._rows)
        if row not in self._found:
            self._found[row] = self._find(self._rows[row])
        return self._found[row]


@dataclass
class DashboardTable:
    key: str
    title: str
    note: str
    frame: pl.DataFrame
    stimulus_ids: Sequence[list[int]]
    chart: ChartSpec | None = None
    describe_cols: tuple[str, ...] = ()
    n_stimuli: list[int] | None = None

    def describe(self, row: int) -> str:
        """A short description of one row, for a drill-down ("atlas-7b · video: accuracy")."""
        values = self.frame.row(row, named=True)
        parts = [str(values[c]) for c in self.describe_cols if c in values and values[c] not in (None, "")]
        return f"{self.title}: {' · '.join(parts)} ({self.stimulus_count(row)} stimuli)"

    def stimulus_count(self, row: int) -> int:
        return self.n_stimuli[row] if self.n_stimuli is not None else len(self.stimulus_ids[row])

    def to_json(self) -> dict[str, Any]:
        rows = []
        for i, row in enumerate(self.frame.iter_rows(named=True)):
            rows.append({k: _plain(v) for k, v in row.items()} | {"n_stimuli": self.stimulus_count(i)})
        return {"key": self.key, "title": self.title, "note": self.note, "rows": rows}


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


def _plain(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


# ----- loading -----------------------------------------------------------------------------------------
def _label_live(frame: pl.DataFrame) -> pl.DataFrame:
    """Live runs get " (live)" after the model name, so they never pool with imported answers."""
    if frame.is_empty() or "is_live" not in frame.columns or not frame["is_live"].any():
        return frame
    return frame.with_columns(pl.when(pl.col("is_live")).then(pl.col("model") + LIVE_SUFFIX)
                              .otherwise(pl.col("model")).alias("model"))


def load_frames(store: Store, dataset_id: int) -> AnalysisFrames:
    """Read one dataset's frames with this thread's cursor (safe to call on a worker)."""
    cur = store.cursor()
    dataset = lookups.dataset_by_id(cur, dataset_id)
    frames = AnalysisFrames(dataset, analysis.stimuli_frame(cur, dataset_id),
                            analysis.human_ratings_frame(cur, dataset_id), analysis.judgments_frame(cur, dataset_id),
                            store)
    if dataset.benchmark == "echomind":
        frames.asr = analysis.asr_frame(cur, dataset_id)
        frames.conversation = analysis.conversation_frame(cur, dataset_id)
    frames.aggregates = analysis.aggregate_results_frame(cur, dataset_id)
    if dataset.benchmark in ("ncp", "exploretom") or frames.stimuli.filter(pl.col("kind") == "ncp_task").height:
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


# ----- helpers -----------------------------------------------------------------------------------------
def _counts_by(frame: pl.DataFrame, keys: Sequence[str], table: pl.DataFrame) -> list[int]:
    """For each row of `table`, how many distinct stimuli of `frame` share its `keys` values."""
    if table.is_empty():
        return []
    grouped = frame.group_by(list(keys)).agg(pl.col("stimulus_id").n_unique().alias("_n"))
    joined = table.select(list(keys)).with_row_index("_row").join(grouped, on=list(keys), how="left",
                                                                  nulls_equal=True).sort("_row")
    return [int(n or 0) for n in joined["_n"].to_list()]


def _table(key: str, title: str, note: str, frame: pl.DataFrame, source: pl.DataFrame, keys: Sequence[str],
           chart: ChartSpec | None, describe: Sequence[str] | None = None) -> DashboardTable:
    source = source.select("stimulus_id", *keys)
    return DashboardTable(key, title, note, frame, RowStimuli(source, keys, frame), chart,
                          tuple(describe if describe is not None else keys), _counts_by(source, keys, frame))


# ----- per benchmark -----------------------------------------------------------------------------------
def friendbench_tables(frames: AnalysisFrames, correction: str) -> list[DashboardTable]:
    """Accuracy (Wilson 95%), d' and c per model x modality, plus the human crowd per condition.

    The model rows come from answer counts aggregated in the store; the stimuli behind a row are looked
    up when asked."""
    truths = ["familiar", "stranger"]
    counts = frames.answer_counts.filter(pl.col("ground_truth").is_in(truths))
    name = CORRECTION_NAMES[correction]
    parts = []
    if counts.height:
        parts.append(signal_detection_table(counts, ["model", "modality"], correction=correction, count_col="n"))
    ratings = frames.ratings
    crowd_source = None
    if ratings.height:
        crowd = human_signal_detection(ratings, truth=frames.stimuli.select("stimulus_id", "ground_truth"),
                                       correction=correction)
        parts.append(crowd.rename({"condition": "modality"}).with_columns(pl.lit(HUMANS).alias("model"))
                     .select(parts[0].columns if parts else ["model", *crowd.columns]))
        crowd_source = ratings.select("stimulus_id", pl.lit(HUMANS).alias("model"),
                                      pl.col("condition").alias("modality"))
    if not parts:
        return []
    table = pl.concat(parts, how="vertical_relaxed")

    def find(row: dict[str, Any]) -> list[int]:
        if crowd_source is not None and row["model"] == HUMANS:
            match = (pl.col("modality").is_null() if row["modality"] is None else pl.col("modality") == row["modality"])
            return crowd_source.filter(match)["stimulus_id"].unique().sort().to_list()
        return frames.predicted_stimulus_ids(row["model"], row["modality"], truths)

    stimulus_ids = QueriedRowStimuli(find, ["model", "modality"], table)
    accuracy = DashboardTable(
        "friendbench.accuracy", "FriendBench accuracy",
        "Share correct per model and modality, with 95% Wilson intervals; humans pooled over raters.",
        table, stimulus_ids,
        ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high", category_cols=("model",),
                  series_col="modality", y_label="accuracy", y_range=(0.0, 1.0), reference_line=0.5),
        ("model", "modality"))
    signal = DashboardTable(
        "friendbench.signal", f"FriendBench d′ and c (correction: {name})",
        f"Signal = familiar. d′ = z(H) − z(F); c = −(z(H) + z(F))/2, c > 0 leans \"stranger\". "
        f"Rate correction: {name}.",
        table, stimulus_ids,
        ChartSpec("scatter", x_col="criterion", y_col="d_prime", label_cols=("model", "modality"),
                  series_col="modality", x_label="criterion c (> 0: leans stranger)", y_label="d′ (sensitivity)"),
        ("model", "modality"))
    return [accuracy, signal]


def echomind_tables(frames: AnalysisFrames, notes: list[str]) -> list[DashboardTable]:
    tables: list[DashboardTable] = []
    asr = frames.asr
    if asr is not None and asr.height:
        wer = wer_table(asr, "reference", "answer", ["model"])
        tables.append(_table(
            "echomind.wer", "EchoMind ASR word error rate",
            f"WER per utterance against the script text, then averaged (recomputed). Normaliser: "
            f"{wer['normalizer'][0]}.", wer, asr, ["model"],
            ChartSpec("bars", value_col="wer", category_cols=("model",), y_label="WER (lower is better)")))
    mcq = frames.predictions.filter(pl.col("modality").str.starts_with("mcq_")).with_columns(
        pl.col("modality").str.replace("mcq_", "").alias("task"))
    if mcq.height and mcq["correct"].drop_nulls().len():
        by_task = mcq_accuracy_by_type(mcq, "task", ["model"])
        tables.append(_table(
            "echomind.mcq", "EchoMind MCQ accuracy by task", "Share correct with 95% Wilson intervals.",
            by_task, mcq, ["model", "task"],
            ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high", category_cols=("task",),
                      series_col="model", y_label="accuracy", y_range=(0.0, 1.0))))
        if "question_type" in mcq.columns and mcq["question_type"].drop_nulls().len():
            typed = mcq.filter(pl.col("question_type").is_not_null())
            by_type = mcq_accuracy_by_type(typed, "question_type", ["model"])
            tables.append(_table(
                "echomind.mcq_type", "EchoMind MCQ accuracy by question type",
                "Share correct with 95% Wilson intervals.", by_type, typed, ["model", "question_type"],
                ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high",
                          category_cols=("question_type",), series_col="model", y_label="accuracy",
                          y_range=(0.0, 1.0))))
    judged = frames.judgments.filter(pl.col("criterion").is_in(list(ECHOMIND_JUDGE_CRITERIA)))
    if judged.height:
        means = judge_means(judged, ["model", "criterion"], criteria=ECHOMIND_JUDGE_CRITERIA)
        tables.append(_table(
            "echomind.judges", "EchoMind conversation judge scores",
            "Mean judge score (1-5) per criterion: C1 context fit, C2 naturalness, C3 colloquialism, "
            "C4 speech-information relevance, VES vocal empathy; 95% normal intervals.",
            means, judged, ["model", "criterion"],
            ChartSpec("bars", value_col="mean", low_col="ci_low", high_col="ci_high", category_cols=("criterion",),
                      series_col="model", y_label="mean score", y_range=(0.0, 5.0))))
    conv = frames.conversation
    if conv is not None and conv.height:
        referenced = conv.filter(pl.col("reference").is_not_null())
        if referenced.height:
            overlap = text_overlap_table(referenced, "reference", "answer", ["model"], tokenizer=BLEU_TOKENIZER)
            tables.append(_table(
                "echomind.overlap", "EchoMind response BLEU / ROUGE-L F",
                f"Sentence BLEU (smoothing 1) and ROUGE-L F against the reference responses. BLEU tokenizer: "
                f"{BLEU_TOKENIZERS[BLEU_TOKENIZER]}.", overlap, referenced, ["model"],
                ChartSpec("bars", value_col="bleu", category_cols=("model",), y_label="BLEU", y_range=(0.0, 1.0))))
        else:
            notes.append("EchoMind: no reference responses in this dataset, so BLEU and ROUGE-L are not recomputed "
                         "(imported METEOR/BERTScore/BLEU figures, if any, are listed as published).")
    return tables


def agentviss_tables(frames: AnalysisFrames) -> list[DashboardTable]:
    judged = frames.judgments.filter(pl.col("criterion").is_in(list(AGENTVISS_TASKS)))
    if not judged.height:
        return []
    scores = agentviss_task_scores(judged, ["model", "vision_mode"])
    scale = judged["scale_max"].drop_nulls()
    top = float(scale.max()) if scale.len() else None
    source = judged.rename({"criterion": "task"})
    scores = scores.with_columns(pl.concat_str([pl.col("model"), pl.col("vision_mode")], separator=" · ")
                                 .alias("model_mode"))
    return [_table(
        "agentviss.tasks", "AgentViSS judged scores by task and vision mode",
        "Mean judge score per task (Expr, Char, Int-Reg, Int-Out) in verbalized (VV) and direct (DV) vision; "
        "95% normal intervals.", scores, source, ["model", "vision_mode", "task"],
        ChartSpec("bars", value_col="mean", low_col="ci_low", high_col="ci_high", category_cols=("task",),
                  series_col="model_mode", y_label="mean score", y_range=(0.0, top) if top else None),
        describe=("model", "vision_mode", "task"))]


def ncp_tables(frames: AnalysisFrames) -> list[DashboardTable]:
    attempts = frames.ncp
    if attempts is None or not attempts.height:
        return []
    factors = [c for c in ("goal_order", "goal_size", "false_belief") if c in attempts.columns]
    scored = attempts.filter(pl.col("correct").is_not_null())
    if not factors or not scored.height:
        return []
    table = ncp_success(scored, ["model"], factors)
    labelled = table.with_columns(pl.concat_str([pl.col("factor"), pl.col("level")], separator=" = ")
                                  .alias("factor_level"))
    source = pl.concat([scored.select("stimulus_id", "model", pl.lit(f).alias("factor"),
                                      pl.col(f).cast(pl.String).alias("level")) for f in factors])
    return [_table(
        "ncp.success", "NCP goal success by order, size and belief",
        "Share of attempts whose goal holds after the last step, with 95% Wilson intervals.",
        labelled, source, ["model", "factor", "level"],
        ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high",
                  category_cols=("factor_level",), series_col="model", y_label="success rate", y_range=(0.0, 1.0)),
        describe=("model", "factor", "level"))]


def generic_tables(frames: AnalysisFrames) -> list[DashboardTable]:
    preds = frames.predictions.filter(pl.col("correct").is_not_null())
    if not preds.height:
        return []
    table = accuracy_table(preds, ["model", "modality"])
    return [_table("generic.accuracy", "Accuracy by model and condition", "95% Wilson intervals.",
                   table, preds, ["model", "modality"],
                   ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high",
                             category_cols=("model",), series_col="modality", y_label="accuracy",
                             y_range=(0.0, 1.0)))]


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
    bench = frames.benchmark
    if bench == "friendbench":
        tables = friendbench_tables(frames, correction)
    elif bench == "echomind":
        tables = echomind_tables(frames, notes)
    elif bench == "agentviss":
        tables = agentviss_tables(frames)
    elif bench in ("ncp", "exploretom") and frames.ncp is not None:
        tables = ncp_tables(frames) or generic_tables(frames)
    else:
        tables = generic_tables(frames)
    tables += imported_table(frames)
    if not tables:
        notes.append("No scored predictions or judge scores in this dataset.")
    return Dashboard(frames.dataset, correction, tables, notes)


def dashboard_json(store: Store, dataset_name: str | None = None, correction: str = "loglinear") -> dict[str, Any]:
    """The dashboards of one dataset (or every dataset) as plain JSON values (NaN becomes null)."""
    cur = store.cursor()
    chosen = lookups.datasets(cur, dataset_name)
    return {"store": str(store.path), "correction": correction,
            "datasets": [compute_dashboard(load_frames(store, d.id), correction).to_json() for d in chosen]}


# ----- per-stimulus frame for failure filters and slices ---------------------------------------------------
RUN_KEY_COLUMNS = {"friendbench": ("model", "modality"), "echomind": ("model", "modality"),
                   "agentviss": ("model", "vision_mode"), "ncp": ("model",), "exploretom": ("model",)}


def run_key_columns(benchmark: str) -> tuple[str, ...]:
    return RUN_KEY_COLUMNS.get(benchmark, ("model", "modality"))


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
