"""Typed read queries for the browser: datasets, the filtered stimulus list, one stimulus in full, a summary.

The stimulus table never holds a whole table in Qt: `stimulus_table_start` counts what a filter admits and
reads its first page, `stimulus_page` any later page in the table's order, all in the store, whatever the
number of stimuli and predictions; `stimulus_position` finds the row of one stimulus.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from storage import lookups, outcomes
from storage.outcomes import RunKey
from storage.records import (GoalAtomRecord, HumanSplit, Judgment, MediaRef, Prediction, Segment,
                             StimulusDetail, StimulusFilter, StimulusRow, TraceStepRecord, Word)
from storage.importers.words import STORY_KIND, TASK_KIND
from storage.story_questions import story_questions
from storage.story_steps import QUESTION_STEPS, story_steps

OUTCOMES = ("correct", "incorrect")
TRACE_KINDS = (TASK_KIND, STORY_KIND)


# the id column sorts by the stored natural key (see storage.natural_order); the others by their text
SORT_COLUMNS = {"id": "s.sort_key", "kind": "s.kind", "truth": "s.ground_truth", "title": "s.title"}
# ids equal as numbers ("01", "1") keep one order, by their text, and the store id settles the rest: every
# order is total, so a page read now and the next page read later never share or skip a row
NATURAL_ORDER = ("s.sort_key", "s.external_id", "s.id")


def dataset_models(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[str]:
    rows = cur.execute("SELECT DISTINCT m.name FROM run r JOIN model m ON m.id = r.model_id"
                       " WHERE r.dataset_id = ? ORDER BY 1", [dataset_id]).fetchall()
    return [r[0] for r in rows]


def dataset_facets(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> dict[str, list[str]]:
    """Values the filter bar offers for this dataset."""
    kinds = [r[0] for r in cur.execute("SELECT DISTINCT kind FROM stimulus WHERE dataset_id=? ORDER BY 1",
                                       [dataset_id]).fetchall()]
    truths = [r[0] for r in cur.execute(
        "SELECT ground_truth FROM stimulus WHERE dataset_id=? AND ground_truth IS NOT NULL"
        " GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 50", [dataset_id]).fetchall()]
    modalities = [r[0] for r in cur.execute(
        "SELECT DISTINCT modality FROM run WHERE dataset_id=? AND modality <> '' ORDER BY 1",
        [dataset_id]).fetchall()]
    return {"kind": kinds, "ground_truth": truths, "modality": modalities,
            "model": dataset_models(cur, dataset_id)}


def _dataset_where(alias: str, f: StimulusFilter) -> tuple[list[str], list[Any]]:
    """The conditions (and their parameters) by which the filter's dataset or benchmark admits rows of the table
    named `alias` (stimuli or runs, each with a `dataset_id`)."""
    where, params = ["TRUE"], []
    if f.dataset_id is not None:
        where.append(f"{alias}.dataset_id = ?")
        params.append(f.dataset_id)
    if f.benchmark:
        where.append(f"{alias}.dataset_id IN (SELECT id FROM dataset WHERE benchmark = ?)")
        params.append(f.benchmark)
    return where, params


def _runs(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, models: list[str] | None) -> list[RunKey]:
    """The runs a filter on the models' answers reads: the filter's dataset (or benchmark), the models named (every
    model when `models` is None) and the modality."""
    where, params = _dataset_where("r", f)
    if models is not None:
        where.append("list_contains(?, m.name)")
        params.append(models)
    if f.modality:
        where.append("r.modality = ?")
        params.append(f.modality)
    return [RunKey(int(r[0]), int(r[1]), int(r[2]), r[3]) for r in cur.execute(
        "SELECT r.id, r.dataset_id, r.model_id, r.modality FROM run r JOIN model m ON m.id = r.model_id"
        f" WHERE {' AND '.join(where)} ORDER BY 1", params).fetchall()]


def _runs_sql(runs: list[RunKey]) -> str:
    """`p.run_id IN (...)` over these runs, written as numbers, so that the scan of the predictions (stored run by
    run) skips every other run's row groups instead of reading all the predictions into a join with the runs."""
    return f"p.run_id IN ({', '.join(str(r.id) for r in runs)})" if runs else "FALSE"


