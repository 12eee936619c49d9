"""Each model's outcome on each stimulus where it has several runs, kept in the store: the filter on a model's right
or wrong answers reads it instead of grouping every prediction of the model each time the filter changes.

`model_outcome` holds, per dataset (of the runs), stimulus, model and modality where the model has more than one run
in the dataset and modality (prompt settings, a live run beside an imported one), how many of the model's stored
answers there have a known correctness (`n_judged`: the answer was judged by the correctness rule of
`storage/importers/correctness.py`, a live scorer or a replayed verdict) and how many of those are right
(`n_right`); a row with `n_judged` 0 is a stimulus the model answered without a verdict. A model is right on a
stimulus when at least half of its judged answers there are right (`majority_sql`, the one statement of that rule).

Where the model has one run in the dataset and modality (a results table gives one), a run answers a stimulus once
(the writer refuses a second answer, a live answer replaces the earlier one), so its answers are its outcomes as
they are: the filter reads them from `prediction` (`stored_outcome_sql`), and a copy of them would only double the
cost of writing a large table's answers.

Every write of predictions or of their correctness makes its rows again (`refresh_outcomes`): the import's writer
after it writes answers, a live answer, computed verdicts (`storage/verdicts.py`). The rows are made from the
stored `prediction` table alone: a dataset read in place from Parquet (`storage/attached.py`) has none, since its
files may change after it is attached and are read as they are then, so a filter naming its runs reads its
predictions as before (`stored_outcome_sql` answers None).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

TABLE = "model_outcome"
CREATE_SQL = f"""
CREATE TABLE {TABLE} (
    dataset_id BIGINT NOT NULL,          -- the runs' dataset (a run answers its own dataset's stimuli)
    stimulus_id BIGINT NOT NULL,
    model_id BIGINT NOT NULL,
    modality VARCHAR NOT NULL,
    n_judged INTEGER NOT NULL,           -- the model's answers in this modality whose correctness is known
    n_right INTEGER NOT NULL             -- of those, the right ones
);
"""
# the counts of a group of predictions `p`
_COUNTS = "CAST(count(p.correct) AS INTEGER), CAST(count(*) FILTER (WHERE p.correct) AS INTEGER)"
# the same of one prediction, as a run's answers are read where it is the model's one run
_ONE_JUDGED = "CAST(p.correct IS NOT NULL AS INTEGER)"
_ONE_RIGHT = "CAST(coalesce(p.correct, false) AS INTEGER)"
_KEY = "r.dataset_id, p.stimulus_id, r.model_id, r.modality"
# every stored prediction counted: how a store of version 13 got its rows (storage/schema.py, version 14; version 16
# keeps those of models with several runs), in the order the filter reads them (a model's rows together, so that
# reading one model skips the others' row groups)
BUILD_SQL = (f"INSERT INTO {TABLE} SELECT {_KEY}, {_COUNTS} FROM prediction p JOIN run r ON r.id = p.run_id"
             " GROUP BY ALL ORDER BY r.dataset_id, r.model_id, r.modality, p.stimulus_id;")


def majority_sql(right: str, judged: str, outcome: str) -> str:
    """SQL true when `right` of `judged` answers (SQL integer expressions) make the outcome 'correct' (at least
    half right) or 'incorrect' (fewer than half); with no judged answer, neither. The same as comparing the share
    right with 0.5 (`avg` of the correctness), counted in integers."""
    if outcome == "correct":
        return f"({judged} > 0 AND 2 * {right} >= {judged})"
    if outcome == "incorrect":
        return f"(2 * {right} < {judged})"
    raise ValueError(f"unknown outcome {outcome!r}")


def has_outcomes(cur: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store keeps the outcomes (a store opened at an older version without upgrading does not)."""
    return bool(cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND schema_name = 'main'",
                            [TABLE]).fetchall()[0][0])


