"""Failure mining: ready filters with counts, AND/OR combinations, and the slice finder.

The panel renders what `app.metrics` computes over the per-stimulus frame (`app.dashboard.failure_frame`),
built on a worker from the `AnalysisFrames` it is given. Choosing a filter, a combination or a slice emits
`drillDown(stimulus_ids, description)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDoubleSpinBox, QGroupBox, QHBoxLayout,
                               QLabel, QListWidget, QListWidgetItem, QPushButton, QRadioButton, QSpinBox,
                               QVBoxLayout, QWidget)

from widgets.frame_table import Cell, Column, FrameTableView, percent
from widgets.tasks import TaskRunner

if TYPE_CHECKING:  # the metrics' stack (polars) loads with the first dataset's failures, not before the window
    import polars as pl

    from app.analysis_frames import AnalysisFrames
    from app.metrics import FilterResult, StimulusPredicate

HUMANS_KEY = "humans (majority)"
SLICE_RANKING = "ranked by how far the Newcombe paired 95% interval of the gap stays from zero."
SLICE_COLUMNS = (Column("slice"), Column("n"), Column("acc A", percent()), Column("acc B", percent()),
                 Column("gap A−B", percent(signed=True)), Column("95% CI"))


@dataclass
class FailureState:
    """What the worker computed: the wide frame and each ready filter with its result."""

    wide: pl.DataFrame
    filters: list[tuple[StimulusPredicate, FilterResult]]
    criteria: list[str]


def ready_filters(wide: pl.DataFrame, criterion: str | None = None, k: float = 2.0) -> list[StimulusPredicate]:
    """The ready filters that make sense for this frame, in the order the panel lists them."""
    from app.metrics import (all_models_wrong, false_belief_failed, judge_at_or_below, model_wrong_humans_right,
                             models_disagree, run_keys)

    keys = run_keys(wide)
    filters: list[StimulusPredicate] = []
    if "human_majority_correct" in wide.columns:
        filters += [model_wrong_humans_right(key) for key in keys]
    if len(keys) >= 2:
        filters += [models_disagree(), all_models_wrong()]
    elif keys:
        filters.append(all_models_wrong())
    if criterion is not None:
        filters.append(judge_at_or_below(criterion, k))
    if "false_belief" in wide.columns and keys:
        filters.append(false_belief_failed())
    return filters


DEFAULT_SCALE = 5.0
LOW_SHARE = 0.4   # "judged low" starts at 40% of the judge's scale: 2 of 5, 4 of 10


def criterion_scale(judgments: pl.DataFrame | None, criterion: str | None) -> float:
    """The top of the judge's scale for `criterion` (5 when the judge did not say, or no judgments)."""
    if criterion is None or judgments is None or not judgments.height or "scale_max" not in judgments.columns:
        return DEFAULT_SCALE
    import polars as pl

    top = judgments.filter(pl.col("criterion") == criterion)["scale_max"].max()
    return float(top) if top is not None else DEFAULT_SCALE


def judge_criteria(wide: pl.DataFrame) -> list[str]:
    from app.metrics.stimuli import SCORE_PREFIX

    names = {c.rsplit(":", 1)[1] for c in wide.columns if c.startswith(SCORE_PREFIX)}
    return sorted(names)


def compute_state(frames: AnalysisFrames, human_condition: str | None, criterion: str | None,
                  k: float) -> FailureState:
    from app.dashboard import failure_frame

    wide = failure_frame(frames, human_condition)
    criteria = judge_criteria(wide)
    if criterion not in criteria:
        criterion = criteria[0] if criteria else None
    filters = ready_filters(wide, criterion, k)
    return FailureState(wide, [(f, f.apply(wide)) for f in filters], criteria)


def slice_ids(wide: pl.DataFrame, a_col: str, b_col: str, row: dict) -> list[int]:
    """Stimulus ids in one slice of `find_slices` (both correctness values known)."""
    import polars as pl

    expr = pl.col(a_col).is_not_null() & pl.col(b_col).is_not_null()
    for column, value in ((row["column_1"], row["value_1"]), (row["column_2"], row["value_2"])):
        if column is None:
            continue
        text = pl.col(column).cast(pl.String)
        expr = expr & (text.is_null() if value is None else text == value)
    return wide.filter(expr)["stimulus_id"].to_list()