@dataclass(frozen=True)
class _Where:
    """A filter as SQL: `FROM {source} WHERE {sql}` admits its stimuli as `s`, with `params` in that order (the
    source's first); `reads_predictions` when it reads predictions rather than the stored outcomes."""

    source: str
    sql: str
    params: list[Any]
    reads_predictions: bool


def _filter(cur: duckdb.DuckDBPyConnection, f: StimulusFilter) -> _Where:
    where, params = _dataset_where("s", f)
    reads = False
    # a model's stored outcomes are joined to the stimuli (a row per stimulus), which DuckDB does faster than it
    # tests `s.id IN` them
    joins, join_params = [], []
    if f.kind:
        where.append("s.kind = ?")
        params.append(f.kind)
    if f.ground_truth:
        where.append("s.ground_truth = ?")
        params.append(f.ground_truth)
    if f.text:
        where.append("(s.external_id ILIKE ? OR coalesce(s.title, '') ILIKE ? OR coalesce(s.text, '') ILIKE ?"
                     " OR coalesce(CAST(s.meta AS VARCHAR), '') ILIKE ?)")
        params += [f"%{f.text}%"] * 4
    if f.stimulus_ids is not None:
        where.append("list_contains(?, s.id)")
        params.append(list(f.stimulus_ids))
    for model, outcome in f.model_outcomes:
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}")
        runs = _runs(cur, f, [model])
        stored = outcomes.stored_outcome_sql(cur, runs, outcome)
        if stored is None:   # a dataset read in place: its answers are in its files
            reads = True
            where.append(f"s.id IN (SELECT p.stimulus_id FROM prediction_all p WHERE {_runs_sql(runs)}"
                         " GROUP BY p.stimulus_id HAVING "
                         + outcomes.majority_sql("count(*) FILTER (WHERE p.correct)", "count(p.correct)", outcome)
                         + ")")
        else:
            joins.append(f"JOIN ({stored[0]}) o{len(joins)} ON o{len(joins)}.stimulus_id = s.id")
            join_params += stored[1]
    if f.models_disagree:
        reads = True
        runs_sql = _runs_sql(_runs(cur, f, list(f.compared_models) or None))
        where.append(
            f"s.id IN (SELECT p.stimulus_id FROM prediction_all p WHERE p.answer IS NOT NULL AND {runs_sql}"
            " GROUP BY p.stimulus_id HAVING count(DISTINCT lower(trim(p.answer))) > 1)")
    elif f.modality and not f.model_outcomes:
        # (a model's outcome in the modality already says the stimulus has answers in it)
        reads = True
        where.append(f"s.id IN (SELECT p.stimulus_id FROM prediction_all p WHERE {_runs_sql(_runs(cur, f, None))})")
    return _Where(" ".join(["stimulus s", *joins]), " AND ".join(where), join_params + params, reads)


def _order_terms(sort: str, descending: bool) -> list[tuple[str, str]]:
    """(expression, direction) of each ORDER BY term of a table column: the column, then natural id order
    (in the column's direction when the column is the id, else ascending). Missing values come last."""
    column = SORT_COLUMNS.get(sort, SORT_COLUMNS["id"])
    direction = "DESC" if descending else "ASC"
    if column == SORT_COLUMNS["id"]:
        return [(term, direction) for term in NATURAL_ORDER]
    return [(column, direction)] + [(term, "ASC") for term in NATURAL_ORDER]


def _order_sql(sort: str, descending: bool, reverse: bool = False) -> str:
    """ORDER BY of a table column (`reverse`: the same order read from its end)."""
    if reverse:
        return ", ".join(f"{term} {'DESC' if direction == 'ASC' else 'ASC'} NULLS FIRST"
                         for term, direction in _order_terms(sort, descending))
    return ", ".join(f"{term} {direction} NULLS LAST" for term, direction in _order_terms(sort, descending))


def stimulus_ids(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, sort: str = "id",
                 descending: bool = False) -> np.ndarray:
    """Ordered ids of every stimulus the filter admits (the whole-table query: run it off the GUI thread)."""
    where = _filter(cur, f)
    rows = cur.execute(f"SELECT s.id FROM {where.source} WHERE {where.sql} ORDER BY {_order_sql(sort, descending)}",
                       where.params).fetchnumpy()
    return np.asarray(rows["id"], dtype=np.int64)


def stimulus_count(cur: duckdb.DuckDBPyConnection, f: StimulusFilter) -> int:
    """How many stimuli the filter admits, counted in the store."""
    return _count(cur, _filter(cur, f))


