"""The belief engine's actions as data: each action's parameter names, read from the tracker's own methods.

`BeliefTracker`'s action methods are the one action table (names, parameters, defaults). Whatever needs the
list elsewhere (step checks at import, the vocabulary of a trace, the live tool schemas) reads it here.
"""
from __future__ import annotations

import inspect
from functools import cache

from app.beliefs.engine import BeliefTracker

ACTIONS: tuple[str, ...] = BeliefTracker.ACTIONS


@cache
def action_parameters(action: str) -> tuple[str, ...]:
    """The action's parameter names in call order (positional arguments of a step bind to these); KeyError
    for an action the engine does not have."""
    if action not in ACTIONS:
        raise KeyError(action)
    return tuple(inspect.signature(getattr(BeliefTracker, action)).parameters)[1:]   # without self


def step_values(action: str, args: list, kwargs: dict) -> dict[str, object]:
    """A step's arguments by parameter name (positional ones bound in order); {} for an unknown action."""
    if action not in ACTIONS:
        return {}
    values: dict[str, object] = dict(zip(action_parameters(action), args))
    values.update(kwargs)
    return values
