"""Replay a trace of actions through the belief engine, keeping every step's state at hand.

Each step stores only its diff; a full copy of the flat state is kept every `CHECKPOINT_EVERY` steps, so
materialising any step costs one dict copy plus a few diffs, and a 1,000-step replay stays in the
milliseconds. The copies are made the first time a jump needs them: stepping through in order never does.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Mapping, NamedTuple

from app.beliefs.engine import (
    KNOWLEDGE,
    MISSING,
    SLOT,
    ActionArgumentError,
    BeliefTracker,
    CellKey,
    QuirkNote,
    StepOutcome,
    UnknownActionError,
    is_positive,
)
from storage.errors import ThinsliceError
from storage.steps import read_steps

CHECKPOINT_EVERY = 32
_LAYER_NAMES = {"world": "world_state", "first": "first_order", "second": "second_order"}


class TraceError(ThinsliceError):
    """A trace that cannot be replayed: not JSON, wrong shape, unknown action or wrong arguments."""

    def __init__(self, message: str, step: int | None = None) -> None:
        self.step = step
        super().__init__(f"step {step} (0-based): {message}" if step is not None else message)


class BeliefState:
    """A read-only view of the state after one step, over the flat cell mapping of the engine."""

    def __init__(self, cells: Mapping[CellKey, Any]) -> None:
        self.cells = cells

    def get(self, key: CellKey) -> Any:
        return self.cells.get(key)

    def world(self, entity: str, prop: str) -> Any:
        return self.cells.get(("world", entity, prop))

    def first(self, person: str, entity: str, prop: str) -> Any:
        return self.cells.get(("first", person, entity, prop))

    def second(self, person: str, other: str, entity: str, prop: str) -> Any:
        return self.cells.get(("second", person, other, entity, prop))

    def people(self) -> list[str]:
        """Thinking entities, in the order they appeared."""
        return [key[1] for key in self.cells if len(key) == 2 and key[0] == "first"]

    def entities(self) -> list[str]:
        """Everything the world knows about, in the order it appeared."""
        return list(dict.fromkeys(key[1] for key in self.cells if key[0] == "world"))

    def is_false_belief(self, key: CellKey) -> bool:
        """True when a belief cell says something the world contradicts."""
        belief = self.cells.get(key)
        if belief is None or key[0] == "world" or len(key) < 4 or key[-1] == KNOWLEDGE:
            return False
        world = self.cells.get(("world", key[-2], key[-1]))
        if is_positive(belief):
            return belief != world
        return belief == f"not({world})"

    def false_first_order(self, people: Iterable[str],
                          facts: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str, str, Any, Any]]:
        """(person, entity, property, belief, world) for each first-order belief the world contradicts.

        The same test as `is_false_belief`, person by person over the given facts, with each fact's world
        value looked up once: a viewer asks this of every person and fact on every step.
        """
        get = self.cells.get
        worlds = [(entity, prop, world, f"not({world})")
                  for entity, prop in facts if prop != KNOWLEDGE
                  for world in (get(("world", entity, prop)),)]
        for person in people:
            for entity, prop, world, negation in worlds:
                belief = get(("first", person, entity, prop))
                if belief is None:
                    continue
                contradicted = belief != world if is_positive(belief) else belief == negation
                if contradicted:
                    yield person, entity, prop, belief, world

    def to_nested(self) -> dict[str, dict]:
        """The state with the reference's nesting: world_state / first_order / second_order; sets sorted."""
        out: dict[str, dict] = {"world_state": {}, "first_order": {}, "second_order": {}}
        for key, value in self.cells.items():
            node = out[_LAYER_NAMES[key[0]]]
            path = key[1:]
            if value is SLOT:
                for part in path:
                    node = node.setdefault(part, {})
                continue
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = sorted(value) if isinstance(value, frozenset) else value
        return out


class StepRecord(NamedTuple):
    """One replayed step: the engine's outcome, with its position in the trace."""

    index: int
    outcome: StepOutcome

    @property
    def action(self) -> str:
        return self.outcome.action

    @property
    def returned(self) -> bool:
        return self.outcome.returned

    @property
    def changed_keys(self) -> frozenset:
        return frozenset(self.outcome.changes_flat[0::3])

    @property
    def quirks(self) -> tuple[QuirkNote, ...]:
        return self.outcome.quirks

    @property
    def failed_preconditions(self) -> tuple[str, ...]:
        return self.outcome.failed_preconditions

    def label(self) -> str:
        """A short human-readable form: `move_object_container(Beth, ball, box)`."""
        parts = [_short(a) for a in self.outcome.args]
        for name, value in self.outcome.kwargs.items():
            if name == "people_peeking" and value:
                parts.append("peeking: " + ", ".join(value))
            elif name == "people_distracted" and value:
                parts.append("distracted: " + ", ".join(value))
            elif name not in ("people_peeking", "people_distracted"):
                parts.append(_short(value))
        return f"{self.outcome.action}({', '.join(parts)})"


_step_record = tuple.__new__   # a StepRecord from its fields as one tuple, without the named tuple's constructor


