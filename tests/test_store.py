"""The store: round trip through the import writer, migrations from version 1, locks, all-or-nothing."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from fixtures_store import friendbench_like_plan, make_store
from storage.errors import ImportFailed, ImportCancelled, StoreLockedError
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.queries import StimulusFilter, info_summary, stimulus_detail, stimulus_ids
from storage.schema import LATEST_VERSION
from storage.store import Store

ROOT = Path(__file__).resolve().parents[1]


def counts(store: Store) -> dict:
    return info_summary(store.cursor())


def test_round_trip_keeps_every_field(tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4))
    store.close()
    store = Store.open(tmp_path / "s.duckdb")
    cur = store.cursor()
    ids = stimulus_ids(cur, StimulusFilter())
    detail = stimulus_detail(cur, int(ids[0]))
    assert detail.external_id == "clip-000" and detail.ground_truth == "familiar"
    assert detail.meta == {"vendor": "V0", "gender": "same"}
    assert [m.role for m in detail.media] == ["audio:A", "audio:B"]
    assert not any(m.present for m in detail.media)
    assert detail.segments[1].speaker == "B" and detail.segments[1].start_s == 2.0
    assert detail.segments[0].words[0].word == "turn"
    assert len(detail.predictions) == 9
    alpha_text = next(p for p in detail.predictions if p.model == "alpha" and p.modality == "text")
    assert alpha_text.correct == (alpha_text.answer == "familiar")
    assert alpha_text.judgments[0].criterion == "C1" and alpha_text.judgments[0].rationale == "reason for clip-000"
    assert sum(h.n for h in detail.human) == 15


def test_reimport_updates_in_place_and_new_model_adds_only_its_rows(tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    before = counts(store)["datasets"][0]["counts"]
    write_plan(store, friendbench_like_plan(tmp_path))
    assert counts(store)["datasets"][0]["counts"] == before
    write_plan(store, friendbench_like_plan(tmp_path, models=("delta",), n_raters=0))
    after = counts(store)["datasets"][0]["counts"]
    assert after["models"] == before["models"] + 1
    assert after["predictions"] == before["predictions"] + 12 * 3
    assert after["stimuli"] == before["stimuli"] and after["human_ratings"] == before["human_ratings"]


def test_failed_import_leaves_store_exactly_as_it_was(tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    before = counts(store)
    bad = friendbench_like_plan(tmp_path, models=("delta",))
    bad.add("predictions", [{"stimulus": "no-such-clip", "model": "delta", "modality": "text", "answer": "x"}])
    with pytest.raises(ImportFailed, match="no-such-clip"):
        write_plan(store, bad)
    assert counts(store) == before
    dup = friendbench_like_plan(tmp_path, models=("delta",))
    dup.add("predictions", dup.frame("predictions").head(1))
    with pytest.raises(ImportFailed, match="same"):
        write_plan(store, dup)
    assert counts(store) == before


def test_cancel_rolls_back(tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    before = counts(store)
    calls = []

    def cancel_after_predictions() -> bool:
        calls.append(1)
        return len(calls) > 6

    with pytest.raises(ImportCancelled):
        write_plan(store, friendbench_like_plan(tmp_path, models=("delta",), name="Other"),
                   should_cancel=cancel_after_predictions)
    assert counts(store) == before


def test_store_written_at_version_1_is_upgraded_without_loss(tmp_path):
    path = tmp_path / "old.duckdb"
    old = Store.open(path, migrate_to=1)
    cur = old.cursor()
    assert old.version == 1
    cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('Old', 'friendbench', '/data')")
    cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind, ground_truth) VALUES (1, 'c1', 'dyad', 'familiar')")
    cur.execute("INSERT INTO media (stimulus_id, role, path) VALUES (1, 'audio:A', 'a.wav')")
    cur.execute("INSERT INTO model (name) VALUES ('m')")
    cur.execute("INSERT INTO run (dataset_id, model_id, modality) VALUES (1, 1, 'text')")
    cur.execute("INSERT INTO prediction (run_id, stimulus_id, answer, correct) VALUES (1, 1, 'familiar', true)")
    cur.execute("INSERT INTO annotation (stimulus_id, annotator, label_set, label, start_s, end_s)"
                " VALUES (1, 'ana', 'vocal cues', 'laugh', 1.0, 2.0)")
    cur.execute("INSERT INTO label_set (name) VALUES ('vocal cues')")
    cur.execute("INSERT INTO label (label_set_id, name, colour) VALUES (1, 'laugh', '#ff0000')")
    old.close()

    store = Store.open(path)
    assert store.version == LATEST_VERSION
    cur = store.cursor()
    assert cur.execute("SELECT name, benchmark FROM dataset").fetchall() == [("Old", "friendbench")]
    assert cur.execute("SELECT answer, correct, tokens_in FROM prediction").fetchall() == [("familiar", True, None)]
    assert cur.execute("SELECT label, start_s, end_s FROM annotation").fetchall() == [("laugh", 1.0, 2.0)]
    assert cur.execute("SELECT path, checksum FROM media").fetchall() == [("a.wav", None)]
    assert cur.execute("SELECT count(*) FROM aggregate_result").fetchall() == [(0,)]
    assert cur.execute("SELECT name, colour, aliases FROM label").fetchall() == [("laugh", "#ff0000", None)]
    versions = [r[0] for r in cur.execute("SELECT version FROM schema_version ORDER BY version").fetchall()]
    assert versions == list(range(1, LATEST_VERSION + 1))
    store.close()


HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import duckdb
    from storage.store import Store
    if sys.argv[2] == "read-only":
        held = duckdb.connect(sys.argv[1], read_only=True)   # as a read-only DuckDB viewer holds a file
    else:
        held = Store.open(sys.argv[1])
    print("ready", flush=True)
    time.sleep(30)
""")


