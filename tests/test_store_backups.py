"""Backups at any time: `thinslice backup` and `check` handed to the process that holds the store, over a
socket only its user can open; scheduled backups, each checked, keeping the last N."""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app.cli import dispatch
from app.settings import Settings, as_stored, upgrade
from app.store_backups import backup_due, channel_handlers, default_folder, scheduled_backup, scheduled_backups
from app.store_channel import StoreChannel, ask_holder, channel_path
from fixtures_store import friendbench_like_plan, make_store
from storage.annotations import AnnotationStore
from storage.store import Store
from store_rows import store_rows

ROOT = Path(__file__).resolve().parents[1]

# A plain process that holds the store, writes labels all the while, and serves the window's channel.
HOLDER = """
import sys, threading, time
from pathlib import Path
from app.store_backups import channel_handlers
from app.store_channel import StoreChannel
from storage.annotations import AnnotationStore
from storage.store import Store
store = Store.open(Path(sys.argv[1]), create=False)
told = []
channel = StoreChannel(store.path, channel_handlers(store, told.append))
notes = AnnotationStore(store)
n = 0
while n == 0 or not Path(sys.argv[2]).exists():   # a first label before "ready": every copy holds some
    notes.create(1, "ana", "vocal cues", f"busy {n}", n * 0.1, n * 0.1 + 0.05)
    n += 1
    if n == 1:
        print("ready", flush=True)
channel.close()
store.close()
print(len(told), told[-1] if told else "", flush=True)
"""


def _store(tmp_path: Path, name: str = "s.duckdb") -> Store:
    return make_store(tmp_path / name, friendbench_like_plan(tmp_path, n_stimuli=3))


def test_thinslice_backup_and_check_are_handed_to_the_process_that_holds_the_store(tmp_path, capsys):
    store = _store(tmp_path)
    store.close()
    stop = tmp_path / "stop"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store.path), str(stop)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "ready"
        outs = [tmp_path / f"copy-{n}.duckdb" for n in range(3)]
        for out in outs:   # while the holder writes labels
            assert dispatch(["backup", str(out), "--db", str(store.path)]) == 0, capsys.readouterr().err
            said = json.loads(capsys.readouterr().out)
            assert said["backup"] == str(out) and said["tables"] > 10 and said["rows"] > 0
        assert dispatch(["check", "--db", str(store.path)]) == 0
        assert json.loads(capsys.readouterr().out)["ok"] is True
        taken = tmp_path / "taken.duckdb"
        taken.write_text("precious")
        assert dispatch(["backup", str(taken), "--db", str(store.path)]) == 1
        err = capsys.readouterr().err.strip()
        assert "never overwrites" in err and len(err.splitlines()) == 1 and taken.read_text() == "precious"
    finally:
        stop.write_text("")
        said, _ = holder.communicate(timeout=60)
    assert holder.returncode == 0
    assert said.startswith("4 Checked")   # the holder heard of each request (three backups, one check)
    labels = []
    for out in outs:
        copy = Store.open(out, create=False)
        labels.append(copy.cursor().execute("SELECT count(*) FROM annotation").fetchall()[0][0])
        assert copy.cursor().execute("SELECT count(*) FROM annotation_event").fetchall()[0][0] == labels[-1]
        copy.close()
        assert dispatch(["check", "--db", str(out)]) == 0
    assert labels == sorted(labels) and labels[-1] > 0   # copies of a store that kept changing, each whole


def test_with_no_window_the_lock_error_names_the_holder(tmp_path, capsys):
    store = _store(tmp_path)
    store.close()
    script = ("import sys, time; from storage.store import Store; s = Store.open(sys.argv[1]);"
              " print('ready', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", script, str(store.path)], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert dispatch(["backup", str(tmp_path / "copy.duckdb"), "--db", str(store.path)]) == 1
        err = capsys.readouterr().err.strip()
        assert f"(pid {holder.pid})" in err and len(err.splitlines()) == 1
        assert not (tmp_path / "copy.duckdb").exists()
    finally:
        holder.kill()
        holder.wait()


