"""A store that says when it is damaged: backup during a checkpoint, a full check, a damaged write-ahead log
and `thinslice recover`, a mistyped --db, and input files that are not regular files."""
from __future__ import annotations

import os
import shutil
import threading

import pytest

from app.cli import dispatch
from fixtures_store import friendbench_like_plan, make_store
from storage.backup import check_store
from storage.errors import FileRefused, StoreWalDamaged
from storage.files import open_regular, read_regular_text
from storage.store import Store, wal_path


def _history(store: Store, rows: int) -> None:
    store.cursor().execute(
        "INSERT INTO annotation_event (annotation_id, annotator, action, after)"
        " SELECT i, 'ana', 'update', to_json({'label': 'cue ' || i::VARCHAR}) FROM range(?) t(i)", [rows])


def test_backup_while_checkpoints_run_gives_a_copy_that_check_passes(tmp_path, capsys):
    db = tmp_path / "busy.duckdb"
    store = make_store(db, friendbench_like_plan(tmp_path, n_stimuli=6))
    stop = threading.Event()
    written = []

    def busy() -> None:  # another part of the app writing history and checkpointing all the while
        while not stop.is_set():
            _history(store, 2000)
            written.append(2000)
            store.checkpoint()

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        copies = []
        for n in range(3):
            out = tmp_path / f"copy-{n}.duckdb"
            assert dispatch(["backup", str(out), "--db", str(db)]) == 0, capsys.readouterr().err
            copies.append(out)
    finally:
        stop.set()
        worker.join()
    assert written  # the checkpoints really ran during the backups
    store.close()
    for out in copies:
        assert not wal_path(out).exists()
        assert dispatch(["check", "--db", str(out)]) == 0, capsys.readouterr().err
        copy = Store.open(out, create=False)
        events = copy.cursor().execute("SELECT count(*) FROM annotation_event").fetchall()[0][0]
        assert events % 2000 == 0   # whole transactions only: a consistent copy, never a torn one
        # the copy's sequences are past its rows, so the next write there gets a new id
        last, following = copy.cursor().execute(
            "SELECT max(id), nextval('seq_annotation_event') FROM annotation_event").fetchall()[0]
        assert last is None or following > last
        copy.close()
    assert '"ok": true' in capsys.readouterr().out


