"""Starting the window: application object, store, first-run sample, screenshot mode."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QProgressBar, QWidget

from app.cli import gui_parser
from app.cli_store import EXIT_MISSING_STORE, open_cli_store
from widgets.main_window import MainWindow, screenshot
from widgets.settings_store import SettingsStore
from widgets.store_menu import HeldStoreDialog
from app.sample import import_sample, store_is_empty
from app.session import Session
from app.browser import Browser
from app.store_channel import copy_held_store
from storage.errors import StoreLockedError, StoreMissingError, ThinsliceError
from storage.store import Store, default_store_path


def _application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
    app.setApplicationName("Thinslice")
    app.setOrganizationName("Thinslice")
    return app  # type: ignore[return-value]


def run_gui(argv: list[str]) -> int:
    args = gui_parser().parse_args(argv)
    app = _application()
    scratch = tempfile.TemporaryDirectory(prefix="thinslice-")   # a read-only snapshot lives here while shown
    try:
        opened = _open_for_window(args, Path(scratch.name))
        if opened is None:
            return 1
        store, note = opened
    except ThinsliceError as exc:
        return _refuse(exc, args, "Thinslice cannot open the store")
    try:
        if args.dataset and not store_is_empty(store):
            Browser(store).datasets(args.dataset)   # an unknown name is refused naming every dataset
        if args.screenshot:
            return _screenshot(store, args)
        window = show_window(store, args, QSettings(), note)   # noqa: F841 (held while the window runs)
        return app.exec()
    except ThinsliceError as exc:
        return _refuse(exc, args, "Thinslice cannot show that")
    finally:
        store.close()
        scratch.cleanup()


def show_window(store: Store, args: argparse.Namespace, settings: QSettings, note: str | None = None) -> MainWindow:
    """The window on `store` as the command line asks (`gui_parser`), shown. A new empty store gets the
    sample once the window has painted: it shows the import's progress, then fills."""
    if args.annotator:
        SettingsStore(settings).update(annotator=args.annotator)
    window = window_for(store, settings, note)
    if not args.no_sample and store_is_empty(store) and not store.read_only:
        window.show_status("First run: the bundled sample is imported as soon as the window is up…")
        after_first_paint(window, lambda: _import_sample_in_background(window))
    elif args.dataset:
        window.select_dataset(args.dataset)
    if args.stimulus:
        found = window.browser.find_stimulus(args.stimulus, args.dataset)
        if found:
            stimulus_id, name = found
            if name:
                window.select_dataset(name)
            window.select_stimulus_id(stimulus_id)
    window.show()
    return window


FIRST_PAINT_WAIT_MS = 1000


class _FirstPaint(QObject):
    """Calls `then` once, after `window` has painted for the first time (or after `FIRST_PAINT_WAIT_MS`, if
    it is not painted by then, e.g. shown minimised). Its timer goes with the window, should it close first."""

    def __init__(self, window: QWidget, then: Callable[[], None]) -> None:
        super().__init__(window)
        self.window, self.then = window, then
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.fire)
        self.timer.start(FIRST_PAINT_WAIT_MS)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Paint:
            self.timer.start(0)   # once this paint is done and on screen
        return False

    def fire(self) -> None:
        self.window.removeEventFilter(self)
        self.then()


def after_first_paint(window: QWidget, then: Callable[[], None]) -> None:
    """Run `then` once `window` has painted: work begun earlier (the sample's import on a worker) would hold
    the interpreter while the window is built and drawn, and the first start would wait for it."""
    _FirstPaint(window, then)


def _refuse(exc: ThinsliceError, args, title: str) -> int:
    """Say why the window cannot start, in one line on stderr (and a dialog unless making a screenshot)."""
    print(f"thinslice: {exc}", file=sys.stderr)
    if not args.screenshot:
        QMessageBox.critical(None, title, str(exc))
    return EXIT_MISSING_STORE if isinstance(exc, StoreMissingError) else 1


def _open_for_window(args, scratch: Path) -> tuple[Store, str | None] | None:
    """The store the window shows and a note on how it was opened; when another process holds it, the user
    chooses to open it read-only or a copy of it (None: they quit). A screenshot is refused instead."""
    try:
        return open_window_store(args.db, create=args.create), None
    except StoreLockedError as held:
        if args.screenshot:
            raise
        return open_held_store(held, scratch)


def open_held_store(held: StoreLockedError, scratch: Path, parent: QWidget | None = None
                    ) -> tuple[Store, str | None] | None:
    """Ask what to do with a store another process holds (`HeldStoreDialog`) and open what was chosen: the
    store read-only (or, while another window writes it, a read-only snapshot of it in `scratch`), or a copy
    saved where the user says and opened for writing. None when the user quits or gives no name."""
    dialog = HeldStoreDialog(held, parent)
    dialog.exec()
    try:
        return _open_chosen(held, dialog.choice(), scratch, parent)
    except StoreLockedError:   # no Thinslice window holds it, and its holder writes it
        raise ThinsliceError(f"{held.path} is open for writing in {held.holder or 'another program'}, which "
                             "cannot hand out a copy: close it there, then start Thinslice again.") from None


