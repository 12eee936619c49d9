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
