"""The stimulus table: a windowed view over a DuckDB query that never loads the whole table into Qt.

The ordered ids of the current filter arrive from a worker; rows are fetched a page at a time, on a worker,
only when the view asks for them, and only a bounded number of pages is kept.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.benchmarks import kind_label
from storage.records import StimulusFilter, StimulusRow
from widgets.tasks import TaskRunner

FetchIds = Callable[[StimulusFilter, str, bool], np.ndarray]
FetchRows = Callable[[list[int], list[str], str | None], list[StimulusRow]]

PAGE_SIZE = 100
# short names for the narrow kind column; the full kind is in the tooltip and the detail header
MAX_PAGES = 40
LOADING = "…"
RIGHT = QColor("#2e7d32")
WRONG = QColor("#c62828")


class StimulusTableModel(QAbstractTableModel):
    """Columns: id, kind, truth, one per compared model (✓/✗), humans (% correct of n), predictions."""

    idsLoaded = Signal(int)

    FIXED = [("id", "ID"), ("kind", "Kind"), ("truth", "Truth")]

    def __init__(self, runner: TaskRunner, fetch_ids: FetchIds, fetch_rows: FetchRows,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.fetch_ids = fetch_ids
        self.fetch_rows = fetch_rows
        self.filter = StimulusFilter()
        self.models: list[str] = []
        self.sort_key = "id"
        self.descending = False
        self.ids = np.zeros(0, dtype=np.int64)
        self._pages: OrderedDict[int, list[StimulusRow]] = OrderedDict()
        self._pending: set[int] = set()
        self._epoch = 0       # the latest id query asked for
        self._ids_epoch = 0   # the id list shown: pages fetched for an older list are dropped
        self.pages_fetched = 0
        self.rows_fetched = 0

    # -- loading -------------------------------------------------------------------------------
    def set_query(self, f: StimulusFilter, models: list[str]) -> None:
        """Run the filter on a worker; the table empties now and fills when the ids arrive."""
        self.filter = f
        if list(models) != self.models:
            # the columns change now, not when the ids arrive: a view must never ask for a column that is gone
            self.beginResetModel()
            self.models = list(models)
            self._pages.clear()
            self.endResetModel()
        self.reload()

    def reload(self) -> None:
        self._epoch += 1
        epoch = self._epoch
        f, key, desc = self.filter, self.sort_key, self.descending
        self.runner.submit("stimulus-ids", lambda: self.fetch_ids(f, key, desc),
                           lambda ids: self._ids_arrived(epoch, ids))

    def _ids_arrived(self, epoch: int, ids: np.ndarray) -> None:
        if epoch != self._epoch:
            return
        self.beginResetModel()
        self._ids_epoch += 1
        self.ids = ids
        self._pages.clear()
        self._pending.clear()
        self.endResetModel()
        self.idsLoaded.emit(len(ids))

    def _request_page(self, page: int) -> None:
        if page in self._pending:
            return
        self._pending.add(page)
        epoch = self._ids_epoch
        ids = [int(i) for i in self.ids[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]]
        models, modality = list(self.models), self.filter.modality
        self.runner.submit(f"page-{page}", lambda: self.fetch_rows(ids, models, modality),
                           lambda rows: self._page_arrived(epoch, page, rows))

    def _page_arrived(self, epoch: int, page: int, rows: list[StimulusRow]) -> None:
        self._pending.discard(page)
        if epoch != self._ids_epoch:
            return
        self._pages[page] = rows
        self.pages_fetched += 1
        self.rows_fetched += len(rows)
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        first = page * PAGE_SIZE
        last = min(first + len(rows), len(self.ids)) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, self.columnCount() - 1))

    def row_record(self, row: int) -> StimulusRow | None:
        page = self._pages.get(row // PAGE_SIZE)
        if page is None:
            return None
        self._pages.move_to_end(row // PAGE_SIZE)
        offset = row % PAGE_SIZE
        return page[offset] if offset < len(page) else None

    def stimulus_id(self, row: int) -> int | None:
        return int(self.ids[row]) if 0 <= row < len(self.ids) else None

    def row_of(self, stimulus_id: int) -> int | None:
        hits = np.nonzero(self.ids == stimulus_id)[0]
        return int(hits[0]) if len(hits) else None

    def cached_rows(self) -> int:
        return sum(len(p) for p in self._pages.values())

    # -- Qt model ------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.FIXED) + len(self.models) + 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            if section < len(self.FIXED):
                return self.FIXED[section][1]
            section -= len(self.FIXED)
            if section < len(self.models):
                return self.models[section]
            return ["Humans", "Preds"][section - len(self.models)]
        if role == Qt.ItemDataRole.ToolTipRole:
            if len(self.FIXED) <= section < len(self.FIXED) + len(self.models):
                return f"{self.models[section - len(self.FIXED)]}: ✓ correct, ✗ wrong (majority over conditions)"
            if section == len(self.FIXED) + len(self.models):
                return "Share of human ratings that were correct (number of ratings)"
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        record = self.row_record(row)
        if record is None:
            if role == Qt.ItemDataRole.DisplayRole:
                self._request_page(row // PAGE_SIZE)
                return LOADING
            return None
        n_fixed = len(self.FIXED)
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return record.external_id
            if col == 1:
                return kind_label(record.kind)
            if col == 2:
                return record.ground_truth or ""
            if col < n_fixed + len(self.models):
                outcome = record.outcomes.get(self.models[col - n_fixed])
                return "" if outcome is None else ("✓" if outcome else "✗")
            if col == n_fixed + len(self.models):
                if record.human_share_correct is None:
                    return ""
                return f"{record.human_share_correct * 100:.0f}% ({record.human_n})"
            return str(record.n_predictions)
        if role == Qt.ItemDataRole.ForegroundRole and n_fixed <= col < n_fixed + len(self.models):
            outcome = record.outcomes.get(self.models[col - n_fixed])
            if outcome is not None:
                return QBrush(RIGHT if outcome else WRONG)
        if role == Qt.ItemDataRole.ToolTipRole and col == 1:
            return record.kind
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= n_fixed:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.UserRole:
            return record.id
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if column >= len(self.FIXED):
            return
        self.sort_key = self.FIXED[column][0]
        self.descending = order == Qt.SortOrder.DescendingOrder
        self.reload()


class StimulusTableView(QTableView):
    """The table; emits the selected stimulus id. Up/Down move through stimuli."""

    stimulusSelected = Signal(int)

    def __init__(self, model: StimulusTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.setSortingEnabled(True)
        self.horizontalHeader().setSortIndicatorShown(True)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        model.modelReset.connect(self._after_reset)
        self.selectionModel().currentRowChanged.connect(self._current_changed)

    def table_model(self) -> StimulusTableModel:
        model = self.model()
        assert isinstance(model, StimulusTableModel)
        return model

    def _after_reset(self) -> None:
        self.setColumnWidth(0, 128)
        self.setColumnWidth(1, 92)
        self.setColumnWidth(2, 68)
        metrics = self.horizontalHeader().fontMetrics()
        for col in range(3, self.table_model().columnCount() - 2):
            header = str(self.table_model().headerData(col, Qt.Orientation.Horizontal))
            self.setColumnWidth(col, min(110, max(44, metrics.horizontalAdvance(header) + 14)))
        self.setColumnWidth(self.table_model().columnCount() - 2, 72)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        sid = self.table_model().stimulus_id(current.row())
        if sid is not None:
            self.stimulusSelected.emit(sid)

    def select_stimulus(self, stimulus_id: int) -> bool:
        row = self.table_model().row_of(stimulus_id)
        if row is None:
            return False
        self.selectRow(row)
        self.scrollTo(self.table_model().index(row, 0))
        return True