def _open_chosen(held: StoreLockedError, choice: str | None, scratch: Path, parent: QWidget | None
                 ) -> tuple[Store, str | None] | None:
    if choice == HeldStoreDialog.READ_ONLY:
        try:
            return Store.open(held.path, read_only=True, create=False), None
        except StoreLockedError:   # another Thinslice window writes it: it writes a snapshot to look at
            snapshot = copy_held_store(held.path, scratch / held.path.name)
            when = datetime.now().strftime("%H:%M")
            return (Store.open(snapshot, read_only=True, create=False),
                    f"A read-only snapshot of {held.path} as of {when}: another window writes the store, "
                    "so what it writes after that is not shown here, and edits are not saved.")
    if choice == HeldStoreDialog.COPY:
        suggested = held.path.with_name(f"{held.path.stem}-copy.duckdb")
        name, _ = QFileDialog.getSaveFileName(parent, "Save a copy of the store to work on", str(suggested),
                                              "Thinslice stores (*.duckdb)")
        if not name:
            return None
        copy = copy_held_store(held.path, Path(name))
        return open_window_store(copy), f"Working on a copy of {held.path}, saved as {copy}."
    return None


def open_window_store(db: Path | None, *, create: bool = False) -> Store:
    """The store the window works on; opened read-only when the user cannot write it (a file of mode 444,
    a folder or disk mounted read-only), since a writable open would fail there."""
    path = Path(db).expanduser() if db is not None else default_store_path()
    if path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return open_cli_store(path, read_only=True)
    return open_cli_store(db, create=create)


def window_for(store: Store, settings: QSettings, note: str | None = None) -> MainWindow:
    """The main window on `store`: it says so when the store is read-only (or what `note` says of how it was
    opened), and takes the command line's verbs for the store while it holds it (`StoreBackups`)."""
    window = MainWindow(store, Session(), settings)
    try:
        window.store_backups.serve_command_line()
    except (ThinsliceError, OSError) as exc:  # the window works without it; the command line is then refused
        window.report_error(exc)
    if store.read_only:
        window.setWindowTitle(f"{window.windowTitle()} (read-only)")
        window.show_status(note or f"{store.path} is opened read-only: you cannot write it, so edits are not saved.")
    elif note:
        window.show_status(note)
    return window


def _import_sample_in_background(window: MainWindow) -> None:
    bar = QProgressBar()
    bar.setRange(0, 100)
    bar.setMaximumWidth(220)
    window.statusBar().addPermanentWidget(bar)
    window.show_status("First run: importing the bundled sample…")

    def take_bar_away() -> None:
        # out of the status bar's children at once: a deferred delete alone leaves it there until the
        # event loop next turns, after the status line already says the import is done
        window.statusBar().removeWidget(bar)
        bar.setParent(None)
        bar.deleteLater()

    def done(names: list[str]) -> None:
        take_bar_away()
        window.show_status(f"Imported the sample: {', '.join(names)}")
        window.refresh_datasets()

    def failed(exc: BaseException) -> None:
        take_bar_away()
        window.report_error(exc)

    window.runner.submit("sample-import", lambda token, progress: import_sample(window.store, progress, token),
                         done, failed, on_progress=lambda f, m: bar.setValue(int(f * 100)), with_progress=True)


def _screenshot(store: Store, args) -> int:
    if not args.no_sample and store_is_empty(store):
        import_sample(store)
    if args.dataset:   # checked again once a first run's sample is in
        Browser(store).datasets(args.dataset)
    # a screenshot shows the default layout and leaves the user's remembered layout alone
    scratch = tempfile.TemporaryDirectory()
    settings = QSettings(str(Path(scratch.name) / "screenshot.ini"), QSettings.Format.IniFormat)
    if args.annotator:
        SettingsStore(settings).update(annotator=args.annotator)
    window = MainWindow(store, Session(), settings)
    if args.dataset:
        window.select_dataset(args.dataset)
    stimulus_id = None
    if args.stimulus:
        found = window.browser.find_stimulus(args.stimulus, args.dataset)
        if found is None:
            print(f"thinslice: no stimulus {args.stimulus!r}", file=sys.stderr)
            return 1
        stimulus_id, name = found
        if name:
            window.select_dataset(name)
    out = screenshot(window, args.screenshot, stimulus_id)
    print(str(out))
    window.close()
    scratch.cleanup()
    return 0