def test_backup_never_overwrites(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    make_store(db, friendbench_like_plan(tmp_path, n_stimuli=2)).close()
    out = tmp_path / "taken.duckdb"
    out.write_text("precious")
    assert dispatch(["backup", str(out), "--db", str(db)]) == 1
    assert "never overwrites" in capsys.readouterr().err and out.read_text() == "precious"


def test_check_names_a_damaged_table(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    store = Store.open(db)
    _history(store, 150_000)
    store.checkpoint()
    store.close()
    data = bytearray(db.read_bytes())
    data[len(data) // 2] ^= 0xFF          # one flipped byte in the history's blocks
    db.write_bytes(data)
    assert dispatch(["check", "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip()
    assert "table 'annotation_event' cannot be read" in err and len(err.splitlines()) == 1


def _damaged_wal_store(tmp_path):
    """A store whose last 40 labels are only in its write-ahead log, with one byte of the log flipped."""
    live = tmp_path / "live.duckdb"
    store = make_store(live, friendbench_like_plan(tmp_path, n_stimuli=3))
    cur = store.cursor()
    cur.execute("SET checkpoint_threshold = '1GB'")   # keep the next writes in the log
    store.checkpoint()
    for i in range(40):
        cur.execute("INSERT INTO label_set (name) VALUES (?)", [f"set {i}"])
    crashed = tmp_path / "crashed.duckdb"
    shutil.copyfile(live, crashed)                    # as the files are on disk at a crash
    shutil.copyfile(wal_path(live), wal_path(crashed))
    store.close()
    log = bytearray(wal_path(crashed).read_bytes())
    log[len(log) * 2 // 3] ^= 0x01
    wal_path(crashed).write_bytes(log)
    return crashed


def test_a_flipped_byte_in_the_log_offers_recover_which_keeps_what_came_before(tmp_path, capsys):
    crashed = _damaged_wal_store(tmp_path)
    with pytest.raises(StoreWalDamaged) as damaged:
        Store.open(crashed)
    assert f"thinslice recover --db {crashed}" in str(damaged.value)
    assert dispatch(["info", "--db", str(crashed)]) == 1
    assert "thinslice recover" in capsys.readouterr().err
    assert dispatch(["recover", "--db", str(crashed)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"Recovered {crashed}") and "dropped" in said and "damaged log is kept at" in said
    assert list(tmp_path.glob("crashed.duckdb.wal.damaged-*"))
    store = Store.open(crashed, create=False)
    sets = [r[0] for r in store.cursor().execute("SELECT name FROM label_set ORDER BY id").fetchall()]
    assert 0 < len(sets) < 40 and sets == [f"set {i}" for i in range(len(sets))]   # a prefix: what came before
    assert store.cursor().execute("SELECT count(*) FROM stimulus").fetchall() == [(3,)]
    check_store(store)
    store.close()


def test_recover_on_a_sound_store_changes_nothing(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    make_store(db, friendbench_like_plan(tmp_path, n_stimuli=2)).close()
    assert dispatch(["recover", "--db", str(db)]) == 0
    assert "nothing needed recovering" in capsys.readouterr().out


def test_a_missing_db_path_needs_create(tmp_path, capsys):
    typo = tmp_path / "stor.duckdb"
    for verb in (["info"], ["check"], ["sample"], ["export", "csv", str(tmp_path / "x.csv")],
                 ["metrics", "--json"]):
        assert dispatch([*verb, "--db", str(typo)]) == 2, verb
        err = capsys.readouterr().err.strip()
        assert f"No store at {typo}" in err and "--create" in err and len(err.splitlines()) == 1
    assert not typo.exists()
    assert dispatch(["info", "--db", str(typo), "--create"]) == 0
    assert typo.exists() and '"datasets"' in capsys.readouterr().out


def test_the_default_store_is_still_made_on_first_start(tmp_path, capsys):
    home = tmp_path / "thinslice-home"   # THINSLICE_HOME for this test (see conftest)
    assert not (home / "thinslice.duckdb").exists()
    assert dispatch(["info"]) == 0
    assert (home / "thinslice.duckdb").exists() and "FriendBench (sample)" in capsys.readouterr().out


def test_a_link_to_dev_zero_is_refused_in_one_line(tmp_path):
    link = tmp_path / "labels.jsonl"
    os.symlink("/dev/zero", link)
    with pytest.raises(FileRefused) as refused:
        read_regular_text(link)
    message = str(refused.value)
    assert str(link) in message and "a device" in message and "/dev/zero" in message and "\n" not in message


def test_regular_files_are_read_within_their_limit(tmp_path):
    small = tmp_path / "labels.csv"
    small.write_text("stimulus,label\nclip-1,laugh\n")
    assert read_regular_text(small, max_bytes=1024).splitlines()[1] == "clip-1,laugh"
    with pytest.raises(FileRefused, match="the limit is 16 bytes"):
        read_regular_text(small, max_bytes=16)
    with pytest.raises(FileRefused, match="a folder"):
        read_regular_text(tmp_path)
    with pytest.raises(FileRefused, match="does not exist"):
        read_regular_text(tmp_path / "gone.jsonl")
    with open_regular(small, max_bytes=1024) as handle:
        assert [line for line in handle][0] == b"stimulus,label\n"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused, match="a pipe"):
        open_regular(fifo)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(FileRefused, match="byte 3 is not utf-8"):
        read_regular_text(latin)


def test_a_verb_that_meets_a_damaged_block_says_so_in_one_line(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    store = make_store(db, friendbench_like_plan(tmp_path, n_stimuli=2))
    store.cursor().execute(
        "INSERT INTO annotation (stimulus_id, annotator, label_set, label, start_s, end_s)"
        " SELECT (SELECT min(id) FROM stimulus), 'ana', 'vocal cues', 'laugh ' || i::VARCHAR, i, i + 0.5"
        " FROM range(150000) t(i)")
    store.checkpoint()
    blocks = [r[0] for r in store.cursor().execute(
        "SELECT block_id FROM pragma_storage_info('annotation') WHERE column_name = 'label' AND block_id >= 0"
    ).fetchall()]
    store.close()
    data = bytearray(db.read_bytes())
    # one flipped byte inside a block of the labels' text (after the file's three 4 KB headers, 256 KB blocks)
    data[3 * 4096 + blocks[len(blocks) // 2] * 262144 + 8 + 100] ^= 0xFF
    db.write_bytes(data)
    code = dispatch(["export", "csv", str(tmp_path / "labels.csv"), "--db", str(db), "--dataset", "Dyads"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1
    assert "could not be read" in err and "thinslice check" in err


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB filesystem of its own (tmpfs), to fill up; skipped where one cannot be mounted."""
    import subprocess

    folder = tmp_path / "disk"
    folder.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small filesystem here")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_big_import_on_a_full_disk_says_the_disk_is_full(tmp_path, small_disk, capsys):
    from store_rows import store_rows

    db = small_disk / "s.duckdb"
    make_store(db, friendbench_like_plan(tmp_path, n_stimuli=2)).close()
    before = Store.open(db, create=False)
    rows = store_rows(before)
    before.close()
    big = tmp_path / "answers.csv"   # about 8 MB of answers for a 4 MB disk
    big.write_text("stimulus_id,model,answer,truth\n"
                   + "".join(f"s{i:07d},m{i % 7},{'word ' * 8}{i},yes\n" for i in range(150_000)))
    assert dispatch(["import", "generic", str(big), "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("thinslice: The disk is full: ") and "No space left on device" in err, err
    assert str(small_disk) in err and "damaged" not in err and "could not be read" not in err
    import subprocess
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)   # room again
    after = Store.open(db, create=False)
    assert store_rows(after) == rows   # the refused import left nothing behind
    after.close()