def refresh_outcomes(cur: duckdb.DuckDBPyConnection, dataset_id: int, models: Sequence[str] | None = None,
                     stimulus_ids: Sequence[int] | None = None) -> None:
    """Make the outcomes of the dataset's runs (of the models named, every model when None; on the stimuli named,
    every stimulus when None) equal to what their stored predictions say now. Call it inside the transaction that
    wrote the predictions (after a dataset's predictions are deleted, it deletes their rows).

    Rows are kept only where a model has several runs in a modality; a model's one run is read as it is. A model
    and modality that has just come to a second run (a live run beside an imported one) has no rows yet, so its
    rows are made on every stimulus, not only on those named."""
    if not has_outcomes(cur) or (models is not None and not models) or (stimulus_ids is not None and not stimulus_ids):
        return
    where, params = ["r.dataset_id = ?"], [dataset_id]
    if models is not None:
        where.append("r.model_id IN (SELECT id FROM model WHERE list_contains(?, name))")
        params.append(list(models))
    runs = cur.execute(
        "SELECT r.id, r.model_id, r.modality, count(*) OVER (PARTITION BY r.model_id, r.modality) FROM run r"
        f" WHERE {' AND '.join(where)} ORDER BY r.model_id, r.modality, r.id", params).fetchall()
    grouped = [(int(r[0]), int(r[1]), r[2]) for r in runs if r[3] > 1]
    # where stimuli are named, the groups that have no rows before this write are made whole below (with none
    # named, every group is made whole anyway)
    stored = {(int(m), modality) for m, modality in cur.execute(
        f"SELECT DISTINCT model_id, modality FROM {TABLE} WHERE dataset_id = ? AND list_contains(?, model_id)",
        [dataset_id, sorted({m for _r, m, _mod in grouped})]).fetchall()} if grouped and stimulus_ids else set()
    scope, scope_params = "dataset_id = ?", [dataset_id]
    if models is not None:
        scope += " AND list_contains(?, model_id)"
        scope_params.append(sorted({int(r[1]) for r in runs}))
    if stimulus_ids is not None:
        scope += " AND list_contains(?, stimulus_id)"
        scope_params.append(list(stimulus_ids))
    cur.execute(f"DELETE FROM {TABLE} WHERE {scope}", scope_params)
    new = [run for run, m, modality in grouped if (m, modality) not in stored]
    known = [run for run, m, modality in grouped if (m, modality) in stored]
    for chosen, named in ((new, None), (known, stimulus_ids)):
        if not chosen:
            continue
        stimuli, stimuli_params = ("", []) if named is None else (" AND list_contains(?, p.stimulus_id)", [list(named)])
        # the runs written as numbers: the scan of the predictions (stored run by run) skips the others' row groups
        cur.execute(f"INSERT INTO {TABLE} SELECT {_KEY}, {_COUNTS} FROM prediction p JOIN run r ON r.id = p.run_id"
                    f" WHERE p.run_id IN ({', '.join(map(str, chosen))}){stimuli} GROUP BY ALL", stimuli_params)


def refresh_outcomes_of(cur: duckdb.DuckDBPyConnection, prediction_ids: Sequence[int]) -> None:
    """`refresh_outcomes` for the stimuli and models of these stored predictions (after their correctness
    changed)."""
    if not prediction_ids or not has_outcomes(cur):
        return
    touched = cur.execute(
        "SELECT r.dataset_id, list(DISTINCT m.name), list(DISTINCT p.stimulus_id) FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id WHERE list_contains(?, p.id)"
        " GROUP BY r.dataset_id ORDER BY 1", [list(prediction_ids)]).fetchall()
    for dataset_id, models, stimuli in touched:
        refresh_outcomes(cur, int(dataset_id), models, [int(s) for s in stimuli])


@dataclass(frozen=True)
class RunKey:
    """A run a filter reads: its id, dataset, model and modality."""

    id: int
    dataset_id: int
    model_id: int
    modality: str


def stored_outcome_sql(cur: duckdb.DuckDBPyConnection, runs: Sequence[RunKey], outcome: str
                       ) -> tuple[str, list] | None:
    """A query (and its parameters) of the stimuli, each once as `stimulus_id`, on which the answers of `runs` (one
    model's runs: every run of that model in each dataset and modality among them) have this outcome by
    `majority_sql`: a dataset and modality where the model has one run read from that run's answers, one where it
    has several from the stored outcomes. None when they cannot say: the store keeps none (an older version), or
    one of the runs is of a dataset read in place, whose answers are in its files."""
    if not runs:
        return "SELECT CAST(NULL AS BIGINT) AS stimulus_id WHERE false", []
    datasets = sorted({r.dataset_id for r in runs})
    if not has_outcomes(cur) or cur.execute("SELECT EXISTS (SELECT 1 FROM attachment WHERE list_contains(?, dataset_id))",
                                            [datasets]).fetchall()[0][0]:
        return None
    models = {r.model_id for r in runs}
    if len(models) != 1:
        raise ValueError("the runs of one model")
    (model,) = models
    groups: dict[tuple[int, str], list[int]] = {}
    for r in runs:
        groups.setdefault((r.dataset_id, r.modality), []).append(r.id)
    single = sorted(ids[0] for ids in groups.values() if len(ids) == 1)
    several = sorted(key for key, ids in groups.items() if len(ids) > 1)
    if len(groups) == 1:   # one dataset and modality: a row per stimulus, its outcome read as it is
        if single:
            return (f"SELECT p.stimulus_id FROM prediction p WHERE p.run_id = {single[0]} AND "
                    + majority_sql(_ONE_RIGHT, _ONE_JUDGED, outcome), [])
        (dataset, modality), = several
        return (f"SELECT stimulus_id FROM {TABLE} WHERE dataset_id = ? AND model_id = ? AND modality = ?"
                f" AND {majority_sql('n_right', 'n_judged', outcome)}", [dataset, model, modality])
    parts, params = [], []
    if single:
        parts.append(f"SELECT p.stimulus_id, {_ONE_JUDGED} AS n_judged, {_ONE_RIGHT} AS n_right FROM prediction p"
                     f" WHERE p.run_id IN ({', '.join(map(str, single))})")
    if several:
        parts.append(f"SELECT stimulus_id, n_judged, n_right FROM {TABLE} WHERE model_id = ?"
                     " AND list_contains(?, struct_pack(d := dataset_id, m := modality))")
        params += [model, [{"d": d, "m": m} for d, m in several]]
    return (f"SELECT stimulus_id FROM ({' UNION ALL '.join(parts)}) GROUP BY stimulus_id"
            f" HAVING {majority_sql('sum(n_right)', 'sum(n_judged)', outcome)}", params)
