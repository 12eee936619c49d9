"""Live answers that did not finish normally, and what a live model has already answered.

A cut-off or oversized answer goes to `live_failure` with what arrived and why: it is not a prediction, so
nothing scores it, counts it or lets it replace a complete answer. `live_answered` tells a resumed batch
which stimuli a model has answered under which condition, straight from the store.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb

from storage.live_runs import LIVE_CONTEXT

# A live run's context gets this word appended when an imported run has the same condition
# (see `storage.live_runs.store_live_prediction`); resume must see through it.
_LIVE_CONTEXT_SUFFIX = " " + LIVE_CONTEXT


@dataclass(frozen=True)
class LiveFailure:
    id: int
    model: str
    status: str
    reason: str
    partial_output: str
    created_at: Any


def store_live_failure(cur: duckdb.DuckDBPyConnection, *, dataset_id: int, stimulus_id: int, model: str,
                       modality: str, prompt_setting: str, vision_mode: str, context: str, status: str,
                       reason: str, partial_output: str, prompt: str | None, latency_s: float | None,
                       params: dict[str, Any] | None = None) -> int:
    """Record one failed live attempt; returns its id. Predictions are not touched."""
    return int(cur.execute(
        "INSERT INTO live_failure (dataset_id, stimulus_id, model, modality, prompt_setting, vision_mode, context,"
        " status, reason, partial_output, prompt, latency_s, params) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " RETURNING id",
        [dataset_id, stimulus_id, model, modality or "", prompt_setting or "", vision_mode or "", context or "",
         status, reason, partial_output, prompt, latency_s,
         json.dumps(params, ensure_ascii=False, sort_keys=True) if params is not None else None]).fetchall()[0][0])


def live_failures(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> list[LiveFailure]:
    """The failed live attempts on one stimulus, newest first."""
    rows = cur.execute("SELECT id, model, status, coalesce(reason, ''), coalesce(partial_output, ''), created_at"
                       " FROM live_failure WHERE stimulus_id = ? ORDER BY id DESC", [stimulus_id]).fetchall()
    return [LiveFailure(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]


def live_answered(cur: duckdb.DuckDBPyConnection, stimulus_ids: list[int],
                  model: str) -> set[tuple[int, str, str, str, str]]:
    """(stimulus id, modality, prompt setting, vision mode, context) of every complete live answer `model`
    gave about these stimuli; the context is given as the live path was asked for it."""
    if not stimulus_ids:
        return set()
    rows = cur.execute(
        "SELECT DISTINCT p.stimulus_id, r.modality, r.prompt_setting, r.vision_mode, r.context FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " WHERE r.is_live AND m.name = ? AND list_contains(?, p.stimulus_id)", [model, stimulus_ids]).fetchall()
    found: set[tuple[int, str, str, str, str]] = set()
    for sid, modality, prompt_setting, vision_mode, context in rows:
        found.add((int(sid), modality, prompt_setting, vision_mode, context))
        if context.endswith(_LIVE_CONTEXT_SUFFIX) or context == _LIVE_CONTEXT_SUFFIX.strip():
            found.add((int(sid), modality, prompt_setting, vision_mode,
                       context[: -len(_LIVE_CONTEXT_SUFFIX)] if context != LIVE_CONTEXT else ""))
    return found
