"""The default window fits a 1366x768 laptop; roomy panels never squash the centre; View > Reset layout."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt

from fixtures_store import friendbench_like_plan, make_store


@pytest.fixture
def window(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    win = window_for(store)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 12, timeout=10000)
    yield win
    win.close()
    store.close()


def test_the_default_window_fits_a_laptop_screen(qtbot, window):
    assert window.width() <= 1366 and window.height() <= 768
    hint = window.minimumSizeHint()
    assert hint.width() <= 1366 and hint.height() <= 768


@pytest.mark.parametrize("menu_text, dock_name", [("&Metrics dashboard", "metrics_dock"),
                                                  ("&Failure mining", "failures_dock")])
def test_roomy_panels_open_floating_and_leave_the_centre_alone(qtbot, window, menu_text, dock_name):
    window.resize(1366, 768)
    qtbot.wait(50)
    centre_before = window.centralWidget().height()
    action = next(a for a in window.compare_menu.actions() if a.text() == menu_text)
    action.trigger()
    dock = getattr(window, dock_name)
    qtbot.waitUntil(dock.isVisible, timeout=5000)
    assert dock.isFloating()
    qtbot.wait(50)
    assert window.centralWidget().height() == centre_before


def test_agreement_opens_floating_too(qtbot, window):
    centre_before = window.centralWidget().height()
    window._show_agreement()
    qtbot.waitUntil(window.agreement_dock.isVisible, timeout=5000)
    assert window.agreement_dock.isFloating()
    assert window.centralWidget().height() == centre_before


def test_reset_layout_puts_every_panel_back(qtbot, window):
    window.show_dock(window.metrics_dock)
    window.metrics_dock.setFloating(False)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, window.metrics_dock)
    window.stimuli_dock.hide()
    window.resize(1600, 1000)
    reset = next(a for a in window.view_menu.actions() if a.text() == "&Reset layout")
    reset.trigger()
    qtbot.wait(50)
    assert window.stimuli_dock.isVisible() and window.predictions_dock.isVisible()
    assert not window.metrics_dock.isVisible()
    assert window.width() <= 1366 and window.height() <= 768
    # after a reset the roomy panel floats again when asked for
    window.show_dock(window.metrics_dock)
    assert window.metrics_dock.isFloating()


def test_a_panel_the_user_docked_stays_docked_next_time(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    settings = QSettings(str(tmp_path / "layout.ini"), QSettings.Format.IniFormat)
    first = window_for(store, settings=settings)
    first.show_dock(first.metrics_dock)
    first.metrics_dock.setFloating(False)
    first.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, first.metrics_dock)
    first.close()
    second = window_for(store, settings=settings)
    qtbot.waitUntil(second.metrics_dock.isVisible, timeout=5000)
    second.show_dock(second.metrics_dock)
    assert not second.metrics_dock.isFloating()
    second.close()
    store.close()
