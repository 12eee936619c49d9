"""The stepper's belief tables: rows are holders (the world and each person, or each pair for second order),
columns the entities; one step at a time, with changed cells and false beliefs marked."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QFont

from app.beliefs.engine import KNOWLEDGE, KNOWLEDGE_ENTITY, ROOM, UNKNOWN_WHEREABOUTS
from app.beliefs.replay import BeliefState, StepRecord
from app.beliefs.trace_view import TraceData, cell_text, prop_words, short_value
from widgets.palette import qcolour

_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole,
                    Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ToolTipRole})


class BeliefTableModel(QAbstractTableModel):
    """Rows are holders (a person, or a pair for second order), columns entities; one step at a time."""

    def __init__(self, second_order: bool) -> None:
        super().__init__()
        self._second = second_order
        self._rows: list[tuple[str, ...]] = []
        self._columns: list[str] = []
        self._props: dict[str, list[str]] = {}
        self._state: BeliefState | None = None
        self._changed: set[tuple] = set()
        self._cache: dict[tuple[int, int], tuple[str, bool, bool]] = {}
        # from the light/dark palette, so the palette's own text stays readable on every marked cell
        self._brushes = {name: QBrush(qcolour(colour)) for name, colour in (
            ("changed false", "changed_false_bg"), ("false", "false_bg"), ("changed", "changed_bg"),
            ("world", "world_bg"), ("false text", "false_fg"), ("unknown text", "unknown_fg"))}
        self._bold = QFont()
        self._bold.setBold(True)

    def set_trace(self, data: TraceData) -> None:
        self.beginResetModel()
        people = data.people
        # The first-order table starts with the world itself, so a false belief can be read against it.
        self._rows = [(p, q) for p in people for q in people] if self._second else [()] + [(p,) for p in people]
        columns = people + data.objects + data.containers
        if any(KNOWLEDGE_ENTITY == e for e in data.props):
            columns.append(KNOWLEDGE_ENTITY)
        self._columns = [c for c in columns if c in data.props]
        self._props = data.props
        self._state = None
        self.endResetModel()

    def set_step(self, state: BeliefState, record: StepRecord | None) -> None:
        self._state = state
        self._cache = {}
        layer = "second" if self._second else "first"
        width = 3 if self._second else 2
        self._changed = set()
        if record is not None:
            for key in record.changed_keys:
                if key[0] == layer and len(key) == width + 2:
                    self._changed.add(key[1:width + 1])
                elif key[0] == "world" and not self._second:
                    self._changed.add(key[1:2])
        if self._rows and self._columns:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(self._columns) - 1))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            entity = self._columns[section]
            return "topics heard" if entity == KNOWLEDGE_ENTITY else entity
        holders = self._rows[section]
        if not holders:
            return "World (truth)"
        return f"{holders[0]} thinks {holders[1]} believes" if self._second else f"{holders[0]} believes"

    def is_changed(self, row: int, column: int) -> bool:
        return (*self._rows[row], self._columns[column]) in self._changed

    def false_props(self, row: int, column: int) -> list[str]:
        state = self._state
        if state is None:
            return []
        holders, entity = self._rows[row], self._columns[column]
        layer = "second" if self._second else "first"
        return [p for p in self._props.get(entity, ())
                if state.is_false_belief((layer, *holders, entity, p))]

    def _cell(self, row: int, column: int) -> tuple[str, bool, bool]:
        """(text, has a false belief, changed at this step) for one cell, computed once per step."""
        cached = self._cache.get((row, column))
        if cached is None:
            holders, entity = self._rows[row], self._columns[column]
            prefix = ("second" if self._second else "first" if holders else "world", *holders)
            assert self._state is not None
            text = cell_text(self._state, prefix, entity, self._props.get(entity, []))
            false = bool(text) and bool(self.false_props(row, column))
            cached = (("⚠ " + text) if false else text, false, self.is_changed(row, column))
            self._cache[(row, column)] = cached
        return cached

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Called for every role of every visible cell on each repaint: the common roles answer from the cache.
        state = self._state
        if state is None or role not in _ROLES or not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(row, column)[0]
        if role == Qt.ItemDataRole.BackgroundRole:
            _text, false, changed = self._cell(row, column)
            if false and changed:
                return self._brushes["changed false"]
            if false:
                return self._brushes["false"]
            if changed:
                return self._brushes["changed"]
            return self._brushes["world"] if not self._rows[row] else None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if self._cell(row, column)[2] else None
        holders, entity = self._rows[row], self._columns[column]
        prefix = ("second" if self._second else "first" if holders else "world", *holders)
        if role == Qt.ItemDataRole.ForegroundRole:
            if self._cell(row, column)[1]:
                return self._brushes["false text"]
            if state.get((*prefix, entity, ROOM)) == UNKNOWN_WHEREABOUTS:
                return self._brushes["unknown text"]
            return None
        return self._tooltip(state, prefix, holders, entity, row, column)

    def _tooltip(self, state: BeliefState, prefix: tuple, holders: tuple, entity: str, row: int, column: int) -> str:
        if not holders:
            return f"where the {entity} really is" + (" (changed at this step)" if self.is_changed(row, column) else "")
        who = " thinks ".join(holders)
        lines = []
        for prop in self._props.get(entity, []):
            belief = state.get((*prefix, entity, prop))
            if belief is None:
                continue
            world = state.world(entity, prop)
            if prop == KNOWLEDGE:
                lines.append(f"{who} heard about: {', '.join(sorted(belief))}")
                continue
            line = f"{prop_words(prop)}: {who} believes {short_value(belief)}; world: {world}"
            if prop in self.false_props(row, column):
                line = "FALSE BELIEF — " + line
            if self._second:
                actual = state.first(holders[1], entity, prop)
                line += f"; {holders[1]} actually believes {actual}"
            lines.append(line)
        if self.is_changed(row, column):
            lines.append("changed at this step")
        return "\n".join(lines)

