"""Stimulus ids in natural order (numbers as numbers) in the window's table and in `thinslice list`, and a
listing of 300,000 ids streamed out whole."""
from __future__ import annotations

import random

import polars as pl

from app.cli import dispatch
from storage import lookups, queries
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.store import Store

IDS_IN_ORDER = ["", "0", "01", "1", "1a", "2", "10", "100", "1000", "99999999999999999999999", "Clip-3", "a",
                "b2", "b10", "clip-1", "clip-9", "clip-10", "clip-10-2", "clip-10-10", "clip-100", "x"]


def _store(path, ids, name="D"):
    store = Store.open(path)
    plan = ImportPlan(DatasetInfo(name=name, benchmark="generic", root=path.parent, source="t"), importer="generic")
    plan.add("stimuli", pl.DataFrame({"external_id": ids, "kind": ["generic"] * len(ids)}))
    write_plan(store, plan)
    return store


def _table_ids(store, descending=False):
    cur = store.cursor()
    f = queries.StimulusFilter(dataset_id=lookups.datasets(cur, "D")[0].id)
    ids = [int(i) for i in queries.stimulus_ids(cur, f, "id", descending)]
    return [row.external_id for row in queries.stimulus_rows(cur, ids, [])]


def test_the_table_sorts_ids_as_numbers_where_they_are_numbers(tmp_path):
    shuffled = IDS_IN_ORDER[:]
    random.Random(3).shuffle(shuffled)
    store = _store(tmp_path / "s.duckdb", [i for i in shuffled if i])   # an empty id cannot be stored
    try:
        wanted = [i for i in IDS_IN_ORDER if i]
        assert _table_ids(store) == wanted
        assert _table_ids(store, descending=True) == wanted[::-1]
    finally:
        store.close()


def test_list_prints_300000_ids_in_natural_order(tmp_path, capsys):
    n = 300_000
    ids = [str(i) for i in range(n)]
    random.Random(5).shuffle(ids)
    _store(tmp_path / "s.duckdb", ids).close()
    assert dispatch(["list", "--db", str(tmp_path / "s.duckdb")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["0\tgeneric\tD", "1\tgeneric\tD", "2\tgeneric\tD", "3\tgeneric\tD"]
    assert lines[10] == "10\tgeneric\tD" and lines[100] == "100\tgeneric\tD"
    assert [line.split("\t")[0] for line in lines] == [str(i) for i in range(n)]