def test_the_channel_is_the_users_own_and_refuses_what_it_does_not_know(tmp_path):
    store = _store(tmp_path)
    heard: list[str] = []
    channel = StoreChannel(store.path, channel_handlers(store, heard.append))
    try:
        path = channel_path(store.path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700 and path.parent.stat().st_uid == os.getuid()
        with pytest.raises(Exception, match="does not take 'drop' requests"):
            ask_holder(store.path, "drop", {})
        with pytest.raises(Exception, match="absolute path"):
            ask_holder(store.path, "backup", {"out": "relative.duckdb"})
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
            raw.connect(str(path))
            raw.sendall(b"not json\n")
            assert json.loads(raw.makefile("rb").readline()) == {"ok": False, "error": "the request was not understood"}
        with pytest.raises(Exception, match="already takes requests"):
            StoreChannel(store.path, {})
    finally:
        channel.close()
    assert not channel_path(store.path).exists() and heard == []
    assert ask_holder(store.path, "backup", {"out": str(tmp_path / "x.duckdb")}) is None
    # a socket left by a process that ended without closing it is taken over
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left:
        left.bind(str(channel_path(store.path)))
    assert ask_holder(store.path, "check", {}) is None
    again = StoreChannel(store.path, channel_handlers(store, heard.append))
    try:
        assert ask_holder(store.path, "check", {})["ok"] is True and len(heard) == 1
    finally:
        again.close()
        store.close()


def test_scheduled_backups_are_checked_and_only_the_last_n_kept(tmp_path):
    store = _store(tmp_path)
    notes = AnnotationStore(store)
    folder = default_folder(store.path)
    assert folder == tmp_path / "s-backups"
    start = datetime(2026, 3, 1, 9, 0, 0)
    assert not backup_due(store.path, folder, 0.0, start)     # no schedule: never
    assert backup_due(store.path, folder, 6.0, start)          # a schedule and no backup yet
    removed = []
    for hour in range(0, 30, 6):
        now = start + timedelta(hours=hour)
        notes.create(1, "ana", "vocal cues", f"at {hour}", hour, hour + 1.0)
        report = scheduled_backup(store, folder, 3, now)
        removed += report.removed
        assert report.path.name == f"s-{now:%Y%m%d-%H%M%S}.duckdb" and "checked" in report.describe()
        assert not backup_due(store.path, folder, 6.0, now + timedelta(hours=5))
        assert backup_due(store.path, folder, 6.0, now + timedelta(hours=6))
    kept = scheduled_backups(store.path, folder)
    assert [when.hour for when, _ in kept] == [21, 3, 9] and len(removed) == 2
    assert all(not p.exists() for p in removed)
    expected = store_rows(store)
    newest = Store.open(kept[-1][1], create=False)
    assert store_rows(newest)["annotation"] == expected["annotation"]
    newest.close()
    (folder / "notes.txt").write_text("mine")          # other files in the folder are never touched
    scheduled_backup(store, folder, 1, start + timedelta(days=3))
    assert [p.name for _, p in scheduled_backups(store.path, folder)] == ["s-20260304-090000.duckdb"]
    assert (folder / "notes.txt").read_text() == "mine"
    store.close()


def test_the_schedule_is_typed_settings_that_fall_back_when_malformed():
    settings = Settings(backup_every_hours=12.5, backup_keep=4, backup_folder="/backups")
    assert upgrade(as_stored(settings)) == settings
    # a settings file gives numbers back as text
    text = {k: str(v) for k, v in as_stored(settings).items() if k.startswith("backup_")}
    assert upgrade(text) == settings
    broken = upgrade({"backup_every_hours": "often", "backup_keep": "-3", "backup_folder": 7})
    assert (broken.backup_every_hours, broken.backup_keep, broken.backup_folder) == (0.0, 1, "")
    assert upgrade({"backup_every_hours": "nan"}).backup_every_hours == 0.0
    assert upgrade({}).backup_keep == 7
