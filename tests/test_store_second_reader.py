"""A second reader while a window holds the store: `thinslice info`, `list`, `metrics` and `export` are run by a
real window process that holds it and print what they print on a free store; a second window opened on the
held store asks, in window terms, whether to open it read-only or a copy; a wrong --dataset names them all."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from app.cli import dispatch
from app.store_channel import channel_path
from fixtures_store import friendbench_like_plan, make_store
from storage.annotations import AnnotationStore
from storage.errors import StoreLockedError, ThinsliceError
from storage.store import Store
from store_rows import store_rows
from widgets import gui, store_menu

ROOT = Path(__file__).resolve().parents[1]
READERS = (["info"], ["list"], ["list", "--filter", "truth=familiar"], ["metrics", "--json"], ["metrics"])


@pytest.fixture(autouse=True)
def _own_runtime_folder(tmp_path, monkeypatch):
    """The channel's sockets go to this test's own runtime folder."""
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))


@pytest.fixture
def labelled_store(tmp_path) -> Path:
    store = make_store(tmp_path / "held.duckdb", friendbench_like_plan(tmp_path, n_stimuli=5))
    notes = AnnotationStore(store)
    notes.create(1, "ana", "vocal cues", "laugh", 1.0, 2.0)
    notes.create(2, "ana", "vocal cues", "sigh", 0.5, 0.9)
    store.close()
    return store.path


def _start_window(path: Path) -> subprocess.Popen:
    """A real Thinslice window process on `path`, once it takes requests for the store."""
    window = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "--db", str(path), "--no-sample"],
                              cwd=ROOT, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not channel_path(path).exists():
        assert window.poll() is None, window.stderr.read()
        assert time.monotonic() < deadline, "the window never started taking requests"
        time.sleep(0.1)
    return window


def _stop(window: subprocess.Popen) -> None:
    window.terminate()
    window.wait(timeout=30)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = dispatch(list(argv))
    said = capsys.readouterr()
    return code, said.out, said.err


def test_info_list_metrics_and_export_print_the_same_while_a_window_holds_the_store(labelled_store, tmp_path,
                                                                                    capsys):
    db = str(labelled_store)
    free = {tuple(verb): _run(capsys, *verb, "--db", db) for verb in READERS}
    assert all(code == 0 and out for code, out, _ in free.values())
    assert _run(capsys, "export", "csv", str(tmp_path / "free.csv"), "--db", db)[0] == 0
    unknown = _run(capsys, "list", "--db", db, "--dataset", "Nope")
    before = _rows(labelled_store)
    window = _start_window(labelled_store)
    try:
        with pytest.raises(StoreLockedError):   # the window holds it: nobody else can open it, even to read
            Store.open(labelled_store, read_only=True, create=False)
        for verb, expected in free.items():
            assert _run(capsys, *verb, "--db", db) == expected, verb
        # a relative OUT is written where the asking command runs, not where the window started
        os.chdir(tmp_path)
        code, out, err = _run(capsys, "export", "csv", "held.csv", "--db", db)
        assert code == 0, err
        assert f"wrote 2 labels to {tmp_path / 'held.csv'}" in out
        assert _run(capsys, "list", "--db", db, "--dataset", "Nope") == unknown   # the same one line, same code
        assert window.poll() is None   # the window keeps running
    finally:
        os.chdir(ROOT)
        _stop(window)
    assert (tmp_path / "held.csv").read_bytes() == (tmp_path / "free.csv").read_bytes()
    assert _rows(labelled_store) == before   # reading changed nothing


def test_a_wrong_dataset_names_every_dataset_for_the_window_and_each_verb(labelled_store, tmp_path, capsys):
    db = str(labelled_store)
    named = "no dataset named 'FriendBench' (the store has: Dyads)"
    for verb in (["list"], ["metrics"], ["export", "csv", str(tmp_path / "x.csv")], ["cues", "compute"]):
        code, _, err = _run(capsys, *verb, "--db", db, "--dataset", "FriendBench")
        assert code == 1 and len(err.strip().splitlines()) == 1 and named in err, (verb, err)
    shown = subprocess.run([sys.executable, str(ROOT / "main.py"), "--db", db, "--dataset", "FriendBench",
                            "--screenshot", str(tmp_path / "shot.png")], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=120)
    assert shown.returncode == 1 and not (tmp_path / "shot.png").exists()
    assert shown.stderr.strip().splitlines() == [f"thinslice: {named}"]


def _press_when_shown(text: str) -> None:
    """Press the button showing `text` on the dialog that opens next, as the user would."""
    def press() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, store_menu.HeldStoreDialog):
            QTimer.singleShot(50, press)
            return
        assert "open in" in dialog.text() and "--db" not in dialog.informativeText()
        next(b for b in dialog.buttons() if b.text().replace("&", "") == text).click()
    QTimer.singleShot(0, press)


def test_a_second_window_on_a_held_store_opens_a_read_only_snapshot_or_a_copy(qtbot, labelled_store, tmp_path,
                                                                            monkeypatch):
    window = _start_window(labelled_store)
    try:
        with pytest.raises(StoreLockedError) as held:
            Store.open(labelled_store, create=False)
        before = _rows(_copy_via_window(labelled_store, tmp_path))
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        _press_when_shown("Open read-only")
        store, note = gui.open_held_store(held.value, scratch)
        assert store.read_only and store_rows(store) == before
        shown = gui.window_for(store, QSettings(), note)
        qtbot.addWidget(shown)
        assert shown.windowTitle().endswith("(read-only)")
        assert "read-only snapshot of" in shown.status_message.text()
        qtbot.waitUntil(lambda: shown.table_model.rowCount() == 5, timeout=10000)
        shown.close()
        store.close()
        # the copy is saved where the user says and opened for writing
        monkeypatch.setattr(gui.QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "mine.duckdb"), ""))
        _press_when_shown("Open a copy…")
        copy, note = gui.open_held_store(held.value, scratch)
        assert not copy.read_only and copy.path == tmp_path / "mine.duckdb"
        assert store_rows(copy) == before and str(tmp_path / "mine.duckdb") in note
        AnnotationStore(copy).create(3, "bo", "vocal cues", "laugh", 0.0, 1.0)   # the copy is the user's to write
        copy.close()
        _press_when_shown("Quit")
        assert gui.open_held_store(held.value, scratch) is None
    finally:
        _stop(window)
    assert _rows(labelled_store) == before   # the held store is as it was


def _copy_via_window(path: Path, tmp_path: Path) -> Path:
    """The held store's rows as the window writes them (`thinslice backup`)."""
    out = tmp_path / "reference.duckdb"
    assert dispatch(["backup", str(out), "--db", str(path)]) == 0
    return out


def _rows(path: Path) -> dict:
    store = Store.open(path, read_only=True, create=False)
    try:
        return store_rows(store)
    finally:
        store.close()


def test_a_store_another_program_writes_is_refused_in_window_terms(qtbot, labelled_store, tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); sys.stdin.read()", str(labelled_store)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreLockedError) as held:
            Store.open(labelled_store, create=False)
        _press_when_shown("Open read-only")
        with pytest.raises(ThinsliceError) as refused:
            gui.open_held_store(held.value, tmp_path)
        said = str(refused.value)
        assert "close it there, then start Thinslice again" in said and "--db" not in said
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
