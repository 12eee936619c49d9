"""The generic importer: any table with a column map, detected table kinds, bad rows, and a million rows."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.generic import GenericImporter, preview, table_kind
from storage.importers.writer import write_plan
from storage.store import Store

TABLES = ["dataset", "stimulus", "media", "segment", "model", "run", "prediction", "judgment", "human_rating"]
PREDICTIONS = [
    {"clip": "c1", "system": "m-one", "pred": "familiar", "truth": "familiar", "secs": "1.5"},
    {"clip": "c2", "system": "m-one", "pred": "stranger", "truth": "familiar", "secs": "0.5"},
    {"clip": "c1", "system": "m-two", "pred": "familiar", "truth": "familiar", "secs": "2"},
]
MAP = {"stimulus": "clip", "model": "system", "answer": "pred", "label": "truth", "latency": "secs"}


def counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def write_table(path: Path, rows: list[dict]) -> Path:
    frame = pl.DataFrame(rows)
    suffix = path.suffix
    if suffix == ".csv":
        frame.write_csv(path)
    elif suffix == ".tsv":
        frame.write_csv(path, separator="\t")
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps({"rows": rows}), encoding="utf-8")
    else:
        frame.write_parquet(path)
    return path


def do_import(store: Store, path: Path, **options):
    plan = GenericImporter().plan(path, ImportOptions(**options))
    return plan, write_plan(store, plan)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json", ".parquet"])
def test_every_format_imports_predictions_through_a_map(tmp_path, suffix):
    path = write_table(tmp_path / f"preds{suffix}", PREDICTIONS)
    store = Store.open(tmp_path / "t.duckdb")
    plan, _ = do_import(store, path, dataset_name="d", mapping=MAP)
    assert plan.mapping == MAP
    rows = store.cursor().execute(
        "SELECT s.external_id, m.name, p.answer, p.correct, p.latency_s, s.ground_truth FROM prediction p"
        " JOIN stimulus s ON s.id = p.stimulus_id JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " ORDER BY 1, 2").fetchall()
    assert rows == [("c1", "m-one", "familiar", True, 1.5, "familiar"), ("c1", "m-two", "familiar", True, 2.0,
                    "familiar"), ("c2", "m-one", "stranger", False, 0.5, "familiar")]


def test_reimport_is_idempotent_and_a_second_model_adds_alone(tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    first = write_table(tmp_path / "a.csv", PREDICTIONS[:2])
    do_import(store, first, dataset_name="d", mapping=MAP)
    once = counts(store)
    do_import(store, first, dataset_name="d", mapping=MAP)
    assert counts(store) == once
    second = write_table(tmp_path / "b.csv", PREDICTIONS[2:])
    do_import(store, second, dataset_name="d", mapping=MAP, extra={"stimuli_exist": True})
    after = counts(store)
    assert after["prediction"] == once["prediction"] + 1
    assert after["stimulus"] == once["stimulus"] and after["model"] == 2


def test_the_mapped_fields_say_what_the_table_holds(tmp_path):
    assert table_kind({"stimulus": "a", "rater": "b"}) == "human_ratings"
    assert table_kind({"stimulus": "a", "model": "m", "score": "s"}) == "judgments"
    assert table_kind({"stimulus": "a", "model": "m", "answer": "x"}) == "predictions"
    assert table_kind({"stimulus": "a", "speaker": "s", "start": "t"}) == "segments"
    assert table_kind({"stimulus": "a", "text": "t"}) == "stimuli"
    store = Store.open(tmp_path / "t.duckdb")
    ratings = write_table(tmp_path / "r.csv", [
        {"item": "c1", "worker": "w1", "resp": "familiar", "ok": "yes", "rt": "2.5"},
        {"item": "c1", "worker": "w2", "resp": "stranger", "ok": "no", "rt": "3"}])
    do_import(store, ratings, dataset_name="d", mapping={"stimulus": "item", "rater": "worker", "answer": "resp",
                                                          "correct": "ok", "response_time": "rt"})
    assert store.cursor().execute("SELECT rater, correct, response_time_s FROM human_rating ORDER BY 1").fetchall() \
        == [("w1", True, 2.5), ("w2", False, 3.0)]
    judged = write_table(tmp_path / "j.jsonl", [
        {"item": "c1", "model": "m", "C1": 4, "why": "good"}, {"item": "c2", "model": "m", "C1": 2, "why": "meh"}])
    do_import(store, judged, dataset_name="j", mapping={"stimulus": "item", "model": "model", "score": "C1",
                                                         "rationale": "why"})
    assert store.cursor().execute("SELECT criterion, score, rationale FROM judgment ORDER BY score").fetchall() \
        == [("C1", 2.0, "meh"), ("C1", 4.0, "good")]


def test_without_a_map_columns_are_guessed_and_previewed(tmp_path):
    path = write_table(tmp_path / "p.csv", [
        {"stimulus_id": "c1", "model": "m", "answer": "a", "label": "a"},
        {"stimulus_id": "c2", "model": "m", "answer": "b", "label": "a"}])
    columns, rows, mapping = preview(path, n=1)
    assert columns == ["stimulus_id", "model", "answer", "label"]
    assert rows == [("c1", "m", "a", "a")]
    assert mapping["stimulus"] == "stimulus_id" and mapping["model"] == "model" and mapping["answer"] == "answer"
    store = Store.open(tmp_path / "t.duckdb")
    plan, _ = do_import(store, path, dataset_name="d")
    assert plan.frame("predictions").height == 2 and plan.frame("predictions")["correct"].to_list() == [True, False]


def test_a_stimulus_table_with_media_records_missing_files(tmp_path):
    (tmp_path / "clips").mkdir()
    (tmp_path / "clips" / "a.wav").write_bytes(b"RIFF")
    path = write_table(tmp_path / "s.csv", [{"id": "a", "file": "clips/a.wav", "gold": "x"},
                                            {"id": "b", "file": "clips/b.wav", "gold": "y"}])
    store = Store.open(tmp_path / "t.duckdb")
    plan, _ = do_import(store, path, dataset_name="d", mapping={"stimulus": "id", "media": "file", "label": "gold"})
    assert "1 media files missing" in plan.notes
    assert store.cursor().execute("SELECT role, path, present FROM media ORDER BY path").fetchall() == [
        ("audio", "clips/a.wav", True), ("audio", "clips/b.wav", False)]


@pytest.mark.parametrize("content, where, what", [
    (b"clip,system,pred,truth,secs\nc1,m,a,a,1\nc2,m,a,a,soon\n", "preds.csv:3", "a number"),
    (b"clip,system,pred,truth,secs\nc1,m,a,a,1\nc2,m,a,a,1,extra\n", "preds.csv:3", "fields"),
    (b"clip,system,pred,truth,secs\nc1,m,a,a,1\nc2,m,\xff,a,1\n", "preds.csv:3", "UTF-8"),
    (b"clip,system,pred,truth,secs\nc1,m,a,a,1\nc1,m,b,a,1\n", "preds.csv:3", "one prediction per key"),
    (b"clip,system,pred,truth,secs\nc1,,a,a,1\n", "preds.csv:2", "model name"),
    (b"", "preds.csv:1", "header"),
])
def test_malformed_rows_name_file_and_line_and_leave_the_store_alone(tmp_path, content, where, what):
    path = tmp_path / "preds.csv"
    path.write_bytes(content)
    store = Store.open(tmp_path / "t.duckdb")
    before = counts(store)
    with pytest.raises(ImportFailed) as failure:
        do_import(store, path, dataset_name="d", mapping=MAP)
    assert where in str(failure.value) and what in str(failure.value)
    assert counts(store) == before


def test_a_missing_column_is_named_with_the_columns_that_exist(tmp_path):
    path = write_table(tmp_path / "p.csv", PREDICTIONS)
    with pytest.raises(ImportFailed, match=r"no column 'nope'.*'clip', 'system'"):
        GenericImporter().plan(path, ImportOptions(mapping={**MAP, "answer": "nope"}))


def test_skip_bad_keeps_the_good_rows(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("clip,system,pred,truth,secs\nc1,m,a,a,1\nc2,m,a,a,later\n", encoding="utf-8")
    plan = GenericImporter().plan(path, ImportOptions(mapping=MAP, skip_bad=True))
    assert plan.frame("predictions")["stimulus"].to_list() == ["c1"]
    assert [p.line for p in plan.problems] == [3]


def test_bad_values_deep_in_a_large_table_are_named_by_their_own_lines(tmp_path):
    # a table this size is read in several pieces: each row must still be named by its line in the file
    rows = 300_000
    secs = [str(i % 9) for i in range(rows)]
    secs[123_456] = "later"     # the data's 123,457th row: line 123,458 (the header is line 1)
    secs[rows - 1] = "-1"       # the last line, 300,001
    path = tmp_path / "p.csv"
    pl.DataFrame({"clip": [f"c{i}" for i in range(rows)], "system": ["m"] * rows, "pred": ["a"] * rows,
                  "truth": ["a"] * rows, "secs": secs}).write_csv(path)
    assert pl.read_csv(path, infer_schema=False).get_column("secs").n_chunks() > 1   # what this test is about
    with pytest.raises(ImportFailed) as refused:
        GenericImporter().plan(path, ImportOptions(mapping=MAP))
    assert [(p.line, p.found) for p in refused.value.problems] == [(123_458, "'later'"), (300_001, "-1.0")]
    plan = GenericImporter().plan(path, ImportOptions(mapping=MAP, skip_bad=True))
    assert [p.line for p in plan.problems] == [123_458, 300_001]
    assert plan.frame("predictions").height == rows - 2


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    """One store for every example of a property test (opening one per example would dominate its time)."""
    store = Store.open(tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb")
    yield store
    store.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.text(max_size=6), st.text(max_size=6), st.sampled_from(["1", "x", "", "2.5", "-"])),
                min_size=1, max_size=6),
       st.binary(max_size=8))
def test_any_table_imports_or_fails_clearly(tmp_path, shared_store, rows, junk):
    path = tmp_path / "fuzz.csv"
    body = "clip,system,secs\n" + "".join(
        ",".join('"' + v.replace('"', '""') + '"' for v in row) + "\n" for row in rows)
    path.write_bytes(body.encode("utf-8") + junk)
    before = counts(shared_store)
    try:
        plan = GenericImporter().plan(path, ImportOptions(
            dataset_name="fuzz", mapping={"stimulus": "clip", "model": "system", "latency": "secs",
                                          "raw": "secs"}))
        write_plan(shared_store, plan)
    except ImportFailed as exc:
        assert "fuzz.csv" in str(exc) or "predictions" in str(exc)
        assert counts(shared_store) == before


def test_a_million_predictions_import(tmp_path):
    from benchmarks.bench_import import MAPPING, ROWS, write_predictions_csv

    path = tmp_path / "million.csv"
    write_predictions_csv(path)
    store = Store.open(tmp_path / "t.duckdb")
    plan, summary = do_import(store, path, dataset_name="big", mapping=MAPPING)
    assert summary.written["predictions"] == ROWS
    assert store.cursor().execute("SELECT count(*), count(correct) FROM prediction").fetchone() == (ROWS, ROWS)
