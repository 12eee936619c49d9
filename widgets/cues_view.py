"""Cues against correctness: for one dataset and one judge, every cue's Cliff's delta (right minus wrong)
with its interval (or why there is none) and a note for small groups, Spearman's rho with per-stimulus
accuracy and both p-values adjusted for the number of cues; the selected cue's two distributions as a strip plot (click a point to open that
stimulus); for EchoMind, the target voice against the neutral and alternative voices of each script, and
(as judges named "target − neutral by recognition") those differences for scripts whose attribute a model
recognised in the questions against scripts where it did not.

Measuring (`Compute cues`) and comparing run on the window's worker; the table exports as CSV and the
plot as PNG or SVG; under them, the methods paragraph says how every number was made.
"""
from __future__ import annotations

import html

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDockWidget, QFileDialog, QFrame, QHBoxLayout, QLabel,
                               QMainWindow, QPushButton, QScrollArea, QSizePolicy, QSplitter, QTabWidget,
                               QVBoxLayout, QWidget)

from app.cues.compare import (Comparison, DatasetComparison, comparisons_frame, interval_text, methods_paragraph,
                              summary_lines)
from app.cues.measures import CUES
from app.cues.service import CueService
from app.cues.stats import CORRECTIONS
from widgets.frame_table import Cell, Column, FrameTableView, number
from widgets.tasks import TaskRunner

COLUMNS = (Column("cue"), Column("right"), Column("wrong"), Column("Cliff's δ", number(2)), Column("95% CI"),
           Column("p adj.", number(3)), Column("Spearman ρ", number(2)), Column("ρ p adj.", number(3)),
           Column("note"))
VOICE_COLUMNS = (Column("script"), Column("attribute"), Column("cue"), Column("target", number(2)),
                 Column("neutral", number(2)), Column("alternative", number(2)), Column("expected"),
                 Column("as expected"))
RIGHT_COLOUR, WRONG_COLOUR = "#2e8b57", "#c0392b"
SIGNIFICANT = 0.05
RECOGNITION_PREFIX = "target − neutral by recognition: "
MIN_PLOT_HEIGHT = 200
TITLE_HEIGHT = 40
DOCK_HEIGHT = 420


def export_plot(widget: pg.PlotWidget, path: Path | str, title: str = "") -> Path:
    """Write a plot as PNG, or as SVG drawn by Qt's own generator (by the file's suffix)."""
    path = Path(path)
    if path.suffix.lower() == ".svg":
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(widget.size())
        generator.setViewBox(QRect(0, 0, widget.width(), widget.height()))
        generator.setTitle(title)
        painter = QPainter(generator)
        try:
            widget.render(painter)
        finally:
            painter.end()
    else:
        exporter = pyqtgraph.exporters.ImageExporter(widget.getPlotItem())
        exporter.parameters()["width"] = max(1200, int(widget.width() * 2))
        exporter.export(str(path))
    return path


