"""A block of word-wrapped rich text whose height follows its content, for text that changes on every step."""
from __future__ import annotations

import math

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen, QResizeEvent, QTextDocument
from PySide6.QtWidgets import QSizePolicy, QWidget


class RichTextBlock(QWidget):
    """Rich text laid out once per change.

    A word-wrapped QLabel lays its text out several times over each time it changes (for its size hint, its
    height at the layout's width, and painting) and makes the whole window's layout run again. This block lays
    the text out once at its own width and asks the layout for a new height only when the line count changes.
    An optional box (background, border, padding) frames the text.
    """

    def __init__(self, parent: QWidget | None = None, background: str | None = None, border: str | None = None,
                 color: str | None = None, padding: int = 0) -> None:
        super().__init__(parent)
        self._html = ""
        self._color = color
        self._background = QColor(background) if background else None
        self._border = QColor(border) if border else None
        self._padding = padding
        self._document = QTextDocument(self)
        self._document.setDocumentMargin(0)
        self._document.setDefaultFont(self.font())
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self._content_height())

    def text(self) -> str:
        return self._html

    def setText(self, html: str) -> None:  # noqa: N802 (the QLabel name, so either can be used)
        if html == self._html:
            return
        self._html = html
        self._document.setHtml(f"<div style='color:{self._color}'>{html}</div>" if self._color else html)
        self._fit()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(400, self.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self._background is not None or self._border is not None:
            painter.setPen(QPen(self._border) if self._border is not None else QPen(QColor(0, 0, 0, 0)))
            if self._background is not None:
                painter.setBrush(self._background)
            painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        painter.translate(self._padding, self._padding)
        self._document.drawContents(painter, QRectF(0, 0, self._text_width(), self._document.size().height()))

    def _text_width(self) -> float:
        return max(1.0, self.width() - 2 * self._padding)

    def _content_height(self) -> int:
        return math.ceil(self._document.size().height()) + 2 * self._padding

    def _fit(self) -> None:
        self._document.setTextWidth(self._text_width())
        height = self._content_height()
        if height != self.height():
            self.setFixedHeight(height)
