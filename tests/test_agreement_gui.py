"""The agreement dock offers only the scopes a label set has, and never leaves old figures beside an error."""
from __future__ import annotations

import pytest

from app.sample import import_label_sets
from fixtures_store import friendbench_like_plan, make_store
from widgets.main_window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    import_label_sets(store)
    win = window_for(store)
    # the table's rows, not only their count: a reload can show the count before its page has come in
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 12
                    and all(win.table_model.stimulus_id(row) is not None for row in range(12)), timeout=10000)
    for row in range(12):
        sid = win.table_model.stimulus_id(row)
        win.annotations.create(sid, "ana", "familiarity", "familiar" if row % 2 else "stranger")
        win.annotations.create(sid, "bo", "familiarity", "familiar" if row % 3 else "stranger")
    yield win
    win.close()
    store.close()


def scopes(win: MainWindow) -> list[str]:
    return [win.agreement.scope.itemText(i) for i in range(win.agreement.scope.count())]


def test_a_whole_stimulus_set_offers_only_the_whole_scope(qtbot, window):
    window._show_agreement()
    panel = window.agreement
    panel.label_set.setCurrentText("familiarity")
    assert scopes(window) == ["whole"]
    assert not panel.grid.isVisible()
    panel.label_set.setCurrentText("vocal cues")
    assert scopes(window) == ["interval"]
    assert panel.grid.isVisible()
    panel.label_set.setCurrentText("EchoMind vocal attributes")
    assert scopes(window) == ["interval", "whole"]


def test_an_error_clears_the_old_figures_and_says_why_in_one_line(qtbot, window):
    window._show_agreement()
    panel = window.agreement
    panel.label_set.setCurrentText("familiarity")
    panel.compute.click()
    qtbot.waitUntil(lambda: panel.figures.topLevelItemCount() > 0, timeout=10000)
    assert "Cohen" in panel.figures.topLevelItem(0).text(0)
    # a request for frames on whole-stimulus labels (e.g. from a stale choice) fails without stale figures
    window._compute_agreement("familiarity", "interval", 0.01)
    qtbot.waitUntil(lambda: "does not apply" in panel.summary.text(), timeout=10000)
    assert panel.figures.topLevelItemCount() == 0
    assert panel.disagreements.topLevelItemCount() == 0
    assert "reshape" not in panel.summary.text() and "<br" not in panel.summary.text()
    assert "reshape" not in window.status_message.text()
