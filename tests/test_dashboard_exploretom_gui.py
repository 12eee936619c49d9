"""In the window, an ExploreToM dataset's metrics show its three accuracy tables, and a click on a bar lists
exactly the questions behind it in the stimuli table."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea

from storage.store import Store
from test_dashboard_exploretom_release import MODELS, import_release

TABLES = {"exploretom.order": "by order", "exploretom.belief": "by true or false belief",
          "exploretom.story_type": "by story type"}


@pytest.fixture
def window(window_for, tmp_path, qtbot):
    store = Store.open(tmp_path / "exploretom.duckdb")
    _dataset_id, questions, _answers = import_release(store, tmp_path / "release")
    ids = dict(store.cursor().execute("SELECT external_id, id FROM stimulus").fetchall())
    win = window_for(store)
    win.resize(1366, 768)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == len(questions), timeout=30000)
    win.show_dock(win.metrics_dock)
    qtbot.waitUntil(lambda: set(TABLES) <= set(win.dashboard.panels), timeout=30000)
    yield win, questions, ids
    win.dashboard.runner.wait()
    win.close()
    store.close()


def _listed(win) -> set[int]:
    model = win.table_model
    return {model.stimulus_id(r) for r in range(model.rowCount())}


def test_the_dashboard_shows_the_three_tables_with_a_chart_each(window):
    win, _questions, _ids = window
    for key, words in TABLES.items():
        panel = win.dashboard.panel(key)
        assert words in panel.table.title and panel.plot is not None
        assert panel.grid.row_count() == panel.table.frame.height > 0
    assert "No scored predictions" not in win.dashboard.notes.text()


def test_clicking_a_false_belief_bar_lists_those_questions(qtbot, window):
    win, questions, ids = window
    panel = win.dashboard.panel("exploretom.belief")
    row = next(i for i, r in enumerate(panel.table.frame.iter_rows(named=True))
               if r["model"] == MODELS[1] and r["belief"] == "false belief")
    expected = {ids[q.external_id] for q in questions if q.false_belief and q.order != -1}
    point = panel.plot.mapFromScene(panel.scene_pos_of_row(row))
    # the user scrolls the dashboard until the bar is in view
    centre = panel.plot.mapTo(win.dashboard.body, point)
    win.dashboard.findChild(QScrollArea).ensureVisible(centre.x(), centre.y(), 40, 40)
    qtbot.waitUntil(lambda: panel.plot.viewport().visibleRegion().contains(point), timeout=20000)
    qtbot.mouseClick(panel.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: _listed(win) == expected, timeout=20000)
    shown = win.filter_bar.drill.text()
    assert "false belief" in shown and MODELS[1] in shown and f"({len(expected)} stimuli)" in shown
