"""Frames for analysis: one dataset's predictions, ratings, judgments and traces as polars frames.

Everything the dashboards, failure filters and slice finder compute starts here. Stimulus metadata (the
JSON `meta` column) is flattened into plain columns: every key whose values are scalars (text, numbers,
booleans) becomes a column of that type; lists and objects are left out. A few keys that importers name
differently are given one name, so a chart or slice reads the same across releases:
`site` -> `vendor`, `gender_composition` -> `gender`, and an EchoMind MCQ's `subtype` -> `question_type`.

Read only: live answers are written by `storage.live_runs`, computed verdicts by `storage.verdicts`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

# The dataset lookups live in storage.lookups; analysis callers find them here too.
from storage.lookups import DatasetNotFound, dataset_by_id, datasets  # noqa: F401

META_ALIASES = {"site": "vendor", "gender_composition": "gender", "subtype": "question_type"}
# Keys of the JSON meta that are bookkeeping, not properties of the stimulus worth a column.
_SKIPPED_META = {"source", "source_file", "source_interaction", "source_start_s", "case_id", "question_id",
                 "audio_dir", "answer_text", "script", "setup_steps", "context_id", "goal_id"}
_JSON_TYPES = {"VARCHAR": "VARCHAR", "BIGINT": "BIGINT", "UBIGINT": "BIGINT", "DOUBLE": "DOUBLE",
               "BOOLEAN": "BOOLEAN"}


# ----- stimulus metadata -------------------------------------------------------------------------------
def _meta_columns(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[tuple[str, str]]:
    """(key, SQL type) of the scalar meta keys this dataset's stimuli carry."""
    rows = cur.execute(
        "WITH k AS (SELECT meta, unnest(json_keys(meta)) AS key FROM stimulus"
        "           WHERE dataset_id = ? AND meta IS NOT NULL)"
        " SELECT key, list(DISTINCT json_type(meta, '$.\"' || key || '\"')) FROM k GROUP BY key ORDER BY key",
        [dataset_id]).fetchall()
    columns = []
    for key, types in rows:
        if key in _SKIPPED_META or not key.replace("_", "").isalnum():
            continue
        kinds = {t for t in types if t not in (None, "NULL")}
        if not kinds or not kinds <= set(_JSON_TYPES):
            continue
        mapped = {_JSON_TYPES[t] for t in kinds}
        sql_type = mapped.pop() if len(mapped) == 1 else ("DOUBLE" if mapped <= {"BIGINT", "DOUBLE"} else "VARCHAR")
        columns.append((key, sql_type))
    return columns


def _meta_select(columns: list[tuple[str, str]]) -> tuple[str, list[str]]:
    names = {key for key, _ in columns}
    parts, out = [], []
    for key, sql_type in columns:
        alias = META_ALIASES.get(key, key)
        if alias != key and alias in names:
            alias = key  # both spellings present: keep each as it is
        if alias in ("stimulus_id", "external_id", "kind", "ground_truth", "title", "split"):
            alias = f"meta_{key}"
        path = f"'$.\"{key}\"'"
        expr = (f"json_extract_string(s.meta, {path})" if sql_type == "VARCHAR"
                else f"TRY_CAST(json_extract_string(s.meta, {path}) AS {sql_type})")
        parts.append(f"{expr} AS \"{alias}\"")
        out.append(alias)
    return ", ".join(parts), out


def stimuli_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """One row per stimulus: stimulus_id, external_id, kind, ground_truth, split, plus flattened meta."""
    select, _ = _meta_select(_meta_columns(cur, dataset_id))
    extra = f", {select}" if select else ""
    return cur.sql(
        "SELECT s.id AS stimulus_id, s.external_id, s.kind, s.ground_truth, s.split" + extra +
        " FROM stimulus s WHERE s.dataset_id = ? ORDER BY s.id", params=[dataset_id]).pl()


