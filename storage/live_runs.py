"""Live runs in the store: recording a live model's answer and its actions (which stimuli a run has already
answered, for resuming a batch, is read by `storage.live_failures.live_answered`).

`store_live_prediction` records an answer as a run marked `is_live` with the prompt, latency and token counts
(never an API key), and `store_live_trace` the actions of a live NCP attempt, so it replays in the stepper
beside the imported ones.
"""
from __future__ import annotations

import json
import threading
from typing import Any

import duckdb

from storage.id_blocks import reserve_ids
from storage.outcomes import refresh_outcomes

_SECRET_WORDS = ("key", "secret", "token", "authorization", "password")
LIVE_CONTEXT = "live"
# Live answers of a batch arrive on several threads at once; creating their run must happen once.
_LIVE_WRITES = threading.Lock()


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
        # an import may be reserving a block of prediction ids at this moment (`storage.id_blocks`)
        pid = reserve_ids(cur, "seq_prediction", 1)
        cur.execute(
            "INSERT INTO prediction (id, run_id, stimulus_id, raw_output, answer, correct, latency_s, meta, prompt,"
            " tokens_in, tokens_out) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [pid, run_id, stimulus_id, raw_output, answer, correct, latency_s, json.dumps({"live": True}), prompt,
             tokens_in, tokens_out])
        refresh_outcomes(cur, dataset_id, [model], [stimulus_id])
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
