"""NCP tasks in the app: building the stepper's traces from stored steps, and scoring a dataset's stored
attempts with the one scorer, `app.benchmarks.ncp.score_attempt`."""
from __future__ import annotations

from typing import Any

from app.benchmarks.ncp import score_attempt
from storage.queries import TraceTask, trace_tasks
from storage.records import GoalAtomRecord, StimulusDetail, TraceStepRecord
from storage.store import Store
from storage.verdicts import set_prediction_correctness

Step = dict[str, Any]


def goal_spec(atoms: tuple[GoalAtomRecord, ...], meta: dict[str, Any]) -> dict[str, Any] | None:
    """The engine's goal form for stored atoms; true/false-belief from the task's metadata when it says."""
    if not atoms:
        return None
    spec: dict[str, Any] = {"atoms": [{"holders": list(a.holders), "entity": a.entity, "property": a.property,
                                       "value": a.value, "text": a.text} for a in atoms]}
    if isinstance(meta.get("false_belief"), bool):
        spec["false_belief"] = meta["false_belief"]
    return spec


def _steps(records: list[TraceStepRecord]) -> list[Step]:
    return [{"action": r.action, "args": list(r.args), "kwargs": dict(r.kwargs)} for r in records]


def setup_count(meta: dict[str, Any], reference: list[TraceStepRecord]) -> int:
    count = meta.get("setup_steps")
    return int(count) if isinstance(count, int) and 0 <= count <= len(reference) else 0


def attempt_traces(traces: dict[int | None, list[TraceStepRecord]], meta: dict[str, Any],
                   labels: dict[int, str]) -> list[tuple[int | None, str, list[Step]]]:
    """(prediction id or None, label, full steps) for the reference and each model attempt.

    A model's attempt is played after the task's set-up steps, as the benchmark runs it.
    """
    reference = traces.get(None, [])
    setup = _steps(reference[:setup_count(meta, reference)])
    result: list[tuple[int | None, str, list[Step]]] = []
    if len(reference) > len(setup) or (reference and len(traces) == 1):
        result.append((None, "reference", _steps(reference)))
    for pid, records in traces.items():
        if pid is not None:
            result.append((pid, labels.get(pid, f"prediction {pid}"), setup + _steps(records)))
    return result


def detail_traces(detail: StimulusDetail) -> list[tuple[str, list[Step], dict[str, Any] | None]]:
    """What the stepper shows for a task: each trace with the task's goal."""
    traces: dict[int | None, list[TraceStepRecord]] = detail.extra.get("traces", {})
    labels = {p.id: p.model + (f" ({p.condition})" if p.condition != "-" else "") for p in detail.predictions}
    goal = goal_spec(detail.goal_atoms, detail.meta)
    return [(label, steps, goal) for _pid, label, steps in attempt_traces(traces, detail.meta, labels)]


def score_task(task: TraceTask) -> dict[int, bool | None]:
    """Each model attempt's verdict (prediction id -> reached the goal; None when undecidable)."""
    goal = goal_spec(task.goal_atoms, task.meta)
    return {pid: score_attempt(steps, goal).reached
            for pid, _label, steps in attempt_traces(task.traces, task.meta, {}) if pid is not None}


def score_dataset_traces(store: Store, dataset_id: int) -> int:
    """Score every model attempt of the dataset's NCP tasks; returns how many were scored."""
    cur = store.cursor()
    verdicts: dict[int, bool | None] = {}
    for task in trace_tasks(cur, dataset_id):
        verdicts.update(score_task(task))
    if verdicts:
        with store.transaction() as tx:
            set_prediction_correctness(tx, verdicts)
    return len(verdicts)
