"""The metrics dashboard: per benchmark, pyqtgraph charts with a table under each.

The view renders a `app.dashboard.Dashboard`; loading and computing run on a worker (latest request
wins). Clicking a bar, a point or a table row emits `drillDown(stimulus_ids, description)`.
Charts export as PNG or SVG, tables as CSV.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QPointF, QRect, Qt, Signal
from PySide6.QtGui import QFont, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFileDialog, QFrame, QHBoxLayout, QLabel, QPushButton,
                               QScrollArea, QVBoxLayout, QWidget)

from app.dashboard_tables import CORRECTION_NAMES
from widgets.frame_table import FrameTableView
from widgets.tasks import TaskRunner

if TYPE_CHECKING:  # the dashboards' stack (polars, the benchmarks' rules) loads with the first dashboard
    import polars as pl

    from app.analysis_frames import AnalysisFrames
    from app.dashboard import ChartSpec, Dashboard, DashboardTable

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
HUMAN_COLOUR = "#222222"
CLICK_RADIUS_PX = 14
LABEL_CHARS = 22
# The chart is drawn on white in any palette, so its axis titles are dark like its tick labels.
AXIS_LABEL_STYLE = {"font-size": "12pt", "color": "#222"}
TABLE_HIDDEN = {"ci_method", "correction", "normalizer", "bleu_tokenizer", "model_mode", "factor_level"}


def _short(label: str, chars: int = LABEL_CHARS) -> str:
    return label if len(label) <= chars else label[: chars - 1] + "…"


class ChartPanel(QFrame):
    """One table of the dashboard: title, note, chart (if any), table and export buttons."""

    drillDown = Signal(list, str)

    def __init__(self, table: DashboardTable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self._runner = TaskRunner(self)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        title = QLabel(f"<b>{table.title}</b>")
        big = QFont(title.font())
        big.setPointSizeF(big.pointSizeF() * 1.25)
        title.setFont(big)
        note = QLabel(table.note)
        note.setWordWrap(True)
        italic = QFont(note.font())
        italic.setItalic(True)
        note.setFont(italic)
        layout.addWidget(title)
        layout.addWidget(note)
        self.plot: pg.PlotWidget | None = None
        self._bars: list[tuple[float, float, float, float, int]] = []   # x0, x1, y_low, y_high, row
        self._points: list[tuple[float, float, int]] = []
        if table.chart is not None and table.frame.height:
            self.plot = self._make_plot(table.chart)
            layout.addWidget(self.plot)
        self.grid = self._make_table()
        layout.addWidget(self.grid)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        if self.plot is not None:
            chart_button = QPushButton("Export chart…")
            chart_button.clicked.connect(self._ask_export_chart)
            buttons.addWidget(chart_button)
        csv_button = QPushButton("Export table (CSV)…")
        csv_button.clicked.connect(self._ask_export_csv)
        buttons.addWidget(csv_button)
        layout.addLayout(buttons)

    # ----- chart -----------------------------------------------------------------------------------------
    def _make_plot(self, spec: ChartSpec) -> pg.PlotWidget:
        plot = pg.PlotWidget(background="w")
        plot.setMinimumHeight(330)
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        item = plot.getPlotItem()
        font = QFont()
        font.setPointSize(11)
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setTickFont(font)
            axis.setPen(pg.mkPen("#333"))
            axis.setTextPen(pg.mkPen("#222"))
            axis.enableAutoSIPrefix(False)  # a WER of 0.02 reads as 0.02, not "20 (x0.001)"
        item.showGrid(y=True, alpha=0.25)
        if spec.kind == "bars":
            self._draw_bars(item, spec)
        else:
            self._draw_scatter(item, spec)
        plot.scene().sigMouseClicked.connect(self._scene_clicked)
        return plot

    @staticmethod
    def _legend(item: pg.PlotItem, count: int) -> pg.LegendItem:
        """A one-row legend along the top left of the plot."""
        legend = item.addLegend(offset=(8, 4), labelTextSize="11pt", labelTextColor="#222",
                                brush=pg.mkBrush(255, 255, 255, 220))
        legend.setColumnCount(min(count, 6))
        return legend

    def _series_colour(self, series: list[str], name: str) -> str:
        return HUMAN_COLOUR if name == "humans" else PALETTE[series.index(name) % len(PALETTE)]

    def _draw_bars(self, item: pg.PlotItem, spec: ChartSpec) -> None:
        import polars as pl

        frame = self.table.frame
        categories = frame.select(pl.concat_str([pl.col(c).cast(pl.String) for c in spec.category_cols],
                                                separator=" · ").alias("c"))["c"].to_list()
        series = frame[spec.series_col].cast(pl.String).to_list() if spec.series_col else [""] * frame.height
        cat_order = list(dict.fromkeys(categories))
        series_order = list(dict.fromkeys(series))
        width = 0.8 / max(1, len(series_order))
        values = frame[spec.value_col].cast(pl.Float64).to_list()
        lows = frame[spec.low_col].cast(pl.Float64).to_list() if spec.low_col else [None] * frame.height
        highs = frame[spec.high_col].cast(pl.Float64).to_list() if spec.high_col else [None] * frame.height
        legend = self._legend(item, len(series_order)) if len(series_order) > 1 else None
        for name in series_order:
            rows = [i for i, s in enumerate(series) if s == name and values[i] is not None and values[i] == values[i]]
            if not rows:
                continue
            j = series_order.index(name)
            xs = [cat_order.index(categories[i]) + (j - (len(series_order) - 1) / 2) * width for i in rows]
            heights = [values[i] for i in rows]
            colour = self._series_colour(series_order, name)
            # outlined in its own colour, so that a bar of 0 still shows as a line on the axis
            bars = pg.BarGraphItem(x=xs, height=heights, width=width * 0.92, brush=pg.mkBrush(colour),
                                   pen=pg.mkPen(colour, width=2))
            item.addItem(bars)
            if legend is not None:
                # a swatch of its own: the sample draws the bars' outline pen as a line across itself
                legend.addItem(pg.BarGraphItem(x=[0], height=[0], width=1, brush=pg.mkBrush(colour), pen=None), name)
            whisker = [(x, values[i], lows[i], highs[i]) for x, i in zip(xs, rows)
                       if lows[i] is not None and highs[i] is not None and lows[i] == lows[i]]
            if whisker:
                wx, wy, wl, wh = (np.array(v, dtype=float) for v in zip(*whisker))
                item.addItem(pg.ErrorBarItem(x=wx, y=wy, top=wh - wy, bottom=wy - wl, beam=width * 0.35,
                                             pen=pg.mkPen("#222", width=1.5)))
            for x, i in zip(xs, rows):
                top = max(values[i], highs[i] if highs[i] is not None and highs[i] == highs[i] else values[i])
                self._bars.append((x - width / 2, x + width / 2, min(0.0, values[i]), max(top, 0.0), i))
        # Many categories share the width: shorter labels, so that none overlap (the table has full names).
        chars = LABEL_CHARS if len(cat_order) <= 5 else max(8, 120 // len(cat_order))
        item.getAxis("bottom").setTicks([[(k, _short(c, chars)) for k, c in enumerate(cat_order)]])
        item.setLabel("left", spec.y_label, **AXIS_LABEL_STYLE)
        item.setXRange(-0.6, len(cat_order) - 0.4, padding=0)
        if spec.y_range is not None:
            # headroom above the scale for the legend row, with ticks only on the scale (no "1.1" accuracy)
            low, high = spec.y_range
            item.setYRange(low, high * (1.2 if legend is not None else 1.05), padding=0)
            step = (high - low) / 5
            item.getAxis("left").setTicks([[(low + k * step, f"{low + k * step:g}") for k in range(6)],
                                           [(low + (k + 0.5) * step, "") for k in range(5)]])
        if spec.reference_line is not None:
            item.addItem(pg.InfiniteLine(pos=spec.reference_line, angle=0,
                                         pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine)))

    def _draw_scatter(self, item: pg.PlotItem, spec: ChartSpec) -> None:
        import polars as pl

        frame = self.table.frame
        xs = frame[spec.x_col].cast(pl.Float64).to_list()
        ys = frame[spec.y_col].cast(pl.Float64).to_list()
        series = frame[spec.series_col].cast(pl.String).to_list() if spec.series_col else [""] * frame.height
        series_order = list(dict.fromkeys(series))
        models = frame["model"].to_list() if "model" in frame.columns else [""] * frame.height
        item.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#aaa")))
        item.addItem(pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen("#aaa")))
        legend = self._legend(item, len(series_order))
        for name in series_order:
            rows = [i for i, s in enumerate(series) if s == name and xs[i] == xs[i] and ys[i] == ys[i]]
            if not rows:
                continue
            colour = self._series_colour(series_order, name)
            spots = [{"pos": (xs[i], ys[i]), "symbol": "star" if models[i] == "humans" else "o",
                      "size": 16 if models[i] == "humans" else 12, "brush": pg.mkBrush(colour),
                      "pen": pg.mkPen("#222")} for i in rows]
            scatter = pg.ScatterPlotItem(spots=spots)
            item.addItem(scatter)
            # the legend's sample needs its own styled symbol: the scatter's spots carry theirs per point
            legend.addItem(pg.ScatterPlotItem(symbol="o", size=12, brush=pg.mkBrush(colour), pen=pg.mkPen("#222")),
                           name)
            for i in rows:
                label = pg.TextItem(_short(" · ".join(str(frame[c][i]) for c in spec.label_cols[:1])),
                                    color="#222", anchor=(-0.08, 0.5))
                label.setFont(QFont(QFont().family(), 10))
                label.setPos(xs[i], ys[i])
                item.addItem(label)
                self._points.append((xs[i], ys[i], i))
        item.setLabel("bottom", spec.x_label, **AXIS_LABEL_STYLE)
        item.setLabel("left", spec.y_label, **AXIS_LABEL_STYLE)
        finite_x = [x for x in xs if x == x]
        if finite_x:
            span = max(abs(min(finite_x)), abs(max(finite_x)), 0.5)
            item.setXRange(-span * 1.15, span * 1.6)

    # ----- clicks ----------------------------------------------------------------------------------------
    def row_at_scene(self, scene_pos: QPointF) -> int | None:
        """The table row drawn at this scene position (a bar or a point), or None."""
        if self.plot is None:
            return None
        view = self.plot.getPlotItem().vb
        if not view.sceneBoundingRect().contains(scene_pos):
            return None
        data = view.mapSceneToView(scene_pos)
        for x0, x1, y0, y1, row in self._bars:
            if x0 <= data.x() <= x1 and y0 <= data.y() <= y1:
                return row
        best, best_d = None, CLICK_RADIUS_PX
        for x, y, row in self._points:
            spot = view.mapViewToScene(QPointF(x, y))
            d = ((spot.x() - scene_pos.x()) ** 2 + (spot.y() - scene_pos.y()) ** 2) ** 0.5
            if d <= best_d:
                best, best_d = row, d
        return best

    def scene_pos_of_row(self, row: int) -> QPointF:
        """Where a row's bar (its middle) or point is drawn, in scene coordinates (for tests and tours)."""
        assert self.plot is not None
        view = self.plot.getPlotItem().vb
        for x0, x1, y0, y1, r in self._bars:
            if r == row:
                value = self.table.frame[self.table.chart.value_col][row]
                return view.mapViewToScene(QPointF((x0 + x1) / 2, (min(0.0, value) + max(0.0, value)) / 2))
        for x, y, r in self._points:
            if r == row:
                return view.mapViewToScene(QPointF(x, y))
        raise KeyError(f"row {row} is not drawn")

    def _scene_clicked(self, event: Any) -> None:
        row = self.row_at_scene(event.scenePos())
        if row is not None:
            self.emit_row(row)

    def emit_row(self, row: int) -> None:
        """Emit the stimuli behind a row; finding them may query the store, so it runs on a worker."""
        description = self.table.describe(row)
        self._runner.submit("drill-down", lambda: list(self.table.stimulus_ids[row]),
                            lambda ids: self.drillDown.emit(ids, description))

    # ----- table -----------------------------------------------------------------------------------------
    def _columns(self) -> list[str]:
        return [c for c in self.table.frame.columns if c not in TABLE_HIDDEN]

    def _make_table(self) -> FrameTableView:
        frame = self.table.frame
        grid = FrameTableView()
        grid.set_frame(frame, self._columns())
        grid.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        grid.resizeColumnsToContents()
        grid.setMinimumHeight(min(320, 34 + 26 * max(1, frame.height)))
        grid.rowActivated.connect(lambda r: self.emit_row(r) if self.table.stimulus_count(r) else None)
        return grid

    # ----- export ----------------------------------------------------------------------------------------
    def export_chart(self, path: Path | str) -> Path:
        """Write the chart as PNG or SVG (by the file's suffix)."""
        if self.plot is None:
            raise ValueError(f"{self.table.title} has no chart")
        path = Path(path)
        item = self.plot.getPlotItem()
        if path.suffix.lower() == ".svg":
            # pyqtgraph's SVGExporter cannot parse the path data Qt 6.12 writes, so Qt's own generator
            # draws the chart (as vectors) instead.
            generator = QSvgGenerator()
            generator.setFileName(str(path))
            generator.setSize(self.plot.size())
            generator.setViewBox(QRect(0, 0, self.plot.width(), self.plot.height()))
            generator.setTitle(self.table.title)
            generator.setDescription(self.table.note)
            painter = QPainter(generator)
            try:
                self.plot.render(painter)
            finally:
                painter.end()
        else:
            exporter = pyqtgraph.exporters.ImageExporter(item)
            exporter.parameters()["width"] = max(1200, int(self.plot.width() * 2))
            exporter.export(str(path))
        return path

    def export_csv(self, path: Path | str) -> Path:
        """Write the table as CSV, with the stimulus ids of each row (space-separated) in the last column."""
        import polars as pl

        path = Path(path)
        ids = [" ".join(map(str, self.table.stimulus_ids[i])) for i in range(self.table.frame.height)]
        frame = self.table.frame.with_columns(pl.Series("stimulus_ids", ids, dtype=pl.String))
        frame.write_csv(path)
        return path

    def _ask_export_chart(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", f"{self.table.key}.png",
                                              "PNG image (*.png);;SVG drawing (*.svg)")
        if path:
            self.export_chart(path)

    def _ask_export_csv(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export table", f"{self.table.key}.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)


