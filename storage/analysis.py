"""Frames for analysis: one dataset's predictions, ratings, judgments and traces as polars frames.

Everything the dashboards, failure filters and slice finder compute starts here. Stimulus metadata (the
JSON `meta` column) is flattened into plain columns: every key whose values are scalars (text, numbers,
booleans) becomes a column of that type; lists and objects are left out. A few keys that importers name
differently are given one name, so a chart or slice reads the same across releases:
`site` -> `vendor`, `gender_composition` -> `gender`, and an EchoMind MCQ's `subtype` -> `question_type`.

The writers here are for live models: `store_live_prediction` records an answer as a run marked `is_live`
with the prompt, latency and token counts (never an API key), and `store_live_trace` the actions of a live
NCP attempt, so it replays in the stepper beside the imported ones.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from storage.records import Dataset

META_ALIASES = {"site": "vendor", "gender_composition": "gender", "subtype": "question_type"}
# Keys of the JSON meta that are bookkeeping, not properties of the stimulus worth a column.
_SKIPPED_META = {"source", "source_file", "source_interaction", "source_start_s", "case_id", "question_id",
                 "audio_dir", "answer_text", "script", "setup_steps", "context_id", "goal_id"}
_JSON_TYPES = {"VARCHAR": "VARCHAR", "BIGINT": "BIGINT", "UBIGINT": "BIGINT", "DOUBLE": "DOUBLE",
               "BOOLEAN": "BOOLEAN"}
_SECRET_WORDS = ("key", "secret", "token", "authorization", "password")
LIVE_CONTEXT = "live"
# Live answers of a batch arrive on several threads at once; creating their run must happen once.
_LIVE_WRITES = threading.Lock()


class DatasetNotFound(LookupError):
    """No dataset of that name in the store."""


def datasets(cur: duckdb.DuckDBPyConnection, name: str | None = None) -> list[Dataset]:
    """Every dataset (or the one named), ordered by name. Raises DatasetNotFound for an unknown name."""
    sql = ("SELECT d.id, d.name, d.benchmark, d.root, coalesce(d.source, ''), d.synthetic,"
           " (SELECT count(*) FROM stimulus s WHERE s.dataset_id = d.id) FROM dataset d")
    rows = cur.execute(sql + (" WHERE d.name = ?" if name else "") + " ORDER BY d.name",
                       [name] if name else []).fetchall()
    if name and not rows:
        known = [r[0] for r in cur.execute("SELECT name FROM dataset ORDER BY 1").fetchall()]
        raise DatasetNotFound(f"no dataset named {name!r} (the store has: {', '.join(known) or 'none'})")
    return [Dataset(*r) for r in rows]


def dataset_by_id(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> Dataset:
    rows = cur.execute("SELECT d.id, d.name, d.benchmark, d.root, coalesce(d.source, ''), d.synthetic, 0"
                       " FROM dataset d WHERE d.id = ?", [dataset_id]).fetchall()
    if not rows:
        raise DatasetNotFound(f"no dataset with id {dataset_id}")
    return Dataset(*rows[0])


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


def meta_column_names(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[str]:
    """Names of the flattened meta columns `stimuli_frame` adds for this dataset."""
    return _meta_select(_meta_columns(cur, dataset_id))[1]


# ----- predictions, ratings, judgments --------------------------------------------------------------------
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


# ----- live runs ---------------------------------------------------------------------------------------
def _without_secrets(params: dict[str, Any] | str | None) -> str | None:
    """The run parameters as JSON, with anything that looks like a credential left out."""
    if params is None:
        return None
    values = json.loads(params) if isinstance(params, str) else dict(params)
    clean = {k: v for k, v in values.items()
             if not any(word in k.lower() for word in _SECRET_WORDS) or k in ("api_key_env", "max_tokens")}
    return json.dumps(clean, ensure_ascii=False, sort_keys=True)


def _live_run(cur: duckdb.DuckDBPyConnection, dataset_id: int, model_id: int, modality: str, prompt_setting: str,
              vision_mode: str, context: str, params: str | None) -> int:
    key = [dataset_id, model_id, modality, prompt_setting, vision_mode]
    rows = cur.execute("SELECT id, is_live FROM run WHERE dataset_id = ? AND model_id = ? AND modality = ?"
                       " AND prompt_setting = ? AND vision_mode = ? AND context = ?", key + [context]).fetchall()
    if rows and not rows[0][1]:
        # An imported run already has this condition: keep the live answers apart from it.
        context = f"{context} {LIVE_CONTEXT}".strip()
        rows = cur.execute("SELECT id, is_live FROM run WHERE dataset_id = ? AND model_id = ? AND modality = ?"
                           " AND prompt_setting = ? AND vision_mode = ? AND context = ?", key + [context]).fetchall()
    if rows:
        return int(rows[0][0])
    return int(cur.execute(
        "INSERT INTO run (dataset_id, model_id, modality, prompt_setting, vision_mode, context, is_live, params)"
        " VALUES (?, ?, ?, ?, ?, ?, true, ?) RETURNING id", key + [context, params]).fetchall()[0][0])


def store_live_prediction(cur: duckdb.DuckDBPyConnection, dataset_id: int, model: str, modality: str,
                          prompt_setting: str, vision_mode: str, context: str, stimulus_id: int, prompt: str,
                          raw_output: str, answer: str | None, correct: bool | None, latency_s: float | None,
                          tokens_in: int | None, tokens_out: int | None,
                          params_json: dict[str, Any] | str | None = None) -> int:
    """Record a live answer; returns the prediction id.

    The run (dataset, model, condition) is created marked `is_live`, or reused; when an imported run has
    the same condition the live run's context gets " live" appended so the two never mix. Asking again
    about the same stimulus in the same run replaces the earlier answer. Parameters that look like
    credentials are dropped before anything is written. All in one transaction."""
    params = _without_secrets(params_json)
    with _LIVE_WRITES:
        return _write_live(cur, dataset_id, model, modality, prompt_setting, vision_mode, context, stimulus_id,
                           prompt, raw_output, answer, correct, latency_s, tokens_in, tokens_out, params)


def _write_live(cur: duckdb.DuckDBPyConnection, dataset_id: int, model: str, modality: str, prompt_setting: str,
                vision_mode: str, context: str, stimulus_id: int, prompt: str, raw_output: str, answer: str | None,
                correct: bool | None, latency_s: float | None, tokens_in: int | None, tokens_out: int | None,
                params: str | None) -> int:
    cur.execute("BEGIN TRANSACTION")
    try:
        rows = cur.execute("SELECT id FROM model WHERE name = ?", [model]).fetchall()
        model_id = int(rows[0][0]) if rows else int(cur.execute(
            "INSERT INTO model (name) VALUES (?) RETURNING id", [model]).fetchall()[0][0])
        run_id = _live_run(cur, dataset_id, model_id, modality or "", prompt_setting or "", vision_mode or "",
                           context or "", params)
        old = [r[0] for r in cur.execute("SELECT id FROM prediction WHERE run_id = ? AND stimulus_id = ?",
                                         [run_id, stimulus_id]).fetchall()]
        if old:
            cur.execute("DELETE FROM judgment WHERE list_contains(?, prediction_id)", [old])
            cur.execute("DELETE FROM trace_step WHERE list_contains(?, prediction_id)", [old])
            cur.execute("DELETE FROM prediction WHERE list_contains(?, id)", [old])
        pid = int(cur.execute(
            "INSERT INTO prediction (run_id, stimulus_id, raw_output, answer, correct, latency_s, meta, prompt,"
            " tokens_in, tokens_out) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [run_id, stimulus_id, raw_output, answer, correct, latency_s, json.dumps({"live": True}), prompt,
             tokens_in, tokens_out]).fetchall()[0][0])
        cur.execute("COMMIT")
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    return pid


def store_live_trace(cur: duckdb.DuckDBPyConnection, prediction_id: int, stimulus_id: int,
                     steps: list[dict[str, Any]]) -> int:
    """Write the trace steps ({action, args, kwargs}, in order) of a live prediction; returns how many.

    The steps are the model's own, played after the task's set-up steps (as for imported attempts). Steps
    stored earlier for the same prediction are replaced. All in one transaction."""
    rows = [[stimulus_id, prediction_id, index, step["action"], json.dumps(list(step.get("args") or []),
             ensure_ascii=False), json.dumps(dict(step.get("kwargs") or {}), ensure_ascii=False)]
            for index, step in enumerate(steps)]
    with _LIVE_WRITES:
        cur.execute("BEGIN TRANSACTION")
        try:
            cur.execute("DELETE FROM trace_step WHERE prediction_id = ?", [prediction_id])
            if rows:
                cur.executemany("INSERT INTO trace_step (stimulus_id, prediction_id, step_index, action, args, kwargs)"
                                " VALUES (?, ?, ?, ?, ?, ?)", rows)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
    return len(rows)


def live_answered_ids(cur: duckdb.DuckDBPyConnection, dataset_id: int, model: str, modality: str = "",
                      prompt_setting: str = "", vision_mode: str = "") -> set[int]:
    """Stimulus ids a live run of this model and condition has already answered (to resume a batch)."""
    rows = cur.execute(
        "SELECT DISTINCT p.stimulus_id FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ? AND r.is_live AND m.name = ?"
        " AND r.modality = ? AND r.prompt_setting = ? AND r.vision_mode = ?",
        [dataset_id, model, modality or "", prompt_setting or "", vision_mode or ""]).fetchall()
    return {int(r[0]) for r in rows}