def _count(cur: duckdb.DuckDBPyConnection, where: _Where) -> int:
    return int(cur.execute(f"SELECT count(*) FROM {where.source} WHERE {where.sql}", where.params).fetchall()[0][0])


def stimulus_page(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, sort: str, descending: bool, offset: int,
                  limit: int, models: list[str], modality: str | None = None,
                  total: int | None = None) -> list[StimulusRow]:
    """Rows `offset` to `offset + limit` of the table in this order (as `stimulus_rows` makes them): the store
    sorts, and only the page reaches Python, however many stimuli the filter admits. Given the filter's
    `total`, a page in the second half is read from the end of the order (the last page costs the first's)."""
    where = _filter(cur, f)
    reverse = total is not None and 2 * offset + limit > total
    if reverse:
        offset, limit = max(0, total - offset - limit), max(0, min(limit, total - offset))
    ids = [int(r[0]) for r in cur.execute(
        f"SELECT s.id FROM {where.source} WHERE {where.sql} ORDER BY {_order_sql(sort, descending, reverse)}"
        " LIMIT ? OFFSET ?", where.params + [limit, offset]).fetchall()]
    return stimulus_rows(cur, ids[::-1] if reverse else ids, models, modality)


def _before_sql(terms: list[tuple[str, str]], first: str = "s", then: str = "t") -> str:
    """SQL true when the row `first` comes before the row `then` in this order: equal on the first terms and
    before it on the next, a missing value being after every value (as NULLS LAST sorts it)."""
    before, equal = [], []
    for term, direction in terms:
        column = term.split(".", 1)[1]
        a, b = f"{first}.{column}", f"{then}.{column}"
        before.append(" AND ".join(equal + [f"({a} {'<' if direction == 'ASC' else '>'} {b}"
                                            f" OR ({b} IS NULL AND {a} IS NOT NULL))"]))
        equal.append(f"{a} IS NOT DISTINCT FROM {b}")
    return "((" + ") OR (".join(before) + "))"


def _order_columns(terms: list[tuple[str, str]]) -> str:
    return ", ".join(dict.fromkeys(term for term, _ in terms))


def stimulus_page_beside(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, sort: str, descending: bool,
                         anchor: int, after: bool, limit: int, models: list[str],
                         modality: str | None = None) -> list[StimulusRow]:
    """The `limit` rows right after (or right before) the stimulus `anchor` in the table's order: the page next
    to one the table holds, read by the anchor's place in the order rather than an offset, so that scrolling
    costs a scan and never a sort of the whole table."""
    where = _filter(cur, f)
    terms = _order_terms(sort, descending)
    beside = _before_sql(terms, "t", "s") if after else _before_sql(terms, "s", "t")
    ids = [int(r[0]) for r in cur.execute(
        f"WITH t AS (SELECT {_order_columns(terms)} FROM stimulus s WHERE s.id = ?)"
        f" SELECT s.id FROM {where.source}, t WHERE {where.sql} AND {beside}"
        f" ORDER BY {_order_sql(sort, descending, reverse=not after)} LIMIT ?",
        [anchor] + where.params + [limit]).fetchall()]
    return stimulus_rows(cur, ids if after else ids[::-1], models, modality)


def stimulus_position(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, sort: str, descending: bool,
                      stimulus_id: int) -> int | None:
    """The row of a stimulus in the table of this filter and order (0 first), or None when the filter leaves
    it out: the stimuli that come before it, counted in one pass, without sorting the table."""
    return _position(cur, _filter(cur, f), sort, descending, stimulus_id)


def _position(cur: duckdb.DuckDBPyConnection, where: _Where, sort: str, descending: bool,
              stimulus_id: int) -> int | None:
    # a filter that reads no predictions says by one lookup whether it admits the stimulus (the count below scans
    # the table even for one it leaves out); one that reads the models' answers would cost that lookup twice
    if not where.reads_predictions and not cur.execute(f"SELECT 1 FROM {where.source} WHERE {where.sql} AND s.id = ?",
                                                       where.params + [stimulus_id]).fetchall():
        return None
    terms = _order_terms(sort, descending)
    rows = cur.execute(
        f"WITH t AS (SELECT {_order_columns(terms)} FROM {where.source} WHERE {where.sql} AND s.id = ?)"
        f" SELECT (SELECT count(*) FROM {where.source}, t WHERE {where.sql} AND {_before_sql(terms)}) FROM t",
        where.params + [stimulus_id] + where.params).fetchall()
    return int(rows[0][0]) if rows else None


