"""The one table of framed rows: how values read and sit, how a header click sorts them (numbers as numbers, text
naturally, empty values last, a third click back to the given order), what Ctrl+C puts on the clipboard, and
that a click names the row as given, however sorted."""
from __future__ import annotations

import math

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import QAbstractItemView

from widgets.frame_table import (MISSING, Cell, Column, FrameTableView, as_written, number, percent, plain)
from widgets.palette import qcolour

ROWS = [("clip 10", 10, 0.5), ("clip 2", 9, None), ("Clip 1", 100, 0.25), ("clip 1b", 2.5, float("nan"))]


def _view(qtbot, rows=ROWS, columns=(Column("id"), Column("n"), Column("share", percent()))) -> FrameTableView:
    view = FrameTableView(columns)
    qtbot.addWidget(view)
    view.set_rows(rows)
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def _click_header(qtbot, view: FrameTableView, column: int) -> None:
    header = view.horizontalHeader()
    at = QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2, header.height() // 2)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=at)


def _column(view: FrameTableView, column: int) -> list[str]:
    return [row[column] for row in view.shown_rows()]


def test_values_read_the_same_way_in_every_table():
    assert plain(0.123456) == "0.123" and plain(3) == "3" and plain("a") == "a"
    assert plain(None) == plain(float("nan")) == plain(math.inf) == MISSING == "—"
    assert number(2)(1.0) == "1.00" and number(2)(float("nan")) == MISSING
    assert plain(-0.0) == plain(-0.0001) == "0.000" and number(2)(-0.004) == "0.00" and plain(-0.25) == "-0.250"
    assert percent()(0.754) == "75%" and percent(signed=True)(0.12) == "+12%" and percent(signed=True)(-0.1) == "-10%"
    assert as_written(None) == "" and as_written(0.5) == "0.5"


def test_numbers_sit_right_text_left_and_a_column_may_say_otherwise(qtbot):
    view = _view(qtbot, [("a", 1, Cell(2.0, "two"))],
                 [Column("text"), Column("n"), Column("centred", align=Qt.AlignmentFlag.AlignCenter)])
    model = view.model()
    align = [model.index(0, c).data(Qt.ItemDataRole.TextAlignmentRole) for c in range(3)]
    assert align[0] & Qt.AlignmentFlag.AlignLeft and align[1] & Qt.AlignmentFlag.AlignRight
    assert align[2] == Qt.AlignmentFlag.AlignCenter
    assert view.shown_rows() == [["a", "1", "two"]]
    view.set_rows([("a", None), ("b", 2)], [Column("text"), Column("n")])   # an empty number sits with the numbers
    assert model.index(0, 1).data(Qt.ItemDataRole.TextAlignmentRole) & Qt.AlignmentFlag.AlignRight


def test_a_header_click_sorts_numbers_as_numbers_empty_last_and_a_third_restores_the_order(qtbot):
    view = _view(qtbot)
    _click_header(qtbot, view, 1)
    assert _column(view, 1) == ["2.500", "9", "10", "100"]   # not "10" < "100" < "2.5" < "9" as text would
    assert view.horizontalHeader().isSortIndicatorShown()
    _click_header(qtbot, view, 1)
    assert _column(view, 1) == ["100", "10", "9", "2.500"]
    _click_header(qtbot, view, 2)
    assert _column(view, 2) == ["25%", "50%", "—", "—"]    # no value and NaN: last
    _click_header(qtbot, view, 2)
    assert _column(view, 2) == ["50%", "25%", "—", "—"]    # last either way
    _click_header(qtbot, view, 2)
    assert _column(view, 0) == ["clip 10", "clip 2", "Clip 1", "clip 1b"]   # the order given
    assert not view.horizontalHeader().isSortIndicatorShown()


def test_text_sorts_naturally_and_a_cells_value_sorts_not_its_text(qtbot):
    view = _view(qtbot)
    _click_header(qtbot, view, 0)
    assert _column(view, 0) == ["Clip 1", "clip 1b", "clip 2", "clip 10"]
    ranked = _view(qtbot, [(Cell(3, "[+1%, +5%]"),), (Cell(10, "[+12%, +30%]"),), (Cell(-2, "[-9%, +4%]"),)],
                   [Column("95% CI")])
    _click_header(qtbot, ranked, 0)
    assert _column(ranked, 0) == ["[-9%, +4%]", "[+1%, +5%]", "[+12%, +30%]"]


def test_rows_that_tie_keep_their_given_order_either_way(qtbot):
    view = _view(qtbot, [("b", 1), ("a", 2), ("c", 1), ("d", 2)], [Column("id"), Column("n")])
    _click_header(qtbot, view, 1)
    assert _column(view, 0) == ["b", "c", "a", "d"]
    _click_header(qtbot, view, 1)
    assert _column(view, 0) == ["a", "d", "b", "c"]


def test_a_click_names_the_row_as_given_however_sorted_and_a_sort_keeps_the_selection(qtbot):
    view = _view(qtbot)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    _click_header(qtbot, view, 1)   # shown: 2.5 (given 3), 9 (1), 10 (0), 100 (2)
    with qtbot.waitSignal(view.rowClicked) as clicked:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                         pos=view.visualRect(view.model().index(0, 0)).center())
    assert clicked.args == [3]
    assert view.selected_rows() == [3]
    _click_header(qtbot, view, 0)
    assert view.selected_rows() == [3] and view.shown_rows()[view.frame_model.view_row(3)][0] == "clip 1b"
    view.select_source_row(2)
    assert view.selected_rows() == [2]


