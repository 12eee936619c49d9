"""Label tiers on the time axis: one row per (label set, annotator), labels as coloured regions.

Overlapping labels within a tier are stacked in sub-rows so none hides another. The user's own tiers are
editable: drag on empty space creates a label with the palette's current label, drag an edge to resize
(an edge dragged past the other swaps with it, as in ELAN and Praat), drag the body to move (each drag is
one undo step), Delete removes the selection, Alt+arrows nudge an edge. Others' tiers are drawn paler,
read-only, and can be hidden. Each tier's name is in a header column left of the time axis (the width of the
waveform's lane names, so times line up), never over a label. Shift+click (or a Shift-drag that ends where
it began) adds a point label, a moment as on a Praat point tier, drawn as a pin; a point drags as a whole.
Label times snap to a 10 ms grid (`app.annotations.GRID_S`), the grid
agreement is computed on. With Shift held, a dragged edge (a moved label's nearer edge, a new label's
edges) snaps first to the nearest voicing or silence boundary within SNAP_REACH_PX of it, from the
stimulus's analysis tracks (`set_boundary_source`), and a marker shows where it landed. The view draws
what the `AnnotationModel` holds and edits through it; it never reads the store.

All labels are painted by one item that only draws what is in view, so 10,000 labels pan smoothly.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QPainter, QPen
from PySide6.QtWidgets import QApplication

from app.annotation_model import AnnotationModel
from app.annotations import (ANNOTATION_BINDINGS, DELETE_SELECTION, GRID_S, NEXT_LABEL, NUDGE_END_LEFT,
                             NUDGE_END_RIGHT, NUDGE_S, NUDGE_START_LEFT, NUDGE_START_RIGHT, PREVIOUS_LABEL,
                             move_edge, next_label, previous_label, snap)
from app.cues.boundaries import nearest_boundary, snap_shift
from app.keymap import Keymap
from storage.annotations import Annotation
from storage.errors import ThinsliceError
from widgets.keys import key_sequence_of
from widgets.waveform_view import LEFT_AXIS_WIDTH, TimeAxis

EDGE_GRAB_PX = 5
THIN_PX = 3.0  # labels narrower than this are drawn as plain bars
POINT_TEXT_PX = 90  # the most a point label's name takes to the right of its pin
SNAP_REACH_PX = 8  # with Shift, an edge this near a voicing or silence boundary lands on it
SNAP_MARK_COLOUR = "#d81b60"  # opaque deep pink: reads on light and dark tiers, over any label's fill
FALLBACK_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
KEYMAP = Keymap(ANNOTATION_BINDINGS)


def fallback_colour(label: str) -> str:
    return FALLBACK_COLOURS[zlib.crc32(label.encode()) % len(FALLBACK_COLOURS)]


@dataclass
class Tier:
    """One row of the view: a label set and an annotator, with its labels stacked in sub-rows."""

    label_set: str
    annotator: str
    editable: bool
    first_row: int = 0
    lanes: list[list[Annotation]] = field(default_factory=list)
    starts: list[np.ndarray] = field(default_factory=list)
    ends: list[np.ndarray] = field(default_factory=list)
    codes: list[np.ndarray] = field(default_factory=list)  # index of each label's colour in the view's palette

    @property
    def key(self) -> tuple[str, str]:
        return (self.label_set, self.annotator)

    @property
    def row_count(self) -> int:
        return max(1, len(self.lanes))

    @property
    def title(self) -> str:
        return f"{self.annotator} \u00b7 {self.label_set}"


def stack_lanes(labels: Iterable[Annotation]) -> list[list[Annotation]]:
    """Greedy interval partitioning: each label goes to the first sub-row where it does not overlap."""
    lanes: list[list[Annotation]] = []
    for item in sorted(labels, key=lambda a: (a.start_s, a.end_s, a.id)):
        for lane in lanes:
            if lane[-1].end_s <= item.start_s:
                lane.append(item)
                break
        else:
            lanes.append([item])
    return lanes


@dataclass
class _Drag:
    mode: str  # create, move, start, end
    tier: Tier
    row: int
    origin_s: float
    annotation: Annotation | None = None
    start_s: float = 0.0
    end_s: float = 0.0
    boundaries: np.ndarray = field(default_factory=lambda: np.empty(0))  # where Shift snaps, for this drag
    snapped: tuple[float, ...] = ()  # the edges that landed on a boundary, marked while dragging


class _LabelsItem(pg.GraphicsObject):
    """Paints every visible label of every tier in device pixels (crisp text, cheap culling)."""

    def __init__(self, view: AnnotationTiersView) -> None:
        super().__init__()
        self._view = view

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return QRectF(0.0, 0.0, max(self._view.duration, 1.0), float(max(self._view.row_total, 1)))

    def paint(self, painter: QPainter, *args) -> None:
        self._view.paint_labels(painter)


class _TierNamesAxis(pg.AxisItem):
    """The header column: each tier's annotator and label set beside its rows, elided to the column."""

    def __init__(self, view: AnnotationTiersView) -> None:
        super().__init__("left")
        self._view = view
        self.setWidth(LEFT_AXIS_WIDTH)
        self.setStyle(showValues=False, tickLength=0)
        self.setPen(pg.mkPen(None))

    def paint(self, painter: QPainter, *args) -> None:
        # the axis's own column, not the room its tick labels may spill into
        self._view.paint_tier_names(painter, self.mapRectFromParent(self.geometry()), self)


