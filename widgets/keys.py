"""Keys in Qt: the one spelling of a key event as a keymap sequence, and the one dispatcher of a window.

`KeyDispatcher` watches every key press inside its root window and the window's floating docks (an
application-wide event filter) and runs the action the keymap binds to it in the contexts the window says
are current (the page shown), so a key works wherever focus is: the stimulus table, the player, the tiers.
A text field keeps its keys. A held label key is one press: the repeats the keyboard sends while it is held
are swallowed, and its release is handed on (a label lasts from press to release when held). Ctrl with a
label's key (when Ctrl and that key mean nothing else) adds that label as a point.
Menu shortcuts are the window's `QAction`s, given their keys from the same keymap (`bind_shortcuts`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (QAbstractSpinBox, QApplication, QComboBox, QDockWidget, QKeySequenceEdit,
                               QLineEdit, QPlainTextEdit, QTextEdit, QWidget)

from app.keymap import POINT_MODIFIER, Keymap, label_of_action
from widgets.help_overlay import HelpOverlay

_LONE_MODIFIERS = (Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta, Qt.Key.Key_AltGr,
                   Qt.Key.Key_unknown)
_KEY_PRESS = QEvent.Type.KeyPress
_KEY_RELEASE = QEvent.Type.KeyRelease
# Qt's short names where the keymap uses the long ones
_KEY_NAMES = {"Del": "Delete", "Esc": "Escape", "Ins": "Insert"}


def key_sequence_of(event: QKeyEvent) -> str:
    """The keymap spelling of a key press ("Shift+Left", "?", "Space", "Delete"); "" for a lone modifier."""
    key = event.key()
    if key in _LONE_MODIFIERS:
        return ""
    name = QKeySequence(key).toString()
    name = _KEY_NAMES.get(name, name)
    modifiers = event.modifiers()
    parts = []
    if modifiers & Qt.KeyboardModifier.ControlModifier:
        parts.append("Ctrl")
    if modifiers & Qt.KeyboardModifier.AltModifier:
        parts.append("Alt")
    # "?" or "[" already say which shift state they need
    symbol = len(name) == 1 and not name.isalnum()
    if modifiers & Qt.KeyboardModifier.ShiftModifier and not symbol:
        parts.append("Shift")
    if modifiers & Qt.KeyboardModifier.MetaModifier:
        parts.append("Meta")
    return "+".join([*parts, name])


def key_press_for(sequence: str) -> tuple[Qt.Key, Qt.KeyboardModifier]:
    """The Qt key and modifiers that produce `sequence` (tests press keys from the keymap with it)."""
    combination = QKeySequence(sequence)[0]
    return combination.key(), combination.keyboardModifiers()


def bind_shortcuts(action: QAction, keymap: Keymap, action_id: str) -> QAction:
    """Give a menu action the keys the keymap binds to `action_id` (the menu shows the first)."""
    action.setShortcuts([QKeySequence(s) for s in keymap.sequences_for(action_id)])
    return action


def is_text_input(widget: QWidget | None) -> bool:
    """True for a widget where a key types text (a line edit, an editable text, a spin box)."""
    if isinstance(widget, (QLineEdit, QAbstractSpinBox, QKeySequenceEdit)):
        return True
    if isinstance(widget, (QTextEdit, QPlainTextEdit)):
        return not widget.isReadOnly()
    return isinstance(widget, QComboBox) and widget.isEditable()


def copies_selection(widget: QWidget | None) -> bool:
    """True for a view whose Ctrl+C copies what is selected in it (a framed table)."""
    return callable(getattr(widget, "copy_selection", None))


Handler = Callable[[], object]


class KeyDispatcher(QObject):
    """Runs keymap actions for key presses anywhere in `root`'s window.

    `contexts()` names the keymap contexts in force, most specific first (for instance ("media",) while a
    clip is shown). `register_all` says what actions do; a label key's press goes to `label_handler` and
    its release to `label_release_handler`. While `overlay` (the list of keys) is shown, scrolling keys
    scroll it and any other key closes it (a lone Shift does not: it is on the way to "?").
    """

    SCROLL_KEYS = (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)

    def __init__(self, root: QWidget, keymap: Keymap, contexts: Callable[[], Iterable[str]]) -> None:
        super().__init__(root)
        self.root = root
        self.keymap = keymap
        self.contexts = contexts
        self.overlay: HelpOverlay | None = None
        self.label_handler: Callable[[str], object] | None = None
        self.label_release_handler: Callable[[str, bool], object] | None = None  # label, held past a repeat
        self.label_point_handler: Callable[[str], object] | None = None  # Ctrl with a label's key
        self._repeating: set[str] = set()  # label keys the keyboard has started to repeat (held down)
        self._handlers: dict[str, Handler] = {}
        app = QApplication.instance()
        assert app is not None, "a QApplication must exist before keys can be dispatched"
        app.installEventFilter(self)
        root.destroyed.connect(lambda *_: self._uninstall())

    def register_all(self, handlers: dict[str, Handler]) -> None:
        self._handlers.update(handlers)

    def action_for(self, sequence: str) -> str | None:
        """The action the key would run now (in the current contexts), whether or not it is handled."""
        return self.keymap.action_for(sequence, *self.contexts()) if sequence else None

    def perform(self, action: str) -> bool:
        """Run an action by id; False when nothing does it here."""
        label = label_of_action(action)
        if label is not None:
            if self.label_handler is None:
                return False
            self.label_handler(label)
            return True
        handler = self._handlers.get(action)
        if handler is None:
            return False
        handler()
        return True

    def _uninstall(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def _inside(self, widget: QWidget) -> bool:
        """In the root's window, or in one of its docks floating in a window of its own."""
        window, root = widget.window(), self.root.window()
        return window is root or (isinstance(window, QDockWidget) and window.parentWidget() is root)

    def _label_key(self, action: str | None) -> str | None:
        """The label an action marks, when a handler would mark it here."""
        label = label_of_action(action) if action else None
        return label if label is not None and self.label_handler is not None else None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        # every event of the application passes here: the common case must cost next to nothing
        kind = event.type()
        if (kind is not _KEY_PRESS and kind is not _KEY_RELEASE) or not isinstance(watched, QWidget):
            return False
        if not self._inside(watched) or not isinstance(event, QKeyEvent):
            return False
        if is_text_input(watched) or is_text_input(QApplication.focusWidget()):
            return False  # typing a name or a filter: the key is text
        if kind is _KEY_PRESS and copies_selection(watched) and event.matches(
                QKeySequence.StandardKey.Copy):
            return False  # Ctrl+C in a table that copies copies, even when a label's key is C
        if kind is _KEY_RELEASE:
            return self._released(event)
        sequence = key_sequence_of(event)
        if self.overlay is not None and self.overlay.isVisible():
            if event.key() in self.SCROLL_KEYS:
                self.overlay.scroll_by_key(event.key())
            elif sequence and not event.isAutoRepeat():
                self.overlay.hide()
            return True
        action = self.action_for(sequence)
        label = self._label_key(action)
        if event.isAutoRepeat() and label is not None:
            self._repeating.add(label)
            event.accept()  # a held label key is one press, however long the keyboard repeats it
            return True
        if action is None:
            return self._point(sequence, event)
        if not self.perform(action):
            return False
        event.accept()
        return True

    def _point(self, sequence: str, event: QKeyEvent) -> bool:
        """Ctrl with a label's key, bound to nothing else: that label as a point (one, however long held)."""
        prefix = POINT_MODIFIER + "+"
        if not sequence.startswith(prefix) or self.label_point_handler is None:
            return False
        label = self._label_key(self.action_for(sequence[len(prefix):]))
        if label is None:
            return False
        if not event.isAutoRepeat():
            self.label_point_handler(label)
        event.accept()
        return True

    def _released(self, event: QKeyEvent) -> bool:
        """A label key let go (not a repeat's release): its handler may end the label it started."""
        label = self._label_key(self.action_for(key_sequence_of(event)))
        if label is None:
            return False
        if not event.isAutoRepeat():
            held = label in self._repeating
            self._repeating.discard(label)
            if self.label_release_handler is not None:
                self.label_release_handler(label, held)
        event.accept()
        return True
