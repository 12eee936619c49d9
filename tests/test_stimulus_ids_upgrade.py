"""A store made before the stimuli lost their index by dataset and external id (version 15), or their primary key
(version 17), opens without loss: every row of every table is as it was, ids included, and imports into it
afterwards add only the ids the dataset lacks and number new stimuli after the stored ones."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.import_service import run_import
from storage.importers.common import ImportOptions
from storage.schema import LATEST_VERSION
from storage.store import Store
from tests.store_rows import changed_rows, store_rows

MAP = {"stimulus": "clip", "model": "system", "answer": "pred", "label": "truth"}


def _csv(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    path.write_text("clip,system,pred,truth\n" + "".join(",".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _import(store: Store, path: Path) -> None:
    run_import(store, "generic", path, ImportOptions(dataset_name="Results", mapping=dict(MAP)))


@pytest.mark.parametrize("old_version", [14, 16])
def test_a_store_of_the_version_before_opens_with_every_row_and_takes_new_ids_after_its_own(tmp_path, old_version):
    first = _csv(tmp_path / "first.csv", [("clip-2", "m1", "yes", "yes"), ("clip-10", "m1", "no", "yes"),
                                          ("clip-1", "m1", "No", "no")])
    db = tmp_path / "old.duckdb"
    old = Store.open(db, migrate_to=old_version)
    _import(old, first)
    before = store_rows(old)
    old.close()

    store = Store.open(db)
    assert store.version == LATEST_VERSION
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"schema_version"}   # the stimuli, their ids and sort keys are as they were
    assert changes["schema_version"][0] == [] and [row[0] for row in changes["schema_version"][1]] == list(
        range(old_version + 1, LATEST_VERSION + 1))

    cur = store.cursor()
    # the same table again changes nothing; a second model's answers to one stored and one new clip add only the
    # new clip, numbered after the stored ones
    stored = store_rows(store)
    _import(store, first)
    assert changed_rows(stored, store_rows(store)) == {}
    _import(store, _csv(tmp_path / "second.csv", [("clip-2", "m2", "yes", "yes"), ("clip-3", "m2", "no", "no")]))
    stimuli = cur.execute("SELECT id, external_id, ground_truth FROM stimulus ORDER BY id").fetchall()
    assert [(external, truth) for _, external, truth in stimuli] == [
        ("clip-2", "yes"), ("clip-10", "yes"), ("clip-1", "no"), ("clip-3", "no")]
    assert stimuli[-1][0] > max(row[0] for row in stimuli[:-1])
    assert cur.execute("SELECT count(*), count(DISTINCT (run_id, stimulus_id)) FROM prediction").fetchall() == [(5, 5)]
    store.close()


def test_two_imports_at_once_into_one_dataset_store_each_new_id_once(tmp_path):
    # two windows' worth of imports cannot share a store, but one window's workers can: an import started while
    # another writes the same new clips must find them stored, not add them a second time
    import threading

    store = Store.open(tmp_path / "store.duckdb")
    _import(store, _csv(tmp_path / "base.csv", [("clip-0", "m0", "yes", "yes")]))
    clips = [f"clip-{i}" for i in range(1, 301)]
    files = [_csv(tmp_path / f"{model}.csv", [(c, model, "yes", "yes") for c in clips]) for model in ("m1", "m2")]
    inside = threading.Barrier(2, timeout=2.0)

    def meet(_fraction: float, message: str) -> None:
        if message == "stimuli":   # each import waits inside its transaction for the other to get there too
            try:
                inside.wait()
            except threading.BrokenBarrierError:   # the other is held back until this one is written
                pass
    failures: list[BaseException] = []

    def run(path: Path) -> None:
        try:
            run_import(store, "generic", path, ImportOptions(dataset_name="Results", mapping=dict(MAP)), progress=meet)
        except BaseException as exc:
            failures.append(exc)
    threads = [threading.Thread(target=run, args=(path,)) for path in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    cur = store.cursor()
    assert cur.execute("SELECT count(*), count(DISTINCT external_id) FROM stimulus").fetchall() == [(301, 301)]
    assert cur.execute("SELECT count(*) FROM prediction").fetchall() == [(601,)]
    store.close()
