"""The stored outcomes of each model on each stimulus (`model_outcome`), which the filter on a model's right or
wrong answers reads: after every write of answers or verdicts (an import, a second run of a model, a live answer,
computed verdicts, a re-import that replaces answers) the filter admits exactly the stimuli the prediction rows
themselves say, the stored outcomes equal the outcomes counted again from the predictions, and nothing else in the
store changed. The outcomes are kept where a model has several runs in a dataset and modality; its one run's
answers are read as they are. A store of version 13 opens with every row and gets its outcomes; a dataset read in
place from Parquet is filtered from its files."""
from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from fixtures_store import friendbench_like_plan, make_store
from store_rows import changed_rows, store_rows
from storage import lookups, queries
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.live_runs import store_live_prediction
from storage.records import StimulusFilter
from storage.schema import LATEST_VERSION, migrate
from storage.store import Store
from storage.verdicts import set_prediction_correctness

MODELS = ("alpha", "beta", "gamma", "delta", "nobody")


def _prediction_rows(store: Store) -> list[dict]:
    """Every answer the store reads (stored and read in place), with its run's dataset, model and modality."""
    found = store.cursor().execute(
        "SELECT r.dataset_id, p.stimulus_id, m.name, r.modality, p.correct FROM prediction_all p"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id").fetchall()
    return [dict(zip(("dataset", "stimulus", "model", "modality", "correct"), r)) for r in found]


def _by_hand(rows: list[dict], stimuli: dict[int, int], wanted: StimulusFilter) -> set[int]:
    """The stimuli a filter on the models' outcomes admits, worked out from the answers themselves: a model is
    right on a stimulus when at least half of its judged answers there (in the filter's modality) are right."""
    admitted = {s for s, d in stimuli.items() if wanted.dataset_id is None or d == wanted.dataset_id}
    for model, outcome in wanted.model_outcomes:
        verdicts: dict[int, list[bool]] = {}
        for r in rows:
            if (r["model"] == model and r["correct"] is not None and (not wanted.modality or r["modality"] == wanted.modality)
                    and (wanted.dataset_id is None or r["dataset"] == wanted.dataset_id)):
                verdicts.setdefault(r["stimulus"], []).append(r["correct"])
        admitted &= {s for s, v in verdicts.items() if (sum(v) / len(v) >= 0.5) == (outcome == "correct")}
    return admitted


def _filters(datasets: list[int | None]) -> list[StimulusFilter]:
    found = []
    for dataset in datasets:
        for modality in (None, "text", "audio"):
            for model in MODELS:
                for outcome in ("correct", "incorrect"):
                    found.append(StimulusFilter(dataset_id=dataset, modality=modality,
                                                model_outcomes=((model, outcome),)))
            found.append(StimulusFilter(dataset_id=dataset, modality=modality,
                                        model_outcomes=(("alpha", "correct"), ("beta", "incorrect"))))
    return found


def _check(store: Store) -> None:
    """Each filter admits what the answers say, counted and paged alike; the stored outcomes are the predictions'
    counted again."""
    cur = store.cursor()
    rows = _prediction_rows(store)
    stimuli = dict(cur.execute("SELECT id, dataset_id FROM stimulus").fetchall())
    datasets = [d.id for d in lookups.datasets(cur)]
    for wanted in _filters([*datasets, None]):
        expected = _by_hand(rows, stimuli, wanted)
        ordered = [int(i) for i in queries.stimulus_ids(cur, wanted)]
        assert set(ordered) == expected and len(ordered) == len(expected), wanted
        keep = max(expected) if expected else None
        count, first, row = queries.stimulus_table_start(cur, wanted, "id", False, 5, keep)
        assert (count, first, row) == (len(ordered), ordered[:5], None if keep is None else ordered.index(keep))
    # the table's rows show each model's outcome by the same rule (None: answered, never judged)
    for modality in (None, "audio"):
        shown = {row.id: row.outcomes for row in queries.stimulus_rows(cur, sorted(stimuli), list(MODELS), modality)}
        for model in MODELS:
            answered = {r["stimulus"] for r in rows if r["model"] == model and modality in (None, r["modality"])}
            right = _by_hand(rows, stimuli, StimulusFilter(modality=modality, model_outcomes=((model, "correct"),)))
            wrong = _by_hand(rows, stimuli, StimulusFilter(modality=modality, model_outcomes=((model, "incorrect"),)))
            assert {s: o[model] for s, o in shown.items() if model in o} == {
                s: True if s in right else False if s in wrong else None for s in answered}
    # kept where a model has several runs in a dataset and modality (one run's answers are read as they are)
    recounted = cur.execute(
        "SELECT r.dataset_id, p.stimulus_id, r.model_id, r.modality, count(p.correct), count(*) FILTER (WHERE p.correct)"
        " FROM prediction p JOIN run r ON r.id = p.run_id WHERE (SELECT count(*) FROM run o WHERE o.dataset_id ="
        " r.dataset_id AND o.model_id = r.model_id AND o.modality = r.modality) > 1 GROUP BY ALL ORDER BY ALL").fetchall()
    assert cur.execute("SELECT * FROM model_outcome ORDER BY ALL").fetchall() == recounted


def _answers_plan(root: Path, name: str, rows: list[dict]) -> ImportPlan:
    """A results table of answers to stimuli already in the dataset `name`."""
    plan = ImportPlan(DatasetInfo(name, "friendbench", root, "answers"), "test")
    plan.add("predictions", rows)
    return plan


def _outcome_changes(before: dict, after: dict) -> set[tuple[int, int]]:
    """(stimulus, model) of every stored outcome row that changed."""
    gone, came = changed_rows(before, after).get("model_outcome", ([], []))
    return {(r[1], r[2]) for r in gone + came}


def _model_id(store: Store, name: str) -> int:
    return int(store.cursor().execute("SELECT id FROM model WHERE name = ?", [name]).fetchall()[0][0])


def test_the_filter_on_a_models_outcomes_follows_every_write_and_nothing_else_changes(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=24, name="One", seed=3))
    try:
        cur = store.cursor()
        one = lookups.datasets(cur, "One")[0].id
        _check(store)
        # an import: a second dataset answered by models of the same names
        write_plan(store, friendbench_like_plan(tmp_path, n_stimuli=18, name="Two", seed=4))
        _check(store)

        # a second run of alpha in text (another prompt setting): its outcome now counts both runs' answers, some
        # of them without a verdict; and delta, whose answers have none
        before = store_rows(store)
        ids = [f"clip-{i:03d}" for i in range(24)]
        write_plan(store, _answers_plan(tmp_path, "One", [
            {"stimulus": s, "model": "alpha", "modality": "text", "prompt_setting": "P2", "answer": "familiar",
             "correct": None if i % 5 == 0 else i % 3 == 0} for i, s in enumerate(ids)]
            + [{"stimulus": s, "model": "delta", "modality": "text", "answer": "?"} for s in ids[:4]]))
        after = store_rows(store)
        assert set(changed_rows(before, after)) == {"model", "run", "prediction", "model_outcome"}
        # alpha's two runs in text are kept counted; delta's one run is read as it is
        assert {m for _s, m in _outcome_changes(before, after)} == {_model_id(store, "alpha")}
        _check(store)

        # a live answer, right, where alpha was wrong in text: the stimulus leaves alpha's wrong answers in text
        wrong = StimulusFilter(dataset_id=one, modality="text", model_outcomes=(("alpha", "incorrect"),))
        stimulus = min(int(i) for i in queries.stimulus_ids(cur, wrong))
        before = store_rows(store)
        for _ in range(2):   # asked twice: the second answer replaces the first
            store_live_prediction(cur, dataset_id=one, model="alpha", modality="text", prompt_setting="P2",
                                  vision_mode="", context="", stimulus_id=stimulus, prompt="q", raw_output="x",
                                  answer="familiar", correct=True, latency_s=None, tokens_in=None, tokens_out=None)
        after = store_rows(store)
        assert set(changed_rows(before, after)) == {"run", "prediction", "model_outcome"}
        assert _outcome_changes(before, after) == {(stimulus, _model_id(store, "alpha"))}
        _check(store)

        # a live answer of gamma in audio under another prompt setting: gamma's first second run there, so its
        # outcomes in audio are counted on every stimulus, not only the one answered
        answered = {int(r[0]) for r in cur.execute(
            "SELECT p.stimulus_id FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
            " WHERE m.name = 'gamma' AND r.dataset_id = ? AND r.modality = 'audio'", [one]).fetchall()}
        assert len(answered) > 1
        before = store_rows(store)
        store_live_prediction(cur, dataset_id=one, model="gamma", modality="audio", prompt_setting="P9",
                              vision_mode="", context="", stimulus_id=min(answered), prompt="q", raw_output="x",
                              answer="stranger", correct=False, latency_s=None, tokens_in=None, tokens_out=None)
        after = store_rows(store)
        assert set(changed_rows(before, after)) == {"run", "prediction", "model_outcome"}
        assert _outcome_changes(before, after) == {(s, _model_id(store, "gamma")) for s in answered}
        _check(store)

        # verdicts computed after the import (as an NCP replay gives them): beta's answers on three stimuli flipped
        flipped = cur.execute(
            "SELECT p.id, p.stimulus_id, p.correct FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m"
            " ON m.id = r.model_id WHERE m.name = 'beta' AND r.dataset_id = ? AND r.modality = 'audio'"
            " ORDER BY p.stimulus_id LIMIT 3", [one]).fetchall()
        before = store_rows(store)
        with store.transaction() as tx:
            set_prediction_correctness(tx, {pid: not correct for pid, _s, correct in flipped})
        after = store_rows(store)
        # (beta has one run in audio: its answers are its outcomes, and the filter follows them)
        assert set(changed_rows(before, after)) == {"prediction"}
        _check(store)

        # a re-import that replaces gamma's video answers on the first six stimuli (wrong now)
        before = store_rows(store)
        write_plan(store, _answers_plan(tmp_path, "One", [
            {"stimulus": s, "model": "gamma", "modality": "video", "answer": "nobody", "correct": False}
            for s in ids[:6]]))
        after = store_rows(store)
        assert set(changed_rows(before, after)) <= {"prediction", "model_outcome"}
        replaced = {int(r[0]) for r in cur.execute("SELECT id FROM stimulus WHERE dataset_id = ? AND"
                                                   " list_contains(?, external_id)", [one, ids[:6]]).fetchall()}
        assert {s for s, _m in _outcome_changes(before, after)} <= replaced
        _check(store)
    finally:
        store.close()