def stimulus_table_start(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, sort: str, descending: bool,
                         limit: int, keep: int | None) -> tuple[int, list[int], int | None]:
    """What a table needs to show a filter in an order: how many stimuli it admits, the ids of the first
    `limit` of them, and the row of the stimulus `keep` (None when left out or not asked). A filter that reads
    predictions (which models disagree, or a model's answers in a dataset read in place) reads every one of the
    runs it names, so it is evaluated once for all three; any other filter (a model's outcomes among them, read
    from the stored outcomes) costs less asked three times than held."""
    where = _filter(cur, f)
    terms, order = _order_terms(sort, descending), _order_sql(sort, descending)
    if not where.reads_predictions:
        first = [int(r[0]) for r in cur.execute(
            f"SELECT s.id FROM {where.source} WHERE {where.sql} ORDER BY {order} LIMIT ?",
            where.params + [limit]).fetchall()]
        # the kept stimulus is often on the first page (the one chosen at the top): no count of those before it
        row = first.index(keep) if keep in first else (
            None if keep is None else _position(cur, where, sort, descending, keep))
        return _count(cur, where), first, row
    count, ids, row = cur.execute(
        f"WITH admitted AS MATERIALIZED (SELECT {_order_columns(terms)} FROM {where.source} WHERE {where.sql})"
        " SELECT (SELECT count(*) FROM admitted),"
        f" (SELECT list(s.id ORDER BY {order}) FROM (SELECT * FROM admitted s ORDER BY {order} LIMIT ?) s),"
        " (SELECT (SELECT count(*) FROM admitted s WHERE " + _before_sql(terms) + ") FROM admitted t"
        " WHERE t.id = ?)", where.params + [limit, keep]).fetchall()[0]
    return int(count), [int(i) for i in ids or []], None if row is None else int(row)


def stimulus_listing(cur: duckdb.DuckDBPyConnection, f: StimulusFilter, batch: int = 50_000
                     ) -> Iterator[list[tuple[str, str]]]:
    """(external id, kind) of every stimulus the filter admits, in natural id order (as the table shows them),
    in batches of at most `batch`: a listing of any length never holds more than one batch in Python."""
    where = _filter(cur, f)
    result = cur.execute(f"SELECT s.external_id, s.kind FROM {where.source} WHERE {where.sql}"
                         f" ORDER BY {', '.join(NATURAL_ORDER)}", where.params)
    while rows := result.fetchmany(batch):
        yield rows


def stimulus_rows(cur: duckdb.DuckDBPyConnection, ids: list[int], models: list[str],
                  modality: str | None = None) -> list[StimulusRow]:
    """One page of the table: the stimuli with these ids, in this order, with compared models' outcomes."""
    if not ids:
        return []
    base = cur.execute(
        "SELECT s.id, s.external_id, s.kind, s.ground_truth, s.title FROM stimulus s"
        " WHERE list_contains(?, s.id)", [ids]).fetchall()
    modality_sql = " AND r.modality = ?" if modality else ""
    # a model's outcome by the one majority rule; None with no judged answer
    right = outcomes.majority_sql("count(*) FILTER (WHERE p.correct)", "count(p.correct)", "correct")
    outcome_rows = cur.execute(
        f"SELECT p.stimulus_id, m.name, CASE WHEN count(p.correct) > 0 THEN {right} END, count(*)"
        " FROM prediction_all p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        f" WHERE list_contains(?, p.stimulus_id){modality_sql} GROUP BY ALL",
        [ids] + ([modality] if modality else [])).fetchall()
    human_rows = cur.execute(
        "SELECT stimulus_id, avg(CAST(correct AS INTEGER)), count(*) FROM human_rating"
        " WHERE list_contains(?, stimulus_id)" + (" AND condition = ?" if modality else "") + " GROUP BY 1",
        [ids] + ([modality] if modality else [])).fetchall()
    shown: dict[int, dict[str, bool | None]] = {}
    counts: dict[int, int] = {}
    for sid, model, is_right, n in outcome_rows:
        counts[sid] = counts.get(sid, 0) + n
        if model in models:
            shown.setdefault(sid, {})[model] = is_right
    humans = {sid: (share, n) for sid, share, n in human_rows}
    by_id = {r[0]: r for r in base}
    result = []
    for sid in ids:
        r = by_id.get(sid)
        if r is None:
            continue
        share, n = humans.get(sid, (None, 0))
        result.append(StimulusRow(r[0], r[1], r[2], r[3], r[4], shown.get(sid, {}), share, n,
                                  counts.get(sid, 0)))
    return result


