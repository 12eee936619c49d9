"""NCP tasks in the app: a task's traces as the stepper, the compare view and the dashboard replay them (a
model's attempt is played after the task's set-up steps), and scoring a dataset's stored attempts with the
one scorer, `app.benchmarks.ncp.score_attempt`, and its stored answers to story questions with
`app.benchmarks.ncp.score_story`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from app.beliefs.stories import STORY_KIND
from app.benchmarks.ncp import score_attempt, score_story
from storage import analysis
from storage.queries import TraceTask, task_attempts, tasks_by_id, trace_tasks
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


@dataclass(frozen=True)
class NcpAttempt:
    """One model's attempt at a task: the set-up steps then its own steps, and the task's goal (None when
    it has none); `correct` is what the store holds (None until a replay decides it)."""

    prediction_id: int
    stimulus_id: int
    model: str
    steps: list[Step]
    goal: dict[str, Any] | None
    correct: bool | None


def _setup(task: TraceTask | None) -> list[Step]:
    if task is None:
        return []
    reference = task.traces.get(None, [])
    return _steps(reference[:setup_count(task.meta, reference)])


def dataset_attempts(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[NcpAttempt]:
    """Every model attempt on the dataset's NCP tasks, ready to replay against its task's goal."""
    rows = task_attempts(cur, dataset_id=dataset_id)
    tasks = tasks_by_id(cur, sorted({sid for _pid, sid, _m, _c in rows}))
    attempts = []
    for pid, sid, model, correct in rows:
        task = tasks.get(sid)
        own = _steps(task.traces.get(pid, [])) if task else []
        goal = goal_spec(task.goal_atoms, task.meta) if task else None
        attempts.append(NcpAttempt(pid, sid, model, _setup(task) + own, goal, correct))
    return attempts


def compare_traces(cur: duckdb.DuckDBPyConnection, stimulus_id: int,
                   models: list[str] | None = None) -> list[tuple[str, list[Step], dict[str, Any] | None]]:
    """(label, steps, goal) for a task's reference trace and each model's attempt (optionally only `models`,
    in that order): what the compare view's steppers show side by side."""
    task = tasks_by_id(cur, [stimulus_id]).get(stimulus_id)
    if task is None:
        return []
    goal = goal_spec(task.goal_atoms, task.meta)
    traces: list[tuple[str, list[Step], dict[str, Any] | None]] = []
    if None in task.traces:
        traces.append(("reference", _steps(task.traces[None]), goal))
    rows = [(pid, model) for pid, _sid, model, _c in task_attempts(cur, stimulus_id=stimulus_id)]
    if models is not None:
        order = {m: i for i, m in enumerate(models)}
        rows = sorted((r for r in rows if r[1] in order), key=lambda r: order[r[1]])
    setup = _setup(task)
    traces += [(model, setup + _steps(task.traces.get(pid, [])), goal) for pid, model in rows]
    return traces


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


def score_dataset_stories(store: Store, dataset_id: int) -> int:
    """Score the dataset's answers to story questions that have no verdict yet (answers attached from a file
    of their own come without one) with `score_story`; returns how many were scored."""
    cur = store.cursor()
    # a dataset without stories (a results table of millions of answers) is not read at all, nor are the
    # stories of a dataset without unscored answers (a release of questions just imported)
    if not analysis.has_stimuli_of_kind(cur, dataset_id, STORY_KIND):
        return 0
    answers = analysis.predictions_frame(cur, dataset_id, with_meta=False).filter(pl.col("correct").is_null())
    if not answers.height:
        return 0
    stories = analysis.stimuli_frame(cur, dataset_id).filter(pl.col("kind") == STORY_KIND)["stimulus_id"]
    verdicts = {int(pid): verdict for pid, answer, truth in answers.filter(pl.col("stimulus_id").is_in(
        stories.to_list())).select("prediction_id", "answer", "ground_truth").iter_rows()
        if (verdict := score_story(answer, truth)) is not None}
    if verdicts:
        with store.transaction() as tx:
            set_prediction_correctness(tx, verdicts)
    return len(verdicts)
