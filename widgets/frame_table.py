"""One read-only table for every framed table of the window: its columns declared once (title, how a value
reads, alignment), its rows given as values or as a polars frame, and the same behaviour wherever it is shown.

Numbers (and an empty value among them) sit right and sort as numbers, text sorts naturally ("clip 2" before
"clip 10"), an empty value reads "—" and sorts last either way, rows that tie keep their given order. A click
on a header sorts by that column, a second click the other way, a third puts the rows back in the order they
were given. Ctrl+C copies the selected cells as tab-separated text (a spreadsheet pastes it as cells); a cell's
text cut off by its column shows whole on hover. A row keeps its place in the given rows (`source_row`), so a
view's clicks name the row the caller gave, however the user sorted.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QHelpEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QTableView, QToolTip, QWidget

from widgets.palette import qcolour

if TYPE_CHECKING:
    import polars as pl

MISSING = "—"   # how an empty value reads in every framed table
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.ToolTipRole,
                    Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.FontRole})


def is_number(value: Any) -> bool:
    """An int or a float (a bool is a yes or a no, not a number)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_missing(value: Any) -> bool:
    """None, NaN or an infinity: a value with nothing to show."""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def _fixed(value: float, digits: int) -> str:
    text = f"{value:.{digits}f}"
    # a value that rounds to zero reads 0, not "-0.000": the minus would claim a direction it does not have
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def plain(value: Any) -> str:
    """A value as it reads when its column says nothing else: a float to three decimals, missing as "—"."""
    if is_missing(value):
        return MISSING
    return _fixed(value, 3) if isinstance(value, float) else str(value)


def as_written(value: Any) -> str:
    """A value as a file wrote it: str(), and nothing for a missing one (a file's preview)."""
    return "" if value is None else str(value)


def number(digits: int) -> Callable[[Any], str]:
    """A number to `digits` decimals, missing as "—"."""
    return lambda value: MISSING if is_missing(value) else _fixed(value, digits)


def percent(signed: bool = False) -> Callable[[Any], str]:
    """A share as a whole percentage ("75%", or "+12%" when `signed`), missing as "—"."""
    spec = "+.0%" if signed else ".0%"
    return lambda value: MISSING if is_missing(value) else format(value, spec)


@dataclass(frozen=True)
class Column:
    """A column: its title (for a frame, the frame's column it shows), how its values read, and where they sit
    (None: numbers to the right, anything else to the left)."""

    title: str
    format: Callable[[Any], str] = plain
    align: Qt.AlignmentFlag | None = None
    tooltip: str = ""


@dataclass(frozen=True)
class Cell:
    """A value with more to say than its column's format: the text shown (None: the column's format of
    `value`, which is what sorts), a tooltip, a background (a palette colour: `widgets.palette`) and a font."""

    value: Any
    text: str | None = None
    tooltip: str | None = None
    background: QColor | None = None
    bold: bool = False
    italic: bool = False


def _natural(text: str) -> list:
    # each run of digits compares as the number it writes; split() alternates text and digits, so the kinds
    # at each place of two keys agree
    return [int(part) if i % 2 else part.casefold() for i, part in enumerate(re.split(r"(\d+)", text))]


def _sort_key(value: Any) -> tuple:
    # numbers (a yes or no as 1 or 0) before text, so a column of both reads in two runs
    if isinstance(value, (int, float)):
        return (0, float(value))
    return (1, _natural(str(value)))