def _json(value: Any, default: Any) -> Any:
    if value is None:
        return default
    if isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


def stimulus_media(cur: duckdb.DuckDBPyConnection, stimulus_ids: list[int], root: Path) -> dict[int, list[MediaRef]]:
    """The media of each of the stimuli (of one dataset, whose folder is `root`), ordered by role, with
    absolute paths; `present` only where the file is there now."""
    if not stimulus_ids:
        return {}
    found: dict[int, list[MediaRef]] = {}
    for stimulus_id, role, path, present, offset, duration, rate in cur.execute(
            "SELECT stimulus_id, role, path, present, offset_s, duration_s, sample_rate FROM media"
            f" WHERE stimulus_id IN ({', '.join('?' * len(stimulus_ids))}) ORDER BY stimulus_id, role",
            [int(i) for i in stimulus_ids]).fetchall():
        full = Path(path) if Path(path).is_absolute() else root / path
        found.setdefault(int(stimulus_id), []).append(
            MediaRef(role, full, bool(present) and full.is_file(), offset or 0.0, duration, rate))
    return found


def stimulus_detail(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> StimulusDetail | None:
    """Everything the detail area and the predictions panel show for one stimulus."""
    head = cur.execute(
        "SELECT s.id, s.dataset_id, d.name, d.benchmark, s.external_id, s.kind, s.ground_truth, s.split,"
        " s.title, s.text, s.meta, d.root FROM stimulus s JOIN dataset d ON d.id = s.dataset_id WHERE s.id = ?",
        [stimulus_id]).fetchall()
    if not head:
        return None
    head = head[0]
    if head is None:
        return None
    media = stimulus_media(cur, [stimulus_id], Path(head[11])).get(stimulus_id, [])
    segments = []
    for ord_, speaker, start, end, text, words, media_role in cur.execute(
            "SELECT ord, speaker, start_s, end_s, text, words, media_role FROM segment WHERE stimulus_id = ?"
            " ORDER BY ord, start_s", [stimulus_id]).fetchall():
        word_list = tuple(Word(str(w.get("word", "")), float(w["start"]), float(w["end"]))
                          for w in _json(words, []) if w.get("start") is not None and w.get("end") is not None)
        segments.append(Segment(ord_, speaker or "", start, end, text or "", word_list, media_role))
    judgments: dict[int, list[Judgment]] = {}
    for pid, judge, criterion, score, scale, rationale in cur.execute(
            "SELECT j.prediction_id, j.judge, j.criterion, j.score, j.scale_max, j.rationale FROM judgment j"
            " JOIN prediction p ON p.id = j.prediction_id WHERE p.stimulus_id = ? ORDER BY j.criterion",
            [stimulus_id]).fetchall():
        judgments.setdefault(pid, []).append(Judgment(judge, criterion, score, scale, rationale))
    predictions = []
    for row in cur.execute(
            "SELECT p.id, m.name, r.modality, r.prompt_setting, r.vision_mode, r.context, p.answer, p.raw_output,"
            " p.correct, p.latency_s, r.is_live FROM prediction_all p JOIN run r ON r.id = p.run_id"
            " JOIN model m ON m.id = r.model_id WHERE p.stimulus_id = ?"
            " ORDER BY m.name, r.modality, r.prompt_setting, r.vision_mode, r.context", [stimulus_id]).fetchall():
        pid = row[0]
        predictions.append(Prediction(pid, row[1], row[2] or None, row[3] or None, row[4] or None, row[5] or None,
                                      row[6], row[7], row[8], row[9], bool(row[10]),
                                      tuple(judgments.get(pid, []))))
    human = []
    rows = cur.execute("SELECT condition, answer, count(*), sum(CAST(coalesce(correct, false) AS INTEGER))"
                       " FROM human_rating WHERE stimulus_id = ? GROUP BY 1, 2 ORDER BY 1, 2",
                       [stimulus_id]).fetchall()
    by_condition: dict[str, list[tuple[str, int, int]]] = {}
    for condition, answer, n, n_correct in rows:
        by_condition.setdefault(condition or "", []).append((answer or "", n, n_correct))
    for condition, answers in by_condition.items():
        human.append(HumanSplit(condition or "-", sum(a[1] for a in answers), {a[0]: a[1] for a in answers},
                                sum(a[2] for a in answers)))
    atoms = tuple(GoalAtomRecord(o, tuple(_json(h, [])), e, p, v, t or "") for o, h, e, p, v, t in cur.execute(
        "SELECT ord, holders, entity, property, value, text FROM goal_atom WHERE stimulus_id = ? ORDER BY ord",
        [stimulus_id]).fetchall())
    n_ann = cur.execute("SELECT count(*) FROM annotation WHERE stimulus_id = ? AND deleted_at IS NULL",
                        [stimulus_id]).fetchall()[0][0]
    extra: dict[str, Any] = {}
    if head[5] in TRACE_KINDS:
        extra["traces"] = trace_steps(cur, stimulus_id)
    if head[5] == STORY_KIND:
        extra["story_questions"] = story_questions(cur, stimulus_id)
    return StimulusDetail(head[0], head[1], head[2], head[3], head[4], head[5], head[6], head[7], head[8], head[9],
                          _json(head[10], {}), tuple(media), tuple(segments), tuple(predictions), tuple(human),
                          atoms, int(n_ann), extra)


def trace_steps(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> dict[int | None, list[TraceStepRecord]]:
    """Trace steps of a task keyed by prediction id (None: the task's reference/set-up trace)."""
    result: dict[int | None, list[TraceStepRecord]] = {}
    for pid, idx, action, args, kwargs in cur.execute(
            "SELECT prediction_id, step_index, action, args, kwargs FROM trace_step WHERE stimulus_id = ?"
            " ORDER BY prediction_id NULLS FIRST, step_index", [stimulus_id]).fetchall():
        result.setdefault(pid, []).append(TraceStepRecord(idx, action, _json(args, []), _json(kwargs, {})))
    story = story_steps(cur, [stimulus_id]).get(stimulus_id)
    return {None: story, **result} if story else result


SUMMARY_TABLES = {
    "stimuli": "SELECT count(*) FROM stimulus s WHERE s.dataset_id = ?",
    "media": "SELECT count(*) FROM media m JOIN stimulus s ON s.id = m.stimulus_id WHERE s.dataset_id = ?",
    "media_missing": "SELECT count(*) FROM media m JOIN stimulus s ON s.id = m.stimulus_id"
                     " WHERE s.dataset_id = ? AND NOT m.present",
    "segments": "SELECT count(*) FROM segment g JOIN stimulus s ON s.id = g.stimulus_id WHERE s.dataset_id = ?",
    "models": "SELECT count(DISTINCT model_id) FROM run WHERE dataset_id = ?",
    "runs": "SELECT count(*) FROM run WHERE dataset_id = ?",
    "predictions": "SELECT coalesce(sum(n), 0) FROM prediction_counts WHERE dataset_id = ?",
    "judgments": "SELECT count(*) FROM judgment j JOIN prediction p ON p.id = j.prediction_id"
                 " JOIN run r ON r.id = p.run_id WHERE r.dataset_id = ?",
    "human_ratings": "SELECT count(*) FROM human_rating h JOIN stimulus s ON s.id = h.stimulus_id"
                     " WHERE s.dataset_id = ?",
    "annotations": "SELECT count(*) FROM annotation a JOIN stimulus s ON s.id = a.stimulus_id"
                   " WHERE s.dataset_id = ? AND a.deleted_at IS NULL",
    "trace_steps": "SELECT count(*) FROM (SELECT stimulus_id FROM trace_step UNION ALL SELECT stimulus_id FROM ("
                   + QUESTION_STEPS + ")) t JOIN stimulus s ON s.id = t.stimulus_id WHERE s.dataset_id = ?",
    "goal_atoms": "SELECT count(*) FROM goal_atom g JOIN stimulus s ON s.id = g.stimulus_id WHERE s.dataset_id = ?",
    "aggregate_results": "SELECT count(*) FROM aggregate_result WHERE dataset_id = ?",
}


def info_summary(cur: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Counts per dataset and per benchmark (what `thinslice info` prints)."""
    datasets = []
    totals: dict[str, dict[str, int]] = {}
    for ds in lookups.datasets(cur):
        counts = {name: int(cur.execute(sql, [ds.id]).fetchall()[0][0]) for name, sql in SUMMARY_TABLES.items()}
        datasets.append({"name": ds.name, "benchmark": ds.benchmark, "synthetic": ds.synthetic,
                         "root": ds.root, "counts": counts})
        bench = totals.setdefault(ds.benchmark, {k: 0 for k in SUMMARY_TABLES} | {"datasets": 0})
        bench["datasets"] += 1
        for k, v in counts.items():
            bench[k] += v
    version = cur.execute("SELECT max(version) FROM schema_version").fetchall()[0][0]
    return {"schema_version": int(version or 0), "datasets": datasets, "benchmarks": totals,
            "label_sets": int(cur.execute("SELECT count(*) FROM label_set").fetchall()[0][0])}


@dataclass(frozen=True)
class TraceTask:
    """An NCP task as the scorer needs it: goal atoms, metadata, and every trace's steps."""

    stimulus_id: int
    meta: dict[str, Any]
    goal_atoms: tuple[GoalAtomRecord, ...]
    traces: dict[int | None, list[TraceStepRecord]]


def trace_tasks(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[TraceTask]:
    """Every stimulus of the dataset with a model's attempt among its traces (a story with only its own
    trace has nothing to score, and an ExploreToM import has thousands)."""
    ids = [r[0] for r in cur.execute(
        "SELECT DISTINCT t.stimulus_id FROM trace_step t JOIN stimulus s ON s.id = t.stimulus_id"
        " WHERE s.dataset_id = ? AND t.prediction_id IS NOT NULL ORDER BY 1", [dataset_id]).fetchall()]
    return list(tasks_by_id(cur, ids).values())


def tasks_by_id(cur: duckdb.DuckDBPyConnection, ids: list[int]) -> dict[int, TraceTask]:
    """These stimuli as tasks (metadata, goal atoms, every trace's steps), read in three queries."""
    if not ids:
        return {}
    metas = dict(cur.execute("SELECT id, meta FROM stimulus WHERE list_contains(?, id)", [ids]).fetchall())
    atoms: dict[int, list[GoalAtomRecord]] = {}
    for sid, o, h, e, p, v, t in cur.execute(
            "SELECT stimulus_id, ord, holders, entity, property, value, text FROM goal_atom"
            " WHERE list_contains(?, stimulus_id) ORDER BY stimulus_id, ord", [ids]).fetchall():
        atoms.setdefault(sid, []).append(GoalAtomRecord(o, tuple(_json(h, [])), e, p, v, t or ""))
    traces: dict[int, dict[int | None, list[TraceStepRecord]]] = {}
    for sid, pid, idx, action, args, kwargs in cur.execute(
            "SELECT stimulus_id, prediction_id, step_index, action, args, kwargs FROM trace_step"
            " WHERE list_contains(?, stimulus_id) ORDER BY stimulus_id, prediction_id NULLS FIRST, step_index",
            [ids]).fetchall():
        traces.setdefault(sid, {}).setdefault(pid, []).append(
            TraceStepRecord(idx, action, _json(args, []), _json(kwargs, {})))
    for sid, steps in story_steps(cur, ids).items():
        traces[sid] = {None: steps, **traces.get(sid, {})}
    return {sid: TraceTask(sid, _json(metas.get(sid), {}), tuple(atoms.get(sid, ())), traces.get(sid, {}))
            for sid in ids if sid in metas}


def task_attempts(cur: duckdb.DuckDBPyConnection, *, dataset_id: int | None = None,
                  stimulus_id: int | None = None) -> list[tuple[int, int, str, bool | None]]:
    """(prediction id, stimulus id, model, stored correctness) of every model attempt on a dataset's NCP
    tasks, or on one stimulus, by stimulus then model."""
    where, params = (("r.dataset_id = ? AND s.kind = 'ncp_task'", [dataset_id]) if stimulus_id is None
                     else ("s.id = ?", [stimulus_id]))
    return [(int(pid), int(sid), model, correct) for pid, sid, model, correct in cur.execute(
        "SELECT p.id, p.stimulus_id, m.name, p.correct FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
        f" WHERE {where} ORDER BY p.stimulus_id, m.name", params).fetchall()]
