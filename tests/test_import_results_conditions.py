"""A results table's values and conditions arrive as written: padded values are trimmed, every answer lands in
the run of its own model and condition whether the table has one condition or several, and importing the
same table again changes nothing (every table, every row, ids included) while a changed answer changes only
its own row. The expected rows are read from the file with Python's csv module, independently of the
importer's polars reader."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from app.import_service import run_import
from storage.importers.common import ImportOptions
from storage.store import Store
from store_rows import changed_rows, store_rows

MAP = {"stimulus": "clip", "model": "system", "modality": "condition", "answer": "pred", "label": "truth",
       "latency": "seconds"}
HEADER = ["clip", "system", "condition", "pred", "truth", "seconds"]


def _rows(conditions: tuple[str, ...]) -> list[list[str]]:
    """Two models answering six clips under each condition; some values padded as a hand-edited or
    spreadsheet-exported table pads them (spaces, a tab, a no-break space)."""
    rows = []
    for clip in range(6):
        for model in ("alpha", "beta"):
            for condition in conditions:
                answer = ("familiar", "stranger")[(clip + len(model) + len(condition)) % 2]
                rows.append([f"clip-{clip}", model, condition, answer, ("familiar", "stranger")[clip % 2],
                             f"{0.25 * (clip + 1):.2f}"])
    first_beta = next(i for i, row in enumerate(rows) if row[1] == "beta")
    rows[first_beta][1] = "  beta"          # a padded model
    rows[0][3] = rows[0][3] + "\t"          # a padded answer
    rows[-2][0] = "\u00a0" + rows[-2][0]    # a padded id
    rows[1][5] = f" {rows[1][5]} "          # a padded number
    return rows


def _write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _expected(path: Path) -> set[tuple]:
    """(clip, model, condition, answer, correct, latency) for every row, read by the csv module."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [[row[c].strip() for c in HEADER] for row in csv.DictReader(handle)]
    return {(clip, model, condition, answer, answer.lower() == truth.lower(), float(seconds))
            for clip, model, condition, answer, truth, seconds in rows}


def _stored(store: Store) -> set[tuple]:
    return set(store.cursor().execute(
        "SELECT s.external_id, m.name, r.modality, p.answer, p.correct, p.latency_s FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
    ).fetchall())


def _import(store: Store, path: Path):
    return run_import(store, "generic", path, ImportOptions(dataset_name="results", mapping=dict(MAP)))


@pytest.mark.parametrize("conditions", [("text",), ("text", "audio", "video")])
def test_every_answer_lands_in_the_run_of_its_model_and_condition_with_values_trimmed(tmp_path, conditions):
    path = _write(tmp_path / "results.csv", _rows(conditions))
    store = Store.open(tmp_path / "s.duckdb")
    try:
        summary = _import(store, path)
        expected = _expected(path)
        assert _stored(store) == expected
        assert summary.written["predictions"] == len(expected) == 12 * len(conditions)
        runs = store.cursor().execute("SELECT m.name, r.modality, r.prompt_setting, r.vision_mode, r.context"
                                      " FROM run r JOIN model m ON m.id = r.model_id ORDER BY 1, 2").fetchall()
        assert runs == sorted((model, condition, "", "", "") for model in ("alpha", "beta")
                              for condition in conditions)
        assert summary.written["runs"] == len(runs) and summary.written["models"] == 2
        assert store.cursor().execute("SELECT count(*), count(DISTINCT external_id) FROM stimulus").fetchone() == (6, 6)
    finally:
        store.close()


@pytest.mark.parametrize("conditions", [("text",), ("text", "audio")])
def test_the_same_table_again_changes_nothing_and_a_changed_answer_only_its_row(tmp_path, conditions):
    rows = _rows(conditions)
    path = _write(tmp_path / "results.csv", rows)
    store = Store.open(tmp_path / "s.duckdb")
    try:
        _import(store, path)
        before = store_rows(store)
        again = _import(store, path)
        assert store_rows(store) == before
        assert again.effect.sentence() == "no results added to 6 existing stimuli, 0 new stimuli, 0 stimuli changed"
        rows[-1][3] = "stranger" if rows[-1][3] == "familiar" else "familiar"
        changed = _import(store, _write(tmp_path / "results.csv", rows))
        assert changed.effect.results_replaced == {"predictions": 1}
        diff = changed_rows(before, store_rows(store))
        assert list(diff) == ["prediction"]   # (the model's one run: its answers are its outcomes)
        (gone,), (came,) = diff["prediction"]
        # the same prediction (id, run, stimulus) with the new answer and its correctness
        assert gone[:3] == came[:3] and came[4] == rows[-1][3] and came[5] == (rows[-1][3] == rows[-1][4])
        assert _stored(store) == _expected(path)
    finally:
        store.close()


def test_a_column_with_the_same_value_at_both_ends_keeps_every_other_value_between(tmp_path):
    """A column whose first and last rows agree is still read row by row: a condition and an answer that differ,
    or are missing, between them land as written."""
    rows = [["clip-0", "alpha", "text", "familiar", "familiar", "0.50"],
            ["clip-1", "alpha", "audio", "", "stranger", "0.75"],
            ["clip-2", "alpha", "audio", "stranger", "familiar", "1.00"],
            ["clip-3", "alpha", "text", "familiar", "stranger", "1.25"]]
    path = _write(tmp_path / "results.csv", rows)
    store = Store.open(tmp_path / "s.duckdb")
    try:
        _import(store, path)
        assert _stored(store) == {("clip-0", "alpha", "text", "familiar", True, 0.5),
                                  ("clip-1", "alpha", "audio", None, None, 0.75),
                                  ("clip-2", "alpha", "audio", "stranger", False, 1.0),
                                  ("clip-3", "alpha", "text", "familiar", False, 1.25)}
    finally:
        store.close()