class _TiersViewBox(pg.ViewBox):
    """Hands left-button drags and clicks to the view; other drags pan, the wheel zooms time only."""

    def __init__(self, view: AnnotationTiersView) -> None:
        super().__init__(enableMenu=False)
        self._view = view
        self._handling = False
        self.setMouseEnabled(x=True, y=False)
        self.invertY(True)

    def mouseDragEvent(self, ev, axis=None) -> None:  # noqa: N802 (Qt API)
        if ev.button() == Qt.MouseButton.LeftButton and axis is None:
            if ev.isStart():
                down = self.mapSceneToView(ev.buttonDownScenePos())
                self._handling = self._view.drag_started(down.x(), down.y())
            if self._handling:
                ev.accept()
                now = self.mapSceneToView(ev.scenePos())
                # each mouse event says whether Shift is down now, so pressing or letting go mid-drag counts
                snapping = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                if ev.isFinish():
                    self._handling = False
                    self._view.drag_finished(now.x(), snapping, point=snapping)
                else:
                    self._view.drag_moved(now.x(), snapping)
                return
        super().mouseDragEvent(ev, axis)

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 (Qt API)
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            point = self.mapSceneToView(ev.scenePos())
            self._view.clicked(point.x(), point.y(), bool(ev.double()),
                               bool(ev.modifiers() & Qt.KeyboardModifier.ControlModifier),
                               point=bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        else:
            super().mouseClickEvent(ev)


class AnnotationTiersView(pg.PlotWidget):
    """Label tiers of one stimulus, drawn from the model; edits go through the model (and so to the store)."""

    seekRequested = Signal(float)
    playRangeRequested = Signal(float, float)
    selectionChanged = Signal(list)  # ids of the selected labels
    editFailed = Signal(str)         # an edit the store refused, with the reason

    def __init__(self, model: AnnotationModel, parent=None) -> None:
        self._box = _TiersViewBox(self)
        self._names = _TierNamesAxis(self)
        super().__init__(parent, viewBox=self._box, axisItems={"bottom": TimeAxis("bottom"), "left": self._names})
        self.model = model
        self.stimulus_id: int | None = None
        self.duration = 0.0
        self.annotator = ""
        self.current_label: tuple[str, str] | None = None  # (label set, label) new labels get
        self.row_total = 0
        self.tiers: list[Tier] = []
        self._annotations: list[Annotation] = []
        self._colours: dict[tuple[str, str], QColor] = {}
        self._codes: dict[tuple[str, str], int] = {}  # (label set, label) -> index into _palette
        self._palette: list[QColor] = []
        self._selected: set[int] = set()
        self._hidden: set[tuple[str, str]] = set()
        self._show_others = True
        self._drag: _Drag | None = None
        self._open: dict[str, float] = {}  # labels begun by their key while playing, not yet ended: their starts
        self._boundary_source: Callable[[], np.ndarray] | None = None
        self._font = QFont()
        self._font.setPointSizeF(8.0)
        self._metrics = QFontMetrics(self._font)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setBackground(None)
        self.plotItem.hideButtons()
        self.plotItem.setMenuEnabled(False)
        self._item = _LabelsItem(self)
        self.addItem(self._item)
        self.playhead = pg.InfiniteLine(0.0, angle=90, movable=False, pen=pg.mkPen("#e53935", width=1.5))
        self.addItem(self.playhead, ignoreBounds=True)
        self._box.setLimits(xMin=0.0)
        self.model.subscribe(self._model_changed)

    def close(self) -> bool:
        """Stop following the model (which may outlive this view) and close."""
        self.model.unsubscribe(self._model_changed)
        self.stimulus_id = None
        return super().close()

    def _model_changed(self) -> None:
        if self.plotItem is not None:
            self.reload()

    # -- state from outside ---------------------------------------------------------------------
    def set_stimulus(self, stimulus_id: int | None, duration_s: float) -> None:
        """Show another stimulus (duration in seconds); the whole of it comes into view."""
        self.stimulus_id = stimulus_id
        self.duration = max(0.0, float(duration_s))
        self._selected.clear()
        self._box.setLimits(xMin=0.0, xMax=max(self.duration, 1.0))
        self.reload()
        self.setXRange(0.0, max(self.duration, 1.0), padding=0)

    def set_annotator(self, name: str) -> None:
        self.annotator = name
        self._selected.clear()
        self.reload()

    def set_current_label(self, label_set: str, label: str) -> None:
        """The label a drag on empty space creates (the palette's choice)."""
        self.current_label = (label_set, label)
        self.reload()  # the user's tier for that set appears even while empty

    def set_label_colours(self, colours: Mapping[tuple[str, str], str]) -> None:
        """Colours of labels as '#rrggbb', keyed by (label set, label)."""
        self._colours = {key: QColor(value) for key, value in colours.items() if value}
        self._codes.clear()
        self._palette.clear()
        self._layout()

    def set_show_others(self, show: bool) -> None:
        self._show_others = show
        self._layout()

    def set_tier_hidden(self, label_set: str, annotator: str, hidden: bool) -> None:
        (self._hidden.add if hidden else self._hidden.discard)((label_set, annotator))
        self._layout()

    def set_playhead(self, t: float) -> None:
        self.playhead.setValue(float(t))
        if self._open:
            self._item.update()  # a label being marked grows with the playhead

    def set_open_marks(self, starts: Mapping[str, float]) -> None:
        """Labels begun by their key while playing and not yet ended (label to start, in seconds): drawn
        from their start to the playhead in the annotator's tier of the current set, so a begun label is
        seen, not only remembered."""
        if dict(starts) != self._open:
            self._open = dict(starts)
            self._item.update()

    def open_marks(self) -> dict[str, float]:
        return dict(self._open)

    def set_boundary_source(self, source: Callable[[], np.ndarray] | None) -> None:
        """Where Shift-dragged edges may snap: `source()` gives the current stimulus's boundaries in seconds,
        ascending (empty while its tracks are not computed), read once as each drag starts."""
        self._boundary_source = source

    def link_x(self, viewbox: pg.ViewBox) -> None:
        """Share the x axis (time) with another ViewBox, such as the waveform's, and keep the tiers' time
        axis under it pixel for pixel: the same moment at the same x on screen, whatever margins the two
        views' layouts have."""
        self._box.setXLink(viewbox)
        self._aligned_to = viewbox
        viewbox.sigResized.connect(self._align)
        self._box.sigResized.connect(self._align)
        self._align()

    def _align(self, *_args) -> None:
        other = getattr(self, "_aligned_to", None)
        views = other.scene().views() if other is not None and other.scene() is not None else []
        if not views or not self.isVisible():
            return
        def edges(view, box) -> tuple[float, float]:
            rect = box.sceneBoundingRect()
            return (view.mapToGlobal(view.mapFromScene(rect.topLeft())).x(),
                    view.mapToGlobal(view.mapFromScene(rect.topRight())).x())
        (left, right), (mine_left, mine_right) = edges(views[0], other), edges(self, self._box)
        margins = self.plotItem.layout.getContentsMargins()
        new_left = max(0.0, margins[0] + left - mine_left)
        new_right = max(0.0, margins[2] + mine_right - right)
        if abs(new_left - margins[0]) >= 1 or abs(new_right - margins[2]) >= 1:
            self.plotItem.layout.setContentsMargins(new_left, margins[1], new_right, margins[3])

    def showEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        self._align()

    def view_box(self) -> pg.ViewBox:
        return self._box

    def selected_ids(self) -> list[int]:
        return sorted(self._selected)

    def select(self, ids: Iterable[int]) -> None:
        self._selected = set(ids)
        self._item.update()
        self.selectionChanged.emit(self.selected_ids())

    def labels(self) -> list[Annotation]:
        """The time-range labels on show (all annotators)."""
        return list(self._annotations)

    # -- model -----------------------------------------------------------------------------------
    def reload(self) -> None:
        """Redraw the stimulus's time-range labels as the model holds them (nothing while it holds another)."""
        if self.stimulus_id is None or self.model.stimulus_id != self.stimulus_id:
            self._annotations = []
        else:
            self._annotations = [a for a in self.model.annotations() if not a.is_whole]
        live = {a.id for a in self._annotations}
        if self._selected - live:
            self._selected &= live
            self.selectionChanged.emit(self.selected_ids())
        self._layout()

    def _layout(self) -> None:
        groups: dict[tuple[str, str], list[Annotation]] = {}
        for item in self._annotations:
            groups.setdefault((item.label_set, item.annotator), []).append(item)
        if self.annotator and self.current_label:
            groups.setdefault((self.current_label[0], self.annotator), [])
        keys = sorted(groups, key=lambda k: (k[1] != self.annotator, k[1], k[0]))
        self.tiers = []
        row = 0
        for label_set, annotator in keys:
            own = annotator == self.annotator
            if (label_set, annotator) in self._hidden or (not own and not self._show_others):
                continue
            tier = Tier(label_set, annotator, own, first_row=row, lanes=stack_lanes(groups[(label_set, annotator)]))
            tier.starts = [np.array([a.start_s for a in lane]) for lane in tier.lanes]
            tier.ends = [np.array([a.end_s for a in lane]) for lane in tier.lanes]
            tier.codes = [np.array([self._colour_code(a) for a in lane], dtype=np.int64) for lane in tier.lanes]
            self.tiers.append(tier)
            row += tier.row_count
        self.row_total = row
        self._box.setLimits(yMin=0.0, yMax=max(row, 1))
        self._box.setYRange(0.0, max(row, 1), padding=0)
        self._item.prepareGeometryChange()
        self._item.update()
        self._names.update()

    def _tier_at(self, y: float) -> tuple[Tier | None, int]:
        row = int(np.floor(y))
        for tier in self.tiers:
            if tier.first_row <= row < tier.first_row + tier.row_count:
                return tier, row - tier.first_row
        return None, -1

    def _label_at(self, tier: Tier, lane: int, x: float, slack: float) -> Annotation | None:
        if lane >= len(tier.lanes):
            return None
        starts, ends = tier.starts[lane], tier.ends[lane]
        index = int(np.searchsorted(starts, x + slack, side="right")) - 1
        for i in (index, index + 1):  # the neighbour wins when x is within the edge slack of it
            if 0 <= i < len(starts) and starts[i] - slack <= x <= ends[i] + slack:
                return tier.lanes[lane][i]
        return None

    def _pixel_s(self) -> float:
        width = self._box.viewPixelSize()[0]
        return float(width) if width and np.isfinite(width) else 0.0

    # -- mouse -----------------------------------------------------------------------------------
    def drag_started(self, x: float, y: float) -> bool:
        """Begin an edit drag at data point (x s, y row); False when the drag should pan instead."""
        tier, lane = self._tier_at(y)
        if self.stimulus_id is None or not self.annotator:
            return False
        slack = EDGE_GRAB_PX * self._pixel_s()
        if tier is not None and not tier.editable:
            return False
        hit = self._label_at(tier, lane, x, slack) if tier is not None else None
        if hit is not None:
            if hit.is_point:
                mode = "move"  # a moment has no length to change
            elif abs(x - hit.start_s) <= slack and abs(x - hit.start_s) <= abs(x - hit.end_s):
                mode = "start"
            elif abs(x - hit.end_s) <= slack:
                mode = "end"
            else:
                mode = "move"
            self._drag = _Drag(mode, tier, tier.first_row + lane, x, hit, hit.start_s, hit.end_s,
                               self._boundaries())
            self.select([hit.id])
            return True
        if self.current_label is None:
            self.editFailed.emit("Choose a label in the palette first, then drag to add it.")
            return False
        own = next((t for t in self.tiers if t.editable and t.label_set == self.current_label[0]), None)
        if own is None:
            return False
        row = tier.first_row + lane if tier is own else own.first_row
        start = self._clamp(snap(x))
        self._drag = _Drag("create", own, row, x, None, start, start, self._boundaries())
        return True

    def _boundaries(self) -> np.ndarray:
        return self._boundary_source() if self._boundary_source is not None else np.empty(0)

    def drag_moved(self, x: float, snapping: bool = False) -> None:
        """Follow the mouse at `x` s; with `snapping` (Shift held) edges land on boundaries within reach."""
        drag = self._drag
        if drag is None:
            return
        reach = SNAP_REACH_PX * self._pixel_s() if snapping else 0.0
        landed: list[float] = []

        def place(t: float) -> float:
            found = nearest_boundary(t, drag.boundaries, reach)
            t = self._clamp(snap(t if found is None else found))
            if found is not None:
                landed.append(t)
            return t

        if drag.mode == "create":
            drag.start_s, drag.end_s = sorted((place(drag.origin_s), place(x)))
        elif drag.mode == "move":
            item = drag.annotation
            length = item.end_s - item.start_s
            start = item.start_s + (x - drag.origin_s)
            shift, edge = snap_shift(start, start + length, drag.boundaries, reach)
            start = snap(start + shift)
            start = min(max(0.0, start), max(0.0, self._limit() - length))
            drag.start_s, drag.end_s = start, round(start + length, 6)
            if edge is not None:
                landed.append(drag.start_s if edge == "start" else drag.end_s)
        else:  # an edge: passing the other edge swaps them, so a label never shrinks to nothing
            item = drag.annotation
            drag.start_s, drag.end_s = move_edge(item.start_s, item.end_s, drag.mode, place(max(0.0, x)), GRID_S,
                                                 self._limit())
            landed = [t for t in landed if t in (drag.start_s, drag.end_s)]  # not one that stopped short
        drag.snapped = tuple(landed)
        self._item.update()

    def drag_finished(self, x: float, snapping: bool = False, point: bool = False) -> None:
        """End a drag at `x` s. A new label's drag that ends where it began adds a point label when `point`
        (Shift held: a deliberate moment), and nothing otherwise (a hand that slipped while clicking)."""
        self.drag_moved(x, snapping)
        drag, self._drag = self._drag, None
        if drag is None:
            return
        span = (drag.start_s, drag.end_s)
        if drag.mode == "create":
            if drag.end_s > drag.start_s:
                self._edit(lambda: self.model.add_label(drag.tier.label_set, self.current_label[1], *span))
            elif point:
                self._edit(lambda: self.model.add_point(drag.tier.label_set, self.current_label[1], drag.start_s))
        elif span != (drag.annotation.start_s, drag.annotation.end_s):
            edit = self.model.move if drag.mode == "move" else self.model.resize
            self._edit(lambda: edit(drag.annotation.id, span))
        self._item.update()

    def clicked(self, x: float, y: float, double: bool, add: bool, point: bool = False) -> None:
        """A click at data point (x s, y row): select or play the label there, else seek; with `point`
        (Shift) on empty space of a tier one may edit, add a point label of the current label there."""
        self.setFocus()
        tier, lane = self._tier_at(y)
        slack = EDGE_GRAB_PX * self._pixel_s()
        hit = self._label_at(tier, lane, x, 0.0) if tier is not None else None
        if hit is None and tier is not None:  # a pin is thin: it is hit within a few pixels
            near = self._label_at(tier, lane, x, slack)
            hit = near if near is not None and near.is_point else None
        if hit is None and point and self._add_point_at(x, tier):
            return
        if hit is None:
            if not add:
                self.select([])
            self.seekRequested.emit(max(0.0, x))
            return
        if double:
            self.playRangeRequested.emit(hit.start_s, hit.end_s)
            return
        if add:
            self.select(self._selected ^ {hit.id})
        else:
            self.select([hit.id])

    def _add_point_at(self, x: float, tier: Tier | None) -> bool:
        """A point label of the current label at `x` s (on the grid, or on a voicing or silence boundary
        within reach), in the annotator's tier of the current label's set; False when there is none."""
        if self.stimulus_id is None or not self.annotator or self.current_label is None:
            self.editFailed.emit("Choose a label in the palette first, then Shift+click to add it as a point.")
            return False
        if tier is not None and not tier.editable:
            return False
        own = next((t for t in self.tiers if t.editable and t.label_set == self.current_label[0]), None)
        if own is None:
            return False
        found = nearest_boundary(x, self._boundaries(), SNAP_REACH_PX * self._pixel_s())
        t = self._clamp(snap(x if found is None else found))
        self._edit(lambda: self.model.add_point(own.label_set, self.current_label[1], t))
        return True

    def _clamp(self, t: float) -> float:
        return min(max(0.0, t), self._limit())

    def _limit(self) -> float:
        return self.duration if self.duration > 0 else float("inf")

    def _edit(self, change) -> None:
        """Make an edit through the model; one it refuses, or the store fails to write, is said in place
        and leaves the labels as they were."""
        try:
            change()
        except ThinsliceError as exc:
            self.editFailed.emit(str(exc))
            self.reload()  # what a drag left on screen goes back to what is stored

    # -- keys ------------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        action = KEYMAP.action_for(key_sequence_of(event))
        if action is None or not self.run_action(action):
            event.ignore()  # the panel above handles label shortcuts
            return
        event.accept()

    def run_action(self, action: str) -> bool:
        """Do a keymap action on the selection; True when the action was for this view."""
        own = [a for a in self._annotations if a.id in self._selected and a.annotator == self.annotator]
        if action == DELETE_SELECTION:
            if own:
                self._edit(lambda: self.model.delete([a.id for a in own]))
            return True
        nudges = {NUDGE_END_LEFT: ("end", -NUDGE_S), NUDGE_END_RIGHT: ("end", NUDGE_S),
                  NUDGE_START_LEFT: ("start", -NUDGE_S), NUDGE_START_RIGHT: ("start", NUDGE_S)}
        if action in nudges:
            if len(own) == 1:
                edge, delta = nudges[action]
                self._edit(lambda: self.model.nudge(own[0].id, edge, delta, self._limit(), GRID_S))
            return True
        if action in (NEXT_LABEL, PREVIOUS_LABEL):
            pick = next_label if action == NEXT_LABEL else previous_label
            target = pick(self._annotations, float(self.playhead.value()))
            if target is not None:
                self.select([target.id])
                self.seekRequested.emit(target.start_s)
            return True
        return False

    # -- painting --------------------------------------------------------------------------------
    def _colour(self, item: Annotation) -> QColor:
        return self._palette[self._colour_code(item)]

    def _colour_code(self, item: Annotation) -> int:
        key = (item.label_set, item.label or "")
        code = self._codes.get(key)
        if code is None:
            colour = self._colours.get(key)
            self._palette.append(QColor(colour) if colour is not None else QColor(fallback_colour(key[1])))
            code = self._codes[key] = len(self._palette) - 1
        return code

    def paint_labels(self, painter: QPainter) -> None:
        """Draw the labels in view, in device pixels; called by the labels item."""
        transform = painter.transform()
        sx, dx, sy, dy = transform.m11(), transform.m31(), transform.m22(), transform.m32()
        (x0, x1), _ = self._box.viewRange()
        painter.save()
        painter.resetTransform()
        painter.setFont(self._font)
        band = abs(sy)
        for tier in self.tiers:
            alpha = 185 if tier.editable else 80
            top = tier.first_row * sy + dy  # a faint band behind each tier tells the tiers apart
            painter.fillRect(QRectF(x0 * sx + dx, top, (x1 - x0) * sx, tier.row_count * sy),
                             QColor(128, 128, 128, 18 if tier.editable else 8))
            for lane, labels in enumerate(tier.lanes):
                starts, ends = tier.starts[lane], tier.ends[lane]
                hi = int(np.searchsorted(starts, x1, side="right"))
                lo = int(np.searchsorted(ends, x0, side="left"))
                y = (tier.first_row + lane) * sy + dy
                if hi <= lo:
                    continue
                lefts = starts[lo:hi] * sx + dx
                rights = ends[lo:hi] * sx + dx
                points = starts[lo:hi] == ends[lo:hi]
                thin = ((rights - lefts) < THIN_PX) & ~points
                if points.any():
                    self._paint_points(painter, [labels[lo + i] for i in np.nonzero(points)[0].tolist()],
                                       lefts[points], y, band, tier.editable)
                if thin.any():
                    self._paint_thin(painter, tier.codes[lane][lo:hi][thin], lefts[thin],
                                     y + band * 0.1, band * 0.8, alpha, tier.editable)
                moving_id = self._drag.annotation.id if self._drag and self._drag.annotation else None
                for i in np.nonzero(~thin & ~points)[0].tolist():
                    item = labels[lo + i]
                    self._paint_label(painter, item, float(lefts[i]), float(rights[i]), y, band,
                                      alpha // 3 if item.id == moving_id else alpha, item.id in self._selected,
                                      tier.editable)
        self._paint_tier_lines(painter, x0 * sx + dx, (x1 - x0) * sx, sy, dy)
        if self._drag is not None:
            drag = self._drag
            label = drag.annotation.label if drag.annotation else (self.current_label or ("", ""))[1]
            ghost = drag.annotation or Annotation(0, 0, self.annotator, drag.tier.label_set, label, 0.0, 0.0)
            if drag.start_s == drag.end_s and (ghost.is_point or drag.mode == "create"):
                self._paint_points(painter, [ghost], np.array([drag.start_s * sx + dx]), drag.row * sy + dy, band,
                                   True)
            else:
                self._paint_label(painter, ghost, drag.start_s * sx + dx, drag.end_s * sx + dx, drag.row * sy + dy,
                                  band, 200, True, True)
            for t in drag.snapped:
                self._paint_snap_mark(painter, t * sx + dx, drag.row * sy + dy, band)
        own = next((t for t in self.tiers if t.editable and self.current_label
                    and t.label_set == self.current_label[0]), None)
        if self._open and own is not None:
            now = float(self.playhead.value())
            for label, start in self._open.items():
                ghost = Annotation(0, 0, self.annotator, own.label_set, label, start, start)
                left, right = sorted((start, now))
                self._paint_label(painter, ghost, left * sx + dx, right * sx + dx, own.first_row * sy + dy, band,
                                  90, False, True)
        painter.restore()

    def _paint_snap_mark(self, painter: QPainter, x: float, top: float, band: float) -> None:
        """A short bar with a notch over it at an edge that landed on a boundary."""
        painter.setPen(QPen(QColor(SNAP_MARK_COLOUR), 2.0))
        painter.drawLine(QPointF(x, top), QPointF(x, top + band))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(SNAP_MARK_COLOUR))
        painter.drawPolygon([QPointF(x - 4.0, top), QPointF(x + 4.0, top), QPointF(x, top + 5.0)])

    def _paint_thin(self, painter: QPainter, codes: np.ndarray, lefts: np.ndarray, top: float,
                    height: float, alpha: int, editable: bool) -> None:
        """Labels narrower than a few pixels, as bars merged per colour wherever they touch.

        Zoomed out over an hour, thousands of labels share a few hundred pixels; drawing each would
        cost far more than the picture shows.
        """
        painter.setPen(Qt.PenStyle.NoPen)
        columns = np.floor(lefts).astype(np.int64)
        for code in np.unique(codes).tolist():
            xs = np.unique(columns[codes == code])
            breaks = np.nonzero(np.diff(xs) > THIN_PX)[0]
            run_starts = xs[np.concatenate(([0], breaks + 1))]
            run_ends = xs[np.concatenate((breaks, [len(xs) - 1]))] + THIN_PX
            colour = self._palette[code]
            fill = QColor(colour if editable else colour.lighter(135))
            fill.setAlpha(max(alpha, 150))
            painter.setBrush(fill)
            painter.drawRects([QRectF(a, top, b - a, height) for a, b in zip(run_starts.tolist(), run_ends.tolist())])

    def _paint_tier_lines(self, painter: QPainter, left: float, width: float, sy: float, dy: float) -> None:
        """A line between tiers (their names are in the header column)."""
        painter.setPen(QPen(QColor(120, 120, 120, 160), 1.0))
        for tier in self.tiers:
            if tier.first_row:
                top = tier.first_row * sy + dy
                painter.drawLine(QPointF(left, top), QPointF(left + width, top))

    def paint_tier_names(self, painter: QPainter, column: QRectF, axis: pg.AxisItem) -> None:
        """Each tier's annotator over its label set, in the header column `column` (the left axis's
        rectangle in `axis`'s coordinates), beside the tier's rows; a read-only tier's name is paler."""
        text_colour = QApplication.palette().windowText().color()
        painter.save()
        painter.setFont(self._font)
        painter.setClipRect(column)
        line = self._metrics.height()
        for tier in self.tiers:
            top = axis.mapFromScene(self._box.mapViewToScene(QPointF(0.0, tier.first_row))).y()
            bottom = axis.mapFromScene(self._box.mapViewToScene(QPointF(0.0, tier.first_row + tier.row_count))).y()
            box = QRectF(column.left() + 3, top + 1, column.width() - 6, max(0.0, bottom - top - 2))
            if tier.first_row:
                painter.setPen(QPen(QColor(120, 120, 120, 160), 1.0))
                painter.drawLine(QPointF(column.left(), top), QPointF(column.right(), top))
            colour = QColor(text_colour)
            if not tier.editable:
                colour.setAlpha(150)
            painter.setPen(colour)
            width = int(box.width())
            # as many lines as the tier's height holds: whose it is first, then its set, then that it is not
            # the annotator's own (its paler text and dashed labels say so too)
            lines = [tier.annotator, tier.label_set] + ([] if tier.editable else ["read-only"])
            lines = lines[:max(1, int(box.height() // line))]
            text = "\n".join(self._metrics.elidedText(t, Qt.TextElideMode.ElideRight, width) for t in lines)
            painter.drawText(box, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        painter.restore()

    def tier_names(self) -> list[str]:
        """The header column's text of each tier, top to bottom (what a reader sees there)."""
        return [f"{t.annotator}{'' if t.editable else ' (read-only)'} \u00b7 {t.label_set}" for t in self.tiers]

    def _paint_points(self, painter: QPainter, items: list[Annotation], xs: np.ndarray, y: float, band: float,
                      editable: bool) -> None:
        """Point labels as pins: a line across the row with a head at the top, the name to its right."""
        selected = self._selected
        for item, x in zip(items, xs.tolist()):
            colour = self._colour(item)
            if not editable:
                colour = colour.lighter(135)
            width = 2.5 if item.id in selected else 1.5
            painter.setPen(QPen(colour.darker(150 if item.id in selected else 110), width))
            painter.drawLine(QPointF(x, y + band * 0.1), QPointF(x, y + band * 0.9))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            head = max(3.0, min(6.0, band * 0.15))
            top = y + band * 0.1
            painter.drawPolygon([QPointF(x - head, top), QPointF(x + head, top), QPointF(x, top + 1.6 * head)])
            if band > 9:
                text = self._metrics.elidedText(item.label or "", Qt.TextElideMode.ElideRight, POINT_TEXT_PX)
                painter.setPen(QApplication.palette().windowText().color() if editable else QColor(110, 110, 110))
                painter.drawText(QRectF(x + head + 2, y, POINT_TEXT_PX + 4, band),
                                 Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)

    def _paint_label(self, painter: QPainter, item: Annotation, left: float, right: float, y: float,
                     band: float, alpha: int, selected: bool, editable: bool) -> None:
        colour = self._colour(item)
        if not editable:
            colour = colour.lighter(135)
        fill = QColor(colour)
        fill.setAlpha(alpha)
        rect = QRectF(left, y + band * 0.1, max(right - left, 1.0), band * 0.8)
        painter.setPen(QPen(colour.darker(170 if selected else 130), 2.0 if selected else 1.0,
                            Qt.PenStyle.SolidLine if editable else Qt.PenStyle.DashLine))
        painter.setBrush(fill)
        painter.drawRect(rect)
        if rect.width() > 18 and band > 9:
            text = self._metrics.elidedText(item.label or "", Qt.TextElideMode.ElideRight, int(rect.width()) - 6)
            if text and text != "\u2026":  # a lone ellipsis says nothing
                painter.setPen(QColor(20, 20, 20) if editable else QColor(70, 70, 70))
                painter.drawText(rect.adjusted(3, 0, -3, 0), Qt.AlignmentFlag.AlignVCenter, text)

    # -- helpers for tests and the panel ---------------------------------------------------------
    def map_to_widget(self, t: float, row: float) -> QPointF:
        """Widget (viewport) coordinates of data point (t seconds, row) — what a mouse would click."""
        scene = self._box.mapViewToScene(QPointF(t, row))
        return QPointF(self.mapFromScene(scene))

    def tier_row(self, label_set: str, annotator: str, lane: int = 0) -> float:
        """The y (row units) of the middle of a tier's sub-row."""
        for tier in self.tiers:
            if tier.key == (label_set, annotator):
                return tier.first_row + lane + 0.5
        raise KeyError((label_set, annotator))
