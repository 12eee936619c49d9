"""The stimulus table: a windowed view over a DuckDB query that never loads the whole table into Qt.

The store counts what the filter admits and sorts it; the model holds that count and a bounded number of
pages, each read on a worker when the view first shows one of its rows. Nothing here grows with the number
of stimuli or predictions.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.benchmarks import kind_label
from storage.records import StimulusFilter, StimulusRow
from widgets.palette import qcolour
from widgets.tasks import TaskRunner

PAGE_SIZE = 100
MAX_PAGES = 40
LOADING = "…"


class TableSource(Protocol):
    """What the table reads (`app.browser.Browser` is one); every call runs on a worker."""

    def stimulus_table_start(self, wanted: StimulusFilter, sort: str, descending: bool, limit: int,
                             models: list[str], keep: int | None) -> tuple[int, list[StimulusRow], int | None]: ...

    def stimulus_page(self, wanted: StimulusFilter, sort: str, descending: bool, offset: int, limit: int,
                      models: list[str], total: int | None = None) -> list[StimulusRow]: ...

    def stimulus_page_beside(self, wanted: StimulusFilter, sort: str, descending: bool, anchor: int, after: bool,
                             limit: int, models: list[str]) -> list[StimulusRow]: ...

    def stimulus_position(self, wanted: StimulusFilter, sort: str, descending: bool,
                          stimulus_id: int) -> int | None: ...


class StimulusTableModel(QAbstractTableModel):
    """Columns: id, kind, truth, one per compared model (✓/✗), humans (% correct of n), predictions.

    `keep` names the stimulus a reload keeps in reach (the selected one): the worker that counts the new
    table also finds that stimulus's row and reads its page, so the row can be selected the moment the
    table is shown (`row_of`)."""

    idsLoaded = Signal(int)   # the new table's row count, once it is shown

    FIXED = [("id", "ID"), ("kind", "Kind"), ("truth", "Truth")]

    def __init__(self, runner: TaskRunner, source: TableSource, keep: Callable[[], int | None] = lambda: None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.source = source
        self.keep = keep
        self.filter = StimulusFilter()
        self.models: list[str] = []
        self.sort_key = "id"
        self.descending = False
        self._reload_queued = False
        self.count = 0
        self._pages: OrderedDict[int, list[StimulusRow]] = OrderedDict()
        self._pending: set[int] = set()
        self._epoch = 0         # the latest table asked for
        self._shown_epoch = 0   # the table shown: pages read for an older one are dropped
        self._shown_query = 0   # the `_epoch` whose rows are shown
        self.pages_fetched = 0
        self.rows_fetched = 0

    # -- loading -------------------------------------------------------------------------------
    def set_query(self, f: StimulusFilter, models: list[str]) -> None:
        """Run the filter on a worker; the table shows the new rows when their count and first page arrive."""
        self.filter = f
        if list(models) != self.models:
            # the columns change now, not when the rows arrive: a view must never ask for a column that is gone
            self.beginResetModel()
            self.models = list(models)
            self._pages.clear()
            self.endResetModel()
        self.reload()

    def reload(self) -> None:
        """Count and read the table again (after a filter, sort or store change), keeping `keep()` in reach.
        Reloads asked for in one turn of the event loop (a new dataset changes the models and the filter)
        run once, on the last state."""
        self._epoch += 1
        if not self._reload_queued:
            self._reload_queued = True
            QTimer.singleShot(0, self._start_reload)

    def _start_reload(self) -> None:
        self._reload_queued = False
        epoch = self._epoch
        source, f, key, desc, models, kept = (self.source, self.filter, self.sort_key, self.descending,
                                              list(self.models), self.keep())

        def load() -> tuple[int, dict[int, list[StimulusRow]]]:
            count, first, row = source.stimulus_table_start(f, key, desc, PAGE_SIZE, models, kept)
            pages = {0: first} if count else {}
            if row is not None and row // PAGE_SIZE not in pages:
                pages[row // PAGE_SIZE] = source.stimulus_page(f, key, desc, row // PAGE_SIZE * PAGE_SIZE,
                                                               PAGE_SIZE, models, count)
            return count, pages

        self.runner.submit("stimulus-ids", load, lambda loaded: self._loaded(epoch, *loaded))

    def _loaded(self, epoch: int, count: int, pages: dict[int, list[StimulusRow]]) -> None:
        if epoch != self._epoch:
            return
        self.beginResetModel()
        self._shown_epoch += 1
        self._shown_query = epoch
        self.count = count
        self._pages = OrderedDict(pages)
        self._pending.clear()
        self.endResetModel()
        self.idsLoaded.emit(count)

    def _request_page(self, page: int) -> None:
        if page in self._pending:
            return
        self._pending.add(page)
        epoch = self._shown_epoch
        source, f, key, desc, models = self.source, self.filter, self.sort_key, self.descending, list(self.models)
        count = self.count
        # scrolling reads the page next to one held, from its edge row; a jump reads by offset
        above, below = self._pages.get(page - 1), self._pages.get(page + 1)
        if above is not None and len(above) == PAGE_SIZE:
            anchor, after = above[-1].id, True
        elif below:
            anchor, after = below[0].id, False
        else:
            anchor = None

        def read() -> list[StimulusRow]:
            if anchor is None:
                return source.stimulus_page(f, key, desc, page * PAGE_SIZE, PAGE_SIZE, models, count)
            return source.stimulus_page_beside(f, key, desc, anchor, after, PAGE_SIZE, models)

        self.runner.submit(f"page-{page}", read, lambda rows: self._page_arrived(epoch, page, rows))

    def _page_arrived(self, epoch: int, page: int, rows: list[StimulusRow]) -> None:
        self._pending.discard(page)
        if epoch != self._shown_epoch:
            return
        self._pages[page] = rows
        self.pages_fetched += 1
        self.rows_fetched += len(rows)
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        first = page * PAGE_SIZE
        last = min(first + len(rows), self.count) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, self.columnCount() - 1))

    def settled(self) -> bool:
        """Whether the rows shown are those of the latest filter and sort (no newer table is being read)."""
        return self._shown_query == self._epoch

    def locate(self, stimulus_id: int, found: Callable[[int], None]) -> None:
        """Find a stimulus's row in the shown table and read its page, on a worker; `found(row)` follows once
        the model holds that row (never, if the filter leaves the stimulus out)."""
        epoch = self._shown_epoch
        source, f, key, desc, models = self.source, self.filter, self.sort_key, self.descending, list(self.models)
        count = self.count

        def work() -> tuple[int, list[StimulusRow]] | None:
            row = source.stimulus_position(f, key, desc, stimulus_id)
            if row is None:
                return None
            return row, source.stimulus_page(f, key, desc, row // PAGE_SIZE * PAGE_SIZE, PAGE_SIZE, models, count)

        def done(result: tuple[int, list[StimulusRow]] | None) -> None:
            if result is None or epoch != self._shown_epoch:
                return
            row, rows = result
            self._page_arrived(epoch, row // PAGE_SIZE, rows)
            found(row)

        self.runner.submit("stimulus-locate", work, done)

    def row_record(self, row: int) -> StimulusRow | None:
        """The row's record if its page is held (and that page is then the last to be dropped), else None."""
        page = self._pages.get(row // PAGE_SIZE)
        if page is None:
            return None
        self._pages.move_to_end(row // PAGE_SIZE)
        offset = row % PAGE_SIZE
        return page[offset] if offset < len(page) else None

    def stimulus_id(self, row: int) -> int | None:
        """The store id of the stimulus on this row, None while its page is still being read."""
        record = self.row_record(row) if 0 <= row < self.count else None
        return record.id if record is not None else None

    def row_of(self, stimulus_id: int) -> int | None:
        """The row of a stimulus among the pages held (the shown rows, and `kept` after a reload)."""
        for page, rows in self._pages.items():
            for offset, record in enumerate(rows):
                if record.id == stimulus_id:
                    return page * PAGE_SIZE + offset
        return None

    def cached_rows(self) -> int:
        """How many rows the model holds (at most MAX_PAGES pages, whatever the table's size)."""
        return sum(len(p) for p in self._pages.values())

    # -- Qt model ------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self.count

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
                # the palette's own shades: the light theme's dark red is unreadable on a dark table
                return QBrush(qcolour("right" if outcome else "wrong"))
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
        self._awaited_row: int | None = None   # the current row, while its page is being read
        model.modelReset.connect(self._after_reset)
        model.dataChanged.connect(self._rows_arrived)
        self.selectionModel().currentRowChanged.connect(self._current_changed)

    def table_model(self) -> StimulusTableModel:
        model = self.model()
        assert isinstance(model, StimulusTableModel)
        return model

    def _after_reset(self) -> None:
        self._awaited_row = None
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
        # a row whose page is not read yet (End, Page Down, a dragged scroll bar) is selected when it arrives
        self._awaited_row = current.row() if sid is None and current.isValid() else None
        if sid is not None:
            self.stimulusSelected.emit(sid)

    def _rows_arrived(self, first: QModelIndex, last: QModelIndex) -> None:
        row = self._awaited_row
        if row is not None and first.row() <= row <= last.row() and row == self.currentIndex().row():
            self._awaited_row = None
            sid = self.table_model().stimulus_id(row)
            if sid is not None:
                self.stimulusSelected.emit(sid)

    def select_stimulus(self, stimulus_id: int) -> bool:
        """Select a stimulus whose row the model holds (see `StimulusTableModel.row_of`); False if it does not."""
        row = self.table_model().row_of(stimulus_id)
        if row is None:
            return False
        self._select_row(row)
        return True

    def find_stimulus(self, stimulus_id: int) -> None:
        """Select a stimulus wherever its row is: now if the model holds it, else once a worker has found it."""
        if not self.select_stimulus(stimulus_id):
            self.table_model().locate(stimulus_id, self._select_row)

    def _select_row(self, row: int) -> None:
        self.selectRow(row)
        self.scrollTo(self.table_model().index(row, 0))
