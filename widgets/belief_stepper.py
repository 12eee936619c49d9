"""The NCP-ExploreToM stepper: rooms picture, belief tables, goal checklist and step list for one or more traces.

`BeliefStepperView.set_trace(steps, goal, title)` shows one trace; `set_traces([(label, steps, goal), ...])`
shows several side by side (e.g. two models acting on the same task), stepped together. The view only renders
what `app.beliefs` computed; it emits `stepChanged(int)` when the shown step changes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QImage, QKeyEvent, QKeySequence, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem, QPushButton,
    QSizePolicy, QSlider, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget,
)

from app.beliefs.engine import CONTAINER, KNOWLEDGE, KNOWLEDGE_ENTITY, ROOM, STATE_PREFIX, UNKNOWN_WHEREABOUTS, is_positive
from app.beliefs.goals import FALSE_BELIEF, TRUE_BELIEF, GoalTimeline, evaluate_goal, goal_or_trace_error, vocabulary_from_steps
from app.beliefs.replay import BeliefState, Replay, StepRecord, TraceError, parse_steps, replay_steps
from widgets.cached_text_delegate import CachedTextDelegate
from widgets.rich_text_block import RichTextBlock

# Keys are data: one table drives the shortcuts, the help text and the tests.
KEYMAP: tuple[tuple[str, str, str], ...] = (
    ("Right", "next", "next step"),
    ("N", "next", "next step"),
    ("Left", "previous", "previous step"),
    ("P", "previous", "previous step"),
    ("Home", "first", "first step"),
    ("End", "last", "last step"),
    ("Space", "play", "play / pause"),
)
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

FALSE_BG = QColor("#f6c9c4")
FALSE_FG = QColor("#9b1c10")
CHANGED_BG = QColor("#ffe98a")
CHANGED_FALSE_BG = QColor("#f5a96b")
UNKNOWN_FG = QColor("#707070")
WORLD_BG = QColor("#e3ecf5")
WITNESS_RING = QColor("#e0a800")
PEEK_RING = QColor("#7b3fb5")
HOLD_GREEN = QColor("#2f9e44")
NOT_HOLD_GREY = QColor("#d5d5d5")
PERSON_COLOURS = ("#4263eb", "#e8590c", "#2b8a3e", "#c2255c", "#1098ad", "#6741d9", "#a61e4d", "#5c940d",
                  "#d9480f", "#364fc7")


# ----- the data behind one trace (Qt-free computations, done once) -----------------------------------
@dataclass
class _TraceData:
    label: str
    replay: Replay | None
    timeline: GoalTimeline | None
    error: str
    people: list[str]
    objects: list[str]
    containers: list[str]
    rooms: list[str]
    props: dict[str, list[str]]

    @property
    def count(self) -> int:
        return len(self.replay) if self.replay else 0


def _load_trace(label: str, steps: Sequence[dict], goal: Any) -> _TraceData:
    try:
        replay = replay_steps(list(steps))
        timeline = None
        if goal:
            vocabulary = vocabulary_from_steps(parse_steps(list(steps)))
            timeline = evaluate_goal(goal_or_trace_error(goal, vocabulary), replay)
    except TraceError as exc:
        return _TraceData(label, None, None, str(exc), [], [], [], [], {})
    people: dict[str, None] = {}
    entities: dict[str, None] = {}
    containers: dict[str, None] = {}
    rooms: dict[str, None] = {}
    props: dict[str, dict[str, None]] = {}
    for record in replay.records:
        for key, _old, new in record.outcome.changes:
            if len(key) == 2 and key[0] == "first":
                people[key[1]] = None
            if len(key) < 3:
                continue
            entity, prop = key[-2], key[-1]
            props.setdefault(entity, {})[prop] = None
            if key[0] == "world":
                entities[entity] = None
                if prop == ROOM and is_positive(new):
                    rooms[new] = None
                if prop == CONTAINER and is_positive(new):
                    containers[new] = None
            elif entity != KNOWLEDGE_ENTITY:
                entities[entity] = None
    for action, args, kwargs in parse_steps(list(steps)):
        if action in ("enter_room", "leave_room", "location_declaration") and len(args) > 1:
            rooms.setdefault(str(args[1]), None)
    objects = [e for e in entities if e not in people and e not in containers]
    return _TraceData(label, replay, timeline, "", list(people), objects, list(containers), list(rooms),
                      {e: list(p) for e, p in props.items()})


# ----- text of a belief cell ---------------------------------------------------------------------------
def _short_value(value: Any) -> str:
    if value == UNKNOWN_WHEREABOUTS:
        return "?"
    if isinstance(value, str) and value.startswith("not(") and value.endswith(")"):
        return "not " + value[4:-1]
    return str(value)


def _cell_text(state: BeliefState, prefix: tuple, entity: str, props: list[str]) -> str:
    if entity == KNOWLEDGE_ENTITY:
        topics = state.get((*prefix, entity, KNOWLEDGE))
        return ", ".join(sorted(topics)) if topics else ""
    room = state.get((*prefix, entity, ROOM))
    container = state.get((*prefix, entity, CONTAINER))
    parts = []
    if room is not None:
        parts.append(_short_value(room))
    if container is not None:
        parts.append(("in " if is_positive(container) else "") + _short_value(container))
    states = [str(state.get((*prefix, entity, p))) for p in props
              if p.startswith(STATE_PREFIX) and state.get((*prefix, entity, p)) is not None]
    text = "\n".join(parts)
    if states:
        text += ("\n" if text else "") + ", ".join(states)
    return text


def _prop_words(prop: str) -> str:
    if prop == ROOM:
        return "room"
    if prop == CONTAINER:
        return "container"
    return prop[len(STATE_PREFIX):] if prop.startswith(STATE_PREFIX) else prop


_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
                    Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ToolTipRole})


class _BeliefTableModel(QAbstractTableModel):
    """Rows are holders (a person, or a pair for second order), columns entities; one step at a time."""

    def __init__(self, second_order: bool) -> None:
        super().__init__()
        self._second = second_order
        self._rows: list[tuple[str, ...]] = []
        self._columns: list[str] = []
        self._props: dict[str, list[str]] = {}
        self._state: BeliefState | None = None
        self._changed: set[tuple] = set()
        self._cache: dict[tuple[int, int], tuple[str, bool, bool]] = {}
        self._brushes = {name: QBrush(color) for name, color in (
            ("changed false", CHANGED_FALSE_BG), ("false", FALSE_BG), ("changed", CHANGED_BG), ("world", WORLD_BG),
            ("false text", FALSE_FG), ("unknown text", UNKNOWN_FG))}
        self._bold = QFont()
        self._bold.setBold(True)

    def set_trace(self, data: _TraceData) -> None:
        self.beginResetModel()
        people = data.people
        # The first-order table starts with the world itself, so a false belief can be read against it.
        self._rows = [(p, q) for p in people for q in people] if self._second else [()] + [(p,) for p in people]
        columns = people + data.objects + data.containers
        if any(KNOWLEDGE_ENTITY == e for e in data.props):
            columns.append(KNOWLEDGE_ENTITY)
        self._columns = [c for c in columns if c in data.props]
        self._props = data.props
        self._state = None
        self.endResetModel()

    def set_step(self, state: BeliefState, record: StepRecord | None) -> None:
        self._state = state
        self._cache = {}
        layer = "second" if self._second else "first"
        width = 3 if self._second else 2
        self._changed = set()
        if record is not None:
            for key in record.changed_keys:
                if key[0] == layer and len(key) == width + 2:
                    self._changed.add(key[1:width + 1])
                elif key[0] == "world" and not self._second:
                    self._changed.add(key[1:2])
        if self._rows and self._columns:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(self._columns) - 1))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            entity = self._columns[section]
            return "topics heard" if entity == KNOWLEDGE_ENTITY else entity
        holders = self._rows[section]
        if not holders:
            return "World (truth)"
        return f"{holders[0]} thinks {holders[1]} believes" if self._second else f"{holders[0]} believes"

    def is_changed(self, row: int, column: int) -> bool:
        return (*self._rows[row], self._columns[column]) in self._changed

    def false_props(self, row: int, column: int) -> list[str]:
        state = self._state
        if state is None:
            return []
        holders, entity = self._rows[row], self._columns[column]
        layer = "second" if self._second else "first"
        return [p for p in self._props.get(entity, ())
                if state.is_false_belief((layer, *holders, entity, p))]

    def _cell(self, row: int, column: int) -> tuple[str, bool, bool]:
        """(text, has a false belief, changed at this step) for one cell, computed once per step."""
        cached = self._cache.get((row, column))
        if cached is None:
            holders, entity = self._rows[row], self._columns[column]
            prefix = ("second" if self._second else "first" if holders else "world", *holders)
            assert self._state is not None
            text = _cell_text(self._state, prefix, entity, self._props.get(entity, []))
            false = bool(text) and bool(self.false_props(row, column))
            cached = (("⚠ " + text) if false else text, false, self.is_changed(row, column))
            self._cache[(row, column)] = cached
        return cached

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Called for every role of every visible cell on each repaint: the common roles answer from the cache.
        state = self._state
        if state is None or role not in _ROLES or not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(row, column)[0]
        if role == Qt.ItemDataRole.BackgroundRole:
            _text, false, changed = self._cell(row, column)
            if false and changed:
                return self._brushes["changed false"]
            if false:
                return self._brushes["false"]
            if changed:
                return self._brushes["changed"]
            return self._brushes["world"] if not self._rows[row] else None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if self._cell(row, column)[2] else None
        holders, entity = self._rows[row], self._columns[column]
        prefix = ("second" if self._second else "first" if holders else "world", *holders)
        if role == Qt.ItemDataRole.ForegroundRole:
            if self._cell(row, column)[1]:
                return self._brushes["false text"]
            if state.get((*prefix, entity, ROOM)) == UNKNOWN_WHEREABOUTS:
                return self._brushes["unknown text"]
            return None
        return self._tooltip(state, prefix, holders, entity, row, column)

    def _tooltip(self, state: BeliefState, prefix: tuple, holders: tuple, entity: str, row: int, column: int) -> str:
        if not holders:
            return f"where the {entity} really is" + (" (changed at this step)" if self.is_changed(row, column) else "")
        who = " thinks ".join(holders)
        lines = []
        for prop in self._props.get(entity, []):
            belief = state.get((*prefix, entity, prop))
            if belief is None:
                continue
            world = state.world(entity, prop)
            if prop == KNOWLEDGE:
                lines.append(f"{who} heard about: {', '.join(sorted(belief))}")
                continue
            line = f"{_prop_words(prop)}: {who} believes {belief}; world: {world}"
            if prop in self.false_props(row, column):
                line = "FALSE BELIEF — " + line
            if self._second:
                actual = state.first(holders[1], entity, prop)
                line += f"; {holders[1]} actually believes {actual}"
            lines.append(line)
        if self.is_changed(row, column):
            lines.append("changed at this step")
        return "\n".join(lines)


# ----- the rooms picture -------------------------------------------------------------------------------
class RoomsCanvas(QWidget):
    """A drawing of the world at one step: rooms with people, containers and objects; leavers outside."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data: _TraceData | None = None
        self._state: BeliefState | None = None
        self._record: StepRecord | None = None
        self.setMinimumHeight(180)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(640, 260)

    def set_step(self, data: _TraceData, state: BeliefState, record: StepRecord | None) -> None:
        self._data, self._state, self._record = data, state, record
        self.update()

    def paintEvent(self, _event: Any) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.base())
        data, state = self._data, self._state
        if data is None or state is None:
            return
        rooms = data.rooms or ["(no room)"]
        columns = min(len(rooms), 3 if len(rooms) <= 6 else 4)
        rows = math.ceil(len(rooms) / columns)
        legend_h = 18
        width = self.width() / columns
        height = (self.height() - legend_h) / rows
        placed: set[str] = set()
        for i, room in enumerate(rooms):
            cell = QRectF((i % columns) * width, (i // columns) * height, width, height).adjusted(6, 6, -6, -6)
            placed |= self._draw_room(painter, cell, room)
        self._draw_legend(painter, QRectF(6, self.height() - legend_h, self.width() - 12, legend_h), placed)

    def _draw_room(self, painter: QPainter, cell: QRectF, room: str) -> set[str]:
        data, state = self._data, self._state
        assert data is not None and state is not None
        text_colour = self.palette().text().color()
        outside_h = min(34.0, cell.height() * 0.28)
        inside = QRectF(cell.left(), cell.top(), cell.width(), cell.height() - outside_h)
        outside = QRectF(cell.left(), inside.bottom(), cell.width(), outside_h)
        painter.setPen(QPen(text_colour, 1.6))
        painter.setBrush(QBrush(self.palette().alternateBase()))
        painter.drawRoundedRect(inside, 8, 8)
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.drawText(inside.adjusted(8, 4, -8, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, room)
        painter.setFont(self.font())
        present = [p for p in data.people if state.world(p, ROOM) == room]
        left = [p for p in data.people if state.world(p, ROOM) == f"not({room})"]
        loose = [o for o in data.objects if state.world(o, ROOM) == room and not is_positive(state.world(o, CONTAINER))]
        boxes = [c for c in data.containers if state.world(c, ROOM) == room]
        # People along the top, containers and loose objects below.
        x, y = inside.left() + 8, inside.top() + 26
        for person in present:
            x = self._draw_person(painter, QPointF(x, y + 12), person, faded=False) + 10
        x, y = inside.left() + 12, inside.top() + 70
        for container in boxes:
            contents = [o for o in data.objects if state.world(o, CONTAINER) == container and state.world(o, ROOM) == room]
            x = self._draw_container(painter, QRectF(x, y, 0, min(60.0, inside.bottom() - y - 6)), container, contents) + 10
        for obj in loose:
            x = self._draw_object(painter, QPointF(x, y + 6), obj) + 8
        # The strip outside the room's door: people who left it.
        painter.setPen(QPen(UNKNOWN_FG, 1, Qt.PenStyle.DashLine))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(outside.adjusted(0, 3, 0, -1), 6, 6)
        painter.setPen(UNKNOWN_FG)
        door_text = "left:" if left else "outside:"
        painter.drawText(outside.adjusted(6, 3, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         door_text)
        x = outside.left() + QFontMetrics(self.font()).horizontalAdvance(door_text) + 12
        for person in left:
            x = self._draw_person(painter, QPointF(x + 9, outside.center().y() + 1), person, faded=True, radius=8) + 8
        # Secret observers are in no room: show them at the door of the room they peek into.
        peekers = self._peekers_of(room)
        for person in peekers:
            x = self._draw_person(painter, QPointF(x + 13, outside.center().y() + 1), person, faded=True, radius=8) + 8
        return set(present) | set(left) | set(loose) | set(boxes) | set(peekers)

    def _peekers_of(self, room: str) -> list[str]:
        record, state = self._record, self._state
        if record is None or state is None or not record.outcome.peeking:
            return []
        present = [w for w in record.outcome.witnesses if w not in record.outcome.peeking]
        if not present or state.world(present[0], ROOM) != room:
            return []
        return [p for p in record.outcome.peeking if state.world(p, ROOM) != room]

    def _ring_for(self, person: str) -> tuple[QColor | None, str]:
        record = self._record
        if record is None or not record.returned:
            return None, ""
        if person in record.outcome.peeking:
            return PEEK_RING, "peeking"
        if person in record.outcome.distracted:
            return UNKNOWN_FG, "distracted"
        if person in record.outcome.witnesses:
            return WITNESS_RING, ""
        return None, ""

    def _draw_person(self, painter: QPainter, anchor: QPointF, person: str, faded: bool, radius: float = 12) -> float:
        """Draw a person; `anchor` is the centre when faded (outside), else the left edge of the figure."""
        assert self._data is not None
        ring, note = self._ring_for(person)
        label = person + (f" ({note})" if note else "")
        half = max(radius + 4, QFontMetrics(self.font()).horizontalAdvance(label) / 2)
        centre = anchor if faded else QPointF(anchor.x() + half, anchor.y())
        colour = QColor(PERSON_COLOURS[self._data.people.index(person) % len(PERSON_COLOURS)])
        if faded:
            colour.setAlpha(110)
        if ring is not None:
            pen = QPen(ring, 4, Qt.PenStyle.DashLine if note == "peeking" else Qt.PenStyle.SolidLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(centre, radius + 4, radius + 4)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawEllipse(centre, radius, radius)
        painter.setPen(QColor("white"))
        painter.drawText(QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius),
                         Qt.AlignmentFlag.AlignCenter, person[:1])
        metrics = QFontMetrics(self.font())
        painter.setPen(self.palette().text().color() if not faded else UNKNOWN_FG)
        if faded:
            gap = radius + (9 if ring is not None else 4)
            painter.drawText(QPointF(centre.x() + gap, centre.y() + 5), label)
            return centre.x() + gap + metrics.horizontalAdvance(label)
        text_w = metrics.horizontalAdvance(label)
        painter.drawText(QPointF(centre.x() - text_w / 2, centre.y() + radius + 16), label)
        return centre.x() + max(radius + 4, text_w / 2)

    def _draw_container(self, painter: QPainter, area: QRectF, container: str, contents: list[str]) -> float:
        metrics = QFontMetrics(self.font())
        inner_w = sum(metrics.horizontalAdvance(o) + 18 for o in contents)
        w = max(metrics.horizontalAdvance(container) + 16, inner_w + 10, 60)
        box = QRectF(area.left(), area.top(), w, max(area.height(), 40))
        painter.setPen(QPen(QColor("#8d6e3f"), 2))
        painter.setBrush(QColor("#f3e3c3"))
        painter.drawRect(box)
        painter.setPen(QColor("#5c4424"))
        painter.drawText(box.adjusted(5, 2, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, container)
        x = box.left() + 6
        for obj in contents:
            x = self._draw_object(painter, QPointF(x, box.top() + 20), obj) + 6
        return box.right()

    def _draw_object(self, painter: QPainter, top_left: QPointF, obj: str) -> float:
        assert self._state is not None
        metrics = QFontMetrics(self.font())
        w = metrics.horizontalAdvance(obj) + 12
        rect = QRectF(top_left.x(), top_left.y(), w, 18)
        taken_out = self._state.world(obj, CONTAINER)
        style = Qt.PenStyle.DashLine if taken_out is not None and not is_positive(taken_out) else Qt.PenStyle.SolidLine
        changed = self._record is not None and any(k[0] == "world" and k[1] == obj for k in self._record.changed_keys)
        painter.setPen(QPen(QColor("#c92a2a") if changed else QColor("#495057"), 2 if changed else 1, style))
        painter.setBrush(QColor("#fff3bf") if changed else QColor("#e9ecef"))
        painter.drawRoundedRect(rect, 5, 5)
        painter.setPen(QColor("#212529"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, obj)
        return rect.right()

    def _draw_legend(self, painter: QPainter, area: QRectF, placed: set[str]) -> None:
        assert self._data is not None and self._state is not None
        painter.setPen(UNKNOWN_FG)
        unplaced = [e for e in self._data.people + self._data.objects if e not in placed
                    and self._state.world(e, ROOM) is None and e in self._data.props]
        text = "gold ring: saw this step · dashed purple: peeking · faded outside a room: has left it"
        if unplaced:
            text += " · nowhere yet: " + ", ".join(unplaced)
        painter.drawText(area, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)


# ----- the goal checklist ------------------------------------------------------------------------------
class GoalChecklist(QWidget):
    """Each goal atom with whether it holds now, and a strip of its history over all steps."""

    ROW_H = 22

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timeline: GoalTimeline | None = None
        self._strips: list[QImage] = []
        self._step = 0
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_timeline(self, timeline: GoalTimeline | None) -> None:
        self._timeline = timeline
        self._strips = []
        if timeline is not None:
            for values in [timeline.satisfied] + [h.holds for h in timeline.atoms]:
                image = QImage(max(1, len(values)), 1, QImage.Format.Format_RGB32)
                for i, holds in enumerate(values):
                    image.setPixelColor(i, 0, HOLD_GREEN if holds else NOT_HOLD_GREY)
                self._strips.append(image)
        self.setFixedHeight(0 if timeline is None else self.ROW_H * (len(timeline.atoms) + 1) + 6)
        self.setVisible(timeline is not None)
        self.update()

    def set_step(self, step: int) -> None:
        self._step = step
        self.update()

    def atom_states(self) -> list[bool]:
        """Whether each atom holds at the shown step (what the check marks show)."""
        if self._timeline is None:
            return []
        return [h.holds[self._step] for h in self._timeline.atoms]

    def satisfied(self) -> bool:
        return bool(self._timeline and self._timeline.satisfied[self._step])

    def paintEvent(self, _event: Any) -> None:
        timeline = self._timeline
        if timeline is None:
            return
        painter = QPainter(self)
        strip_w = min(260.0, self.width() * 0.35)
        text_w = self.width() - strip_w - 12
        kind = {TRUE_BELIEF: " (true belief)", FALSE_BELIEF: " (false belief)"}.get(timeline.goal.kind, "")
        first = timeline.first_satisfied()
        rows = [(self.satisfied(), f"Goal{kind}: {'satisfied' if self.satisfied() else 'not satisfied'}"
                 + (f" — first at step {first}" if first is not None else ""), True)]
        rows += [(h.holds[self._step], h.atom.text, False) for h in timeline.atoms]
        n = len(timeline.satisfied)
        for i, (holds, text, header) in enumerate(rows):
            y = 3 + i * self.ROW_H
            mark = "✔" if holds else "✘"
            font = QFont(self.font())
            font.setBold(header)
            painter.setFont(font)
            painter.setPen(HOLD_GREEN if holds else UNKNOWN_FG)
            painter.drawText(QRectF(4, y, 18, self.ROW_H), Qt.AlignmentFlag.AlignVCenter, mark)
            painter.setPen(self.palette().text().color())
            elided = QFontMetrics(font).elidedText(text, Qt.TextElideMode.ElideRight, int(text_w - 24))
            painter.drawText(QRectF(24, y, text_w - 24, self.ROW_H), Qt.AlignmentFlag.AlignVCenter, elided)
            strip = QRectF(self.width() - strip_w - 4, y + 5, strip_w, self.ROW_H - 10)
            painter.drawImage(strip, self._strips[i])
            x = strip.left() + (self._step + 0.5) * strip.width() / max(1, n)
            painter.setPen(QPen(self.palette().text().color(), 2))
            painter.drawLine(QPointF(x, strip.top() - 3), QPointF(x, strip.bottom() + 3))


# ----- one trace's pane --------------------------------------------------------------------------------
class _TracePane(QWidget):
    stepPicked = Signal(int)

    def __init__(self, compact: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: _TraceData | None = None
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold; font-size: 14px;")
        # Both change on every step: blocks that lay their text out once, not labels that relayout the window.
        self.header = RichTextBlock()
        self.quirk_badge = RichTextBlock(background="#e7f0fd", border="#8fb3e8", color="#1c3d6e", padding=4)
        self.canvas = RoomsCanvas()
        self.first_model = _BeliefTableModel(second_order=False)
        self.second_model = _BeliefTableModel(second_order=True)
        self.first_table = self._table(self.first_model)
        self.second_table = self._table(self.second_model)
        self.goal = GoalChecklist()
        self.step_list = QListWidget()
        # One line per step: with every row the same height, scrolling to a step needs no layout of the others.
        self.step_list.setUniformItemSizes(True)
        self.step_list.setItemDelegate(CachedTextDelegate(self.step_list))
        self.step_list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.step_list.currentRowChanged.connect(self._row_picked)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.first_table, "First-order beliefs")
        self.tabs.addTab(self.second_table, "Second-order beliefs")
        legend = QLabel("<span style='background:#ffe98a'>&nbsp;yellow&nbsp;</span> changed at this step &nbsp; "
                        "<span style='background:#f6c9c4;color:#9b1c10'>&nbsp;⚠ red&nbsp;</span> false belief "
                        "(differs from the world) &nbsp; ? = no longer knows where")
        legend.setWordWrap(True)  # else its one long line sets the pane's minimum width
        centre = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        self._top = top
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        self.title.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        for label in (self.title, self.header, self.quirk_badge):
            top_layout.addWidget(label)
        top_layout.addWidget(self.canvas, 1)
        top_layout.addStretch(0)
        centre.addWidget(top)
        centre.addWidget(self.tabs)
        centre.setStretchFactor(0, 3)
        centre.setStretchFactor(1, 2)
        column = QWidget()
        column_layout = QVBoxLayout(column)
        column_layout.setContentsMargins(0, 0, 0, 0)
        column_layout.addWidget(centre, 1)
        column_layout.addWidget(legend)
        column_layout.addWidget(self.goal)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        if compact:
            self.tabs.addTab(self.step_list, "Steps")
            layout.addWidget(column)
        else:
            outer = QSplitter(Qt.Orientation.Horizontal)
            outer.addWidget(self.step_list)
            outer.addWidget(column)
            outer.setSizes([260, 900])
            layout.addWidget(outer)

    @staticmethod
    def _table(model: _BeliefTableModel) -> QTableView:
        table = QTableView()
        table.setModel(model)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        table.setWordWrap(False)  # cells break lines themselves; wrapping layout is slow
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        table.horizontalHeader().setDefaultSectionSize(118)
        table.verticalHeader().setDefaultSectionSize(38)
        table.setMouseTracking(True)
        return table

    def set_data(self, data: _TraceData) -> None:
        self.data = data
        self.title.setText(data.label)
        room_rows = math.ceil(max(1, len(data.rooms)) / min(max(1, len(data.rooms)), 3 if len(data.rooms) <= 6 else 4))
        self.canvas.setMaximumHeight(room_rows * 165 + 24)
        self._top.setMaximumHeight(room_rows * 165 + 24 + 150)
        self.first_model.set_trace(data)
        self.second_model.set_trace(data)
        self.goal.set_timeline(data.timeline)
        self.step_list.blockSignals(True)
        self.step_list.clear()
        if data.replay is not None:
            for record in data.replay.records:
                self.step_list.addItem(self._step_item(record))
        self.step_list.blockSignals(False)
        if data.error:
            self.header.setText(f"<span style='color:#9b1c10'>Cannot replay this trace: {_esc(data.error)}</span>")

    @staticmethod
    def _step_item(record: StepRecord) -> QListWidgetItem:
        marks = ""
        if not record.returned:
            marks += " ✗"
        if record.quirks:
            marks += " ℹ"
        item = QListWidgetItem(f"{record.index:>3}  {record.label()}{marks}")
        tips = []
        if not record.returned:
            item.setForeground(QBrush(FALSE_FG))
            item.setBackground(QBrush(FALSE_BG))
            tips.append("failed, nothing changed: " + "; ".join(record.failed_preconditions))
        tips += [f"quirk — {n.quirk.title}: {n.detail}" for n in record.quirks]
        tips += list(record.outcome.story_sentences)
        item.setToolTip("\n".join(tips))
        return item

    def _row_picked(self, row: int) -> None:
        if row >= 0:
            self.stepPicked.emit(row)

    def show_step(self, step: int) -> None:
        data = self.data
        if data is None or data.replay is None or data.count == 0:
            return
        index = min(step, data.count - 1)
        record = data.replay.records[index]
        state = data.replay.state_at(index, shared=True)
        beyond = step >= data.count
        self.header.setText(self._header_html(record, data.count, beyond) + _false_beliefs_html(data, state))
        notes = record.quirks
        self.quirk_badge.setVisible(bool(notes))
        if notes:
            self.quirk_badge.setText("<br>".join(
                f"ℹ <b>Reference quirk — {_esc(n.quirk.title)}.</b> {_esc(n.detail)}" for n in notes))
            self.quirk_badge.setToolTip("\n\n".join(f"{n.quirk.title}: {n.quirk.explanation}" for n in notes))
        self.canvas.set_step(data, state, record)
        self.first_model.set_step(state, record)
        self.second_model.set_step(state, record)
        if data.timeline is not None:
            self.goal.set_step(index)
        self.step_list.blockSignals(True)
        self.step_list.setCurrentRow(index)
        self.step_list.blockSignals(False)

    @staticmethod
    def _header_html(record: StepRecord, count: int, beyond: bool) -> str:
        outcome = record.outcome
        status = ("<span style='color:#2f9e44'>✔ done</span>" if outcome.returned else
                  "<span style='color:#9b1c10'><b>✗ failed</b> — nothing changed: "
                  + _esc("; ".join(outcome.failed_preconditions)) + "</span>")
        lines = [f"<b>Step {record.index}</b> (of 0–{count - 1}) · <code>{_esc(record.label())}</code> {status}"
                 + (" <i>(this trace ended here)</i>" if beyond else "")]
        if outcome.logged_action != outcome.action:
            lines[0] += f" <i>(logged by the reference as {outcome.logged_action})</i>"
        if outcome.story_sentences:
            lines.append("<i>“" + _esc(" ".join(outcome.story_sentences)) + "”</i>")
        if outcome.returned:
            seen = [w for w in outcome.witnesses if w not in outcome.peeking]
            parts = [f"<b>Seen by:</b> {_esc(', '.join(seen)) or 'nobody'}"]
            if outcome.peeking:
                parts.append(f"<b>peeking:</b> {_esc(', '.join(outcome.peeking))}")
            if outcome.distracted:
                parts.append(f"<b>distracted (missed it):</b> {_esc(', '.join(outcome.distracted))}")
            lines.append(" · ".join(parts))
        return "<br>".join(lines)


def _false_beliefs_html(data: _TraceData, state: BeliefState, limit: int = 4) -> str:
    """A line naming the first-order beliefs the world contradicts right now."""
    shown: list[str] = []
    count = 0
    facts = [(entity, prop) for entity in data.people + data.objects for prop in data.props.get(entity, ())]
    for person, entity, prop, belief, world in state.false_first_order(data.people, facts):
        count += 1
        if len(shown) < limit:   # only the first few are named; the rest are counted
            subject = entity if entity in data.people else f"the {entity}"
            shown.append(f"{person} believes {subject} is {_where(prop, belief)} (really {_where(prop, world)})")
    if not shown:
        return ""
    more = f" and {count - limit} more" if count > limit else ""
    return ("<br><span style='color:#9b1c10'><b>⚠ False belief:</b> " + _esc("; ".join(shown)) + more
            + "</span>")


def _where(prop: str, value: Any) -> str:
    if prop == ROOM or prop == CONTAINER:
        return f"in the {value}" if is_positive(value) else _short_value(value)
    return str(value)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ----- the view ----------------------------------------------------------------------------------------
class BeliefStepperView(QWidget):
    """Steps through one trace, or several side by side, showing the world and everyone's beliefs."""

    stepChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._panes: list[_TracePane] = []
        self._step = 0
        self._count = 0
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._advance)
        self._panes_box = QHBoxLayout()
        self._panes_box.setContentsMargins(0, 0, 0, 0)
        self._build_controls()
        layout = QVBoxLayout(self)
        layout.addLayout(self._panes_box, 1)
        layout.addLayout(self._controls)
        actions = {"next": self.step_forward, "previous": self.step_back, "first": self.go_first,
                   "last": self.go_last, "play": self.toggle_play}
        # Children take no keyboard focus, so every key of the keymap reaches this view.
        self._key_actions = {QKeySequence(key)[0].key(): actions[action] for key, action, _d in KEYMAP}

    def keyPressEvent(self, event: QKeyEvent) -> None:
        action = self._key_actions.get(event.key()) if event.modifiers() == Qt.KeyboardModifier.NoModifier else None
        if action is None:
            super().keyPressEvent(event)
            return
        action()
        event.accept()

    def _build_controls(self) -> None:
        self._controls = QHBoxLayout()
        self.first_button = QPushButton("⇤")
        self.back_button = QPushButton("◀")
        self.play_button = QPushButton("▶ Play")
        self.forward_button = QPushButton("▶")
        self.last_button = QPushButton("⇥")
        for button, slot, tip in ((self.first_button, self.go_first, "First step (Home)"),
                                  (self.back_button, self.step_back, "Previous step (Left / P)"),
                                  (self.play_button, self.toggle_play, "Play / pause (Space)"),
                                  (self.forward_button, self.step_forward, "Next step (Right / N)"),
                                  (self.last_button, self.go_last, "Last step (End)")):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            self._controls.addWidget(button)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.slider.valueChanged.connect(self.set_step)
        self._controls.addWidget(self.slider, 1)
        self.step_label = QLabel("step 0 / 0")
        self._controls.addWidget(self.step_label)
        self.speed = QComboBox()
        self.speed.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for value in SPEEDS:
            self.speed.addItem(f"{value:g} steps/s", value)
        self.speed.setCurrentIndex(SPEEDS.index(2.0))
        self.speed.currentIndexChanged.connect(self._speed_changed)
        self._controls.addWidget(self.speed)

    # ----- public API ---------------------------------------------------------------------------------
    def set_trace(self, steps: list[dict], goal: list | dict | None = None, title: str = "") -> None:
        """Show one trace (steps in the golden-trace shape) with an optional goal."""
        self._set_panes([_load_trace(title, steps, goal)], compact=False)

    def set_traces(self, traces: Sequence[tuple[str, list[dict], list | dict | None]]) -> None:
        """Show several traces side by side, stepped together (a shorter one stays on its last step)."""
        self._set_panes([_load_trace(label, steps, goal) for label, steps, goal in traces], compact=len(traces) > 1)

    def step(self) -> int:
        return self._step

    def step_count(self) -> int:
        return self._count

    def pane_count(self) -> int:
        return len(self._panes)

    def pane(self, index: int = 0) -> _TracePane:
        return self._panes[index]

    def set_step(self, step: int) -> None:
        """Show the state after `step` (clamped to the trace); emits `stepChanged` when it moves."""
        if self._count == 0:
            return
        step = max(0, min(int(step), self._count - 1))
        changed = step != self._step
        self._step = step
        for pane in self._panes:
            pane.show_step(step)
        self.slider.blockSignals(True)
        self.slider.setValue(step)
        self.slider.blockSignals(False)
        self.step_label.setText(f"step {step} / {self._count - 1}")
        if changed:
            self.stepChanged.emit(step)

    def step_forward(self) -> None:
        self.set_step(self._step + 1)

    def step_back(self) -> None:
        self.set_step(self._step - 1)

    def go_first(self) -> None:
        self.set_step(0)

    def go_last(self) -> None:
        self.set_step(self._count - 1)

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def toggle_play(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
        elif self._count:
            if self._step >= self._count - 1:
                self.set_step(0)
            self._timer.start(int(1000 / self.speed.currentData()))
        self.play_button.setText("❚❚ Pause" if self._timer.isActive() else "▶ Play")

    def set_speed(self, steps_per_second: float) -> None:
        """Choose the closest offered play speed."""
        nearest = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - steps_per_second))
        self.speed.setCurrentIndex(nearest)

    # ----- internals ----------------------------------------------------------------------------------
    def _set_panes(self, datas: list[_TraceData], compact: bool) -> None:
        self._timer.stop()
        self.play_button.setText("▶ Play")
        for pane in self._panes:
            self._panes_box.removeWidget(pane)
            pane.deleteLater()
        self._panes = []
        for data in datas:
            pane = _TracePane(compact)
            pane.set_data(data)
            pane.stepPicked.connect(self.set_step)
            self._panes_box.addWidget(pane, 1)
            self._panes.append(pane)
        self._count = max((d.count for d in datas), default=0)
        self.slider.setRange(0, max(0, self._count - 1))
        self._step = -1
        self.set_step(0)
        self._step = max(self._step, 0)

    def _advance(self) -> None:
        if self._step >= self._count - 1:
            self.toggle_play()
            return
        self.step_forward()

    def _speed_changed(self) -> None:
        if self._timer.isActive():
            self._timer.start(int(1000 / self.speed.currentData()))
