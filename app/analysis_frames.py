"""One dataset's data as frames (SQL -> polars, see `storage.analysis`), each read from the store at most once.

`app.dashboard.load_frames` makes them; every benchmark's dashboard tables (`app.benchmarks`), the dashboard
(`app.dashboard`), the failure filters and the frames kept per change (`app.dashboard_cache`) read them. They
sit below all of those, so a benchmark's rules can name what they read without importing the dashboard that
asks them.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import polars as pl

from storage import analysis
from storage.records import Dataset
from storage.store import Store

T = TypeVar("T")

LIVE_SUFFIX = " (live)"


@dataclass
class AnalysisFrames:
    """One dataset's data as frames (see `storage.analysis` for the columns), as the store held it when read.

    The stimuli and the per-prediction frames are read from `store` when first asked (on whichever thread
    asks, once): the dashboards work from counts aggregated in the store, so a million predictions are only
    turned into a frame when a view needs each one (failure filters, slices). The judge scores are read when
    first asked too: by the dashboards of the benchmarks that show them, and by the failure filters' worker
    before their view looks at a judge's scale. Ratings are read at once: the failure filters' view lists their
    conditions on its own thread. What is computed from them is kept with them (`computed_once`); frames are read
    again only after the data changed (`app.dashboard_cache`)."""

    dataset: Dataset
    ratings: pl.DataFrame
    store: Store
    asr: pl.DataFrame | None = None
    conversation: pl.DataFrame | None = None
    aggregates: pl.DataFrame | None = None
    ncp: pl.DataFrame | None = None   # one row per NCP attempt with its outcome and the task's factors
    has_ncp_tasks: bool = False
    notes: list[str] = field(default_factory=list)
    _stimuli: pl.DataFrame | None = field(default=None, repr=False)
    _judgments: pl.DataFrame | None = field(default=None, repr=False)
    _predictions: pl.DataFrame | None = field(default=None, repr=False)
    _answer_counts: dict[tuple[str, ...], pl.DataFrame] = field(default_factory=dict, repr=False)
    _correct_counts: pl.DataFrame | None = field(default=None, repr=False)
    _imported: ImportedFrames | None = field(default=None, repr=False, compare=False)
    _computed: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _reading: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _computing: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def benchmark(self) -> str:
        return self.dataset.benchmark

    @property
    def stimuli(self) -> pl.DataFrame:
        """Every stimulus with its flattened meta (`analysis.stimuli_frame`)."""
        with self._reading:
            if self._stimuli is None:
                self._stimuli = analysis.stimuli_frame(self.store.cursor(), self.dataset.id)
            return self._stimuli

    @property
    def judgments(self) -> pl.DataFrame:
        """Every judge score (`analysis.judgments_frame`)."""
        with self._reading:
            if self._judgments is None:
                self._judgments = analysis.judgments_frame(self.store.cursor(), self.dataset.id)
            return self._judgments

    def __post_init__(self) -> None:
        if self._imported is None:
            self._imported = ImportedFrames(self.dataset, self.ratings, self.aggregates, self.has_ncp_tasks)

    def imported(self) -> ImportedFrames:
        """The frames only an import changes, for reading these frames again after another change (takes no
        lock: the change channel asks for them while a view may be reading every prediction)."""
        assert self._imported is not None   # made with the frames
        return self._imported

    def from_import(self, key: str, compute: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        """`compute()`, a table made only from what an import writes (the ratings, the published figures), kept
        with those frames under `key`: after a change of the figures alone it is not made again."""
        return self.imported().computed_once(key, compute)

    def computed_once(self, key: str, compute: Callable[[], T]) -> T:
        """`compute()` the first time `key` is asked for, then what it gave (while these frames are kept, a
        dashboard is computed once per correction: `app.dashboard.dashboard`)."""
        with self._computing:
            if key not in self._computed:
                self._computed[key] = compute()
            return self._computed[key]

    @property
    def predictions(self) -> pl.DataFrame:
        """Every prediction (`analysis.predictions_frame`, live runs' models named "... (live)")."""
        with self._reading:
            if self._predictions is None:
                self._predictions = _label_live(analysis.predictions_frame(self.store.cursor(), self.dataset.id))
            return self._predictions

    def answer_counts(self, truths: Sequence[str]) -> pl.DataFrame:
        """Predictions on stimuli whose truth is one of `truths`, counted per model (live runs labelled), modality,
        ground_truth and answer (`n`); read once per set of truths."""
        key = tuple(truths)
        with self._reading:
            if key not in self._answer_counts:
                self._answer_counts[key] = analysis.prediction_answer_counts(self.store.cursor(), self.dataset.id,
                                                                             key, LIVE_SUFFIX)
            return self._answer_counts[key]

    @property
    def correct_counts(self) -> pl.DataFrame:
        """Predictions counted per model (live runs labelled), modality and correct (`n`)."""
        with self._reading:
            if self._correct_counts is None:
                self._correct_counts = analysis.prediction_correct_counts(self.store.cursor(), self.dataset.id,
                                                                          LIVE_SUFFIX)
            return self._correct_counts

    def predicted_stimulus_ids(self, model: str, modality: str | None, ground_truths: list[str] | None = None,
                               scored_only: bool = False) -> list[int]:
        """Sorted ids of the stimuli `model` (live runs labelled) answered in `modality`, read from the store
        (`analysis.predicted_stimulus_ids`)."""
        return analysis.predicted_stimulus_ids(self.store.cursor(), self.dataset.id, model, modality, ground_truths,
                                               LIVE_SUFFIX, scored_only)



def _label_live(frame: pl.DataFrame) -> pl.DataFrame:
    """Live runs get " (live)" after the model name, so they never pool with imported answers."""
    if frame.is_empty() or "is_live" not in frame.columns or not frame["is_live"].any():
        return frame
    return frame.with_columns(pl.when(pl.col("is_live")).then(pl.col("model") + LIVE_SUFFIX)
                              .otherwise(pl.col("model")).alias("model"))


@dataclass(frozen=True)
class ImportedFrames:
    """What only an import writes: the dataset's record, its human ratings, its published figures, and whether
    any of its stimuli is an NCP task.

    An import says `Topic.DATASETS`; a change of a dataset's figures alone (`Topic.METRICS`: a live run's answers,
    cue measures) leaves these as they were, so frames read again after it keep them (`load_frames`)."""

    dataset: Dataset
    ratings: pl.DataFrame
    aggregates: pl.DataFrame | None
    has_ncp_tasks: bool
    _computed: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def computed_once(self, key: str, compute: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        """`compute()` the first time `key` is asked for, then what it gave."""
        with self._lock:
            if key not in self._computed:
                self._computed[key] = compute()
            return self._computed[key]
