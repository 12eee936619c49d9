"""The labels of the active set as buttons with colour and shortcut; picking one sets the current label."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (QButtonGroup, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QToolButton,
                               QVBoxLayout, QWidget)

from storage.annotations import Label
from widgets.annotation_tiers import fallback_colour


def swatch(colour: str, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(colour))
    return QIcon(pixmap)


class LabelPaletteView(QWidget):
    """Pick the current label by click or shortcut; 'Relabel selection' asks to give it to selected labels."""

    currentLabelChanged = Signal(str, str)  # label set, label
    relabelRequested = Signal(str, str)     # label set, label

    COLUMNS = 2   # two names with their [key] fit the 300-pixel side panel

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label_set = ""
        self._labels: list[Label] = []
        self._buttons: dict[str, QToolButton] = {}
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self._title = QLabel()
        self._title.setWordWrap(True)   # a long set name wraps instead of pushing the button out of the panel
        self._grid = QGridLayout()
        self._grid.setSpacing(2)
        self.relabel_button = QPushButton("Relabel")
        self.relabel_button.setToolTip("Relabel selection: give the current label to the selected labels")
        self.relabel_button.clicked.connect(self._relabel)
        self.search = QLineEdit()
        self.search.setPlaceholderText("find a label…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        top = QHBoxLayout()
        top.addWidget(self._title, 1)
        top.addWidget(self.relabel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.search)
        layout.addLayout(self._grid)

    def set_labels(self, label_set: str, labels: Sequence[Label]) -> None:
        """Show the labels of `label_set` (hierarchy order); the first becomes current."""
        for button in self._buttons.values():
            self._group.removeButton(button)
            self._grid.removeWidget(button)
            button.setParent(None)  # gone at once, not at the next event loop turn
            button.deleteLater()
        self._buttons.clear()
        self.label_set = label_set
        self._labels = list(labels)
        self._title.setText(f"<b>{label_set}</b>")
        self.search.clear()
        # a set with a hierarchy reads coarse to fine: each top-level label heads a row, its children follow
        nested = any(label.depth for label in self._labels)
        self.search.setVisible(len(self._labels) > 12)
        row, column = -1, self.COLUMNS
        for label in self._labels:
            button = QToolButton()
            shortcut = f"[{label.shortcut}] " if label.shortcut else ""
            button.setText(f"{shortcut}{label.name}")
            button.setIcon(swatch(label.colour or fallback_colour(label.name)))
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setCheckable(True)
            button.setToolTip(label.description or label.name)
            button.setAutoRaise(True)
            button.clicked.connect(lambda _=False, name=label.name: self.pick(name))
            self._group.addButton(button)
            if nested and label.depth == 0:
                font = button.font()
                font.setBold(True)
                button.setFont(font)
                row, column = row + 1, 0
                self._grid.addWidget(button, row, 0, 1, self.COLUMNS)
                column = self.COLUMNS
            else:
                if column >= self.COLUMNS:
                    row, column = row + 1, 0
                self._grid.addWidget(button, row, column)
                column += 1
            self._buttons[label.name] = button
        if self._labels:
            self.pick(self._labels[0].name)

    def _filter(self, text: str) -> None:
        """Show the labels whose name (or whose parent's name) contains `text`."""
        needle = text.strip().lower()
        shown = {label.name for label in self._labels
                 if not needle or needle in label.name.lower() or needle in (label.parent or "").lower()}
        shown |= {label.parent for label in self._labels if label.name in shown and label.parent}  # keep the way in
        for label in self._labels:
            self._buttons[label.name].setVisible(label.name in shown)

    def current(self) -> str | None:
        checked = self._group.checkedButton()
        return next((name for name, b in self._buttons.items() if b is checked), None)

    def pick(self, name: str) -> None:
        """Make `name` the current label and say so."""
        if name not in self._buttons:
            return
        self._buttons[name].setChecked(True)
        self.currentLabelChanged.emit(self.label_set, name)

    def shortcuts(self) -> list[tuple[str, str]]:
        """(key, label) for each label of the set that has a key, in palette order."""
        return [(label.shortcut, label.name) for label in self._labels if label.shortcut]

    def label_for_shortcut(self, text: str) -> str | None:
        """The label whose shortcut is `text` (case-insensitive), or None."""
        for label in self._labels:
            if label.shortcut and label.shortcut.lower() == text.lower():
                return label.name
        return None

    def _relabel(self) -> None:
        name = self.current()
        if name:
            self.relabelRequested.emit(self.label_set, name)