class MetricsDashboardView(QWidget):
    """Dashboards of one dataset. `loader(dataset_id)` returns its `AnalysisFrames` (runs on a worker); a dashboard
    is computed once per frames and correction (`app.dashboard.dashboard`), so with a loader that keeps frames
    until the data changes (`app.dashboard_cache`) showing a dataset again recomputes and redraws nothing."""

    drillDown = Signal(list, str)
    framesLoaded = Signal(object)      # AnalysisFrames, so other views can reuse them
    statusMessage = Signal(str)
    dashboardShown = Signal()

    def __init__(self, loader: Callable[[int], AnalysisFrames] | None = None, parent: QWidget | None = None,
                 runner: TaskRunner | None = None) -> None:
        super().__init__(parent)
        self.loader = loader
        self.runner = runner or TaskRunner(self)
        self.frames: AnalysisFrames | None = None
        self.dashboard: Dashboard | None = None
        self.panels: dict[str, ChartPanel] = {}
        self.heading = QLabel("No dataset")
        heading_font = QFont(self.heading.font())
        heading_font.setPointSizeF(heading_font.pointSizeF() * 1.5)
        heading_font.setBold(True)
        self.heading.setFont(heading_font)
        self.correction_box = QComboBox()
        for key, text in CORRECTION_NAMES.items():
            self.correction_box.addItem(f"d′ correction: {text}", key)
        self.correction_box.currentIndexChanged.connect(self._correction_changed)
        self.status = QLabel("")
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.status)
        top.addWidget(self.correction_box)
        self.body = QWidget()
        self.body_layout = QVBoxLayout(self.body)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.body)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.notes)
        layout.addWidget(scroll, 1)

    # ----- public API ------------------------------------------------------------------------------------
    def correction(self) -> str:
        return self.correction_box.currentData()

    def set_correction(self, correction: str) -> None:
        index = self.correction_box.findData(correction)
        if index < 0:
            raise ValueError(f"unknown correction {correction!r}")
        self.correction_box.setCurrentIndex(index)

    def set_dataset(self, dataset_id: int | None) -> None:
        """Load and compute this dataset's dashboard on a worker."""
        if dataset_id is None or self.loader is None:
            self.runner.cancel("dashboard")
            self.show_dashboard(None)
            return
        loader, correction = self.loader, self.correction()
        self.status.setText("computing…")

        def work() -> tuple[AnalysisFrames, Dashboard]:
            from app.dashboard import dashboard   # the dashboards' stack: on the worker, with the first dashboard

            frames = loader(dataset_id)
            return frames, dashboard(frames, correction)

        self.runner.submit("dashboard", work, self._loaded, self._failed)

    def set_frames(self, frames: AnalysisFrames) -> None:
        """Compute the dashboard from frames already loaded (on a worker)."""
        self.frames = frames
        self._recompute()

    def show_dashboard(self, dashboard: Dashboard | None) -> None:
        """Render a computed dashboard (on the GUI thread)."""
        self.dashboard = dashboard
        for panel in self.panels.values():
            panel.setParent(None)
            panel.deleteLater()
        self.panels = {}
        while self.body_layout.count():
            self.body_layout.takeAt(0)
        self.status.setText("")
        if dashboard is None:
            self.heading.setText("No dataset")
            self.notes.setText("")
            return
        self.heading.setText(f"{dashboard.dataset.name} — metrics")
        self.notes.setText("<br/>".join(dashboard.notes))
        self.notes.setVisible(bool(dashboard.notes))
        # the rate correction only changes d′ and c: offered where a table shows them
        self.correction_box.setVisible(any("correction" in t.frame.columns for t in dashboard.tables))
        for table in dashboard.tables:
            panel = ChartPanel(table)
            panel.drillDown.connect(self.drillDown)
            self.panels[table.key] = panel
            self.body_layout.addWidget(panel)
        self.body_layout.addStretch(1)
        self.dashboardShown.emit()

    def panel(self, key: str) -> ChartPanel:
        return self.panels[key]

    # ----- internals -------------------------------------------------------------------------------------
    def _recompute(self) -> None:
        frames, correction = self.frames, self.correction()
        if frames is None:
            return
        self.status.setText("computing…")

        def work() -> tuple[AnalysisFrames, Dashboard]:
            from app.dashboard import dashboard   # the dashboards' stack: on the worker, with the first dashboard

            return frames, dashboard(frames, correction)

        self.runner.submit("dashboard", work, self._loaded, self._failed)

    def _correction_changed(self) -> None:
        self._recompute()

    def _loaded(self, result: tuple[AnalysisFrames, Dashboard]) -> None:
        frames, dashboard = result
        fresh = frames is not self.frames
        self.frames = frames
        if dashboard is self.dashboard:   # the data did not change: what is drawn stays
            self.status.setText("")
            self.dashboardShown.emit()
        else:
            self.show_dashboard(dashboard)
        if fresh:
            self.framesLoaded.emit(frames)

    def _failed(self, exc: BaseException) -> None:
        self.status.setText("failed")
        self.statusMessage.emit(f"Metrics could not be computed: {exc}")
