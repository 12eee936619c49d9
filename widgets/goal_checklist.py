"""The stepper's goal checklist: each goal atom with whether it holds at the shown step, and its history."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.beliefs.goals import FALSE_BELIEF, TRUE_BELIEF, GoalTimeline
from widgets.stepper_style import HOLD_GREEN, NOT_HOLD_GREY, UNKNOWN_FG


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

