"""File > Open store…, File > Recent stores, File > Back up store… and File > Automatic backups….

A store is opened in a new Thinslice process and this window closes, so the store it had open is released
(a DuckDB store is held by one process at a time). The store a window opens is remembered first in the
recent list, which keeps the last `MAX_RECENT` that still exist.

A backup is written on a worker while the window keeps working, checked, and reported in the status bar
(`app/store_backups.py`); the schedule, if the user set one, is looked at every minute. `thinslice backup`,
`check`, `info`, `list`, `metrics` and `export`, run while this window holds the store, reach it through
`app/store_channel.py`.
"""
from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QSettings, QTimer, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLineEdit, QMainWindow, QMenu, QMessageBox, QPushButton, QSpinBox, QWidget)

from app.cli import reader_handlers
from app.store_backups import (BackupReport, back_up, backup_due, channel_handlers, default_folder,
                               scheduled_backup)
from app.store_channel import StoreChannel
from storage.errors import StoreLockedError
from storage.store import Store
from widgets.settings_store import SettingsStore
from widgets.tasks import TaskRunner

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


SCHEDULE_CHECK_MS = 60_000   # how often the schedule is looked at


class StoreBackups(QObject):
    """File > Back up store… and File > Automatic backups… for `store`: backups run on `runner`, each
    checked, and `show` (the status bar) hears the one-line result; `failed` hears an error."""

    told = Signal(str)   # a line from the command-line channel's thread, shown on the GUI thread

    def __init__(self, window: QMainWindow, menu: QMenu, settings: QSettings, store: Store, runner: TaskRunner,
                 show: Callable[[str], None], failed: Callable[[BaseException], None]) -> None:
        super().__init__(window)
        self.window, self.store, self.runner = window, store, runner
        self.settings_store = SettingsStore(settings)
        self.show, self.failed = show, failed
        self.channel: StoreChannel | None = None
        self._keys = itertools.count(1)
        self._scheduled_running = False
        self.told.connect(show)
        self.backup_action = menu.addAction("&Back up store…")
        self.backup_action.triggered.connect(lambda _checked=False: self.ask())
        self.schedule_action = menu.addAction("&Automatic backups…")
        self.schedule_action.triggered.connect(lambda _checked=False: self.edit_schedule())
        self.timer = QTimer(self)
        self.timer.setInterval(SCHEDULE_CHECK_MS)
        self.timer.timeout.connect(self.backup_if_due)
        self.timer.start()
        QTimer.singleShot(0, self.backup_if_due)

    def ask(self) -> None:
        """Ask where to write the backup, then write it."""
        suggested = self.store.path.with_name(f"{self.store.path.stem}-{datetime.now():%Y%m%d-%H%M}.duckdb")
        path, _ = QFileDialog.getSaveFileName(self.window, "Back up the store to a new file", str(suggested),
                                              "Thinslice stores (*.duckdb)")
        if path:
            self.back_up_to(Path(path))

    def back_up_to(self, out: Path) -> None:
        """Write and check a backup at `out` on a worker; the status bar says where and what, or why not."""
        self.show(f"Backing up to {out}…")
        self.runner.submit(f"store-backup-{next(self._keys)}", lambda: back_up(self.store, out),
                           self._done, self.failed)

    def backup_if_due(self) -> None:
        """Write the scheduled backup when the user's schedule wants one (none while one is being written)."""
        settings = self.settings_store.load()
        folder = Path(settings.backup_folder) if settings.backup_folder else default_folder(self.store.path)
        now = datetime.now()
        if self._scheduled_running or not backup_due(self.store.path, folder, settings.backup_every_hours, now):
            return
        self._scheduled_running = True

        def done(report: BackupReport) -> None:
            self._scheduled_running = False
            self._done(report)

        def failed(exc: BaseException) -> None:
            self._scheduled_running = False
            self.failed(exc)

        self.runner.submit(f"store-backup-{next(self._keys)}",
                           lambda: scheduled_backup(self.store, folder, settings.backup_keep, now), done, failed)

    def _done(self, report: BackupReport) -> None:
        self.show(report.describe())

    def edit_schedule(self) -> None:
        """The schedule's dialog; its values are saved in the settings when accepted."""
        dialog = ScheduleDialog(self.settings_store, self.store.path, self.window)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            dialog.save()
            self.backup_if_due()

    def serve_command_line(self) -> None:
        """Take `thinslice backup`, `check`, `info`, `list`, `metrics` and `export` for this store from the
        command line while the window holds it."""
        handlers = {**reader_handlers(self.store), **channel_handlers(self.store, self.told.emit)}
        self.channel = StoreChannel(self.store.path, handlers)

    def close(self) -> None:
        """Stop the schedule and the command line's channel (the window is closing)."""
        self.timer.stop()
        if self.channel is not None:
            self.channel.close()
            self.channel = None


class ScheduleDialog(QDialog):
    """How often to back up automatically (0 hours: never), how many to keep, and where."""

    def __init__(self, settings_store: SettingsStore, store_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Automatic backups")
        self.settings_store = settings_store
        current = settings_store.load()
        self.every = QDoubleSpinBox()
        self.every.setRange(0.0, 24.0 * 30)
        self.every.setDecimals(1)
        self.every.setSuffix(" h")
        self.every.setSpecialValueText("never")
        self.every.setValue(current.backup_every_hours)
        self.keep = QSpinBox()
        self.keep.setRange(1, 1000)
        self.keep.setValue(current.backup_keep)
        self.folder = QLineEdit(current.backup_folder)
        self.folder.setPlaceholderText(str(default_folder(store_path)))
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._choose_folder)
        where = QHBoxLayout()
        where.addWidget(self.folder)
        where.addWidget(browse)
        form = QFormLayout(self)
        form.addRow("Back up every", self.every)
        form.addRow("Keep the last", self.keep)
        form.addRow("In the folder", where)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Folder for automatic backups",
                                                  self.folder.text() or self.folder.placeholderText())
        if chosen:
            self.folder.setText(chosen)

    def save(self) -> None:
        self.settings_store.update(backup_every_hours=self.every.value(), backup_keep=self.keep.value(),
                                   backup_folder=self.folder.text().strip())


class HeldStoreDialog(QMessageBox):
    """The store is held by another process: open it read-only (a snapshot when another Thinslice window
    writes it), open a copy of it to work on, or quit."""

    READ_ONLY, COPY = "read-only", "copy"

    def __init__(self, held: StoreLockedError, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Information)
        self.setWindowTitle("The store is open elsewhere")
        who = held.holder or "another program"
        self.setText(f"{held.path.name} is open in {who}.")
        self.setInformativeText(
            "Only one program at a time can write a store. Open it read-only to look without changing it, or open "
            "a copy of it to work on; or close it there and start Thinslice again.")
        self.read_only_button = self.addButton("Open &read-only", QMessageBox.ButtonRole.AcceptRole)
        self.copy_button = self.addButton("Open a &copy…", QMessageBox.ButtonRole.ActionRole)
        self.addButton("&Quit", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.read_only_button)

    def choice(self) -> str | None:
        """READ_ONLY, COPY, or None (quit) for the button pressed."""
        clicked = self.clickedButton()
        if clicked is self.read_only_button:
            return self.READ_ONLY
        return self.COPY if clicked is self.copy_button else None
