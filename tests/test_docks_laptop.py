"""Predictions and Compare docked in the real window at 1366x768: every condition name whole (wrapped in the
room the tree gives a child row), the selected prediction's judge reasons whole in a pane of real height,
and Compare's stacked cells as wide as the dock, none behind a sideways scroll."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QScrollArea

from tests.laptop_window import laptop_window, open_first


def test_condition_names_wrap_whole_and_judge_reasons_are_read_in_full(qtbot, sample_store_copy, window_for):
    win = laptop_window(qtbot, window_for, sample_store_copy)
    open_first(qtbot, win, sample_store_copy, "echomind_script")
    tree = win.predictions.tree
    names = [tree.topLevelItem(i).child(j) for i in range(tree.topLevelItemCount())
             for j in range(tree.topLevelItem(i).childCount())]
    assert any(len(item.text(0)) > 24 for item in names)   # "alternative voice, basic prompt" and the like
    for item in names:
        rect = tree.visualItemRect(item)
        if not rect.isValid():
            continue  # scrolled out of view
        text_room = tree.header().sectionSize(0) - 2 * tree.indentation() - 10
        needed = QFontMetrics(item.font(0)).boundingRect(QRect(0, 0, text_room, 10000),
                                                         int(Qt.TextFlag.TextWordWrap), item.text(0)).height()
        assert rect.height() >= needed, item.text(0)   # wrapped, not cut to "alternative voice, basic …"
        assert item.toolTip(0).split("\n")[0].endswith(item.text(0))
    open_first(qtbot, win, sample_store_copy, "agentviss_scene")
    panel = win.predictions
    assert panel.reasons, "the selected prediction's judges give reasons"
    judges_pane = panel.split.widget(1)
    assert judges_pane.height() >= 0.3 * panel.height()   # a pane to read in, not two lines
    # every reason whole, never cut (once the pane has laid out its wrapped text)
    qtbot.waitUntil(lambda: all(r.height() >= r.heightForWidth(r.width()) for r in panel.reasons), timeout=3000)


def test_compare_docked_shows_every_cell_whole(qtbot, sample_store_copy, window_for):
    win = laptop_window(qtbot, window_for, sample_store_copy)
    win.show_dock(win.compare_dock)
    for kind in ("echomind_mcq", "agentviss_scene"):
        open_first(qtbot, win, sample_store_copy, kind)
        compare = win.compare
        qtbot.waitUntil(lambda: compare.cells and all(c.isVisible() for c in compare.cells.values()), timeout=5000)
        qtbot.wait(50)
        scroll = next(s for s in compare.findChildren(QScrollArea) if compare.grid.parentWidget() is s.widget())
        # once laid out, nothing is behind a sideways scroll
        qtbot.waitUntil(lambda: not scroll.horizontalScrollBar().isVisible(), timeout=3000)
        viewport = scroll.viewport()
        for cell in compare.cells.values():
            right = cell.mapTo(viewport, QPoint(cell.width(), 0)).x()
            assert right <= viewport.width(), kind        # no cell cut at the dock's edge
            assert cell.text.height() >= cell.text.heightForWidth(cell.text.width()), kind
