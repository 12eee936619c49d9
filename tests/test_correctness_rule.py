"""Whether an answer is right reads the same on every path: a results table imported, and the same rows read in
place from Parquet. Letters that lowercase differently in different libraries (a final sigma, a dotted capital
I, a German sharp s) are where two homes of the rule would part."""
from __future__ import annotations

import random
from pathlib import Path

import duckdb
import polars as pl

from app.attach_service import attach_dataset
from app.import_service import run_import
from storage.importers.common import ImportOptions
from storage.importers.correctness import correct_word_expr, correct_word_sql
from storage.importers.words import BOOLEAN_WORDS
from storage.store import Store

TRICKY = ["ΟΔΌΣ", "οδόσ", "οδός", "İstanbul", "istanbul", "i̇stanbul", "STRASSE", "straße", "Straße", "ǅ", "ǆ",
          "K", "k", "Å", "å", "ﬁ", "FI", "", "yes", "YES", "Yes ", "no"]


def test_a_correctness_column_reads_the_same_as_polars_and_as_sql():
    rng = random.Random(7)
    pool = sorted(BOOLEAN_WORDS) + [w.upper() for w in BOOLEAN_WORDS] + [w.title() for w in BOOLEAN_WORDS] + TRICKY
    texts = [rng.choice(pool) + rng.choice(["", "", "x", "İ", "Σ"]) for _ in range(2000)] + pool + [None]
    by_polars = pl.DataFrame({"t": texts}).select(correct_word_expr(pl.col("t"))).to_series().to_list()
    con = duckdb.connect()
    by_sql = [row[0] for row in con.execute(
        f"SELECT {correct_word_sql('t')} FROM (SELECT unnest(?) AS t, generate_subscripts(?, 1) AS i) ORDER BY i",
        [texts, texts]).fetchall()]
    assert by_polars == by_sql
    assert by_polars[-len(pool) - 1:-1][:len(BOOLEAN_WORDS)].count(None) == 0


def test_an_answer_is_right_or_wrong_alike_imported_and_read_in_place(tmp_path: Path):
    pairs = [(a, b) for a in TRICKY for b in TRICKY]
    rows = pl.DataFrame({"clip": [str(i) for i in range(len(pairs))], "model": "m",
                         "answer": [a for a, _ in pairs], "label": [b for _, b in pairs]})
    rows.write_parquet(tmp_path / "answers.parquet")
    mapping = {"stimulus": "clip", "model": "model", "answer": "answer", "label": "label"}
    store = Store.open(tmp_path / "store.duckdb")
    try:
        run_import(store, "generic", tmp_path / "answers.parquet",
                   ImportOptions(dataset_name="Imported", mapping=mapping))
        attach_dataset(store, tmp_path / "answers.parquet", "Attached", mapping)
        verdicts = {name: dict(store.cursor().execute(
            "SELECT s.external_id, p.correct FROM prediction_all p JOIN run r ON r.id = p.run_id"
            " JOIN dataset d ON d.id = r.dataset_id JOIN stimulus s ON s.id = p.stimulus_id WHERE d.name = ?",
            [name]).fetchall()) for name in ("Imported", "Attached")}
    finally:
        store.close()
    assert len(verdicts["Imported"]) == len(pairs)
    assert verdicts["Imported"] == verdicts["Attached"]
    # a final sigma and its plain form are one letter to both paths; "İ" is not plain "I" lowercased
    index = {pair: str(i) for i, pair in enumerate(pairs)}
    assert verdicts["Imported"][index[("ΟΔΌΣ", "οδόσ")]] is True
    assert verdicts["Imported"][index[("yes", "YES")]] is True
