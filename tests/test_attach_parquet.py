"""A results release kept as Parquet, attached in place: its predictions stay in the files and read as an import's.

The Parquet files are written by DuckDB's own writer (as a program writing a release would), the same rows also
as one file imported the normal way; the attached dataset's table, filters, detail, dashboard and the metrics
the command line prints must equal the imported one's, and the whole store before and after shows that attaching
wrote only the dataset, its stimuli, models, runs and the record of its files: not one prediction.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from app.attach_service import attach_dataset, attached_problems
from app.browser import Browser
from app.dashboard import dashboard_json
from app.import_service import run_import
from storage import queries
from storage.errors import ImportCancelled, ImportFailed
from storage.importers.common import ImportOptions
from storage.records import StimulusFilter
from storage.schema import LATEST_VERSION, MIGRATIONS, migrate
from storage.store import Store
from store_rows import changed_rows, store_rows

ROOT = Path(__file__).resolve().parents[1]
MAP = {"stimulus": "clip", "model": "model", "answer": "answer", "label": "label", "latency": "latency"}
# 3 models x 40 clips, in three parts; clip ids are numbers as text, answers yes/no, truth alternating;
# some model names padded with a space, which both roads trim
ROWS_SQL = ("SELECT CAST(i % 40 AS VARCHAR) AS clip, 'model-' || (i // 40) || repeat(' ', CAST(i % 9 = 0 AS INTEGER))"
            " AS model,"
            " CASE WHEN hash(i) % 3 = 0 THEN 'yes' ELSE 'no' END AS answer,"
            " CASE WHEN (i % 40) % 2 = 0 THEN 'yes' ELSE 'no' END AS label, round(0.5 + (i % 7) * 0.25, 2) AS latency"
            " FROM range(120) t(i)")


def write_parts(folder: Path, rows_sql: str = ROWS_SQL, parts: int = 3) -> Path:
    """The rows of `rows_sql` in `parts` Parquet files of the folder, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    total = con.execute(f"SELECT count(*) FROM ({rows_sql})").fetchall()[0][0]
    size = -(-total // parts)
    for k in range(parts):
        con.execute(f"COPY (SELECT * FROM ({rows_sql}) LIMIT {size} OFFSET {k * size}) TO"
                    f" '{folder / f'part-{k}.parquet'}' (FORMAT parquet)")
    con.close()
    return folder


def thinslice(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          timeout=300)


def table(store: Store, dataset_id: int, models: list[str]) -> list[tuple]:
    """The table's rows as the window shows them, in its order: id, truth, the compared models' outcomes, answers
    counted."""
    rows = Browser(store).stimulus_page(StimulusFilter(dataset_id=dataset_id), "id", False, 0, 100, models)
    return [(r.external_id, r.ground_truth, r.outcomes, r.n_predictions) for r in rows]


def detail(store: Store, dataset_id: int, external_id: str) -> list[tuple]:
    sid = store.cursor().execute("SELECT id FROM stimulus WHERE dataset_id = ? AND external_id = ?",
                                 [dataset_id, external_id]).fetchall()[0][0]
    full = Browser(store).stimulus_in_full(sid, 0)
    assert full is not None
    return [(p.model, p.answer, p.correct, p.latency_s) for p in full.detail.predictions]


def dashboard_rows(store: Store, name: str) -> list:
    return [t["rows"] for t in dashboard_json(store, name)["datasets"][0]["tables"]]


def dataset_id(store: Store, name: str) -> int:
    return int(store.cursor().execute("SELECT id FROM dataset WHERE name = ?", [name]).fetchall()[0][0])


@pytest.fixture
def release(tmp_path: Path) -> tuple[Path, Path]:
    """The release as a folder of parts, and the same rows as one file for the normal import."""
    parts = write_parts(tmp_path / "release")
    whole = tmp_path / "whole.parquet"
    duckdb.connect().execute(f"COPY ({ROWS_SQL}) TO '{whole}' (FORMAT parquet)")
    return parts, whole


def test_attached_folder_reads_as_the_same_rows_imported(tmp_path: Path, release: tuple[Path, Path]) -> None:
    parts, whole = release
    db = tmp_path / "store.duckdb"
    store = Store.open(db)
    run_import(store, "generic", whole, ImportOptions(dataset_name="Imported", mapping=MAP))
    before = store_rows(store)
    store.close()

    # through the command line, as a user attaches
    args = [arg for field, column in MAP.items() for arg in ("--map", f"{field}={column}")]
    done = thinslice("attach", str(parts), "--db", str(db), "--dataset", "Attached", *args)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["written"] == {"models": 0, "runs": 3, "stimuli": 40, "predictions_in_place": 120}
    assert "read 120 rows of 3 Parquet file(s) as predictions, kept in place" in done.stderr

    store = Store.open(db)
    after = store_rows(store)
    changes = changed_rows(before, after)
    # only the new dataset, its stimuli, runs and the record of its files; not one prediction is stored
    assert set(changes) == {"dataset", "stimulus", "run", "attachment", "attached_file"}
    assert all(not gone for gone, _came in changes.values())
    assert len(changes["stimulus"][1]) == 40 and len(changes["run"][1]) == 3
    assert json.loads(changes["attachment"][1][0][2])["model"] == {"type": "VARCHAR", "padded": True}
    assert sorted(Path(row[2]).name for row in changes["attached_file"][1]) == [
        "part-0.parquet", "part-1.parquet", "part-2.parquet"]
    assert store.notes == []

    imported, attached = dataset_id(store, "Imported"), dataset_id(store, "Attached")
    models = ["model-0", "model-1", "model-2"]
    assert table(store, attached, models) == table(store, imported, models)
    assert len(table(store, attached, models)) == 40
    assert detail(store, attached, "7") == detail(store, imported, "7")
    assert len(detail(store, attached, "7")) == 3
    # the filter bar's model outcome filter reads the attached answers as it reads stored ones
    for outcome in ("correct", "incorrect"):
        wanted = [StimulusFilter(dataset_id=d, model_outcomes=(("model-1", outcome),)) for d in (attached, imported)]
        found = [[r.external_id for r in Browser(store).stimulus_page(w, "id", False, 0, 100, [])] for w in wanted]
        assert found[0] == found[1] != []
        assert Browser(store).stimulus_table_start(wanted[0], "id", False, 100, [], None)[0] == len(found[0])
    assert dashboard_rows(store, "Attached") == dashboard_rows(store, "Imported")
    assert dashboard_rows(store, "Attached")[0][0]["n"] == 40
    counts = queries.info_summary(store.cursor())
    store.close()
    assert {d["name"]: d["counts"]["predictions"] for d in counts["datasets"]} == {"Imported": 120, "Attached": 120}

    # the metrics the command line exports are the imported dataset's, figure for figure
    exported = {name: json.loads(thinslice("metrics", "--db", str(db), "--dataset", name, "--json").stdout)
                for name in ("Attached", "Imported")}
    assert [d["tables"] for d in exported["Attached"]["datasets"]] == \
           [d["tables"] for d in exported["Imported"]["datasets"]]


def test_moved_and_changed_files_are_said_on_opening(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "release")
    db = tmp_path / "store.duckdb"
    store = Store.open(db)
    summary = attach_dataset(store, parts, "Attached", MAP)
    store.close()

    # a file rewritten in place (other size, later time)
    part = parts / "part-1.parquet"
    shorter = tmp_path / "shorter.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM read_parquet('{part}') LIMIT 10) TO '{shorter}' (FORMAT parquet)")
    os.replace(shorter, part)
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 10**9))
    store = Store.open(db)
    assert len(store.notes) == 1
    assert "'Attached'" in store.notes[0] and "1 of 3" in store.notes[0] and "changed" in store.notes[0]
    assert str(part) in store.notes[0]
    assert attached_problems(store, summary.dataset_id) == store.notes
    store.close()
    done = thinslice("info", "--db", str(db))
    assert done.returncode == 0 and "changed since attached" in done.stderr

    # the folder moved away: said once per dataset, its predictions left out, the store still reads, first by a
    # reader that may not write (its stored views still name the files), then opened for writing
    parts.rename(tmp_path / "elsewhere")
    done = thinslice("info", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "moved or gone" in done.stderr
    assert {d["name"]: d["counts"]["predictions"] for d in json.loads(done.stdout)["datasets"]} == {"Attached": 0}
    store = Store.open(db, read_only=True)
    assert store.read_only and "moved or gone" in store.notes[0]
    assert dashboard_rows(store, "Attached") == []
    store.close()
    store = Store.open(db)
    assert len(store.notes) == 1 and "moved or gone" in store.notes[0] and "left out" in store.notes[0]
    assert dashboard_rows(store, "Attached") == []
    assert dashboard_json(store, "Attached")["datasets"][0]["notes"][0] == store.notes[0]
    assert store.cursor().execute("SELECT count(*) FROM prediction_all").fetchall()[0][0] == 0
    store.close()

    # back where it was: read again, and nothing to say about the two files untouched
    (tmp_path / "elsewhere").rename(parts)
    store = Store.open(db)
    assert "changed" in store.notes[0] and "1 of 3" in store.notes[0]
    store.close()


def test_a_bad_row_refuses_naming_file_and_row_and_changes_nothing(tmp_path: Path) -> None:
    # part-1's rows are rows 41..80 of the whole; its 7th row (i = 46) has no model, its 9th a correctness of "maybe"
    rows = ("SELECT CAST(i % 40 AS VARCHAR) AS clip, CASE WHEN i = 46 THEN '' ELSE 'model-' || (i // 40) END AS model,"
            " 'yes' AS answer, CASE WHEN i = 48 THEN 'maybe' WHEN i % 2 = 0 THEN 'true' ELSE 'false' END AS ok"
            " FROM range(120) t(i)")
    parts = write_parts(tmp_path / "release", rows)
    store = Store.open(tmp_path / "store.duckdb")
    before = store_rows(store)
    with pytest.raises(ImportFailed) as refused:
        attach_dataset(store, parts, "Attached", {"stimulus": "clip", "model": "model", "answer": "answer",
                                                  "correct": "ok"})
    found = [(p.file, p.line, p.field, p.found, p.expected) for p in refused.value.problems]
    assert found == [("release/part-1.parquet", 7, "model", "<empty>", "a model name"),
                     ("release/part-1.parquet", 9, "ok", "'maybe'", "true/false, yes/no or 1/0")]
    assert "release/part-1.parquet:7: field 'model' found <empty>; expected a model name" in str(refused.value)
    assert store_rows(store) == before
    # a second answer of a model to one clip is named by its row too
    twice = write_parts(tmp_path / "twice", "SELECT CAST(i % 5 AS VARCHAR) AS clip, 'm' AS model, 'yes' AS answer,"
                                            " true AS ok FROM range(6) t(i)", parts=2)
    with pytest.raises(ImportFailed) as refused:
        attach_dataset(store, twice, "Attached", {"stimulus": "clip", "model": "model", "correct": "ok"})
    assert [(p.file, p.line, p.found) for p in refused.value.problems] == [
        ("twice/part-1.parquet", 3, "<a second row with stimulus='0', model='m'>")]
    assert store_rows(store) == before
    store.close()


def test_a_table_of_another_kind_or_a_taken_name_is_refused(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "release")
    store = Store.open(tmp_path / "store.duckdb")
    before = store_rows(store)
    with pytest.raises(ImportFailed, match="a predictions table"):
        attach_dataset(store, parts, "Attached", {"stimulus": "clip", "label": "label"})
    attach_dataset(store, parts, "Attached", MAP)
    middle = store_rows(store)
    assert middle != before
    with pytest.raises(ImportFailed, match="the name of a new dataset"):
        attach_dataset(store, parts, "Attached", MAP)
    assert store_rows(store) == middle
    store.close()


def test_a_file_over_256_mb_attaches(tmp_path: Path) -> None:
    # raw outputs that do not compress: a 256 MB limit for files a person writes must not stop it
    big = tmp_path / "big.parquet"
    duckdb.connect().execute(
        "COPY (SELECT CAST(i % 200000 AS VARCHAR) AS clip, 'model-' || (i // 200000) AS model,"
        " CASE WHEN i % 3 = 0 THEN 'yes' ELSE 'no' END AS answer, CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS"
        " label, md5(CAST(i AS VARCHAR)) || md5(CAST(-i AS VARCHAR)) || md5(CAST(i * 7 AS VARCHAR)) AS reply"
        f" FROM range(5200000) t(i)) TO '{big}' (FORMAT parquet, COMPRESSION zstd)")
    assert big.stat().st_size > 256 * 1024 * 1024
    store = Store.open(tmp_path / "store.duckdb")
    summary = attach_dataset(store, big, "Big", {**{k: v for k, v in MAP.items() if k != "latency"}, "raw": "reply"})
    assert summary.written["predictions_in_place"] == 5_200_000
    rows = dashboard_rows(store, "Big")[0]
    assert sum(r["n"] for r in rows) == 5_200_000 and len(rows) == 26
    store.close()


def test_a_store_of_the_version_before_opens_with_every_row(tmp_path: Path) -> None:
    # the version before the one that brought attached datasets
    before_attaching = next(i for i, step in enumerate(MIGRATIONS) if "CREATE TABLE attachment" in str(step))
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    migrate(con, before_attaching)
    con.close()
    store = Store.open(db, migrate_to=before_attaching)
    whole = tmp_path / "whole.parquet"
    duckdb.connect().execute(f"COPY ({ROWS_SQL}) TO '{whole}' (FORMAT parquet)")
    run_import(store, "generic", whole, ImportOptions(dataset_name="Imported", mapping=MAP))
    before = store_rows(store)
    store.close()
    store = Store.open(db)
    assert store.version == LATEST_VERSION
    after = store_rows(store)
    assert {t: after[t] for t in before if t != "schema_version"} == {t: before[t] for t in before
                                                                     if t != "schema_version"}
    assert after["attachment"] == [] and after["attached_file"] == []
    assert dashboard_rows(store, "Imported")[0][0]["n"] == 40
    store.close()


def test_a_dataset_attached_at_an_older_version_reads_after_the_upgrade(tmp_path: Path) -> None:
    attaching = next(i for i, step in enumerate(MIGRATIONS) if "CREATE TABLE attachment" in str(step)) + 1
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    migrate(con, attaching)
    con.close()
    store = Store.open(db, migrate_to=attaching)
    attach_dataset(store, write_parts(tmp_path / "release"), "Attached", MAP)
    before = store_rows(store)
    store.close()
    store = Store.open(db)
    after = store_rows(store)
    # the models' outcomes are kept of stored answers alone: the attached dataset's are in its files
    assert after.pop("model_outcome") == []
    assert {t: rows for t, rows in after.items() if t != "schema_version"} == {
        t: rows for t, rows in before.items() if t != "schema_version"}
    assert sorted((r["model"], r["n"]) for r in dashboard_rows(store, "Attached")[0]) == [
        ("model-0", 40), ("model-1", 40), ("model-2", 40)]
    store.close()


def test_cancelling_an_attach_while_it_writes_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    parts = write_parts(tmp_path / "release")
    store = Store.open(tmp_path / "store.duckdb")
    before = store_rows(store)
    said: list[str] = []
    with pytest.raises(ImportCancelled):
        # asked once per step: the fourth is after the dataset and its stimuli are written, inside the transaction
        attach_dataset(store, parts, "Attached", MAP, progress=lambda _f, m: said.append(m),
                       should_cancel=lambda: len(said) >= 3)
    assert said == ["columns read", "rows checked", "stimuli"]
    assert store_rows(store) == before
    assert store.cursor().execute("SELECT count(*) FROM prediction_all").fetchall()[0][0] == 0
    store.close()
