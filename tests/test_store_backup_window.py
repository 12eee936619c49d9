"""Backups while the window works: File > Back up store…, `thinslice backup` handed to a real window that
holds the store, the automatic schedule; and a store the user cannot write opens read-only, saying so."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.cli import dispatch
from app.store_backups import default_folder, scheduled_backups
from app.store_channel import channel_path
from fixtures_store import friendbench_like_plan, make_store
from storage.annotations import AnnotationStore
from storage.store import Store
from store_rows import store_rows
from widgets import gui, store_menu
from widgets.settings_store import SettingsStore

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _own_runtime_folder(tmp_path, monkeypatch):
    """The channel's sockets go to this test's own runtime folder."""
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))


def _status_lines(window) -> list[str]:
    """Every line the window's backups put in the status bar (which other work may overwrite soon after)."""
    shown: list[str] = []
    backups = window.store_backups
    show, failed = backups.show, backups.failed
    backups.show = lambda text: (shown.append(text), show(text))
    backups.failed = lambda exc: (shown.append(str(exc)), failed(exc))
    return shown


def test_file_back_up_store_writes_a_checked_copy_and_says_so(qtbot, window_for, tmp_path, monkeypatch):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4))
    AnnotationStore(store).create(1, "ana", "vocal cues", "laugh", 1.0, 2.0)
    window = window_for(store)
    out = tmp_path / "copies" / "s-copy.duckdb"
    monkeypatch.setattr(store_menu.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    shown = _status_lines(window)
    window.store_backups.backup_action.trigger()
    qtbot.waitUntil(lambda: any("Backed up to" in line for line in shown), timeout=20000)
    said = next(line for line in shown if "Backed up to" in line)
    assert str(out) in said and "checked it" in said and "tables" in said
    copy = Store.open(out, create=False)
    assert store_rows(copy) == store_rows(store)
    copy.close()
    # a second backup to the same name is refused in the status bar, and the copy is left as it was
    before = out.read_bytes()
    window.store_backups.backup_action.trigger()
    qtbot.waitUntil(lambda: any("never overwrites" in line for line in shown), timeout=20000)
    assert out.read_bytes() == before
    window.close()
    store.close()


def test_the_schedule_backs_up_when_due_and_keeps_the_last_n(qtbot, window_for, tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2))
    folder = default_folder(store.path)
    folder.mkdir()
    for day in range(1, 4):   # three older scheduled backups already there
        (folder / f"s-202601{day:02d}-090000.duckdb").write_bytes(b"old")
    SettingsStore(QSettings()).update(backup_every_hours=24.0, backup_keep=2)
    window = window_for(store, show=False)
    shown = _status_lines(window)
    qtbot.waitUntil(lambda: any("Backed up to" in line for line in shown), timeout=20000)
    assert "2 older removed" in shown[-1]
    kept = [p.name for _, p in scheduled_backups(store.path, folder)]
    assert len(kept) == 2 and kept[0] == "s-20260103-090000.duckdb"
    newest = Store.open(folder / kept[1], create=False)
    assert store_rows(newest) == store_rows(store)
    newest.close()
    window.store_backups.backup_if_due()   # the newest is fresh: nothing more is written
    assert len(scheduled_backups(store.path, folder)) == 2
    window.close()
    store.close()


