"""Run a stored NCP task against a live model as the benchmark does, with the belief engine as the world.

The task's set-up steps are replayed first; the model then sees the goal, the task's context and the story
so far, and acts through the six tools. Every call it makes goes to the engine, which says what happened
(the story sentence) or which precondition failed. When the model stops, the goal is scored by the one NCP
scorer, :func:`app.benchmarks.ncp.score_attempt`, as imported attempts are: every atom must hold after the
last step, and the world must match (true belief) or differ (false belief) as the task says.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.beliefs.engine import ActionArgumentError, BeliefTracker, UnknownActionError
from app.beliefs.goals import FALSE_BELIEF, TRUE_BELIEF, goal_from_json
from app.benchmarks.ncp import NCP_ACTIONS, score_attempt
from app.live.client import LiveClient
from app.live.errors import LiveCancelled
from app.live.ncp import NcpStep, run_ncp_episode
from app.ncp import goal_spec, setup_count
from app.prompts import NCP_TASK, PromptTemplate
from storage.records import StimulusDetail

Step = dict[str, Any]


@dataclass(frozen=True)
class NcpTask:
    """What a live run needs of a stored task: its goal (engine form), context text and set-up steps."""

    goal: dict[str, Any]
    context: str = ""
    setup: tuple[Step, ...] = ()

    @classmethod
    def from_detail(cls, detail: StimulusDetail) -> NcpTask:
        """The task behind an `ncp_task` stimulus; ValueError when it has no goal to reach."""
        goal = goal_spec(detail.goal_atoms, detail.meta)
        if goal is None:
            raise ValueError(f"{detail.external_id} has no goal atoms: there is nothing for a model to reach")
        reference = detail.extra.get("traces", {}).get(None, [])
        setup = tuple({"action": r.action, "args": list(r.args), "kwargs": dict(r.kwargs)}
                      for r in reference[:setup_count(detail.meta, reference)])
        return cls(goal, detail.text or "", setup)


class BeliefExecutor:
    """The NCP world: a belief tracker that has played the task's set-up and runs the model's actions.

    Calling it with ``(action, args, kwargs)`` returns ``(ok, message)``: the story sentence of an action
    that happened, or which precondition failed. Actions the engine ran (done or refused by a
    precondition) are kept in :attr:`trace`, in the stored trace-step form; calls it could not run at all
    (an action outside the six, arguments of the wrong type) are not, since replaying them would fail.
    """

    def __init__(self, setup: Sequence[Step] = ()) -> None:
        self.tracker = BeliefTracker()
        self.trace: list[Step] = []
        sentences: list[str] = []
        for step in setup:
            outcome = self.tracker.apply(step["action"], step.get("args", []), step.get("kwargs") or {})
            sentences += outcome.story_sentences
        self.setup_sentences: tuple[str, ...] = tuple(sentences)

    def __call__(self, action: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[bool, str]:
        if action not in NCP_ACTIONS:
            return False, f"{action} is not an action you can take; available: {', '.join(NCP_ACTIONS)}"
        try:
            outcome = self.tracker.apply(action, args, kwargs)
        except (UnknownActionError, ActionArgumentError) as error:
            return False, f"Not done: {error}"
        self.trace.append({"action": action, "args": list(args), "kwargs": dict(kwargs)})
        if outcome.returned:
            return True, " ".join(outcome.story_sentences) or f"{action} done."
        reasons = "; ".join(outcome.failed_preconditions) or "its preconditions do not hold"
        return False, f"Not done: {reasons}."


def goal_text(goal: dict[str, Any]) -> str:
    """The goal as the model reads it: one line per atom, and what the world must be like."""
    parsed = goal_from_json(goal)
    lines = [f"- {atom.text}" for atom in parsed.atoms]
    if parsed.kind == FALSE_BELIEF:
        lines.append("At least one of these beliefs must be false (differ from where things really are).")
    elif parsed.kind == TRUE_BELIEF:
        lines.append("Every one of these beliefs must be true (match where things really are).")
    return "\n".join(["All of the following must hold when you stop:", *lines])


def state_text(context: str, setup_sentences: Sequence[str]) -> str:
    """The world as the model reads it: the task's context and the story the set-up told."""
    parts = [context.strip()] if context.strip() else []
    if setup_sentences:
        parts.append("What has happened so far:\n" + "\n".join(setup_sentences))
    return "\n\n".join(parts) or "(nothing has happened yet)"


@dataclass(frozen=True)
class LiveNcpResult:
    """A finished live attempt. ``steps`` are every tool call as made; ``trace`` the actions the engine ran
    (what is stored and replayed after the set-up); ``atoms`` each goal atom's text and whether it holds
    after the last step. Token counts are None when the server reported none."""

    steps: tuple[NcpStep, ...]
    trace: tuple[Step, ...]
    success: bool | None
    final_text: str
    stopped: str
    latency_s: float
    tokens_in: int | None
    tokens_out: int | None
    goal: str
    state: str
    atoms: tuple[tuple[str, bool], ...] = field(default=())


def _total(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def run_live_ncp_task(client: LiveClient, task: NcpTask, max_steps: int = 30, template: PromptTemplate = NCP_TASK,
                      on_step: Callable[[NcpStep], None] | None = None, cancel: Callable[[], bool] | None = None,
                      **options: Any) -> LiveNcpResult:
    """Let the model act on the task until it stops (or ``max_steps`` calls), then score the goal.

    ``on_step`` is called on this thread after each tool call. Raises :class:`LiveCancelled` when
    ``cancel`` turns true (a cancelled attempt has no verdict) and any other
    :class:`app.live.errors.LiveError` as the client raised it. ``options`` go to every request
    (``stream=True`` lets a cancel end a silent request at once)."""
    executor = BeliefExecutor(task.setup)
    goal, state = goal_text(task.goal), state_text(task.context, executor.setup_sentences)
    episode = run_ncp_episode(client, goal, state, executor, max_steps, template, on_step, cancel, **options)
    if episode.stopped == "cancelled":
        raise LiveCancelled(episode.final_text)
    score = score_attempt([*task.setup, *executor.trace], task.goal)
    return LiveNcpResult(
        steps=tuple(episode.steps), trace=tuple(executor.trace), success=score.reached,
        final_text=episode.final_text,
        stopped=episode.stopped, latency_s=sum(a.latency_s for a in episode.answers),
        tokens_in=_total([a.prompt_tokens for a in episode.answers]),
        tokens_out=_total([a.completion_tokens for a in episode.answers]), goal=goal, state=state,
        atoms=score.atoms)


def transcript(result: LiveNcpResult) -> str:
    """The attempt as readable text (what is kept as the prediction's raw output)."""
    lines = [f"{i + 1}. {step_label(s)} -> {'ok' if s.returned else 'failed'}: {s.message}"
             for i, s in enumerate(result.steps)]
    if result.final_text:
        lines.append(result.final_text)
    return "\n".join(lines)


def step_label(step: NcpStep) -> str:
    """A call as it reads in a list: `move_object_container(Anne, ball, basket; distracted: Beth)`."""
    parts = [a if isinstance(a, str) else repr(a) for a in step.args]
    for name, value in step.kwargs.items():
        if isinstance(value, list) and value:
            parts.append(f"{name.replace('people_', '')}: {', '.join(map(str, value))}")
    return f"{step.action}({', '.join(parts)})"
