"""Starting the window: application object, store, first-run sample, screenshot mode."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox, QProgressBar

from app.cli import EXIT_MISSING_STORE, gui_parser, open_cli_store
from widgets.main_window import MainWindow, screenshot
from widgets.settings_store import SettingsStore
from app.sample import import_sample, store_is_empty
from app.session import Session
from storage import lookups
from storage.errors import StoreMissingError, ThinsliceError
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
    try:
        store = open_window_store(args.db, create=args.create)
    except ThinsliceError as exc:
        print(f"thinslice: {exc}", file=sys.stderr)
        if not args.screenshot:
            QMessageBox.critical(None, "Thinslice cannot open the store", str(exc))
        return EXIT_MISSING_STORE if isinstance(exc, StoreMissingError) else 1
    try:
        if args.screenshot:
            return _screenshot(store, args)
        settings = QSettings()
        if args.annotator:
            SettingsStore(settings).update(annotator=args.annotator)
        window = window_for(store, settings)
        if not args.no_sample and store_is_empty(store) and not store.read_only:
            _import_sample_in_background(window)
        elif args.dataset:
            window.select_dataset(args.dataset)
        if args.stimulus:
            found = lookups.find_stimulus(store.cursor(), args.stimulus, args.dataset)
            if found:
                name = lookups.dataset_name(store.cursor(), found[1])
                if name:
                    window.select_dataset(name)
                window.select_stimulus_id(found[0])
        window.show()
        return app.exec()
    finally:
        store.close()


def open_window_store(db: Path | None, *, create: bool = False) -> Store:
    """The store the window works on; opened read-only when the user cannot write it (a file of mode 444,
    a folder or disk mounted read-only), since a writable open would fail there."""
    path = Path(db).expanduser() if db is not None else default_store_path()
    if path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return open_cli_store(path, read_only=True)
    return open_cli_store(db, create=create)


def window_for(store: Store, settings: QSettings) -> MainWindow:
    """The main window on `store`: it says so when the store is read-only, and takes `thinslice backup` and
    `check` from the command line while it holds the store."""
    window = MainWindow(store, Session(), settings)
    try:
        window.store_backups.serve_command_line()
    except (ThinsliceError, OSError) as exc:  # the window works without it; the command line is then refused
        window.report_error(exc)
    if store.read_only:
        window.setWindowTitle(f"{window.windowTitle()} (read-only)")
        window.show_status(f"{store.path} is opened read-only: you cannot write it, so edits are not saved.")
    return window


def _import_sample_in_background(window: MainWindow) -> None:
    bar = QProgressBar()
    bar.setRange(0, 100)
    bar.setMaximumWidth(220)
    window.statusBar().addPermanentWidget(bar)
    window.show_status("First run: importing the bundled sample…")

    def done(names: list[str]) -> None:
        window.statusBar().removeWidget(bar)
        bar.deleteLater()
        window.show_status(f"Imported the sample: {', '.join(names)}")
        window.refresh_datasets()

    def failed(exc: BaseException) -> None:
        window.statusBar().removeWidget(bar)
        bar.deleteLater()
        window.report_error(exc)

    window.runner.submit("sample-import", lambda token, progress: import_sample(window.store, progress, token),
                         done, failed, on_progress=lambda f, m: bar.setValue(int(f * 100)), with_progress=True)


def _screenshot(store: Store, args) -> int:
    if not args.no_sample and store_is_empty(store):
        import_sample(store)
    # a screenshot shows the default layout and leaves the user's remembered layout alone
    scratch = tempfile.TemporaryDirectory()
    settings = QSettings(str(Path(scratch.name) / "screenshot.ini"), QSettings.Format.IniFormat)
    if args.annotator:
        SettingsStore(settings).update(annotator=args.annotator)
    window = MainWindow(store, Session(), settings)
    if args.dataset and not window.select_dataset(args.dataset):
        print(f"thinslice: no dataset named {args.dataset!r}", file=sys.stderr)
        return 1
    stimulus_id = None
    if args.stimulus:
        found = lookups.find_stimulus(store.cursor(), args.stimulus, args.dataset)
        if found is None:
            print(f"thinslice: no stimulus {args.stimulus!r}", file=sys.stderr)
            return 1
        stimulus_id = found[0]
        name = lookups.dataset_name(store.cursor(), found[1])
        if name:
            window.select_dataset(name)
    out = screenshot(window, args.screenshot, stimulus_id)
    print(str(out))
    window.close()
    scratch.cleanup()
    return 0
