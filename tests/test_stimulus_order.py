"""Stimulus ids in natural order (numbers as numbers) in the window's table and in `thinslice list`, and a
listing of 300,000 ids streamed out whole."""
from __future__ import annotations

import random
import re

import polars as pl

from app.cli import dispatch
from storage import lookups, queries
from storage.importers.common import ImportOptions
from storage.importers.generic import GenericImporter
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


def _natural_key(text: str) -> str:
    """The rule stated once more, independently of the store's SQL: each digit run becomes chr(1), its length
    without leading zeros (six digits) and those digits; text stays as it is."""
    return "".join("\x01" + str(len(part.lstrip("0"))).rjust(6, "0") + part.lstrip("0") if part[0] in "0123456789"
                   else part for part in re.findall("[0-9]+|[^0-9]+", text))


def test_every_ids_stored_sort_key_is_the_rules_whatever_its_shape(tmp_path):
    # text ending in one number (most ids), numbers alone, zeros, several numbers, no number, digits of other
    # scripts (text to the rule), spaces
    rng = random.Random(17)
    shapes = ["clip-10", "clip-0010", "clip-000", "0", "007", "42", "s01e02", "a1b2c3", "x", "x00y", "٣٣", " 12", "12 ",
              "9" * 30]
    ids = shapes + ["".join(rng.choice("ab-_0019 ٣Zé") for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    ids = list(dict.fromkeys(ids))
    store = _store(tmp_path / "s.duckdb", ids)
    try:
        stored = dict(store.cursor().execute("SELECT external_id, sort_key FROM stimulus").fetchall())
        assert stored == {i: _natural_key(i) for i in ids}
    finally:
        store.close()


def test_the_stimuli_a_results_table_names_get_the_rules_sort_key_too(tmp_path):
    # a results table's new stimuli have their keys worked out while the table is checked, not as they are
    # written: the same rule either way
    rng = random.Random(29)
    ids = ["clip-10", "clip-0010", "clip-000", "0", "007", "42", "s01e02", "a1b2c3", "x", "x00y", "٣٣", "9" * 30]
    ids += ["".join(rng.choice("ab-_0019٣Zé") for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    ids = list(dict.fromkeys(ids))
    table = tmp_path / "answers.csv"
    pl.DataFrame({"clip": ids * 2, "system": ["m1"] * len(ids) + ["m2"] * len(ids),
                  "pred": ["yes"] * (2 * len(ids))}).write_csv(table)
    store = Store.open(tmp_path / "s.duckdb")
    try:
        write_plan(store, GenericImporter().plan(table, ImportOptions(
            dataset_name="D", mapping={"stimulus": "clip", "model": "system", "answer": "pred"})))
        stored = dict(store.cursor().execute("SELECT external_id, sort_key FROM stimulus").fetchall())
        assert stored == {i: _natural_key(i) for i in ids}
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


def _mixed_store(path):
    """The ids above, shuffled, with truths that tie and some missing, and two kinds."""
    shuffled = [i for i in IDS_IN_ORDER if i]
    random.Random(11).shuffle(shuffled)
    store = Store.open(path)
    plan = ImportPlan(DatasetInfo(name="D", benchmark="generic", root=path.parent, source="t"), importer="generic")
    plan.add("stimuli", pl.DataFrame({
        "external_id": shuffled,
        "kind": ["dyad" if n % 3 else "generic" for n in range(len(shuffled))],
        "ground_truth": [None if n % 4 == 0 else ("familiar" if n % 2 else "stranger") for n in range(len(shuffled))]}))
    write_plan(store, plan)
    return store


def test_pages_read_one_at_a_time_make_the_whole_table_and_each_stimulus_is_found_at_its_row(tmp_path):
    store = _mixed_store(tmp_path / "s.duckdb")
    cur = store.cursor()
    dataset = lookups.datasets(cur, "D")[0].id
    try:
        for wanted in (queries.StimulusFilter(dataset_id=dataset),
                       queries.StimulusFilter(dataset_id=dataset, kind="dyad"),
                       queries.StimulusFilter(dataset_id=dataset, text="clip")):
            for sort in ("id", "kind", "truth"):
                for descending in (False, True):
                    whole = [int(i) for i in queries.stimulus_ids(cur, wanted, sort, descending)]
                    assert queries.stimulus_count(cur, wanted) == len(whole)
                    for total in (None, len(whole)):   # with the total, the second half is read from the end
                        paged = [row.id for offset in range(0, len(whole) + 3, 3) for row in
                                 queries.stimulus_page(cur, wanted, sort, descending, offset, 3, [], total=total)]
                        assert paged == whole, (wanted, sort, descending, total)
                    assert [queries.stimulus_position(cur, wanted, sort, descending, sid)
                            for sid in whole] == list(range(len(whole)))
                    # page by page from one held page's edge row, down the table and up it
                    for row, sid in enumerate(whole):
                        after = queries.stimulus_page_beside(cur, wanted, sort, descending, sid, True, 3, [])
                        before = queries.stimulus_page_beside(cur, wanted, sort, descending, sid, False, 3, [])
                        assert [r.id for r in after] == whole[row + 1:row + 4]
                        assert [r.id for r in before] == whole[max(0, row - 3):row]
        dyads = queries.StimulusFilter(dataset_id=dataset, kind="dyad")
        generic = cur.execute("SELECT id FROM stimulus WHERE kind = 'generic' LIMIT 1").fetchall()[0][0]
        assert queries.stimulus_position(cur, dyads, "id", False, generic) is None
        # a truth sort: missing truths last either way, and ids in natural order among equal truths
        by_truth = queries.stimulus_page(cur, queries.StimulusFilter(dataset_id=dataset), "truth", True, 0, 100, [])
        truths = [row.ground_truth for row in by_truth]
        assert truths == sorted(t for t in truths if t)[::-1] + [None] * truths.count(None)
        stranger = [row.external_id for row in by_truth if row.ground_truth == "stranger"]
        assert stranger == [i for i in IDS_IN_ORDER if i in stranger]
    finally:
        store.close()


def test_a_store_of_the_previous_version_gets_every_ids_sort_key_and_keeps_everything_else(tmp_path):
    from storage.schema import migrate
    from store_rows import changed_rows, store_rows

    path = tmp_path / "old.duckdb"
    con = __import__("duckdb").connect(str(path))
    migrate(con, target=10)
    con.execute("INSERT INTO dataset (id, name, benchmark, root, source) VALUES (1, 'D', 'generic', '.', 't')")
    shuffled = [i for i in IDS_IN_ORDER if i]
    random.Random(2).shuffle(shuffled)
    for external_id in shuffled:
        con.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (1, ?, 'generic')", [external_id])
    before = {table: rows for table, rows in _rows(con).items()}
    con.close()
    store = Store.open(path)
    try:
        assert store.version >= 11
        assert _table_ids(store) == [i for i in IDS_IN_ORDER if i]
        after = store_rows(store)
        stimuli_after = [row[:-1] for row in after.pop("stimulus")]   # without the new key
        assert stimuli_after == before.pop("stimulus")
        assert set(changed_rows(before, after)) <= {"schema_version"} | (set(after) - set(before))
    finally:
        store.close()


def _rows(con):
    tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
                                        " AND table_type = 'BASE TABLE'").fetchall()]
    return {t: sorted(con.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


def test_a_filter_on_the_models_answers_starts_the_table_with_its_count_first_rows_and_the_kept_row(tmp_path):
    from fixtures_store import friendbench_like_plan, make_store

    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=40))
    cur = store.cursor()
    dataset = lookups.datasets(cur)[0].id
    try:
        for wanted in (queries.StimulusFilter(dataset_id=dataset),
                       queries.StimulusFilter(dataset_id=dataset, model_outcomes=(("alpha", "incorrect"),)),
                       queries.StimulusFilter(dataset_id=dataset, model_outcomes=(("beta", "correct"),),
                                              ground_truth="familiar"),
                       queries.StimulusFilter(dataset_id=dataset, models_disagree=True)):
            admitted = set(int(i) for i in queries.stimulus_ids(cur, wanted))
            for sort, descending in (("id", True), ("truth", False)):
                whole = [int(i) for i in queries.stimulus_ids(cur, wanted, sort, descending)]
                assert 0 < len(whole) < 40 or not wanted.model_outcomes
                for keep in [None] + [int(i) for i in queries.stimulus_ids(cur, queries.StimulusFilter(dataset))]:
                    count, first, row = queries.stimulus_table_start(cur, wanted, sort, descending, 7, keep)
                    assert (count, first) == (len(whole), whole[:7])
                    assert row == (whole.index(keep) if keep in admitted else None)
    finally:
        store.close()


def test_list_reads_the_store_without_loading_the_sample_and_its_importers(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    _store(tmp_path / "s.duckdb", ["2", "10", "1"]).close()
    code = ("import json, sys; from app.cli import dispatch; code = dispatch(['list', '--db', sys.argv[1]]);"
            " print(json.dumps([code, sorted(m for m in sys.modules if m in ('app.sample', 'app.import_service'))]))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.duckdb")], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    lines = done.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines[:-1]] == ["1", "2", "10"]
    assert json.loads(lines[-1]) == [0, []]


def _by_hand(rows, dataset, wanted):
    """The stimuli a filter on the models' answers admits, worked out from the prediction rows themselves."""
    mine = [r for r in rows if r["dataset"] == dataset and (not wanted.modality or r["modality"] == wanted.modality)]
    admitted = {r["stimulus"] for r in rows if r["dataset"] == dataset}
    if wanted.modality:
        admitted &= {r["stimulus"] for r in mine}
    for model, outcome in wanted.model_outcomes:
        shares = {}
        for r in mine:
            if r["model"] == model and r["correct"] is not None:
                shares.setdefault(r["stimulus"], []).append(r["correct"])
        admitted &= {s for s, c in shares.items() if (sum(c) / len(c) >= 0.5) == (outcome == "correct")}
    if wanted.models_disagree:
        answers = {}
        for r in mine:
            if r["answer"] is not None and (not wanted.compared_models or r["model"] in wanted.compared_models):
                answers.setdefault(r["stimulus"], set()).add(r["answer"].strip().lower())
        admitted &= {s for s, a in answers.items() if len(a) > 1}
    return admitted


def test_a_filter_on_the_models_answers_reads_its_own_datasets_runs_and_follows_a_live_answer(tmp_path):
    from fixtures_store import friendbench_like_plan, make_store
    from storage.live_runs import store_live_prediction

    # two datasets answered by models of the same names, with other answers
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=30, name="One", seed=3))
    write_plan(store, friendbench_like_plan(tmp_path, n_stimuli=30, name="Two", seed=4))
    cur = store.cursor()
    one, two = (lookups.datasets(cur, name)[0].id for name in ("One", "Two"))

    def rows():
        found = cur.execute("SELECT r.dataset_id, p.stimulus_id, m.name, r.modality, p.answer, p.correct"
                            " FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
                            ).fetchall()
        return [dict(zip(("dataset", "stimulus", "model", "modality", "answer", "correct"), r)) for r in found]

    filters = [dict(model_outcomes=(("alpha", "incorrect"),)), dict(model_outcomes=(("beta", "correct"),)),
               dict(model_outcomes=(("alpha", "correct"),), modality="audio"),
               dict(model_outcomes=(("alpha", "correct"), ("gamma", "incorrect"))),
               dict(model_outcomes=(("nobody", "correct"),)), dict(models_disagree=True),
               dict(models_disagree=True, compared_models=("alpha", "beta"), modality="video"),
               dict(modality="text")]
    try:
        def check():
            seen = rows()
            for dataset in (one, two):
                for extra in filters:
                    wanted = queries.StimulusFilter(dataset_id=dataset, **extra)
                    expected = _by_hand(seen, dataset, wanted)
                    assert set(int(i) for i in queries.stimulus_ids(cur, wanted)) == expected, extra
                    assert queries.stimulus_count(cur, wanted) == len(expected)
            return seen

        seen = check()
        # a live answer right where alpha's one text answer was wrong: half right, so the stimulus leaves the filter
        wrong = queries.StimulusFilter(dataset_id=one, model_outcomes=(("alpha", "incorrect"),), modality="text")
        before = set(int(i) for i in queries.stimulus_ids(cur, wrong))
        stimulus = min(before)
        store_live_prediction(cur, dataset_id=one, model="alpha", modality="text", prompt_setting="p", vision_mode="",
                              context="", stimulus_id=stimulus, prompt="q", raw_output="x", answer="x", correct=True,
                              latency_s=None, tokens_in=None, tokens_out=None)
        assert set(int(i) for i in queries.stimulus_ids(cur, wrong)) == before - {stimulus}
        assert queries.stimulus_count(cur, wrong) == len(before) - 1
        check()
    finally:
        store.close()
