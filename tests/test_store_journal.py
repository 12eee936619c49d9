"""No acknowledged label edit is lost to a damaged write-ahead log without a word: one byte of the log is
flipped at every kind of place (the log's header, each entry's length, checksum and type, the rows it holds),
and every time the store either opens whole or says how many edits are missing, and `thinslice recover`
brings every acknowledged edit back."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from app.cli import dispatch
from fixtures_store import friendbench_like_plan, make_store
from storage.annotations import AnnotationStore
from storage.errors import StoreEditsMissing, StoreWalDamaged
from storage.journal import journal_path, read_records
from storage.store import Store, wal_path
from store_rows import changed_rows, store_rows

_ENTRY = struct.Struct("<QQ")   # each entry of DuckDB's log: payload length, checksum, then the payload


def _edit(store: Store) -> None:
    """Acknowledged edits through the one write path: labels made, moved, renamed, deleted and restored."""
    notes = AnnotationStore(store)
    stimulus = store.cursor().execute("SELECT min(id) FROM stimulus").fetchall()[0][0]
    made = [notes.create(stimulus, "ana", "vocal cues", f"laugh {i}", i * 1.0, i + 0.5, note=f"n{i}")
            for i in range(12)]
    made += notes.create_many(stimulus, "bo", [{"label_set": "vocal cues", "label": "sigh", "start_s": 20.0 + i,
                                                "end_s": 20.5 + i} for i in range(5)])
    for item in made[:8]:
        notes.update(item.id, "ana" if item.annotator == "ana" else "bo", end_s=item.end_s + 0.25)
    notes.update(made[2].id, "ana", label="sigh", value="speaker A")
    notes.delete_many([made[3].id, made[4].id], "ana")
    notes.restore(made[4].id, "ana")


@pytest.fixture(scope="module")
def crashed(tmp_path_factory) -> tuple[Path, dict]:
    """The files of a store as a crash leaves them (edits only in its log and its journal), and the whole
    store as it should be."""
    folder = tmp_path_factory.mktemp("journal")
    store = make_store(folder / "live.duckdb", friendbench_like_plan(folder, n_stimuli=3))
    store.cursor().execute("SET checkpoint_threshold = '1GB'")   # keep every edit in the log
    store.checkpoint()
    _edit(store)
    kept = folder / "crashed"
    kept.mkdir()
    for name in (store.path, wal_path(store.path), journal_path(store.path)):
        shutil.copyfile(name, kept / name.name)
    store.close()
    intact = _copy(kept / "live.duckdb", folder / "intact")
    whole = Store.open(intact, create=False)
    expected = store_rows(whole)
    whole.close()
    assert len(expected["annotation_event"]) == 12 + 5 + 8 + 1 + 2 + 1
    return kept / "live.duckdb", expected


def _copy(store: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    for name in (store, wal_path(store), journal_path(store)):
        if name.exists():
            shutil.copyfile(name, folder / name.name)
    return folder / store.name


def _positions(log: bytes) -> dict[str, list[int]]:
    """Byte positions of DuckDB's log by what they hold: the header entry, then each entry's length,
    checksum, type (the first field of its payload) and the rest of its payload."""
    header = log.index(b"\xff\xff") + 2   # the header is one serialized object, ended by 0xFFFF
    found: dict[str, list[int]] = {"header": list(range(0, header, 5)), "length": [], "checksum": [], "type": [],
                                   "payload": []}
    at = header
    while at + _ENTRY.size <= len(log):
        length, _ = _ENTRY.unpack_from(log, at)
        found["length"].append(at)
        found["checksum"].append(at + 8 + 3)
        found["type"].append(at + 16 + 2)   # field id 100 (two bytes), then the entry type
        if length > 8:
            found["payload"].append(at + 16 + length // 2)
        at += _ENTRY.size + length
    assert at == len(log)
    return found


def _chosen(positions: dict[str, list[int]]) -> list[tuple[str, int]]:
    """At least four positions of each kind, spread over the log (its first and last entries included)."""
    chosen = []
    for kind, places in positions.items():
        step = max(1, len(places) // 5)
        picks = sorted(set(places[::step]) | {places[0], places[-1]})
        chosen += [(kind, p) for p in picks]
    return chosen


def test_every_flipped_byte_of_the_log_is_recovered_or_reported_with_the_count(crashed, tmp_path, capsys):
    store_file, expected = crashed
    log = wal_path(store_file).read_bytes()
    cases = _chosen(_positions(log))
    assert len(cases) >= 20 and {k for k, _ in cases} == {"header", "length", "checksum", "type", "payload"}
    outcomes: dict[str, list[tuple[str, int]]] = {}
    for n, (kind, position) in enumerate(cases):
        copy = _copy(store_file, tmp_path / f"case-{n}")
        damaged = bytearray(log)
        damaged[position] ^= 0x01
        wal_path(copy).write_bytes(damaged)
        try:
            opened = Store.open(copy, create=False)
        except StoreWalDamaged:
            outcome = "log damaged"
        except StoreEditsMissing as missing:
            outcome = "edits missing"
            assert missing.count > 0 and f"{missing.count} acknowledged label edit" in str(missing)
            assert "thinslice recover" in str(missing) and "\n" not in str(missing)
        else:
            outcome = "whole"
            assert not changed_rows(expected, store_rows(opened)), (kind, position)   # never a silent loss
            opened.close()
        outcomes.setdefault(outcome, []).append((kind, position))
        assert dispatch(["recover", "--db", str(copy)]) == 0, capsys.readouterr().err
        said = capsys.readouterr().out
        assert outcome == "whole" or "put back" in said, (kind, position, said)
        back = Store.open(copy, create=False)
        assert not changed_rows(expected, store_rows(back)), (kind, position, outcome)
        # the id sequences are past what was put back: the next edit gets a new id
        notes = AnnotationStore(back)
        fresh = notes.create(1, "ana", "vocal cues", "after", 50.0, 51.0)
        assert fresh.id > max(r[0] for r in expected["annotation"])
        back.close()
    # DuckDB took some of these flips for the end of its log and opened without a word: those are the edits
    # the journal alone can name
    assert outcomes.get("edits missing"), outcomes


def test_the_cli_says_in_one_line_how_many_edits_are_missing(crashed, tmp_path, capsys):
    store_file, expected = crashed
    copy = _copy(store_file, tmp_path / "cut")
    log = wal_path(copy).read_bytes()
    cut = _positions(log)["length"][len(_positions(log)["length"]) // 2]
    wal_path(copy).write_bytes(log[:cut])   # the log ends early, as a damaged length makes DuckDB read it
    for verb in (["info"], ["check"], ["export", "csv", str(tmp_path / "out.csv")]):
        assert dispatch([*verb, "--db", str(copy)]) == 1, verb
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "acknowledged label edits are missing" in err, err
        assert f"thinslice recover --db {copy}" in err
    assert dispatch(["recover", "--db", str(copy)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"Recovered {copy}: put back ") and "from the edit journal" in said
    back = Store.open(copy, create=False)
    assert not changed_rows(expected, store_rows(back))
    back.close()
    assert read_records(journal_path(copy)) == []
    assert dispatch(["recover", "--db", str(copy)]) == 0
    assert "nothing needed recovering" in capsys.readouterr().out


def test_the_journal_holds_edits_only_until_a_checkpoint(tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2))
    store.cursor().execute("SET checkpoint_threshold = '1GB'")
    _edit(store)
    records = read_records(journal_path(store.path))
    events = sum(len(r["annotation_event"]["rows"]) for r in records)
    assert events == 29 and len(records) == 12 + 1 + 8 + 1 + 1 + 1
    store.checkpoint()
    assert read_records(journal_path(store.path)) == []
    AnnotationStore(store).create(1, "ana", "vocal cues", "late", 1.0, 2.0)
    assert len(read_records(journal_path(store.path))) == 1
    store.close()   # closing checkpoints: nothing is left to keep twice
    assert read_records(journal_path(store.path)) == []


def test_a_record_cut_short_by_a_crash_was_never_acknowledged_and_is_ignored(crashed, tmp_path):
    store_file, expected = crashed
    copy = _copy(store_file, tmp_path / "torn")
    journal = journal_path(copy)
    whole = len(read_records(journal))
    journal.write_bytes(journal.read_bytes() + struct.pack("<II", 500, 0) + b'{"annotation_event"')
    assert len(read_records(journal)) == whole
    opened = Store.open(copy, create=False)
    assert not changed_rows(expected, store_rows(opened))
    opened.close()
