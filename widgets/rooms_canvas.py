"""The stepper's picture of the world at one step: rooms with people, containers and objects; leavers outside
the door, peekers at it, and this step's witnesses ringed."""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.beliefs.engine import CONTAINER, ROOM, is_positive
from app.beliefs.replay import BeliefState, StepRecord
from app.beliefs.trace_view import TraceData
from widgets.palette import colour
from widgets.stepper_style import PEEK_RING, PERSON_COLOURS, UNKNOWN_FG, WITNESS_RING


class RoomsCanvas(QWidget):
    """A drawing of the world at one step: rooms with people, containers and objects; leavers outside."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data: TraceData | None = None
        self._state: BeliefState | None = None
        self._record: StepRecord | None = None
        self.setMinimumHeight(180)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(640, 260)

    def set_step(self, data: TraceData, state: BeliefState, record: StepRecord | None) -> None:
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
        painter.setPen(QPen(QColor(colour("container_edge")), 2))
        painter.setBrush(QColor(colour("container_bg")))
        painter.drawRect(box)
        painter.setPen(QColor(colour("container_fg")))
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
        painter.setPen(QPen(QColor(colour("object_changed_edge" if changed else "object_edge")), 2 if changed else 1,
                            style))
        painter.setBrush(QColor(colour("object_changed_bg" if changed else "object_bg")))
        painter.drawRoundedRect(rect, 5, 5)
        painter.setPen(QColor(colour("object_fg")))
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

