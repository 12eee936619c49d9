"""Stacked waveform lanes on one time axis, drawn from peak pyramids, with a playhead.

Mouse: click a lane to seek; drag the playhead to scrub; drag elsewhere to pan; wheel to zoom in time;
Shift+drag to select a range (`rangeSelected`). The view never holds a copy of the playback position:
the panel calls `set_playhead` from the clock. Views below it (the annotation tiers) link their x axis
to `ruler`, which outlives every stimulus's lanes, and use `LEFT_AXIS_WIDTH` so that times line up.
A lane's name is written across, in the column left of the time axis (`NamedAxis`), never rotated: three
EchoMind voices in thin lanes each keep a legible name.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QVBoxLayout, QWidget

from storage.media import PeakPyramid

LEFT_AXIS_WIDTH = 78
LANE_COLOURS = ("#3b7dd8", "#e07b39", "#3fa34d", "#a05fc9", "#c9455b", "#2a9d9b")
PLAYHEAD_COLOUR = "#d62728"
SCRUB_RATE_HZ = 30


def format_time(seconds: float) -> str:
    """mm:ss.cc (h:mm:ss.cc past an hour): 7.42 -> '00:07.42'."""
    seconds = max(0.0, seconds)
    centis = int(round(seconds * 100))
    hours, rest = divmod(centis, 360000)
    minutes, rest = divmod(rest, 6000)
    secs, cs = divmod(rest, 100)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}.{cs:02d}"
    return f"{minutes:02d}:{secs:02d}.{cs:02d}"


class TimeAxis(pg.AxisItem):
    """Tick labels as mm:ss(.cc) instead of raw seconds."""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph API)
        if spacing >= 1.0:
            return [format_time(v)[:-3] for v in values]
        return [format_time(v) for v in values]


class NamedAxis(pg.AxisItem):
    """A left axis that writes its row's name across (not rotated), left of any tick values: the name, then
    further lines in their own colours (a scale drawn over the row, a unit), as many as the row's height
    holds, each elided to the column, the block centred on the row."""

    NAME_FONT_PT = 8.0

    def __init__(self, **kwargs) -> None:
        super().__init__("left", **kwargs)
        self.labelText = ""   # pyqtgraph's name for the axis label; the row's name here
        self._lines: tuple[tuple[str, QColor], ...] = ()
        self._bold = False
        self._values_px = 0   # how much of the column the tick values take, at its right
        self._font = QFont()
        self._font.setPointSizeF(self.NAME_FONT_PT)

    def set_name(self, name: str, colour: str, unit: str = "", values_px: int = 0,
                 extra: Sequence[tuple[str, str]] = ()) -> None:
        """Name the row in `colour`, then the `unit` of its own axis; `extra` lines (text, colour) follow
        (the scales of what is drawn over it); `values_px` leaves room for tick values at the column's right."""
        lines = ((name, QColor(colour)), *(((unit, QColor(colour)),) if unit else ()),
                 *((t, QColor(c)) for t, c in extra))
        if (lines, values_px) == (self._lines, self._values_px):
            return  # a reused row named the same: no repaint
        self.labelText = name
        self._lines, self._values_px = lines, values_px
        self.update()

    def set_emphasis(self, bold: bool) -> None:
        """Bold for the voice that is heard (the others' names stay as legible: only their traces dim)."""
        if bold != self._bold:
            self._bold = bold
            self.update()

    def name_lines(self) -> list[str]:
        """The lines written in the column, as given (before eliding)."""
        return [text for text, _ in self._lines]

    def paint(self, painter: QPainter, *args) -> None:
        super().paint(painter, *args)
        if not self._lines:
            return
        font = QFont(self._font)
        font.setBold(self._bold)
        metrics = QFontMetrics(font)
        box = self.mapRectFromParent(self.geometry())  # the axis's own column, not the room its ticks spill into
        width = max(8, int(box.width()) - self._values_px - 6)
        step = metrics.height()
        lines = self._lines[:max(1, int(box.height() // step))]
        top = box.center().y() - step * len(lines) / 2
        painter.save()
        painter.setFont(font)
        painter.setClipRect(box)
        for k, (text, colour) in enumerate(lines):
            painter.setPen(colour)
            painter.drawText(QRectF(box.left() + 3, top + k * step, width, step),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             metrics.elidedText(text, Qt.TextElideMode.ElideRight, width))
        painter.restore()


class LaneViewBox(pg.ViewBox):
    """A ViewBox that turns a click into a time and Shift+drag into a range; plain drags pan."""

    clicked = Signal(float)
    rangeDragged = Signal(float, float, bool)  # t0, t1, finished

    def __init__(self) -> None:
        super().__init__(enableMenu=False)
        self.setMouseEnabled(x=True, y=False)

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 (Qt API)
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.clicked.emit(self.mapSceneToView(ev.scenePos()).x())
        else:
            super().mouseClickEvent(ev)

    def mouseDragEvent(self, ev, axis=None) -> None:  # noqa: N802 (Qt API)
        if ev.button() == Qt.MouseButton.LeftButton and ev.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            ev.accept()
            t0 = self.mapSceneToView(ev.buttonDownScenePos()).x()
            t1 = self.mapSceneToView(ev.scenePos()).x()
            self.rangeDragged.emit(t0, t1, bool(ev.isFinish()))
        else:
            super().mouseDragEvent(ev, axis)


class WaveformView(QWidget):
    """Lanes of waveforms (one per audio track) over a time ruler, sharing one x axis in seconds."""

    seekRequested = Signal(float)
    rangeSelected = Signal(float, float)
    viewRangeChanged = Signal(float, float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lanes: list[pg.PlotItem] = []
        self._curves: list[pg.PlotCurveItem] = []
        self._messages: list[pg.TextItem] = []
        self._pyramids: list[PeakPyramid | None] = []
        self._playheads: list[pg.InfiniteLine] = []
        self._regions: list[pg.LinearRegionItem] = []
        self._duration = 1.0
        self._playhead_s = 0.0
        self._follow = False
        self._selection: tuple[float, float] | None = None
        self._active_lane: int | None = None
        self.redraw_count = 0

        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground(None)
        self.canvas.ci.setSpacing(2)
        # little margin above and below: a laptop's height goes to the lanes (the sides stay as the views
        # under the waveform expect)
        self.canvas.ci.setContentsMargins(9, 2, 9, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.canvas)
        self._lanes_layout = self.canvas.addLayout(row=0, col=0)
        self._lanes_layout.setSpacing(2)
        self._lanes_layout.setContentsMargins(0, 0, 0, 0)
        self.ruler = self._make_plot(ruler=True)
        self.canvas.addItem(self.ruler, row=1, col=0)
        self.ruler.setMaximumHeight(34)
        self.ruler.setMinimumHeight(34)
        grid = self.canvas.ci.layout
        grid.setRowStretchFactor(0, 1)  # lanes take the height; the ruler keeps its own
        grid.setRowStretchFactor(1, 0)


        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(0)
        self._redraw_timer.timeout.connect(self.redraw)
        self.ruler.vb.sigXRangeChanged.connect(self._on_x_range_changed)
        self.ruler.vb.sigResized.connect(self._redraw_timer.start)
        self.set_duration(1.0)

    # ----- building rows -------------------------------------------------------------------------------
    def _make_plot(self, ruler: bool = False) -> pg.PlotItem:
        axis = {"bottom": TimeAxis(orientation="bottom")} if ruler else {"left": NamedAxis()}
        plot = pg.PlotItem(viewBox=LaneViewBox(), axisItems=axis)
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.getAxis("left").setWidth(LEFT_AXIS_WIDTH)
        plot.getAxis("left").setStyle(showValues=False, tickLength=0)
        if ruler:
            plot.getAxis("left").setPen(pg.mkPen(None))
        else:
            plot.hideAxis("bottom")
            plot.setXLink(self.ruler)
        plot.vb.clicked.connect(self._on_clicked)
        plot.vb.rangeDragged.connect(self._on_range_dragged)
        line = pg.InfiniteLine(self._playhead_s, angle=90,
                               movable=True, pen=pg.mkPen(PLAYHEAD_COLOUR, width=2),
                               hoverPen=pg.mkPen(PLAYHEAD_COLOUR, width=4))
        line.setZValue(20)
        plot.addItem(line, ignoreBounds=True)
        region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 200, 0, 60))
        region.setZValue(-5)
        region.hide()
        plot.addItem(region, ignoreBounds=True)
        self._register_row_items(line, region)
        return plot

    def _register_row_items(self, line: pg.InfiniteLine, region: pg.LinearRegionItem) -> None:
        self._playheads.append(line)
        self._regions.append(region)
        # Scrub floods are throttled; the final position is sent exactly when the drag ends.
        line._scrub_proxy = pg.SignalProxy(line.sigDragged, rateLimit=SCRUB_RATE_HZ, slot=self._on_scrub)
        line.sigPositionChangeFinished.connect(lambda l: self.seekRequested.emit(self._clamp(l.value())))
        if self._selection is not None:
            region.setRegion(self._selection)
            region.show()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        self._redraw_timer.start()

    def _remove_row_items(self, plot: pg.PlotItem) -> None:
        for item in list(plot.items):
            if item in self._playheads:
                self._playheads.remove(item)
            if item in self._regions:
                self._regions.remove(item)

    def minimum_height_for(self, lanes: int, lane_px: int) -> int:
        """The height that gives each of `lanes` lanes at least `lane_px`, with the ruler and margins."""
        margins = self.canvas.ci.layout.getContentsMargins()
        return lanes * (lane_px + 4) + int(self.ruler.minimumHeight() + margins[1] + margins[3]) + 2  # spacing, plot margins

    def set_lanes(self, names: Sequence[str]) -> None:
        """Replace the lanes: one row per name (e.g. "A", "B" or "target", "alternative", "neutral"),
        each empty, in its lane colour and not marked as heard."""
        # Rows already there are relabelled and emptied rather than rebuilt: building a PlotItem costs
        # milliseconds, and every stimulus switch calls this, usually with the same lane count.
        while len(self._lanes) > len(names):
            plot = self._lanes.pop()
            self._remove_row_items(plot)
            self._lanes_layout.removeItem(plot)
            del self._curves[-1], self._messages[-1], self._pyramids[-1]
        while len(self._lanes) < len(names):
            self._add_lane()
        self._active_lane = None
        for index, name in enumerate(names):
            plot = self._lanes[index]
            plot.getAxis("left").set_name(name, LANE_COLOURS[index % len(LANE_COLOURS)])
            self._style_lane(index, active=True, heard=False)
            self._pyramids[index] = None
            self._curves[index].setData([], [])
            self._messages[index].setText("")
            self._messages[index].setPos(0.0, 0.0)
        self._redraw_timer.start()

    def _add_lane(self) -> None:
        index = len(self._lanes)
        plot = self._make_plot()
        plot.setYRange(-1.0, 1.0, padding=0.02)
        plot.vb.setLimits(yMin=-1.05, yMax=1.05)
        # The y range never changes, so the SI prefix never does: skip recomputing the label on every range change.
        plot.getAxis("left").enableAutoSIPrefix(False)
        colour = LANE_COLOURS[index % len(LANE_COLOURS)]
        curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=1), connect="finite")
        plot.addItem(curve)
        message = pg.TextItem("", color="#666666", anchor=(0, 0.5))
        plot.addItem(message, ignoreBounds=True)
        self._lanes_layout.addItem(plot, row=index, col=0)
        self._lanes.append(plot)
        self._curves.append(curve)
        self._messages.append(message)
        self._pyramids.append(None)

    def _style_lane(self, index: int, active: bool, heard: bool) -> None:
        """Pen, background and label weight of a lane: dimmed when not heard among several voices."""
        plot = self._lanes[index]
        colour = QColor(LANE_COLOURS[index % len(LANE_COLOURS)])
        if not active:
            colour.setAlpha(90)
        self._curves[index].setPen(pg.mkPen(colour, width=1))
        plot.vb.setBackgroundColor(QColor(255, 240, 200, 90) if heard else None)
        plot.getAxis("left").set_emphasis(heard)

    @property
    def lane_count(self) -> int:
        return len(self._lanes)

    def lane_plot(self, index: int) -> pg.PlotItem:
        return self._lanes[index]

    # ----- content -------------------------------------------------------------------------------------
    def set_lane_peaks(self, index: int, pyramid: PeakPyramid | None) -> None:
        """Show `pyramid` in lane `index` (None clears it)."""
        self._pyramids[index] = pyramid
        self._messages[index].setText("")
        self._redraw_timer.start()

    def set_lane_message(self, index: int, text: str) -> None:
        """A note drawn in the lane instead of (or over) the waveform: 'decoding...', an error."""
        self._messages[index].setText(text)
        if text:
            self._messages[index].setPos(self.view_range()[0], 0.0)

    def lane_message(self, index: int) -> str:
        return self._messages[index].toPlainText()

    def set_active_lane(self, index: int | None) -> None:
        """Mark the lane that is heard (EchoMind voices); the others are drawn dimmer."""
        self._active_lane = index
        for i in range(len(self._lanes)):
            self._style_lane(i, active=index is None or i == index, heard=index is not None and i == index)

    @property
    def active_lane(self) -> int | None:
        return self._active_lane

    def set_duration(self, seconds: float) -> None:
        """Limit panning/zooming to [0, seconds] and show all of it."""
        self._duration = max(seconds, 1e-3)
        for plot in [self.ruler, *self._lanes]:
            plot.vb.setLimits(xMin=0.0, xMax=self._duration, minXRange=min(0.005, self._duration))
        self.set_view_range(0.0, self._duration)

    @property
    def duration(self) -> float:
        return self._duration

    def set_view_range(self, t0: float, t1: float) -> None:
        self.ruler.setXRange(t0, t1, padding=0)

    def view_range(self) -> tuple[float, float]:
        t0, t1 = self.ruler.vb.viewRange()[0]
        return float(t0), float(t1)

    def set_follow(self, follow: bool) -> None:
        """While following (during play), the view pages along so the playhead stays visible."""
        self._follow = follow

    def set_playhead(self, seconds: float) -> None:
        self._playhead_s = seconds
        for line in self._playheads:
            if not line.moving:  # a line the user is dragging belongs to the user
                line.setValue(seconds)
        if self._follow:
            t0, t1 = self.view_range()
            if not (t0 <= seconds <= t1):
                width = t1 - t0
                start = max(0.0, min(seconds - 0.1 * width, self._duration - width))
                self.set_view_range(start, start + width)

    @property
    def playhead(self) -> float:
        return self._playhead_s

    def set_selection(self, t0: float, t1: float) -> None:
        self._selection = (min(t0, t1), max(t0, t1))
        for region in self._regions:
            region.setRegion(self._selection)
            region.show()

    def clear_selection(self) -> None:
        self._selection = None
        for region in self._regions:
            region.hide()

    @property
    def selection(self) -> tuple[float, float] | None:
        return self._selection

    # ----- drawing -------------------------------------------------------------------------------------
    def _on_x_range_changed(self, *args) -> None:
        self._redraw_timer.start()
        self.viewRangeChanged.emit(*self.view_range())

    def redraw(self) -> None:
        """Recompute every lane's curve for the visible range at one point per pixel (from peaks)."""
        t0, t1 = self.view_range()
        width = int(self.ruler.vb.width()) or 1280
        self.redraw_count += 1
        for index, curve in enumerate(self._curves):
            pyramid = self._pyramids[index]
            if pyramid is None:
                if curve.xData is not None and len(curve.xData):
                    curve.setData([], [])  # an empty curve left alone needs no repaint
                continue
            peaks = pyramid.query(t0, t1, width)
            centres = t0 + (np.arange(width) + 0.5) * ((t1 - t0) / width)
            # min, max, min, max ... as one zig-zag line: filled where dense, a true line when zoomed in.
            x = np.repeat(centres, 2)
            y = np.empty(2 * width, dtype=np.float32)
            y[0::2], y[1::2] = peaks.mins, peaks.maxs
            curve.setData(x, y, connect="finite")

    # ----- mouse ---------------------------------------------------------------------------------------
    def _clamp(self, seconds: float) -> float:
        return max(0.0, min(self._duration, float(seconds)))

    def _on_clicked(self, seconds: float) -> None:
        self.seekRequested.emit(self._clamp(seconds))

    def _on_scrub(self, args) -> None:
        (line,) = args
        self.seekRequested.emit(self._clamp(line.value()))

    def _on_range_dragged(self, t0: float, t1: float, finished: bool) -> None:
        t0, t1 = sorted((self._clamp(t0), self._clamp(t1)))
        self.set_selection(t0, t1)
        if finished and t1 > t0:
            self.rangeSelected.emit(t0, t1)

    def point_for_time(self, seconds: float, lane: int = 0) -> QPoint:
        """Where time `seconds` is, vertically centred in `lane`, in `canvas` viewport coordinates
        (what a test clicks to act like a person)."""
        plot = self._lanes[lane] if self._lanes else self.ruler
        scene = plot.vb.mapViewToScene(QPointF(seconds, 0.0))
        return self.canvas.mapFromScene(scene)
