"""The window over a large results table: it holds a few pages of the stimulus table whatever the table's
size, and sorting, filtering, scrolling and jumping to a stimulus read from the store."""
from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from PySide6.QtCore import QPoint, Qt

from storage.importers.plan import DatasetInfo, ImportPlan
from widgets.stimulus_table import LOADING, MAX_PAGES, PAGE_SIZE

from fixtures_store import make_store

N_STIMULI = 20_000
N_MODELS = 10
TRUTHS = np.where(np.arange(N_STIMULI) % 3 == 0, "familiar", "stranger")


def right(model: int) -> np.ndarray:
    """Which stimuli (by number) a model answered rightly."""
    return (np.arange(N_STIMULI) * (model + 5)) % 7 < 4


@pytest.fixture
def big_store(tmp_path):
    """200,000 predictions: 20,000 stimuli numbered 0..19999 (stored in shuffled order) by 10 models."""
    order = np.array(random.Random(4).sample(range(N_STIMULI), N_STIMULI))
    ids = pl.Series("external_id", order.astype(str))
    plan = ImportPlan(DatasetInfo("Big", "generic", tmp_path, "generated", synthetic=True), "test")
    plan.add("stimuli", pl.DataFrame({"external_id": ids, "ground_truth": TRUTHS[order], "kind": "generic"}))
    plan.add("predictions", pl.concat([pl.DataFrame({
        "stimulus": ids, "model": f"model-{m}", "modality": "text",
        "answer": np.where(right(m)[order], TRUTHS[order], "other"), "correct": right(m)[order]})
        for m in range(N_MODELS)]))
    store = make_store(tmp_path / "big.duckdb", plan)
    yield store
    store.close()


def first_ids(win, n: int = 12) -> list[str]:
    model = win.table_model
    return [model.data(model.index(row, 0)) for row in range(n)]


def wait_for_rows(qtbot, win, wanted: list[str]) -> None:
    qtbot.waitUntil(lambda: first_ids(win, len(wanted)) == wanted, timeout=20000)


def test_the_window_holds_a_few_pages_whatever_the_size_and_sorts_and_filters_in_the_store(qtbot, big_store,
                                                                                            window_for):
    win = window_for(big_store, size=(1366, 768))
    model = win.table_model
    qtbot.waitUntil(lambda: model.rowCount() == N_STIMULI, timeout=30000)
    wait_for_rows(qtbot, win, [str(i) for i in range(12)])   # numbers as numbers: 0, 1, 2, ... 10, 11
    assert "20,000 stimuli" in win.filter_bar.count.text()
    assert win.dashboard.dashboard is None   # the hidden dashboard has not read the predictions

    # scrolling through the whole table reads the pages shown and keeps only a bounded number of them
    for row in range(0, N_STIMULI, 397):
        win.table.scrollTo(model.index(row, 0))
        qtbot.waitUntil(lambda: model.data(model.index(row, 0)) != LOADING, timeout=10000)
        assert model.data(model.index(row, 0)) == str(row)
        assert model.cached_rows() <= MAX_PAGES * PAGE_SIZE
    assert model.pages_fetched >= N_STIMULI // 397 // 4

    # a click on the id header sorts the other way, in the store
    header = win.table.horizontalHeader()
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(header.sectionViewportPosition(0) + 10, header.height() // 2))
    wait_for_rows(qtbot, win, [str(N_STIMULI - 1 - i) for i in range(12)])
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(header.sectionViewportPosition(0) + 10, header.height() // 2))
    wait_for_rows(qtbot, win, [str(i) for i in range(12)])

    # typing in the search box: the ids containing "123", in natural order, counted in the store
    qtbot.keyClicks(win.filter_bar.text, "123")
    wanted = [str(i) for i in range(N_STIMULI) if "123" in str(i)]
    qtbot.waitUntil(lambda: model.rowCount() == len(wanted), timeout=20000)
    wait_for_rows(qtbot, win, wanted[:12])
    win.filter_bar.text.clear()

    # a model's wrong answers, from the filter bar
    win.filter_bar.model.setCurrentIndex(win.filter_bar.model.findData("model-3"))
    win.filter_bar.outcome.setCurrentText("incorrect")
    wrong = [str(i) for i in np.flatnonzero(~right(3))]
    qtbot.waitUntil(lambda: model.rowCount() == len(wrong), timeout=20000)
    wait_for_rows(qtbot, win, wrong[:12])
    assert model.cached_rows() <= MAX_PAGES * PAGE_SIZE


def test_end_and_a_jump_select_stimuli_whose_rows_were_never_read(qtbot, big_store, window_for):
    win = window_for(big_store, size=(1366, 768))
    model = win.table_model
    qtbot.waitUntil(lambda: model.rowCount() == N_STIMULI and win.session.stimulus_id is not None, timeout=30000)
    win.table.setFocus()
    # Page Down through several pages: each is read beside the one above it, in order
    for _ in range(15):
        qtbot.keyClick(win.table, Qt.Key.Key_PageDown)
    below = win.table.currentIndex().row()
    assert below > 2 * PAGE_SIZE
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.external_id == str(below), timeout=20000)
    qtbot.waitUntil(lambda: all(model.data(model.index(row, 0)) != LOADING for row in range(below + 1)), timeout=20000)
    assert [model.data(model.index(row, 0)) for row in range(below + 1)] == [str(i) for i in range(below + 1)]
    qtbot.keyClick(win.table, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.external_id == str(N_STIMULI - 1), timeout=20000)
    assert win.table.currentIndex().row() == N_STIMULI - 1

    far = big_store.cursor().execute("SELECT id FROM stimulus WHERE external_id = '12345'").fetchall()[0][0]
    win.select_stimulus_id(far)
    qtbot.waitUntil(lambda: win.table.currentIndex().row() == 12345, timeout=20000)
    assert model.data(model.index(12345, 0)) == "12345"
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == far,
                    timeout=20000)
    # a new sort keeps the selected stimulus selected, at its row in the new order
    win.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: win.table.currentIndex().row() == N_STIMULI - 1 - 12345, timeout=20000)
    assert win.session.stimulus_id == far


def test_right_and_wrong_marks_stay_readable_in_a_dark_palette(qtbot, big_store, window_for):
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    before = QApplication.palette()
    dark = QPalette(before)
    for role, value in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.Base, "#1e1e1e"),
                        (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.WindowText, "#e6e6e6")):
        dark.setColor(role, QColor(value))
    QApplication.setPalette(dark)
    try:
        win = window_for(big_store)
        model = win.table_model
        wait_for_rows(qtbot, win, ["0", "1"])
        marks = {model.data(model.index(row, 3)): model.data(model.index(row, 3), Qt.ItemDataRole.ForegroundRole)
                 for row in range(40)}
        assert set(marks) == {"✓", "✗"}
        for brush in marks.values():
            assert contrast(brush.color(), QColor("#1e1e1e")) >= 4.5
    finally:
        QApplication.setPalette(before)


def contrast(a, b) -> float:
    """WCAG contrast ratio of two colours."""
    def luminance(c) -> float:
        parts = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in (c.redF(), c.greenF(), c.blueF())]
        return 0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]
    light, deep = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (deep + 0.05)