class CuesView(QWidget):
    """See the module docstring. `stimulusRequested(id)` asks the window to open a stimulus."""

    stimulusRequested = Signal(int)
    statusMessage = Signal(str)

    def __init__(self, service: CueService, runner: TaskRunner | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self.runner = runner or TaskRunner(self)
        self.result: DatasetComparison | None = None
        self._by_judge: dict[str, list[Comparison]] = {}
        self._compute_token = None
        self._points: list[tuple[float, float, int]] = []
        self._wanted: int | None = None   # the window's dataset, chosen once the list is read

        self.dataset = QComboBox(self)
        self.dataset.setMinimumContentsLength(14)
        self.judge = QComboBox(self)
        self.judge.setMinimumContentsLength(18)
        self.correction = QComboBox(self)
        self.correction.setMinimumContentsLength(14)
        for combo in (self.dataset, self.judge, self.correction):
            # as wide as their least contents, not their longest item: the dock fits a laptop's screen
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        for key, name in CORRECTIONS.items():
            self.correction.addItem(name.split(" (")[0], key)
        self.compute_button = QPushButton("Compute cues", self)
        self.compute_button.setToolTip("measure every stimulus's voices and turn-taking (once; kept in the store)")
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setEnabled(False)
        self.csv_button = QPushButton("Export table…", self)
        self.figure_button = QPushButton("Export figure…", self)
        self.progress = QLabel("", self)
        # two rows, and a progress text that takes the room left rather than asking for more: the dock sits
        # between the side docks and must not make the window wider than a laptop's screen
        self.progress.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top = QHBoxLayout()
        for label, widget in (("dataset", self.dataset), ("judge", self.judge), ("correction", self.correction)):
            top.addWidget(QLabel(label, self))
            top.addWidget(widget)
        top.addStretch(1)
        actions = QHBoxLayout()
        for widget in (self.compute_button, self.stop_button):
            actions.addWidget(widget)
        actions.addWidget(self.progress, 1)
        actions.addWidget(self.csv_button)
        actions.addWidget(self.figure_button)

        self.table = FrameTableView(COLUMNS, self)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.voices = FrameTableView(VOICE_COLUMNS, self)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.table, "cues against correctness")
        self.tabs.addTab(self.voices, "voices of a script")
        self.plot = pg.PlotWidget(background=None)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.getAxis("bottom").setTicks([[(0, "right"), (1, "wrong")]])
        self.plot.setXRange(-0.6, 1.6, padding=0)
        self.plot.setMinimumWidth(280)
        self.scatter = pg.ScatterPlotItem(size=9, hoverable=True)
        self.plot.addItem(self.scatter)
        self.scatter.sigClicked.connect(self._point_clicked)
        self.medians: list[pg.PlotDataItem] = []
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.tabs)
        split.addWidget(self.plot)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([760, 480])
        self.methods = QLabel("", self)
        self.methods.setWordWrap(True)
        self.methods.setStyleSheet("color: #666")
        self.methods.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # the methods paragraph scrolls within a few lines, so its length never makes the window taller
        self.methods_area = QScrollArea(self)
        self.methods_area.setWidget(self.methods)
        self.methods_area.setWidgetResizable(True)
        self.methods_area.setFrameShape(QFrame.Shape.NoFrame)
        self.methods_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.methods_area.setMaximumHeight(4 * self.fontMetrics().lineSpacing() + 4)
        self.plot.setMinimumHeight(MIN_PLOT_HEIGHT)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(actions)
        layout.addWidget(split, 1)
        layout.addWidget(self.methods_area)

        self.dataset.activated.connect(lambda _i: self.refresh())
        self.correction.activated.connect(lambda _i: self.refresh())
        self.judge.activated.connect(lambda _i: self._show_judge())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected_cue())
        self.compute_button.clicked.connect(self.compute)
        self.stop_button.clicked.connect(self.stop)
        self.csv_button.clicked.connect(self._ask_csv)
        self.figure_button.clicked.connect(self._ask_figure)

    # ----- loading ------------------------------------------------------------------------------------
    def load_datasets(self) -> None:
        """Fill the dataset list (on the worker), then compare the first one."""
        self.runner.submit("cues:datasets", self.service.datasets, self._datasets_loaded)

    def _datasets_loaded(self, datasets: list[tuple[int, str, str]]) -> None:
        current = self.dataset.currentData()
        self.dataset.clear()
        for dataset_id, name, benchmark in datasets:
            self.dataset.addItem(name, dataset_id)
        index = self.dataset.findData(current if current is not None else self._wanted)
        self.dataset.setCurrentIndex(max(0, index))
        self.refresh()

    def show_dataset(self, dataset_id: int | None) -> None:
        """Compare the dataset the window shows: at once when it is listed, else when the list is read."""
        self._wanted = dataset_id
        index = self.dataset.findData(dataset_id) if dataset_id is not None else -1
        if index >= 0 and index != self.dataset.currentIndex():
            self.dataset.setCurrentIndex(index)
            self.refresh()

    def select_dataset(self, name: str) -> bool:
        index = self.dataset.findText(name)
        if index < 0:
            return False
        self.dataset.setCurrentIndex(index)
        self.refresh()
        return True

    def refresh(self) -> None:
        """Compare the chosen dataset's stored cues (on the worker)."""
        dataset_id = self.dataset.currentData()
        if dataset_id is None:
            return
        correction = self.correction.currentData()
        self.progress.setText("comparing…")
        self.runner.submit("cues:compare", lambda: self.service.compare(dataset_id, correction), self._compared)

    def _compared(self, result: DatasetComparison) -> None:
        self.result = result
        self.progress.setText("" if result.run is not None else "no cues measured yet: Compute cues")
        judge = self.judge.currentText()
        self.judge.clear()
        self._by_judge = {}
        for c in result.comparisons:
            self._by_judge.setdefault(c.judge, []).append(c)
        for c in result.recognition:  # EchoMind: target minus neutral, scripts a model recognised or not
            self._by_judge.setdefault(f"{RECOGNITION_PREFIX}{c.judge}", []).append(c)
        for name in self._by_judge:
            self.judge.addItem(name)
        index = self.judge.findText(judge)
        self.judge.setCurrentIndex(max(0, index))
        self.methods.setText(methods_paragraph(result))
        self._show_judge()
        self._show_voices()

    def _show_judge(self) -> None:
        rows = self.judge_rows()
        self.table.clearSelection()
        self.table.set_rows([_comparison_row(c) for c in rows])
        self.table.resizeColumnsToContents()
        if rows:
            self.table.selectRow(0)
        self._show_selected_cue()  # also when row 0 stays selected across datasets or judges

    def judge_rows(self) -> list[Comparison]:
        """The selected judge's comparisons, the largest effects first."""
        rows = list(self._by_judge.get(self.judge.currentText(), []))
        return sorted(rows, key=lambda c: -abs(c.delta) if math.isfinite(c.delta) else 1.0)

    def _show_voices(self) -> None:
        contrasts = self.result.voices if self.result else []
        self.voices.set_rows([(v.script, v.attribute, v.cue, v.target, v.neutral, v.alternative,
                               {1: "higher", -1: "lower", 0: ""}[v.expected],
                               {True: "yes", False: "no", None: ""}[v.as_expected]) for v in contrasts])
        self.voices.resizeColumnsToContents()
        self.tabs.setTabEnabled(1, bool(contrasts))

    # ----- the plot -----------------------------------------------------------------------------------
    def selected(self) -> Comparison | None:
        rows = self.judge_rows()
        picked = self.table.selected_rows()
        return rows[picked[0]] if picked and picked[0] < len(rows) else None

    def _show_selected_cue(self) -> None:
        chosen = self.selected()
        self._draw([] if chosen is None else [chosen])

    def _draw(self, chosen: list[Comparison]) -> None:
        for item in self.medians:
            self.plot.removeItem(item)
        self.medians = []
        self._points = []
        if not chosen:
            self.scatter.setData([], [])
            self.plot.setTitle("")
            self.plot.setLabel("bottom", "")
            return
        c = chosen[0]
        rng = np.random.default_rng(0)  # the same jitter every time a cue is shown
        spots = []
        for x, values, ids, colour in ((0, c.right, c.right_stimuli, RIGHT_COLOUR),
                                       (1, c.wrong, c.wrong_stimuli, WRONG_COLOUR)):
            jitter = rng.uniform(-0.18, 0.18, len(values))
            for j, value, stimulus in zip(jitter, values, ids):
                spots.append({"pos": (x + j, value), "data": stimulus, "brush": pg.mkBrush(colour),
                              "pen": pg.mkPen("#222222", width=0.5)})
                self._points.append((x + j, value, stimulus))
            if values:
                median = float(np.median(values))
                line = pg.PlotDataItem([x - 0.3, x + 0.3], [median, median], pen=pg.mkPen(colour, width=3))
                self.plot.addItem(line)
                self.medians.append(line)
        self.scatter.setData(spots)
        unit = CUES.get(c.cue, ("", ""))[0]
        judge = self.judge.currentText()
        label = f"{c.cue}, target − neutral" if judge.startswith(RECOGNITION_PREFIX) else c.cue
        self.plot.setLabel("left", label + (f" ({unit})" if unit else ""))
        effect, counts = summary_lines(c)
        self.plot.setTitle(f"{html.escape(judge)}<br>{html.escape(effect)}", size="9pt")
        # pyqtgraph gives a title one line's height: make room for the second
        self.plot.plotItem.titleLabel.setMaximumHeight(TITLE_HEIGHT)
        self.plot.plotItem.layout.setRowFixedHeight(0, TITLE_HEIGHT)
        self.plot.setLabel("bottom", counts)
        self.plot.setXRange(-0.6, 1.6, padding=0)  # both groups, whatever the points' jitter
        self.plot.enableAutoRange(axis="y")

    def _point_clicked(self, _item, points, _event=None) -> None:
        if points:
            self.stimulusRequested.emit(int(points[0].data()))

    def points(self) -> list[tuple[float, float, int]]:
        """(x, value, stimulus id) of the plotted points (for tests that click one)."""
        return list(self._points)

    # ----- computing ----------------------------------------------------------------------------------
    def compute(self) -> None:
        """Measure the chosen dataset's cues on the worker, with progress; Stop keeps what was measured."""
        name = self.dataset.currentText()
        if not name:
            return
        self.compute_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self._compute_token = self.runner.submit(
            "cues:compute", lambda token, progress: self.service.compute(name, progress, token),
            self._computed, on_error=self._compute_failed,
            on_progress=lambda f, m: self.progress.setText(f"{f:.0%} {m}"), with_progress=True)

    def stop(self) -> None:
        if self._compute_token is not None:
            self._compute_token.cancel()
        self._compute_done("stopped; what was measured is kept")
        self.refresh()

    def _computed(self, summaries) -> None:
        measured = sum(s.measured for s in summaries)
        self._compute_done(f"{measured} stimuli measured")
        self.statusMessage.emit(f"Cue measures stored for {self.dataset.currentText()}")
        self.refresh()

    def _compute_failed(self, exc: BaseException) -> None:
        self._compute_done(str(exc))
        self.statusMessage.emit(str(exc))
        self.refresh()

    def _compute_done(self, message: str) -> None:
        self._compute_token = None
        self.compute_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.progress.setText(message)

    # ----- export -------------------------------------------------------------------------------------
    def export_csv(self, path: Path | str) -> Path:
        """Every judge's comparisons (not only the one shown) as CSV, with the stimuli of each group."""
        path = Path(path)
        if self.result is None:
            raise ValueError("nothing compared yet")
        comparisons_frame(self.result).write_csv(path)
        return path

    def export_figure(self, path: Path | str) -> Path:
        return export_plot(self.plot, path, "cues against correctness")

    def _ask_csv(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export cue comparisons", "cues.csv", "CSV table (*.csv)")
        if path:
            self.statusMessage.emit(f"Wrote {self.export_csv(path)}")

    def _ask_figure(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export figure", "cue.png",
                                              "PNG image (*.png);;SVG drawing (*.svg)")
        if path:
            self.statusMessage.emit(f"Wrote {self.export_figure(path)}")


def _comparison_row(c: Comparison) -> list[Cell]:
    """A comparison as the table shows it: the counts and effect a flag qualifies read slanted (the flag on
    hover), an adjusted p under `SIGNIFICANT` bold, a cue's meaning on hover of its name."""
    flagged = {"italic": bool(c.flag), "tooltip": c.flag or None}
    return [Cell(c.cue, tooltip=CUES[c.cue][1] if c.cue in CUES else None),
            Cell(len(c.right), **flagged), Cell(len(c.wrong), **flagged), Cell(c.delta, **flagged),
            Cell(c.ci_low, interval_text(c), **flagged),
            Cell(c.p_adjusted, bold=(c.p_adjusted or 1.0) < SIGNIFICANT), Cell(c.rho),
            Cell(c.rho_p_adjusted, bold=(c.rho_p_adjusted or 1.0) < SIGNIFICANT), Cell(c.flag)]


def open_cues_dock(window: QMainWindow) -> QDockWidget:
    """The window's Cues dock (made on first use, below the centre), shown and raised on the dataset the
    window shows, which it follows; a clicked point opens its stimulus through `window.select_stimulus_id`."""
    dock = getattr(window, "cues_dock", None)
    session = getattr(window, "session", None)
    if dock is None:
        view = CuesView(CueService(window.store, getattr(window, "changes", None)), runner=window.runner)
        view.stimulusRequested.connect(window.select_stimulus_id)
        if hasattr(window, "show_status"):
            view.statusMessage.connect(window.show_status)
        dock = QDockWidget("Cues", window)
        dock.setObjectName("CuesDock")
        dock.setWidget(view)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        window.resizeDocks([dock], [DOCK_HEIGHT], Qt.Orientation.Vertical)
        window.cues_dock = dock
        window.cues_view = view
        if session is not None:
            view.show_dataset(session.dataset_id)
            session.dataset_changed.connect(view.show_dataset)
        view.load_datasets()
    elif session is not None:
        window.cues_view.show_dataset(session.dataset_id)
    dock.show()
    dock.raise_()
    return dock