class FrameTableModel(QAbstractTableModel):
    """Rows of values (or `Cell`s) under declared columns, read-only; sorting keeps each row's source index."""

    def __init__(self, columns: Sequence[Column | str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._columns: list[Column] = [_column(c) for c in columns]
        self._rows: list[Sequence[Any]] = []
        self._row_titles: list[str] = []
        self._order: list[int] = []
        self._numeric: list[bool] = []   # per column: holds a number, so an empty value sits where numbers do
        self._sort: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        self._fonts: dict[tuple[bool, bool], QFont] = {}

    # ----- filling -----------------------------------------------------------------------------------
    def set_rows(self, rows: Sequence[Sequence[Any]], columns: Sequence[Column | str] | None = None,
                 row_titles: Sequence[str] = ()) -> None:
        """Show these rows (each a value or a `Cell` per column), under new columns when given; a sort the
        user chose stays while its column does. `row_titles` name the rows in the vertical header."""
        self.beginResetModel()
        if columns is not None:
            self._columns = [_column(c) for c in columns]
        self._rows = list(rows)
        self._row_titles = list(row_titles)
        self._numeric = [any(is_number(v.value if isinstance(v, Cell) else v) for v in (row[c] for row in self._rows))
                         for c in range(len(self._columns))]
        if self._sort[0] >= len(self._columns):
            self._sort = (-1, Qt.SortOrder.AscendingOrder)
        self._order = self._sorted(*self._sort)
        self.endResetModel()

    def set_frame(self, frame: pl.DataFrame, columns: Sequence[Column | str] | None = None) -> None:
        """Show a polars frame: the columns named (by title), or all of them."""
        chosen = [_column(c) for c in columns] if columns is not None else [Column(c) for c in frame.columns]
        self.set_rows(list(frame.select([c.title for c in chosen]).iter_rows()), chosen)

    # ----- reading -----------------------------------------------------------------------------------
    def source_row(self, row: int) -> int:
        """The index in the given rows of the row shown at `row`."""
        return self._order[row]

    def view_row(self, source_row: int) -> int:
        """Where the given row `source_row` is shown now."""
        return self._order.index(source_row)

    def text(self, row: int, column: int) -> str:
        """The text shown (and copied) at (`row`, `column`)."""
        cell = self._rows[self._order[row]][column]
        if isinstance(cell, Cell):
            return cell.text if cell.text is not None else self._columns[column].format(cell.value)
        return self._columns[column].format(cell)

    def has_row_titles(self) -> bool:
        return bool(self._row_titles)

    def row_title(self, row: int) -> str:
        return self._row_titles[self._order[row]] if self._row_titles else ""

    def shown_rows(self) -> list[list[str]]:
        """Every row's texts, as shown (in the order shown)."""
        return [[self.text(r, c) for c in range(len(self._columns))] for r in range(len(self._rows))]

    def titles(self) -> list[str]:
        return [c.title for c in self._columns]

    # ----- Qt's model API ----------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Vertical:
            if role == Qt.ItemDataRole.DisplayRole:
                return self.row_title(section) if self._row_titles else str(section + 1)
            return None
        if not 0 <= section < len(self._columns):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._columns[section].tooltip or None
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROLES or not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        raw = self._rows[self._order[row]][column]
        cell = raw if isinstance(raw, Cell) else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            align = self._columns[column].align
            if align is not None:
                return align
            value = cell.value if cell is not None else raw
            return _RIGHT if is_number(value) or (value is None and self._numeric[column]) else _LEFT
        if cell is None:
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return cell.tooltip
        if role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(cell.background) if cell.background is not None else None
        if role == Qt.ItemDataRole.ForegroundRole:
            # the palette's cell text on the palette's cell colours, light or dark
            return QBrush(qcolour("cell_fg")) if cell.background is not None else None
        if cell.bold or cell.italic:
            key = (cell.bold, cell.italic)
            if key not in self._fonts:
                font = QFont()
                font.setBold(cell.bold)
                font.setItalic(cell.italic)
                self._fonts[key] = font
            return self._fonts[key]
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by `column` (numbers as numbers, empty values last either way); -1: the order given."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        sources = [(self._order[i.row()], i.column()) for i in old]
        self._sort = (column if 0 <= column < len(self._columns) else -1, order)
        self._order = self._sorted(*self._sort)
        where = {source: row for row, source in enumerate(self._order)}
        self.changePersistentIndexList(old, [self.index(where[s], c) for s, c in sources])
        self.layoutChanged.emit()

    def sort_state(self) -> tuple[int, Qt.SortOrder]:
        """The column sorted by (-1: none) and its order."""
        return self._sort

    def _sorted(self, column: int, order: Qt.SortOrder) -> list[int]:
        rows = range(len(self._rows))
        if column < 0:
            return list(rows)
        values = [v.value if isinstance(v, Cell) else v for v in (self._rows[r][column] for r in rows)]
        empty = [r for r in rows if is_missing(values[r]) or values[r] == ""]
        shown = [r for r in rows if not (is_missing(values[r]) or values[r] == "")]
        shown.sort(key=lambda r: _sort_key(values[r]), reverse=order == Qt.SortOrder.DescendingOrder)
        return shown + empty


def _column(column: Column | str) -> Column:
    return column if isinstance(column, Column) else Column(column)


class FrameTableView(QTableView):
    """A `FrameTableModel` shown read-only: header clicks sort, Ctrl+C copies the selection as tab-separated
    text, a cut-off cell shows whole on hover. `rowClicked` and `rowActivated` (double click) name the row by
    its index in the rows given."""

    rowClicked = Signal(int)
    rowActivated = Signal(int)

    def __init__(self, columns: Sequence[Column | str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.frame_model = FrameTableModel(columns, self)
        self.setModel(self.frame_model)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(False)
        header.sectionClicked.connect(self._header_clicked)
        self.frame_model.modelReset.connect(self._show_sort)
        self.clicked.connect(lambda index: self.rowClicked.emit(self.frame_model.source_row(index.row())))
        self.doubleClicked.connect(lambda index: self.rowActivated.emit(self.frame_model.source_row(index.row())))

    # ----- what the caller asks --------------------------------------------------------------------
    def set_rows(self, rows: Sequence[Sequence[Any]], columns: Sequence[Column | str] | None = None,
                 row_titles: Sequence[str] = ()) -> None:
        """As `FrameTableModel.set_rows`."""
        self.frame_model.set_rows(rows, columns, row_titles)

    def set_frame(self, frame: pl.DataFrame, columns: Sequence[Column | str] | None = None) -> None:
        """As `FrameTableModel.set_frame`."""
        self.frame_model.set_frame(frame, columns)

    def row_count(self) -> int:
        return self.frame_model.rowCount()

    def shown_rows(self) -> list[list[str]]:
        """What a user reads: every row's texts in the order shown (hidden columns included)."""
        return self.frame_model.shown_rows()

    def selected_rows(self) -> list[int]:
        """The given rows' indices of the selected rows, in the order shown."""
        model = self.selectionModel()
        rows = sorted({i.row() for i in model.selectedIndexes()}) if model is not None else []
        return [self.frame_model.source_row(r) for r in rows]

    def select_source_row(self, source_row: int) -> None:
        """Select (and scroll to) the row given at `source_row`."""
        row = self.frame_model.view_row(source_row)
        self.selectRow(row)
        self.scrollTo(self.frame_model.index(row, 0))

    def selection_text(self) -> str:
        """The selected cells as tab-separated lines (the rectangle around them; an unselected cell inside it
        is empty, hidden columns are left out, a row's title comes first when the rows show theirs)."""
        selection = self.selectionModel()
        indexes = selection.selectedIndexes() if selection is not None else []
        if not indexes:
            return ""
        chosen = {(i.row(), i.column()) for i in indexes}
        rows = sorted({r for r, _c in chosen})
        columns = [c for c in sorted({c for _r, c in chosen}) if not self.isColumnHidden(c)]
        titled = self.verticalHeader().isVisible() and self.frame_model.has_row_titles()
        lines = []
        for r in rows:
            cells = [self.frame_model.text(r, c) if (r, c) in chosen else "" for c in columns]
            if titled:
                cells.insert(0, self.frame_model.row_title(r))
            # a tab or a line break inside a cell would split it in the pasted table
            lines.append("\t".join(re.sub(r"[\t\r\n]+", " ", text) for text in cells))
        return "\n".join(lines)

    def copy_selection(self) -> str:
        """Put the selected cells on the clipboard as tab-separated text (Ctrl+C); returns that text."""
        text = self.selection_text()
        if text:
            QGuiApplication.clipboard().setText(text)
        return text

    # ----- Qt's events -----------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.indexAt(event.pos())
            if index.isValid() and self.frame_model.data(index, Qt.ItemDataRole.ToolTipRole) is None:
                text = self.frame_model.text(index.row(), index.column())
                room = self.visualRect(index).width() - 8   # the cell's margins
                if text and (self.fontMetrics().horizontalAdvance(text) > room or "\n" in text):
                    QToolTip.showText(event.globalPos(), text, self.viewport(), self.visualRect(index))
                else:
                    QToolTip.hideText()
                    event.ignore()
                return True
        return super().viewportEvent(event)

    def _header_clicked(self, section: int) -> None:
        column, order = self.frame_model.sort_state()
        if column != section:
            column, order = section, Qt.SortOrder.AscendingOrder
        elif order == Qt.SortOrder.AscendingOrder:
            order = Qt.SortOrder.DescendingOrder
        else:
            column, order = -1, Qt.SortOrder.AscendingOrder
        self.frame_model.sort(column, order)
        self._show_sort()

    def _show_sort(self) -> None:
        column, order = self.frame_model.sort_state()
        header = self.horizontalHeader()
        header.setSortIndicatorShown(column >= 0)
        header.setSortIndicator(column, order)
