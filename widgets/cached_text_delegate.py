"""An item delegate that draws each item's text from a cache of laid-out text, for lists repainted on every step."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPointF, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPalette, QStaticText, QTransform
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

_CACHE_LIMIT = 4000


class CachedTextDelegate(QStyledItemDelegate):
    """Paints like the default delegate (background, selection, colours, font), but keeps each text's layout.

    Qt shapes and lays out every visible item's text again on each repaint. The stepper's step list scrolls,
    and so repaints whole, on a jump to any step while showing the same long labels
    ("12  move_object_container(Anne, ball, box)"), so the laid-out text is kept per text, font and width,
    elided with "…" like the default when it does not fit. For views of short texts (the belief tables) the
    Python call per item costs more than the layout it saves. Items are assumed to have no icon or check box.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._texts: dict[tuple[str, str, int], QStaticText] = {}

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        rect = opt.rect  # these views show no icons or check boxes: the text has the whole cell
        opt.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)  # all but the text
        if not text:
            return
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1
        rect = rect.adjusted(margin, 0, -margin, 0)
        static = self._static_text(text, opt, rect.width())
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = (QPalette.ColorGroup.Normal if opt.state & QStyle.StateFlag.State_Enabled
                 else QPalette.ColorGroup.Disabled)
        painter.save()
        painter.setClipRect(rect)
        painter.setFont(opt.font)
        painter.setPen(opt.palette.color(group, QPalette.ColorRole.HighlightedText if selected
                                         else QPalette.ColorRole.Text))
        top = rect.top() + (rect.height() - static.size().height()) / 2
        painter.drawStaticText(QPointF(rect.left(), top), static)
        painter.restore()

    def _static_text(self, text: str, opt: QStyleOptionViewItem, width: int) -> QStaticText:
        key = (text, opt.font.key(), width)
        static = self._texts.get(key)
        if static is None:
            if len(self._texts) >= _CACHE_LIMIT:
                self._texts.clear()
            metrics = QFontMetrics(opt.font)
            # Lines are separated by U+2028, as the view hands them over and as QStaticText breaks them.
            lines = [metrics.elidedText(line, Qt.TextElideMode.ElideRight, width)
                     for line in text.replace("\n", "\u2028").split("\u2028")]
            static = QStaticText("\u2028".join(lines))
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(QTransform(), opt.font)
            self._texts[key] = static
        return static
