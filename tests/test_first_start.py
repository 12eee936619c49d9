"""A first start on an empty home: the window is up and painted before the sample's import begins; the import
runs on the worker with its progress in the status bar, and the window fills when it ends."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSettings
from PySide6.QtWidgets import QProgressBar

from app.cli import gui_parser
from app.sample import store_is_empty
from storage.store import default_store_path
from widgets import gui


class _Paints(QObject):
    """Counts the window's paints, and whether the store was still empty at the first."""

    def __init__(self, window, store) -> None:
        super().__init__()
        self.count, self.empty_at_first, self.store = 0, None, store
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint:
            if self.count == 0:
                self.empty_at_first = store_is_empty(self.store)
            self.count += 1
        return False


def test_an_empty_home_paints_the_window_then_imports_the_sample_and_fills_it(qtbot, tmp_path):
    assert not default_store_path().exists()   # this test's own empty home (conftest's THINSLICE_HOME)
    store = gui.open_window_store(None)
    assert store_is_empty(store)
    window = gui.show_window(store, gui_parser().parse_args([]), QSettings(str(tmp_path / "s.ini"),
                                                                        QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    paints = _Paints(window, store)
    assert window.isVisible() and window.dataset_combo.count() == 0
    assert window.statusBar().findChild(QProgressBar) is None   # the import waits for the window to paint
    qtbot.waitUntil(lambda: paints.count > 0, timeout=10000)
    assert paints.empty_at_first is True
    # the import runs on the worker, its progress shown, while the window is up and empty
    qtbot.waitUntil(lambda: window.statusBar().findChild(QProgressBar) is not None, timeout=10000)
    assert window.dataset_combo.count() == 0
    assert "importing the bundled sample" in window.status_message.text()
    qtbot.waitUntil(lambda: window.dataset_combo.count() == 5, timeout=120000)
    assert window.status_message.text().startswith("Imported the sample: ")
    assert window.statusBar().findChild(QProgressBar) is None
    qtbot.waitUntil(lambda: window.table_model.rowCount() > 0, timeout=20000)   # and the window fills
    window.close()
    store.close()