def test_a_store_of_version_13_opens_with_every_row_and_gets_its_models_outcomes(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    migrate(con, 13)
    con.close()
    store = Store.open(db, migrate_to=13)
    write_plan(store, friendbench_like_plan(tmp_path, n_stimuli=20, name="One", seed=5))
    write_plan(store, _answers_plan(tmp_path, "One", [   # a second run of one model and modality
        {"stimulus": f"clip-{i:03d}", "model": "beta", "modality": "audio", "prompt_setting": "P3",
         "answer": "stranger", "correct": i % 2 == 1} for i in range(20)]))
    before = store_rows(store)
    assert "model_outcome" not in before
    store.close()
    store = Store.open(db)
    try:
        assert store.version == LATEST_VERSION >= 14
        after = store_rows(store)
        assert {t: rows for t, rows in after.items() if t not in ("schema_version", "model_outcome")} == {
            t: rows for t, rows in before.items() if t != "schema_version"}
        # counted where a model has two runs in a modality (beta in audio), on each stimulus
        assert len(after["model_outcome"]) == 20
        _check(store)
    finally:
        store.close()


def test_a_dataset_read_in_place_is_filtered_from_its_files_and_its_live_answers(tmp_path: Path) -> None:
    from app.attach_service import attach_dataset

    release = tmp_path / "release.parquet"
    pl.DataFrame({"clip": [str(i % 16) for i in range(48)], "model": [f"model-{i // 16}" for i in range(48)],
                  "answer": ["yes" if (i * 7) % 5 < 2 else "no" for i in range(48)],
                  "label": ["yes" if (i % 16) % 2 else "no" for i in range(48)]}).write_parquet(release)
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=12, name="Stored", seed=6))
    try:
        attach_dataset(store, release, "InPlace", {"stimulus": "clip", "model": "model", "answer": "answer",
                                                   "label": "label"})
        cur = store.cursor()
        in_place = lookups.datasets(cur, "InPlace")[0].id
        assert cur.execute("SELECT count(*) FROM model_outcome WHERE dataset_id = ?", [in_place]).fetchall() == [(0,)]
        rows = _prediction_rows(store)
        stimuli = dict(cur.execute("SELECT id, dataset_id FROM stimulus").fetchall())
        wanted = [StimulusFilter(dataset_id=in_place, model_outcomes=((f"model-{m}", o),))
                  for m in range(3) for o in ("correct", "incorrect")]
        for f in wanted:
            assert set(int(i) for i in queries.stimulus_ids(cur, f)) == _by_hand(rows, stimuli, f)
        # a live answer on a stimulus read in place is stored: the filter counts it with the files' answers
        stimulus = min(s for s, d in stimuli.items() if d == in_place)
        store_live_prediction(cur, dataset_id=in_place, model="model-1", modality="", prompt_setting="",
                              vision_mode="", context="", stimulus_id=stimulus, prompt="q", raw_output="yes",
                              answer="yes", correct=True, latency_s=None, tokens_in=None, tokens_out=None)
        rows = _prediction_rows(store)
        for f in wanted:
            assert set(int(i) for i in queries.stimulus_ids(cur, f)) == _by_hand(rows, stimuli, f)
        _check(store)
    finally:
        store.close()
