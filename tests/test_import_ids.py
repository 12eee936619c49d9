"""The ids a results import gives its rows: a new dataset's stimuli and its answers are numbered in the table's
order, and whatever is written next (another import, a live answer) continues after them, never reusing one."""
from __future__ import annotations

import random
import threading
from pathlib import Path

import polars as pl

from storage.id_blocks import reserve_ids
from storage.importers.common import ImportOptions
from storage.importers.generic import GenericImporter
from storage.importers.writer import write_plan
from storage.store import Store
from tests.store_rows import changed_rows, store_rows

MAP = {"stimulus": "clip", "model": "system", "answer": "pred", "label": "truth"}


def write_answers(path: Path, models: list[str], clips: list[str]) -> Path:
    """Every model's answer to every clip, model after model, the clips in the order given."""
    pl.DataFrame({"clip": clips * len(models), "system": [m for m in models for _ in clips],
                  "pred": ["yes" if i % 3 else "no" for i in range(len(clips) * len(models))],
                  "truth": ["yes"] * (len(clips) * len(models))}).write_csv(path)
    return path


def import_table(store: Store, path: Path) -> None:
    write_plan(store, GenericImporter().plan(path, ImportOptions(dataset_name="d", mapping=MAP)))


def test_answers_and_new_stimuli_are_numbered_in_the_tables_order(tmp_path):
    clips = ["c9", "c10", "c1", "c100", "c2"]
    store = Store.open(tmp_path / "t.duckdb")
    import_table(store, write_answers(tmp_path / "a.csv", ["m1", "m2"], clips))
    cur = store.cursor()
    stimuli = cur.execute("SELECT id, external_id FROM stimulus ORDER BY id").fetchall()
    assert stimuli == [(i + 1, clip) for i, clip in enumerate(clips)]
    answers = cur.execute("SELECT p.id, m.name, s.external_id FROM prediction p JOIN run r ON r.id = p.run_id"
                          " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
                          " ORDER BY p.id").fetchall()
    assert answers == [(i + 1, model, clip) for i, (model, clip) in
                       enumerate((m, c) for m in ("m1", "m2") for c in clips)]


def test_the_answers_of_seventy_models_each_go_to_their_own_models_run(tmp_path):
    # a few models' runs are told apart by name as the answers are written, many by a lookup: both keep each
    # answer with its model
    clips = ["c2", "c1", "c10"]
    for models in ([f"m{i}" for i in range(3)], [f"model {i}" for i in range(70)]):
        store = Store.open(tmp_path / f"{len(models)}.duckdb")
        try:
            import_table(store, write_answers(tmp_path / f"{len(models)}.csv", models, clips))
            answers = store.cursor().execute(
                "SELECT p.id, m.name, s.external_id FROM prediction p JOIN run r ON r.id = p.run_id"
                " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id ORDER BY p.id").fetchall()
            assert answers == [(i + 1, model, clip) for i, (model, clip) in
                               enumerate((m, c) for m in models for c in clips)]
        finally:
            store.close()


def test_blocks_of_ids_reserved_on_many_threads_at_once_never_overlap(tmp_path):
    # an import reserves its answers' ids in one block while live answers draw theirs one at a time
    store = Store.open(tmp_path / "t.duckdb")
    reserved: list[range] = []
    failures: list[BaseException] = []

    def reserve(seed: int) -> None:
        rng = random.Random(seed)
        cur = store.cursor()   # this thread's own
        try:
            for _ in range(150):
                count = rng.choice([1, 1, 2, rng.randint(3, 5000)])
                first = reserve_ids(cur, "seq_prediction", count)
                reserved.append(range(first, first + count))
        except BaseException as exc:   # noqa: BLE001 - reported by the test below
            failures.append(exc)

    try:
        threads = [threading.Thread(target=reserve, args=(seed,)) for seed in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures
        ordered = sorted(reserved, key=lambda block: block.start)
        assert all(a.stop <= b.start for a, b in zip(ordered, ordered[1:]))
        # the next id drawn by default comes after every block
        nxt = store.cursor().execute("SELECT nextval('seq_prediction')").fetchone()[0]
        assert nxt >= ordered[-1].stop
    finally:
        store.close()


def test_what_is_written_next_continues_after_the_imported_ids(tmp_path):
    clips = [f"clip-{i}" for i in range(40)]
    store = Store.open(tmp_path / "t.duckdb")
    import_table(store, write_answers(tmp_path / "a.csv", ["m1", "m2", "m3"], clips))
    before = store_rows(store)
    # a new model's answers to the same clips: only they are added, numbered after the first 120
    import_table(store, write_answers(tmp_path / "b.csv", ["m4"], clips))
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"model", "run", "prediction"}
    assert all(not gone for gone, _came in changes.values())
    assert sorted(row[0] for row in changes["prediction"][1]) == list(range(121, 161))
    cur = store.cursor()
    # an answer written as a live run writes one takes the next id from the table's own sequence
    run_id = cur.execute("SELECT min(id) FROM run").fetchone()[0]
    new_id = cur.execute("INSERT INTO prediction (run_id, stimulus_id, answer) VALUES (?, 1, 'yes') RETURNING id",
                         [run_id]).fetchone()[0]
    assert new_id == 161
    assert cur.execute("SELECT count(DISTINCT id) = count(*) FROM prediction").fetchone()[0]