def test_ctrl_c_copies_the_selected_cells_as_tab_separated_text(qtbot):
    rows = [("a\tb", 1, 0.5), ("line\nbreak", 2, None), ("c", 3, 0.125)]
    view = _view(qtbot, rows)
    view.setColumnHidden(1, True)
    selection = view.selectionModel()
    model = view.model()
    for row, column in ((0, 0), (0, 1), (0, 2), (2, 2), (1, 0)):
        selection.select(model.index(row, column), selection.SelectionFlag.Select)
    QGuiApplication.clipboard().clear()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    # the rectangle around the selection, the hidden column left out, a tab or break in a cell made a space
    assert QGuiApplication.clipboard().text() == "a b\t50%\nline break\t\n\t12%"


def test_row_titles_lead_the_copied_rows_and_sort_with_them(qtbot):
    view = _view(qtbot, [(1,), (3,), (2,)], [Column("score")])
    view.set_rows([(1,), (3,), (2,)], row_titles=["one", "three", "two"])
    view.verticalHeader().setVisible(True)
    _click_header(qtbot, view, 0)
    assert [view.model().headerData(r, Qt.Orientation.Vertical) for r in range(3)] == ["one", "two", "three"]
    view.selectAll()
    assert view.copy_selection() == "one\t1\ntwo\t2\nthree\t3"


def test_a_coloured_cell_keeps_the_palettes_readable_text_and_its_font(qtbot):
    view = _view(qtbot, [(Cell("yes", background=QColor("#d3f9d8"), bold=True), Cell(2, italic=True, tooltip="why"))],
                 [Column("a"), Column("b")])
    model = view.model()
    first, second = model.index(0, 0), model.index(0, 1)
    assert first.data(Qt.ItemDataRole.BackgroundRole).color() == QColor("#d3f9d8")
    assert first.data(Qt.ItemDataRole.ForegroundRole).color() == qcolour("cell_fg")
    assert first.data(Qt.ItemDataRole.FontRole).bold() and second.data(Qt.ItemDataRole.FontRole).italic()
    assert second.data(Qt.ItemDataRole.ToolTipRole) == "why" and first.data(Qt.ItemDataRole.ToolTipRole) is None
    assert second.data(Qt.ItemDataRole.BackgroundRole) is None


def test_new_rows_keep_the_users_sort_while_its_column_is_there(qtbot):
    view = _view(qtbot)
    _click_header(qtbot, view, 1)
    view.set_rows([("x", 5, 0.1), ("y", 1, 0.2)])
    assert _column(view, 1) == ["1", "5"] and view.horizontalHeader().isSortIndicatorShown()
    view.set_rows([("x",), ("y",)], [Column("only")])
    assert view.frame_model.sort_state()[0] == -1 and not view.horizontalHeader().isSortIndicatorShown()


def test_a_polars_frame_shows_the_columns_named(qtbot):
    import polars as pl

    view = FrameTableView()
    qtbot.addWidget(view)
    view.set_frame(pl.DataFrame({"model": ["m", "n"], "accuracy": [0.5, None], "hidden": [1, 2]}),
                   ["model", "accuracy"])
    assert view.frame_model.titles() == ["model", "accuracy"]
    assert view.shown_rows() == [["m", "0.500"], ["n", "—"]]


def test_a_cell_cut_off_by_its_column_shows_whole_on_hover(qtbot):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    long = "1 cut to the stimulus (0-20 s); written without speaker (3), note (2)"
    view = _view(qtbot, [("short", long)], [Column("a"), Column("why")])
    view.setColumnWidth(1, 60)

    def hover(column: int) -> None:
        at = view.visualRect(view.model().index(0, column)).center()
        QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, at, view.viewport().mapToGlobal(at)))

    hover(1)
    qtbot.waitUntil(QToolTip.isVisible, timeout=3000)
    assert QToolTip.text() == long
    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=3000)
    hover(0)   # a text that fits needs no tooltip
    qtbot.wait(200)
    assert not QToolTip.isVisible()


def test_ctrl_c_in_a_table_copies_even_when_a_labels_key_is_c(qtbot):
    """Ctrl with a label's key adds that label as a point wherever focus is, except that Ctrl+C in a table
    that copies is a copy: a label keyed C must not turn a copy into a label."""
    from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

    from app.keymap import MEDIA, default_keymap
    from widgets.keys import KeyDispatcher

    window = QWidget()
    qtbot.addWidget(window)
    view = FrameTableView([Column("id"), Column("n")])
    view.set_rows([("clip 1", 1), ("clip 2", 2)])
    other = QPushButton("player")
    layout = QVBoxLayout(window)
    layout.addWidget(view)
    layout.addWidget(other)
    keymap = default_keymap()
    keymap.set_labels("vocal cues", [("c", "creak")])
    dispatcher = KeyDispatcher(window, keymap, lambda: (MEDIA,))
    points: list[str] = []
    dispatcher.label_handler = lambda label: None
    dispatcher.label_point_handler = points.append
    window.show()
    qtbot.waitExposed(window)

    view.selectRow(1)
    view.setFocus()
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "clip 2\t2"
    assert points == []

    other.setFocus()
    qtbot.keyClick(other, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert points == ["creak"]
