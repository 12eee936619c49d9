"""Comforts a newcomer reaches for: Ctrl+F finds, File > Open store… and recent stores, the reaction-time offset."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication



@pytest.fixture
def window(main_window):
    return main_window


def test_ctrl_f_from_the_table_focuses_the_search_box(qtbot, window):
    window.table.setFocus()
    window.table.selectRow(2)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.table, timeout=5000)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.filter_bar.text
    qtbot.keyClicks(window.filter_bar.text, "clip-01")
    qtbot.waitUntil(lambda: window.table_model.rowCount() == 2, timeout=10000)
    assert not window.failures_dock.isVisible()


def test_file_menu_opens_a_store_and_lists_recent_ones(qtbot, window, tmp_path):
    from PySide6.QtCore import QSettings

    from widgets.store_menu import StoreMenu, recent_stores, remember_store

    other = tmp_path / "other.duckdb"
    other.write_bytes(b"")
    remember_store(window.settings, other)
    texts = [a.text() for a in window.file_menu.actions()]
    assert "&Open store…" in texts and "Recent &stores" in texts
    window.store_menu.fill_recent()
    recent = [a.text() for a in window.store_menu.recent_menu.actions()]
    assert recent == ["other.duckdb"]   # the store on screen is not offered again
    opened = []
    menu = StoreMenu(window, window.file_menu, QSettings(), window.store.path, open_store=opened.append)
    remember_store(menu.settings, other)
    menu.fill_recent()
    menu.recent_menu.actions()[0].trigger()
    assert opened == [other]
    assert [p.name for p in recent_stores(window.settings)][:2] == ["other.duckdb", window.store.path.name]


def test_the_reaction_time_offset_is_shown_and_settable(qtbot, window):
    qtbot.waitUntil(lambda: window.stimulus_view.detail is not None, timeout=10000)
    panel = window.media_page.annotation
    qtbot.waitUntil(panel.reaction.isVisible, timeout=5000)
    assert panel.reaction.value() == 250
    panel.reaction.selectAll()
    qtbot.keyClicks(panel.reaction.lineEdit(), "400")
    assert panel.reaction.value() == 400
    assert panel.live.press("laugh", 2.0) is None
    assert panel.live.pending()["laugh"] == pytest.approx(1.6, abs=0.011)