class FailurePanel(QWidget):
    drillDown = Signal(list, str)
    statusMessage = Signal(str)
    stateReady = Signal()

    def __init__(self, parent: QWidget | None = None, runner: TaskRunner | None = None) -> None:
        super().__init__(parent)
        self.runner = runner or TaskRunner(self)
        self.frames: AnalysisFrames | None = None
        self.state: FailureState | None = None
        self.slices: pl.DataFrame | None = None
        self._slice_cols: tuple[str, str] = ("", "")
        # ready filters
        self.humans_condition = QComboBox()
        self.humans_condition.addItem("humans: all conditions", None)
        self.humans_condition.currentIndexChanged.connect(lambda _i: self._recompute())
        self.criterion = QComboBox()
        self.criterion.currentIndexChanged.connect(lambda _i: self._recompute())
        self.k = QDoubleSpinBox()
        self.k.setRange(0, DEFAULT_SCALE)
        self.k.setDecimals(1)
        self.k.setValue(DEFAULT_SCALE * LOW_SHARE)
        self.k.setSuffix(f" of {DEFAULT_SCALE:g}")
        self.k.setPrefix("≤ ")
        self.k.valueChanged.connect(lambda _v: self._recompute())
        self.filter_list = QListWidget()
        self.filter_list.itemClicked.connect(self._filter_clicked)
        self.filter_list.itemChanged.connect(lambda _i: self._update_combination())
        self.all_of = QRadioButton("all checked (AND)")
        self.any_of = QRadioButton("any checked (OR)")
        self.all_of.setChecked(True)
        self.negate = QCheckBox("NOT")
        for w in (self.all_of, self.any_of, self.negate):
            w.toggled.connect(lambda _on: self._update_combination())
        self.combination_label = QLabel("Check two or more filters to combine them.")
        self.combination_label.setWordWrap(True)
        self.show_combination = QPushButton("Show combination")
        self.show_combination.setEnabled(False)
        self.show_combination.clicked.connect(self.emit_combination)
        filters_box = QGroupBox("Failure filters (click one to show its stimuli)")
        fl = QVBoxLayout(filters_box)
        row = QHBoxLayout()
        row.addWidget(self.humans_condition)
        row.addWidget(QLabel("judge:"))
        row.addWidget(self.criterion)
        row.addWidget(self.k)
        fl.addLayout(row)
        fl.addWidget(self.filter_list, 1)
        comb = QHBoxLayout()
        comb.addWidget(self.all_of)
        comb.addWidget(self.any_of)
        comb.addWidget(self.negate)
        comb.addStretch(1)
        comb.addWidget(self.show_combination)
        fl.addLayout(comb)
        fl.addWidget(self.combination_label)
        # slice finder
        self.side_a = QComboBox()
        self.side_b = QComboBox()
        self.min_size = QSpinBox()
        self.min_size.setRange(1, 100000)
        self.min_size.setValue(5)
        self.min_size.setPrefix("min size ")
        self.pairs = QCheckBox("pairs of columns")
        self.find_button = QPushButton("Find slices")
        self.find_button.clicked.connect(self.find_slices)
        self.slice_table = FrameTableView(SLICE_COLUMNS)
        self.slice_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.slice_table.rowClicked.connect(self.emit_slice)
        slices_box = QGroupBox("Slice finder: where do A and B differ most?")
        sl = QVBoxLayout(slices_box)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("A"))
        pick.addWidget(self.side_a, 1)
        pick.addWidget(QLabel("B"))
        pick.addWidget(self.side_b, 1)
        sl.addLayout(pick)
        opts = QHBoxLayout()
        opts.addWidget(self.min_size)
        opts.addWidget(self.pairs)
        opts.addStretch(1)
        opts.addWidget(self.find_button)
        sl.addLayout(opts)
        sl.addWidget(self.slice_table, 1)
        self.slice_note = QLabel()
        self.slice_note.setWordWrap(True)
        sl.addWidget(self.slice_note)
        self._clear_slices()
        layout = QVBoxLayout(self)
        layout.addWidget(filters_box, 1)
        layout.addWidget(slices_box, 1)

    # ----- input -----------------------------------------------------------------------------------------
    def set_frames(self, frames: AnalysisFrames | None) -> None:
        """Compute the filters for a dataset's frames (on a worker)."""
        self.frames = frames
        conditions = sorted(frames.ratings["condition"].unique().to_list()) if frames and frames.ratings.height else []
        self.humans_condition.blockSignals(True)
        self.humans_condition.clear()
        self.humans_condition.addItem("humans: all conditions", None)
        for c in conditions:
            self.humans_condition.addItem(f"humans: {c}", c)
        self.humans_condition.blockSignals(False)
        self._clear_slices()
        self._recompute()

    def _recompute(self) -> None:
        frames = self.frames
        if frames is None:
            self.runner.cancel("failures")
            self._show_state(None)
            return
        condition, criterion, k = self.humans_condition.currentData(), self.criterion.currentData(), self.k.value()
        self.runner.submit("failures", lambda: compute_state(frames, condition, criterion, k), self._show_state,
                           lambda exc: self.statusMessage.emit(f"Failure filters failed: {exc}"))

    def _show_state(self, state: FailureState | None) -> None:
        self.state = state
        self.filter_list.blockSignals(True)
        self.filter_list.clear()
        if state is not None:
            for f, result in state.filters:
                item = QListWidgetItem(f"{result.label} — {result.count}")
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                self.filter_list.addItem(item)
        self.filter_list.blockSignals(False)
        self.criterion.blockSignals(True)
        current = self.criterion.currentData()
        self.criterion.clear()
        for c in state.criteria if state else []:
            self.criterion.addItem(c, c)
        if current is not None and self.criterion.findData(current) >= 0:
            self.criterion.setCurrentIndex(self.criterion.findData(current))
        self.criterion.setEnabled(self.criterion.count() > 0)
        self.k.setEnabled(self.criterion.count() > 0)
        self.criterion.blockSignals(False)
        self._fit_threshold()
        from app.metrics import run_keys

        sides = ([k for k in run_keys(state.wide)] if state else [])
        humans = state is not None and "human_majority_correct" in state.wide.columns
        for box, default in ((self.side_a, 0), (self.side_b, 1)):
            previous = box.currentText()
            box.clear()
            box.addItems(sides + ([HUMANS_KEY] if humans else []))
            if previous and box.findText(previous) >= 0:
                box.setCurrentIndex(box.findText(previous))
            elif box.count() > default:
                box.setCurrentIndex(box.count() - 1 if box is self.side_b and humans else default)
        self._update_combination()
        self.stateReady.emit()

    def _fit_threshold(self) -> None:
        """The threshold lives on the chosen judge's own scale (AgentViSS judges 1-10, others 1-5)."""
        judgments = self.frames.judgments if self.frames is not None else None
        scale = criterion_scale(judgments, self.criterion.currentData())
        if self.k.maximum() == scale:
            return
        self.k.blockSignals(True)
        self.k.setRange(0, scale)
        self.k.setSuffix(f" of {scale:g}")
        self.k.setValue(round(scale * LOW_SHARE, 1))
        self.k.blockSignals(False)
        self._recompute()

    # ----- filters ---------------------------------------------------------------------------------------
    def filter_results(self) -> list[FilterResult]:
        return [r for _f, r in self.state.filters] if self.state else []

    def emit_filter(self, index: int) -> None:
        result = self.state.filters[index][1]
        self.drillDown.emit(list(result.stimulus_ids), f"{result.label} ({result.count})")

    def _filter_clicked(self, item: QListWidgetItem) -> None:
        self.emit_filter(self.filter_list.row(item))

    def check_filters(self, indices: list[int]) -> None:
        """Tick these filters for the combination (as a user would)."""
        for i in range(self.filter_list.count()):
            self.filter_list.item(i).setCheckState(Qt.CheckState.Checked if i in indices else Qt.CheckState.Unchecked)

    def combination(self) -> StimulusPredicate | None:
        if self.state is None:
            return None
        chosen = [self.state.filters[i][0] for i in range(self.filter_list.count())
                  if self.filter_list.item(i).checkState() == Qt.CheckState.Checked]
        if not chosen:
            return None
        combined = chosen[0]
        for f in chosen[1:]:
            combined = combined & f if self.all_of.isChecked() else combined | f
        return ~combined if self.negate.isChecked() else combined

    def _update_combination(self) -> None:
        combined = self.combination()
        if combined is None or self.state is None:
            self.combination_label.setText("Check filters to combine them (AND / OR, optionally NOT).")
            self.show_combination.setEnabled(False)
            return
        result = combined.apply(self.state.wide)
        self.combination_label.setText(f"{result.label}: {result.count} stimuli")
        self.show_combination.setEnabled(True)

    def emit_combination(self) -> None:
        combined = self.combination()
        if combined is None or self.state is None:
            return
        result = combined.apply(self.state.wide)
        self.drillDown.emit(list(result.stimulus_ids), f"{result.label} ({result.count})")

    # ----- slices ----------------------------------------------------------------------------------------
    def _side_column(self, text: str) -> str:
        from app.metrics.stimuli import correct_column

        return "human_majority_correct" if text == HUMANS_KEY else correct_column(text)

    def find_slices(self) -> None:
        from app.metrics import find_slices, slice_columns
        from app.metrics.stimuli import CORRECT_PREFIX, SCORE_PREFIX

        if self.state is None or not self.side_a.currentText() or not self.side_b.currentText():
            return
        wide = self.state.wide
        a, b = self._side_column(self.side_a.currentText()), self._side_column(self.side_b.currentText())
        if a == b:
            self.slice_note.setText("Pick two different sides.")
            return
        self._slice_cols = (a, b)
        min_size, pairs = self.min_size.value(), self.pairs.isChecked()
        drop = [c for c in wide.columns if c.startswith((CORRECT_PREFIX, SCORE_PREFIX)) and c not in (a, b)]
        drop += [c for c in ("external_id", "human_n", "human_share_correct") if c in wide.columns]
        if a != "human_majority_correct" and b != "human_majority_correct" and "human_majority_correct" in wide.columns:
            drop.append("human_majority_correct")
        frame = wide.drop(drop)
        # a column with one value (every stimulus a dyad) is one slice that says nothing
        columns = [c for c in slice_columns(frame.drop(a, b)) if frame[c].n_unique() > 1]
        self.runner.submit("slices", lambda: find_slices(frame, a, b, columns, pairs=pairs, min_size=min_size),
                           self._show_slices, lambda exc: self.slice_note.setText(f"Slice finder failed: {exc}"))

    def _clear_slices(self) -> None:
        """Another dataset: the slices found before, a search still running and their note all go, so the
        slice finder never describes a dataset that is no longer shown."""
        self.runner.cancel("slices")
        self.slices = None
        self.slice_table.set_rows([])
        self.slice_note.setText(self._about_slices(f"pick A and B, then Find slices; they are {SLICE_RANKING}"))

    def _about_slices(self, text: str) -> str:
        """`text` about the slices, naming the dataset they come from."""
        return f"{self.frames.dataset.name}: {text}" if self.frames is not None else text[:1].upper() + text[1:]

    def _show_slices(self, table: pl.DataFrame) -> None:
        self.slices = table
        # the interval sorts by how far it stays from zero (its evidence), as the slices are ranked
        self.slice_table.set_rows([(row["slice"], row["n"], row["accuracy_a"], row["accuracy_b"], row["gap"],
                                    Cell(row["evidence"], f"[{row['ci_low']:+.0%}, {row['ci_high']:+.0%}]"))
                                   for row in table.iter_rows(named=True)])
        self.slice_table.resizeColumnsToContents()
        self.slice_note.setText(self._about_slices(
            f"{table.height} slices of at least {self.min_size.value()} stimuli, {SLICE_RANKING}"
            if table.height else "no slice is large enough; lower the minimum size."))
        self.stateReady.emit()

    def emit_slice(self, row: int) -> None:
        """Show the stimuli of the found slice `row` (in the order found, however the table is sorted)."""
        if self.slices is None or self.state is None:
            return
        values = self.slices.row(row, named=True)
        ids = slice_ids(self.state.wide, *self._slice_cols, values)
        self.drillDown.emit(ids, f"slice {values['slice']}: gap {values['gap']:+.0%} (n={values['n']})")
