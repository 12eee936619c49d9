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
        asked = _asked_context(context)
        if asked is not None:
            found.add((int(sid), modality, prompt_setting, vision_mode, asked))
    return found


def _asked_context(context: str) -> str | None:
    """The context a live answer was asked under when the store had to mark it " live", else None."""
    if context.endswith(_LIVE_CONTEXT_SUFFIX) or context == _LIVE_CONTEXT_SUFFIX.strip():
        return context[: -len(_LIVE_CONTEXT_SUFFIX)] if context != LIVE_CONTEXT else ""
    return None


@dataclass(frozen=True)
class LiveAnswerRow:
    """A stored complete live answer."""

    prediction_id: int
    raw_output: str
    answer: str | None
    correct: bool | None
    latency_s: float | None


def live_answer(cur: duckdb.DuckDBPyConnection, stimulus_id: int, model: str,
                condition: tuple[str, str, str, str]) -> LiveAnswerRow | None:
    """The complete live answer `model` gave about one stimulus under `condition` (modality, prompt setting,
    vision mode, context as the live path asked for it), or None."""
    modality, prompt_setting, vision_mode, context = condition
    rows = cur.execute(
        "SELECT p.id, coalesce(p.raw_output, ''), p.answer, p.correct, p.latency_s, r.context FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id WHERE r.is_live AND m.name = ?"
        " AND p.stimulus_id = ? AND r.modality = ? AND r.prompt_setting = ? AND r.vision_mode = ?"
        " ORDER BY p.id DESC", [model, stimulus_id, modality, prompt_setting, vision_mode]).fetchall()
    for pid, raw, answer, correct, latency, stored_context in rows:
        if context in (stored_context, _asked_context(stored_context)):
            return LiveAnswerRow(int(pid), raw, answer, correct, latency)
    return None
