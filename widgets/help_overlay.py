"""The list of every key, grouped as the keymap groups them, over the whole window; it scrolls when long."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.keymap import Keymap


def keymap_html(keymap: Keymap) -> str:
    """One row per action with its keys together, under a heading per group, in table order."""
    groups: dict[str, dict[str, list]] = {}
    for binding in keymap:
        actions = groups.setdefault(binding.group, {})
        actions.setdefault(binding.action, []).append(binding)
    rows = []
    for group, actions in groups.items():
        rows.append(f"<tr><td colspan=2 style='padding-top:10px'><b>{escape(group)}</b></td></tr>")
        for bindings in actions.values():
            sequences = ", ".join(escape(b.sequence) for b in bindings)
            rows.append(f"<tr><td style='padding-right:18px'><code>{sequences}</code></td>"
                        f"<td>{escape(bindings[0].description)}</td></tr>")
    return ("<h3>Keys</h3><table align='center'>" + "".join(rows) + "</table>"
            "<p style='color:#bbb'>F1, ? or Escape closes this; Up, Down, Page Up and Page Down scroll it.</p>")


class HelpOverlay(QFrame):
    """Covers `host` (kept to its size); a click or the dispatcher's keys close it."""

    SCROLL_STEP = 40

    def __init__(self, keymap: Keymap, host: QWidget) -> None:
        super().__init__(host)
        self.keymap = keymap
        self.setObjectName("helpOverlay")
        self.setStyleSheet("#helpOverlay { background: rgba(20, 20, 20, 225); }"
                           "#helpOverlay QLabel { color: white; font-size: 13px; }"
                           "#helpOverlay QScrollArea, #helpOverlay QScrollArea > QWidget > QWidget"
                           " { background: transparent; }")
        self.label = QLabel()
        self.label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scroll.setWidget(self.label)
        layout = QVBoxLayout(self)
        layout.addWidget(self.scroll)
        host.installEventFilter(self)
        self.hide()

    def refresh(self) -> None:
        """Show the keymap as it is now (a label set's keys change with the active set)."""
        self.label.setText(keymap_html(self.keymap))

    def toggle(self) -> None:
        if self.isVisible():
            self.hide()
            return
        self.refresh()
        self.setGeometry(self.parentWidget().rect())
        self.raise_()
        self.show()

    def scroll_by_key(self, key: Qt.Key) -> None:
        bar = self.scroll.verticalScrollBar()
        step = {Qt.Key.Key_Up: -self.SCROLL_STEP, Qt.Key.Key_Down: self.SCROLL_STEP,
                Qt.Key.Key_PageUp: -bar.pageStep(), Qt.Key.Key_PageDown: bar.pageStep()}.get(key, 0)
        bar.setValue(bar.value() + step)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(self.parentWidget().rect())
        return False

    def mousePressEvent(self, event) -> None:  # noqa: N802 (Qt API)
        self.hide()
