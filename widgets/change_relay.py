"""Brings the change channel's news to the GUI thread, so a view may refresh whichever thread published."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Signal

from app.changes import Change, ChangeChannel, Topic


class ChangeRelay(QObject):
    """Listens to `topics` on `channel`; `changed` is emitted on the thread this relay lives on (the GUI's)."""

    changed = Signal(object)  # app.changes.Change

    def __init__(self, channel: ChangeChannel, topics: Iterable[Topic], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.channel = channel
        self._topics = tuple(topics)
        # a signal emitted from a worker thread is queued to this object's thread by Qt
        self._listener: Callable[[Change], None] = self.changed.emit
        channel.subscribe(self._topics, self._listener)

    def close(self) -> None:
        """Stop listening (the views are going away)."""
        self.channel.unsubscribe(self._listener)