def predictions_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int, with_meta: bool = True,
                      modality_like: str | None = None) -> pl.DataFrame:
    """Every prediction of the dataset: prediction_id, stimulus_id, external_id, model, modality,
    prompt_setting, vision_mode, context, answer, correct, ground_truth, is_live, then (with_meta) the
    flattened stimulus meta columns. `modality_like` (a SQL LIKE pattern) keeps matching runs only."""
    where = "r.dataset_id = ?" + (" AND r.modality LIKE ?" if modality_like else "")
    params: list[Any] = [dataset_id] + ([modality_like] if modality_like else [])
    select, names = _meta_select(_meta_columns(cur, dataset_id)) if with_meta else ("", [])
    # The meta JSON is flattened once per stimulus, then joined: not once per prediction.
    extra = "".join(f', sm."{name}"' for name in names)
    flattened = (f" LEFT JOIN (SELECT s.id, {select} FROM stimulus s WHERE s.dataset_id = ?) sm"
                 " ON sm.id = p.stimulus_id") if select else ""
    return cur.sql(
        "SELECT p.id AS prediction_id, p.stimulus_id, s.external_id, m.name AS model, r.modality,"
        " r.prompt_setting, r.vision_mode, r.context, p.answer, p.correct, s.ground_truth, r.is_live" + extra +
        " FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        f" JOIN stimulus s ON s.id = p.stimulus_id{flattened} WHERE {where}",
        params=([dataset_id] if select else []) + params).pl()


def prediction_answer_counts(cur: duckdb.DuckDBPyConnection, dataset_id: int, live_suffix: str = "") -> pl.DataFrame:
    """Predictions counted per model, modality, ground truth and answer: model (a live run's model name
    followed by `live_suffix`), modality, ground_truth, answer, n (Int64). A million predictions become a
    few hundred rows, so accuracy and signal detection need not read every prediction."""
    # Counting per run first keeps the million-row aggregation on integer keys; names join the small result.
    return cur.sql(
        "WITH c AS (SELECT p.run_id, s.ground_truth, p.answer, count(*) AS n FROM prediction p"
        "           JOIN stimulus s ON s.id = p.stimulus_id WHERE s.dataset_id = ? GROUP BY ALL)"
        " SELECT CASE WHEN r.is_live THEN m.name || ? ELSE m.name END AS model, r.modality, c.ground_truth,"
        " c.answer, CAST(sum(c.n) AS BIGINT) AS n FROM c JOIN run r ON r.id = c.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ? GROUP BY ALL",
        params=[dataset_id, live_suffix, dataset_id]).pl()


def predicted_stimulus_ids(cur: duckdb.DuckDBPyConnection, dataset_id: int, model: str, modality: str | None,
                           ground_truths: list[str] | None = None, live_suffix: str = "") -> list[int]:
    """Sorted ids of the dataset's stimuli that `model` (a live run's model name followed by `live_suffix`)
    answered in `modality`; with `ground_truths`, only stimuli whose ground truth is one of them."""
    sql = ("SELECT DISTINCT p.stimulus_id FROM prediction p JOIN run r ON r.id = p.run_id"
           " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
           " WHERE r.dataset_id = ? AND (CASE WHEN r.is_live THEN m.name || ? ELSE m.name END) = ?"
           " AND r.modality IS NOT DISTINCT FROM ?")
    params: list[Any] = [dataset_id, live_suffix, model, modality]
    if ground_truths is not None:
        sql += " AND list_contains(?, s.ground_truth)"
        params.append(list(ground_truths))
    return [int(r[0]) for r in cur.execute(sql + " ORDER BY 1", params).fetchall()]


def human_ratings_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Human ratings: stimulus_id, rater, condition, answer, correct, response_time_s, ground_truth."""
    return cur.sql(
        "SELECT h.stimulus_id, h.rater, h.condition, h.answer, h.correct, h.response_time_s, s.ground_truth"
        " FROM human_rating h JOIN stimulus s ON s.id = h.stimulus_id WHERE s.dataset_id = ?",
        params=[dataset_id]).pl()


def judgments_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Judge scores: prediction_id, stimulus_id, model, modality, prompt_setting, vision_mode, context,
    judge, criterion, score, scale_max, rationale."""
    return cur.sql(
        "SELECT j.prediction_id, p.stimulus_id, m.name AS model, r.modality, r.prompt_setting, r.vision_mode,"
        " r.context, j.judge, j.criterion, j.score, j.scale_max, j.rationale FROM judgment j"
        " JOIN prediction p ON p.id = j.prediction_id JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ?", params=[dataset_id]).pl()


