"""The shape of an action step as traces are written: `{action, args, kwargs}`, or `[action, *args]`.

One check for every reader of steps: the NCP and ExploreToM importer (which names each bad step's file, record
and field) and the belief engine's replay (which names the bad step's index). Whether an action exists, and
whether its arguments fit, is the engine's to say.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Step = tuple[str, list, dict]


@dataclass(frozen=True)
class StepProblem:
    """What is wrong with the step at `index`: the step itself (`part` ""), its action, args or kwargs."""

    index: int
    part: str
    found: Any
    expected: str


def read_steps(value: list) -> tuple[list[Step], list[StepProblem]]:
    """The well-formed steps as (action, args, kwargs), and a problem for each other one, in order.

    Missing or null args and kwargs are empty; an action is a non-empty string."""
    steps: list[Step] = []
    problems: list[StepProblem] = []
    for index, step in enumerate(value):
        if isinstance(step, dict):
            action, args, kwargs = step.get("action"), step.get("args"), step.get("kwargs")
            args = [] if args is None else args
            kwargs = {} if kwargs is None else kwargs
        elif isinstance(step, list) and step and isinstance(step[0], str):
            action, args, kwargs = step[0], step[1:], {}
        else:
            problems.append(StepProblem(index, "", step, "a step {action, args, kwargs}"))
            continue
        if not isinstance(action, str) or not action.strip():
            problems.append(StepProblem(index, "action", action, "an action name"))
        elif not isinstance(args, list):
            problems.append(StepProblem(index, "args", args, "a list"))
        elif not isinstance(kwargs, dict):
            problems.append(StepProblem(index, "kwargs", kwargs, "an object"))
        else:
            steps.append((action, args, kwargs))
    return steps, problems
