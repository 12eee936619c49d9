"""File > Open store… and File > Recent stores.

A store is opened in a new Thinslice process and this window closes, so the store it had open is released
(a DuckDB store is held by one process at a time). The store a window opens is remembered first in the
recent list, which keeps the last `MAX_RECENT` that still exist.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QProcess, QSettings
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu

from widgets.settings_store import SettingsStore

MAX_RECENT = 8
MAIN = Path(__file__).resolve().parents[1] / "main.py"


def recent_stores(settings: QSettings) -> list[Path]:
    """The remembered stores, most recent first, those still on disk."""
    return [Path(n) for n in SettingsStore(settings).load().recent_stores if Path(n).exists()]


def remember_store(settings: QSettings, path: Path) -> None:
    """Put `path` first in the recent list."""
    path = Path(path).expanduser().resolve()
    kept = [str(path)] + [str(p) for p in recent_stores(settings) if p.resolve() != path]
    SettingsStore(settings).update(recent_stores=tuple(kept[:MAX_RECENT]))


def launch_store(path: Path) -> bool:
    """Start Thinslice on the store at `path` in a process of its own; False if it could not be started."""
    return QProcess.startDetached(sys.executable, [str(MAIN), "--db", str(path)])[0]


class StoreMenu:
    """Adds Open store… and Recent stores to `menu`; `open_store` is what opening one does (tests replace it)."""

    def __init__(self, window: QMainWindow, menu: QMenu, settings: QSettings, current: Path,
                 open_store: Callable[[Path], None] | None = None) -> None:
        self.window, self.settings, self.current = window, settings, Path(current)
        self.open_store = open_store or self._reopen
        remember_store(settings, self.current)
        self.open_action = menu.addAction("&Open store…")
        self.open_action.triggered.connect(lambda _checked=False: self.ask())
        self.recent_menu = menu.addMenu("Recent &stores")
        self.recent_menu.aboutToShow.connect(self.fill_recent)
        self.fill_recent()

    def fill_recent(self) -> None:
        self.recent_menu.clear()
        others = [p for p in recent_stores(self.settings) if p.resolve() != self.current.resolve()]
        for path in others:
            action = self.recent_menu.addAction(path.name)
            action.setToolTip(str(path))
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _checked=False, p=path: self.open_store(p))
        if not others:
            self.recent_menu.addAction("(no other store opened yet)").setEnabled(False)

    def ask(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a Thinslice store", str(self.current.parent),
                                              "Thinslice stores (*.duckdb);;All files (*)")
        if path:
            self.open_store(Path(path))

    def _reopen(self, path: Path) -> None:
        remember_store(self.settings, path)
        self.settings.sync()
        if launch_store(path):
            self.window.close()