def asr_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """EchoMind ASR: stimulus_id, external_id, model, reference (the script text), answer (the transcript).

    The importer stores ASR outputs as predictions of modality `asr` on the script stimulus, whose
    `text` is the script."""
    return cur.sql(
        "SELECT p.stimulus_id, s.external_id, m.name AS model, s.text AS reference, p.answer"
        " FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " JOIN stimulus s ON s.id = p.stimulus_id WHERE r.dataset_id = ? AND r.modality = 'asr'",
        params=[dataset_id]).pl()


def conversation_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """EchoMind open responses: stimulus_id, model, voice, prompt_setting, answer (response text),
    transcript (of the response audio) and reference (a reference response when the release gives one
    in the script's meta as `reference_responses.<voice>` or `reference_response`; else null)."""
    return cur.sql(
        "SELECT p.stimulus_id, m.name AS model, replace(r.modality, 'conversation:', '') AS voice,"
        " r.prompt_setting, p.answer, p.raw_output AS transcript,"
        " coalesce(json_extract_string(s.meta, '$.reference_responses.' || replace(r.modality, 'conversation:', '')),"
        "          json_extract_string(s.meta, '$.reference_response')) AS reference"
        " FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " JOIN stimulus s ON s.id = p.stimulus_id"
        " WHERE r.dataset_id = ? AND r.modality LIKE 'conversation:%'", params=[dataset_id]).pl()