def test_thinslice_backup_is_handed_to_the_real_window_that_holds_the_store(tmp_path, capsys):
    store = make_store(tmp_path / "held.duckdb", friendbench_like_plan(tmp_path, n_stimuli=3))
    AnnotationStore(store).create(1, "ana", "vocal cues", "laugh", 1.0, 2.0)
    expected = store_rows(store)
    store.close()
    window = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "--db", str(store.path), "--no-sample"],
                              cwd=ROOT, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not channel_path(store.path).exists():
            assert window.poll() is None, window.stderr.read()
            assert time.monotonic() < deadline, "the window never started taking requests"
            time.sleep(0.1)
        out = tmp_path / "from-the-window.duckdb"
        assert dispatch(["backup", str(out), "--db", str(store.path)]) == 0, capsys.readouterr().err
        assert json.loads(capsys.readouterr().out)["backup"] == str(out)
        assert dispatch(["check", "--db", str(store.path)]) == 0
        assert json.loads(capsys.readouterr().out)["ok"] is True
    finally:
        window.terminate()
        window.wait(timeout=30)
    assert dispatch(["check", "--db", str(out)]) == 0
    capsys.readouterr()
    copy = Store.open(out, create=False)
    assert store_rows(copy) == expected
    copy.close()


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder on a filesystem mounted read-only (which even the superuser cannot write), holding a store;
    skipped where a filesystem cannot be mounted."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a filesystem here")
    try:
        make_store(folder / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2)).close()
        (folder / "s.duckdb").chmod(0o444)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_store_the_user_cannot_write_opens_read_only_and_says_so(qtbot, read_only_folder):
    path = read_only_folder / "s.duckdb"
    store = gui.open_window_store(path)
    assert store.read_only
    window = gui.window_for(store, QSettings())
    qtbot.addWidget(window)
    assert window.windowTitle().endswith("(read-only)")
    said = window.status_message.text()
    assert "opened read-only" in said and str(path) in said
    qtbot.waitUntil(lambda: window.table_model.rowCount() == 2, timeout=10000)
    window.close()
    store.close()


def test_the_window_says_how_many_acknowledged_edits_a_damaged_log_lost(tmp_path):
    import shutil

    from storage.journal import journal_path
    from storage.store import wal_path

    live = make_store(tmp_path / "live.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2))
    live.cursor().execute("SET checkpoint_threshold = '1GB'")
    live.checkpoint()
    notes = AnnotationStore(live)
    for i in range(5):
        notes.create(1, "ana", "vocal cues", f"laugh {i}", i, i + 0.5)
    crashed = tmp_path / "crashed.duckdb"
    for name, copy in ((live.path, crashed), (wal_path(live.path), wal_path(crashed)),
                       (journal_path(live.path), journal_path(crashed))):
        shutil.copyfile(name, copy)
    live.close()
    log = wal_path(crashed).read_bytes()
    wal_path(crashed).write_bytes(log[:log.index(b"\xff\xff") + 2])   # read as a log that ends after its header
    shown = subprocess.run([sys.executable, str(ROOT / "main.py"), "--db", str(crashed), "--no-sample",
                            "--screenshot", str(tmp_path / "shot.png")], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert shown.returncode == 1 and not (tmp_path / "shot.png").exists()
    said = shown.stderr.strip().splitlines()
    assert len(said) == 1 and "5 acknowledged label edits are missing" in said[0], said
    assert f"thinslice recover --db {crashed}" in said[0]


def test_the_schedule_dialog_keeps_what_the_user_set(qtbot, window_for, tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2))
    window = window_for(store, show=False)
    names = [a.text() for a in window.file_menu.actions()]
    assert "&Back up store…" in names and "&Automatic backups…" in names
    dialog = store_menu.ScheduleDialog(window.store_backups.settings_store, store.path, window)
    qtbot.addWidget(dialog)
    assert dialog.every.value() == 0.0 and dialog.every.text() == "never"   # no schedule until one is set
    assert dialog.folder.placeholderText() == str(default_folder(store.path))
    dialog.every.setValue(12.0)
    dialog.keep.setValue(3)
    dialog.folder.setText(str(tmp_path / "elsewhere"))
    dialog.save()
    saved = SettingsStore(QSettings()).load()
    assert (saved.backup_every_hours, saved.backup_keep, saved.backup_folder) == (12.0, 3, str(tmp_path / "elsewhere"))
    window.store_backups.backup_if_due()   # due at once: nothing made yet in the chosen folder
    qtbot.waitUntil(lambda: len(scheduled_backups(store.path, tmp_path / "elsewhere")) == 1, timeout=20000)
    window.close()
    store.close()