def _hold(path: Path, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER.format(root=str(ROOT)), str(path), mode],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.fixture
def held_store(tmp_path):
    path = tmp_path / "held.duckdb"
    make_store(path, friendbench_like_plan(tmp_path, n_stimuli=2)).close()
    proc = _hold(path, "write")
    yield path, proc.pid
    proc.kill()
    proc.wait()


def test_store_held_by_another_process_names_that_process(held_store):
    path, pid = held_store
    with pytest.raises(StoreLockedError) as err:
        Store.open(path)
    message = str(err.value)
    assert str(path) in message and f"pid {pid}" in message and "Close the store in that program" in message


def test_cli_on_a_locked_store_prints_the_message_not_a_traceback(held_store):
    path, pid = held_store
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "info", "--db", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"pid {pid}" in result.stderr and "another Thinslice" not in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_read_only_verbs_work_while_a_read_only_viewer_holds_the_store(tmp_path):
    path = tmp_path / "viewed.duckdb"
    make_store(path, friendbench_like_plan(tmp_path, n_stimuli=3)).close()
    proc = _hold(path, "read-only")
    try:
        for verb in (["info"], ["check"], ["metrics", "--json"], ["list"],
                     ["export", "csv", str(tmp_path / "labels.csv"), "--dataset", "Dyads"]):
            result = subprocess.run([sys.executable, str(ROOT / "main.py"), *verb, "--db", str(path)],
                                    capture_output=True, text=True, timeout=120)
            assert result.returncode == 0, (verb, result.stderr)
        assert json.loads(subprocess.run([sys.executable, str(ROOT / "main.py"), "info", "--db", str(path)],
                                         capture_output=True, text=True, timeout=60).stdout)["datasets"]
    finally:
        proc.kill()
        proc.wait()


def test_plan_conforms_frames_to_the_schema(tmp_path):
    plan = ImportPlan(DatasetInfo("x", "generic", tmp_path, "t"), "test")
    plan.add("stimuli", pl.DataFrame({"external_id": ["a"], "kind": ["generic"], "extra": [1]}))
    frame = plan.frame("stimuli")
    assert frame.columns == ["external_id", "kind", "ground_truth", "split", "title", "text", "meta", "sort_key"]
    assert frame["ground_truth"].to_list() == [None]
    assert json.loads(json.dumps(plan.counts()))["stimuli"] == 1


def test_recover_leaves_a_store_held_by_another_process_alone(held_store, capsys):
    from app.cli import dispatch
    from storage.store import wal_path

    path, pid = held_store
    log_before = wal_path(path).read_bytes() if wal_path(path).exists() else None
    assert dispatch(["recover", "--db", str(path)]) == 1
    assert f"pid {pid}" in capsys.readouterr().err
    assert (wal_path(path).read_bytes() if wal_path(path).exists() else None) == log_before
    assert not list(path.parent.glob("*.damaged-*"))