def aggregate_results_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Published per-model figures: model, source, metric_group, metric, value, value_text."""
    return cur.sql(
        "SELECT m.name AS model, a.source, a.metric_group, a.metric, a.value, a.value_text"
        " FROM aggregate_result a JOIN model m ON m.id = a.model_id WHERE a.dataset_id = ?"
        " ORDER BY a.metric_group, a.metric, m.name", params=[dataset_id]).pl()


def bare_accuracy(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[tuple[str, float]]:
    """SELECT model, avg(correct) GROUP BY model: the cheapest possible per-model figure (a baseline)."""
    return cur.execute(
        "SELECT m.name, avg(CAST(p.correct AS DOUBLE)) FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ? GROUP BY m.name", [dataset_id]).fetchall()


# ----- NCP attempts ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NcpAttempt:
    """One model's attempt at a task: the set-up steps then its own steps, and the task's goal.

    `goal` is in `app.beliefs.goals.goal_from_json` form ({"atoms": [...], "false_belief": ...});
    `correct` is what the store holds (None until a replay decides it)."""

    prediction_id: int
    stimulus_id: int
    model: str
    steps: list[dict[str, Any]]
    goal: dict[str, Any]
    correct: bool | None


def _loads(value: Any, default: Any) -> Any:
    if value is None:
        return default
    if isinstance(value, (list, dict)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


def _goals(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> dict[int, dict[str, Any]]:
    goals: dict[int, dict[str, Any]] = {}
    for sid, meta in cur.execute(f"SELECT s.id, s.meta FROM stimulus s WHERE {where}", params).fetchall():
        flag = _loads(meta, {}).get("false_belief")
        goals[sid] = {"atoms": []} | ({} if flag is None else {"false_belief": bool(flag)})
    for sid, holders, entity, prop, value, text in cur.execute(
            "SELECT g.stimulus_id, g.holders, g.entity, g.property, g.value, g.text FROM goal_atom g"
            f" JOIN stimulus s ON s.id = g.stimulus_id WHERE {where} ORDER BY g.stimulus_id, g.ord",
            params).fetchall():
        goals.setdefault(sid, {"atoms": []})["atoms"].append(
            {"holders": _loads(holders, []), "entity": entity, "property": prop, "value": value, "text": text or ""})
    return goals


def _steps(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> dict[int | None, dict[int, list]]:
    """{stimulus id: {prediction id or None (reference): [steps]}}."""
    found: dict[Any, dict[Any, list]] = {}
    for sid, pid, action, args, kwargs in cur.execute(
            "SELECT t.stimulus_id, t.prediction_id, t.action, t.args, t.kwargs FROM trace_step t"
            f" JOIN stimulus s ON s.id = t.stimulus_id WHERE {where}"
            " ORDER BY t.stimulus_id, t.prediction_id NULLS FIRST, t.step_index", params).fetchall():
        found.setdefault(sid, {}).setdefault(pid, []).append(
            {"action": action, "args": _loads(args, []), "kwargs": _loads(kwargs, {})})
    return found


def _setup_counts(cur: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> dict[int, int]:
    rows = cur.execute(f"SELECT s.id, TRY_CAST(json_extract_string(s.meta, '$.setup_steps') AS INTEGER)"
                       f" FROM stimulus s WHERE {where}", params).fetchall()
    return {sid: n for sid, n in rows if n is not None}


def ncp_attempts(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[NcpAttempt]:
    """Every model attempt on the dataset's NCP tasks, ready to replay against the goal.

    A model's steps are played after the task's set-up steps (the first `setup_steps` of the reference
    trace, per the importer)."""
    where, params = "s.dataset_id = ?", [dataset_id]
    goals, steps, setups = _goals(cur, where, params), _steps(cur, where, params), _setup_counts(cur, where, params)
    attempts = []
    for pid, sid, model, correct in cur.execute(
            "SELECT p.id, p.stimulus_id, m.name, p.correct FROM prediction p JOIN run r ON r.id = p.run_id"
            " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
            " WHERE r.dataset_id = ? AND s.kind = 'ncp_task' ORDER BY p.stimulus_id, m.name", params).fetchall():
        by_trace = steps.get(sid, {})
        setup = by_trace.get(None, [])[: setups.get(sid, 0)]
        attempts.append(NcpAttempt(pid, sid, model, setup + by_trace.get(pid, []), goals.get(sid, {"atoms": []}),
                                   correct))
    return attempts


def ncp_compare_traces(cur: duckdb.DuckDBPyConnection, stimulus_id: int,
                       models: list[str] | None = None) -> list[tuple[str, list[dict], dict]]:
    """(label, steps, goal) for a task's reference trace and each model's attempt (optionally only
    `models`, in that order): what `BeliefStepperView.set_traces` takes to show them side by side."""
    where, params = "s.id = ?", [stimulus_id]
    goal = _goals(cur, where, params).get(stimulus_id, {"atoms": []})
    by_trace = _steps(cur, where, params).get(stimulus_id, {})
    setup = by_trace.get(None, [])[: _setup_counts(cur, where, params).get(stimulus_id, 0)]
    rows = cur.execute("SELECT p.id, m.name FROM prediction p JOIN run r ON r.id = p.run_id"
                       " JOIN model m ON m.id = r.model_id WHERE p.stimulus_id = ? ORDER BY m.name",
                       [stimulus_id]).fetchall()
    traces: list[tuple[str, list[dict], dict]] = []
    if None in by_trace:
        traces.append(("reference", by_trace[None], goal))
    order = {m: i for i, m in enumerate(models)} if models is not None else None
    chosen = [(pid, name) for pid, name in rows if order is None or name in order]
    chosen.sort(key=lambda r: order[r[1]] if order is not None else 0)
    traces += [(name, setup + by_trace.get(pid, []), goal) for pid, name in chosen]
    return traces


def response_audio_paths(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> dict[int, Path]:
    """{prediction id: absolute path} of model response audio files that exist on disk."""
    rows = cur.execute(
        "SELECT p.id, json_extract_string(p.meta, '$.response_audio'),"
        " json_extract_string(p.meta, '$.response_audio_file'), d.root FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN dataset d ON d.id = r.dataset_id WHERE p.stimulus_id = ?",
        [stimulus_id]).fetchall()
    found: dict[int, Path] = {}
    for pid, rel, name, root in rows:
        for candidate in (rel, name):
            if not candidate:
                continue
            path = Path(candidate) if Path(candidate).is_absolute() else Path(root) / candidate
            if path.is_file():
                found[pid] = path
                break
    return found
