"""The labels of the active set as buttons with colour and key; picking one sets the current label.

Every label without children has a key while it is one of the ten most used without a key of its own (the
free digits, `app.keymap.label_keys`); any label is found by typing its name (`begin_find`, the `/` key).
How a label key marks while playing, press twice or hold, is chosen here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QKeyEvent, QPixmap
from PySide6.QtWidgets import (QApplication, QButtonGroup, QComboBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QToolButton, QVBoxLayout, QWidget)
from shiboken6 import isValid

from app.keymap import fixed_player_key, label_keys
from app.settings import LABEL_KEY_MODES
from storage.annotations import Label
from widgets.annotation_tiers import fallback_colour

TAP, HOLD = LABEL_KEY_MODES   # remembered in the window's settings as `label_key_mode`


def swatch(colour: str, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(colour))
    return QIcon(pixmap)


class LabelPaletteView(QWidget):
    """Pick the current label by click or shortcut; 'Relabel selection' asks to give it to selected labels."""

    currentLabelChanged = Signal(str, str)  # label set, label
    relabelRequested = Signal(str, str)     # label set, label
    keyModeChanged = Signal(str)            # TAP or HOLD, chosen by the annotator

    COLUMNS = 2   # two names with their [key] fit the 300-pixel side panel
    CELL_TEXT_PX = 108  # the most a name takes in one of the two columns (beside its swatch)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label_set = ""
        self._labels: list[Label] = []
        self._keys: dict[str, str] = {}  # label -> its key, its own or a free digit
        self._found: Callable[[str], object] | None = None  # what Enter in the search box does, while finding
        self._focus_before: QWidget | None = None
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
        self.search.returnPressed.connect(self._find_done)
        self.search.installEventFilter(self)
        self.key_mode = QComboBox()
        self.key_mode.addItem("press twice", TAP)
        self.key_mode.addItem("hold", HOLD)
        self.key_mode.setItemData(0, "Press a label's key at the start of what you hear and again at its end",
                                  Qt.ItemDataRole.ToolTipRole)
        self.key_mode.setItemData(1, "Hold a label's key for as long as what you hear lasts (ELAN's way)",
                                  Qt.ItemDataRole.ToolTipRole)
        self.key_mode.setToolTip("How a label key marks while playing. Either way a key held down makes one "
                                 "label, from press to release; '.' adds a point label, '/' finds a label.")
        self.key_mode.currentIndexChanged.connect(lambda _i: self.keyModeChanged.emit(self.key_mode.currentData()))
        top = QHBoxLayout()
        top.addWidget(self._title, 1)
        top.addWidget(self.relabel_button)
        mode = QHBoxLayout()
        mode.addWidget(QLabel("label keys:"))
        mode.addWidget(self.key_mode, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addLayout(mode)
        layout.addWidget(self.search)
        layout.addLayout(self._grid)
        layout.addStretch(1)  # the buttons sit together at the top, however tall the panel

    def hold_keys(self) -> bool:
        """True when a label key marks from its press to its release (ELAN's way), not press twice."""
        return self.key_mode.currentData() == HOLD

    def set_key_mode(self, mode: str) -> None:
        """Show the remembered way label keys mark (TAP or HOLD; anything else is TAP)."""
        self.key_mode.blockSignals(True)
        self.key_mode.setCurrentIndex(max(0, self.key_mode.findData(mode)))
        self.key_mode.blockSignals(False)

    def labels(self) -> list[Label]:
        return list(self._labels)

    def set_labels(self, label_set: str, labels: Sequence[Label], usage: Mapping[str, int] | None = None) -> None:
        """Show the labels of `label_set` (hierarchy order); the first becomes current. `usage` (label to
        how often it is used) says which labels without a key of their own get the free digits."""
        for button in self._buttons.values():
            self._group.removeButton(button)
            self._grid.removeWidget(button)
            button.setParent(None)  # gone at once, not at the next event loop turn
            button.deleteLater()
        self._buttons.clear()
        self.label_set = label_set
        self._labels = list(labels)
        self._keys = label_keys(self._labels, usage)
        self._title.setText(f"<b>{label_set}</b>")
        self.search.clear()
        # a set with a hierarchy reads coarse to fine: each top-level label heads a row, its children follow
        nested = any(label.depth for label in self._labels)
        self.search.setVisible(len(self._labels) > 12)
        row, column = -1, self.COLUMNS
        for label in self._labels:
            button = QToolButton()
            key = self._keys.get(label.name)
            text = f"[{key}] {label.name}" if key else label.name
            if not (nested and label.depth == 0):  # a name too long for its column is elided, whole in the tip
                text = button.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, self.CELL_TEXT_PX)
            button.setText(text)
            button.setIcon(swatch(label.colour or fallback_colour(label.name)))
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setCheckable(True)
            tip = label.name if not label.description else f"{label.name}: {label.description}"
            if label.shortcut and key != label.shortcut:
                tip += (f"\n\nIts own key {label.shortcut} is the player's ({fixed_player_key(label.shortcut)})"
                        + (f"; it has {key} instead." if key else "; find it with / instead."))
            elif key and not label.shortcut:
                tip += (f"\n\nKey {key}: a free digit, given to the most used labels without a key of their own"
                        " (Annotate > Label sets gives a label its own).")
            button.setToolTip(tip)
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
        """(key, label) for each label of the set that has a key, its own or a free digit, in palette order."""
        return [(self._keys[label.name], label.name) for label in self._labels if label.name in self._keys]

    def label_for_shortcut(self, text: str) -> str | None:
        """The label whose key is `text` (case-insensitive), or None."""
        return next((name for name, key in self._keys.items() if key.lower() == text.lower()), None)

    # -- finding a label by typing -------------------------------------------------------------------
    def begin_find(self, found: Callable[[str], object]) -> None:
        """Put the keyboard in the search box: typing narrows the labels, Enter gives the first one shown
        to `found` and the keyboard back to where it was, Escape gives it back with nothing chosen."""
        self._found = found
        self._focus_before = QApplication.focusWidget()
        self.search.setVisible(True)
        self.search.clear()
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def first_shown(self) -> str | None:
        """The label Enter would choose: the first whose button is on show, preferring one without children."""
        parents = {label.parent for label in self._labels if label.parent}
        shown = [label.name for label in self._labels if not self._buttons[label.name].isHidden()]
        return next((name for name in shown if name not in parents), shown[0] if shown else None)

    def _find_done(self) -> None:
        found, self._found = self._found, None
        name = self.first_shown() if self.search.text().strip() else None
        self._end_find()
        if found is not None and name is not None:
            found(name)
        elif name is not None:
            self.pick(name)

    def _end_find(self) -> None:
        self.search.clear()
        self.search.setVisible(len(self._labels) > 12)
        before, self._focus_before = self._focus_before, None
        if before is not None and isValid(before):  # it may have gone meanwhile (a page rebuilt)
            before.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if (watched is self.search and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
                and event.key() == Qt.Key.Key_Escape):
            self._found = None
            self._end_find()
            return True
        return False

    def _relabel(self) -> None:
        name = self.current()
        if name:
            self.relabelRequested.emit(self.label_set, name)