class Replay:
    """Every step of a replayed trace; `state_at(i)` is the state after step i (-1: before any step)."""

    def __init__(self, records: list[StepRecord], final_cells: dict[CellKey, Any],
                 written_at: Mapping[CellKey, int]) -> None:
        """`final_cells` and `written_at` are those of the tracker that ran `records` (see `replay_steps`)."""
        self.records = records
        self._checkpoints: list[dict] = [{}]   # the state before steps k * CHECKPOINT_EVERY, made when needed
        self._cache_index: int | None = None
        self._cache_cells: dict | None = None
        self._final = BeliefState(final_cells)
        self._written_at = written_at

    def __len__(self) -> int:
        return len(self.records)

    def final_state(self) -> BeliefState:
        """The state after the last step (before any, for an empty trace), shared: every question about the end
        of a story reads it, and none may change it."""
        return self._final

    def last_write(self, key: CellKey) -> int | None:
        """The last step that wrote cell `key` (None: no step did); its last write is the final value."""
        return self._written_at.get(key)

    def state_at(self, index: int, shared: bool = False) -> BeliefState:
        """The state after step `index`. Stepping to a nearby step reuses the last one (a few diffs).

        With `shared`, the view is only valid until the next `state_at` call (no copy: for a viewer
        that shows one step at a time); otherwise it is an independent snapshot.
        """
        if not -1 <= index < len(self.records):
            raise IndexError(index)
        cells = self._cells_at(index)
        return BeliefState(cells if shared else dict(cells))

    def _cells_at(self, index: int) -> dict:
        current = self._cache_index
        if current is not None and index == current + 1:
            # The next step, as a viewer walking in order asks: just its changes.
            cells = self._cache_cells
            assert cells is not None
            apply_changes(cells, self.records[index].outcome.changes_flat)
            self._cache_index = index
            return cells
        if current is not None and abs(index - current) <= CHECKPOINT_EVERY // 2:
            cells = self._cache_cells
            assert cells is not None
            if index > current:
                for i in range(current + 1, index + 1):
                    apply_changes(cells, self.records[i].outcome.changes_flat)
            else:
                for i in range(current, index, -1):
                    _apply_backward(cells, self.records[i].outcome.changes_flat)
        else:
            base = (index + 1) // CHECKPOINT_EVERY
            cells = dict(self._checkpoint(base))
            for i in range(base * CHECKPOINT_EVERY, index + 1):
                apply_changes(cells, self.records[i].outcome.changes_flat)
        self._cache_index, self._cache_cells = index, cells
        return cells

    def _checkpoint(self, number: int) -> dict:
        """The state before step `number * CHECKPOINT_EVERY`, built from the one before it if not yet made."""
        checkpoints = self._checkpoints
        while len(checkpoints) <= number:
            cells = dict(checkpoints[-1])
            start = (len(checkpoints) - 1) * CHECKPOINT_EVERY
            for record in self.records[start:start + CHECKPOINT_EVERY]:
                apply_changes(cells, record.outcome.changes_flat)
            checkpoints.append(cells)
        return checkpoints[number]


def apply_changes(cells: dict, flat: tuple) -> None:
    """Apply a step's flat changes (key, old, new, ...) to a state: each cell takes its last new value."""
    if flat:
        cells.update(zip(flat[0::3], flat[2::3]))


def _apply_backward(cells: dict, flat: tuple) -> None:
    """Undo a step's flat changes, last first."""
    for key, old in zip(flat[-3::-3], flat[-2::-3]):
        if old is MISSING:
            del cells[key]
        else:
            cells[key] = old


def parse_steps(trace: Any) -> list[tuple[str, list, dict]]:
    """Validate the trace shape (an object with `steps`, or a bare list) into (action, args, kwargs), with the
    one step check (`storage.steps.read_steps`); the first bad step raises `TraceError` naming its index."""
    steps = trace.get("steps") if isinstance(trace, dict) else trace
    if not isinstance(steps, list):
        raise TraceError("the trace must be a JSON object with a 'steps' list")
    parsed, problems = read_steps(steps)
    if problems:
        p = problems[0]
        raise TraceError({"": f"expected an object with action/args/kwargs, got {_short(p.found)}",
                          "action": "missing or non-string 'action'",
                          "args": f"'args' must be a list, got {_short(p.found)}",
                          "kwargs": f"'kwargs' must be an object, got {_short(p.found)}"}[p.part], p.index)
    return parsed


def replay_steps(steps: Any) -> Replay:
    """Replay a trace (dict with `steps` or a list of steps); raises `TraceError` naming the bad step."""
    parsed = parse_steps(steps)
    tracker = BeliefTracker()
    records: list[StepRecord] = []
    apply = tracker.apply
    for index, (action, args, kwargs) in enumerate(parsed):
        try:
            outcome = apply(action, args, kwargs)
        except (UnknownActionError, ActionArgumentError) as exc:
            raise TraceError(str(exc), index) from None
        records.append(_step_record(StepRecord, (index, outcome)))
    # The tracker's cells were written in the order of the steps' changes, so they are the state after the
    # last step, keys in the order the changes first name them; the tracker is dropped here, so no one else
    # changes them.
    return Replay(records, tracker.cells, tracker.written_at)


def load_trace(text: str) -> Any:
    """Parse trace JSON text, turning a syntax error into a `TraceError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
