"""Who changed which label, when, and how: before -> after, newest first."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from app.annotations import describe_state
from storage.annotations import AnnotationEvent


class HistoryPanel(QWidget):
    """A list of annotation events; double-clicking one asks to go to the label's time."""

    seekRequested = Signal(float)

    COLUMNS = ("When", "Who", "Action", "Before", "After")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(self.COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemDoubleClicked.connect(self._double_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)

    def set_events(self, events: Sequence[AnnotationEvent]) -> None:
        self.tree.clear()
        items = []
        for event in events:
            when = event.happened_at.strftime("%Y-%m-%d %H:%M:%S") if event.happened_at else ""
            item = QTreeWidgetItem([when, event.annotator, event.action, describe_state(event.before),
                                    describe_state(event.after)])
            state = event.after or event.before or {}
            item.setData(0, Qt.ItemDataRole.UserRole, state.get("start_s"))
            items.append(item)
        self.tree.addTopLevelItems(items)

    def row_texts(self) -> list[list[str]]:
        """What the list shows, row by row (for tests and copy)."""
        return [[self.tree.topLevelItem(i).text(c) for c in range(len(self.COLUMNS))]
                for i in range(self.tree.topLevelItemCount())]

    def _double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        start = item.data(0, Qt.ItemDataRole.UserRole)
        if start is not None:
            self.seekRequested.emit(float(start))
