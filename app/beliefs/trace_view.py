"""What the belief stepper shows of one trace, worked out without Qt: who and what the trace is about, the
text of a belief cell, who saw (or heard) a step, and the false beliefs to name.

`load_trace` replays a trace once and collects its people, objects, containers, rooms and each entity's
properties; the stepper's widgets only draw what these functions say.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

from app.beliefs.engine import (CONTAINER, KNOWLEDGE, KNOWLEDGE_ENTITY, ROOM, STATE_PREFIX, UNKNOWN_WHEREABOUTS,
                                StepOutcome, is_positive)
from app.beliefs.goals import GoalTimeline, evaluate_goal, goal_or_trace_error, vocabulary_from_steps
from app.beliefs.replay import BeliefState, Replay, TraceError, parse_steps, replay_steps

COMMUNICATIONS = frozenset({"private_communication", "broadcast_communication"})


@dataclass
class TraceData:
    """One trace replayed, with the names it is about (in order of appearance) and each entity's properties."""

    label: str
    replay: Replay | None
    timeline: GoalTimeline | None
    error: str
    people: list[str]
    objects: list[str]
    containers: list[str]
    rooms: list[str]
    props: dict[str, list[str]]

    @property
    def count(self) -> int:
        return len(self.replay) if self.replay else 0


def load_trace(label: str, steps: Sequence[dict], goal: Any) -> TraceData:
    """Replay `steps` (and evaluate `goal`); a trace the engine rejects gives a TraceData with its error."""
    try:
        replay = replay_steps(list(steps))
        timeline = None
        if goal:
            vocabulary = vocabulary_from_steps(parse_steps(list(steps)))
            timeline = evaluate_goal(goal_or_trace_error(goal, vocabulary), replay)
    except TraceError as exc:
        return TraceData(label, None, None, str(exc), [], [], [], [], {})
    people: dict[str, None] = {}
    entities: dict[str, None] = {}
    containers: dict[str, None] = {}
    rooms: dict[str, None] = {}
    props: dict[str, dict[str, None]] = {}
    for record in replay.records:
        for key, _old, new in record.outcome.changes:
            if len(key) == 2 and key[0] == "first":
                people[key[1]] = None
            if len(key) < 3:
                continue
            entity, prop = key[-2], key[-1]
            props.setdefault(entity, {})[prop] = None
            if key[0] == "world":
                entities[entity] = None
                if prop == ROOM and is_positive(new):
                    rooms[new] = None
                if prop == CONTAINER and is_positive(new):
                    containers[new] = None
            elif entity != KNOWLEDGE_ENTITY:
                entities[entity] = None
    for action, args, _kwargs in parse_steps(list(steps)):
        if action in ("enter_room", "leave_room", "location_declaration") and len(args) > 1:
            rooms.setdefault(str(args[1]), None)
    objects = [e for e in entities if e not in people and e not in containers]
    return TraceData(label, replay, timeline, "", list(people), objects, list(containers), list(rooms),
                     {e: list(p) for e, p in props.items()})


def short_value(value: Any) -> str:
    """A belief value as a cell shows it: "?" for no longer knowing, "not kitchen", "box or basket" for a set."""
    if value == UNKNOWN_WHEREABOUTS:
        return "?"
    if isinstance(value, frozenset):
        return " or ".join(sorted(value))
    if isinstance(value, str) and value.startswith("not(") and value.endswith(")"):
        return "not " + value[4:-1]
    return str(value)


def cell_text(state: BeliefState, prefix: tuple, entity: str, props: list[str]) -> str:
    """The text of one table cell: where `prefix` (world, a person, a pair) has the entity, and its states."""
    if entity == KNOWLEDGE_ENTITY:
        topics = state.get((*prefix, entity, KNOWLEDGE))
        return ", ".join(sorted(topics)) if topics else ""
    room = state.get((*prefix, entity, ROOM))
    container = state.get((*prefix, entity, CONTAINER))
    parts = []
    if room is not None:
        parts.append(short_value(room))
    if container is not None:
        parts.append(("in " if is_positive(container) or isinstance(container, frozenset) else "")
                     + short_value(container))
    states = [short_value(state.get((*prefix, entity, p))) for p in props
              if p.startswith(STATE_PREFIX) and state.get((*prefix, entity, p)) is not None]
    text = "\n".join(parts)
    if states:
        text += ("\n" if text else "") + ", ".join(states)
    return text


def prop_words(prop: str) -> str:
    if prop == ROOM:
        return "room"
    if prop == CONTAINER:
        return "container"
    if prop == KNOWLEDGE:
        return "heard about"
    return prop[len(STATE_PREFIX):] if prop.startswith(STATE_PREFIX) else prop


def where(prop: str, value: Any) -> str:
    """"in the kitchen", "not kitchen", or a state's value: the belief in words for a sentence."""
    if prop == ROOM or prop == CONTAINER:
        return f"in the {value}" if is_positive(value) else short_value(value)
    return str(value)


class Audience(NamedTuple):
    """Who took part in a step: `verb` is "Seen by" or, for talk, "Heard by"."""

    verb: str
    attentive: tuple[str, ...]
    peeking: tuple[str, ...]
    distracted: tuple[str, ...]


def audience(outcome: StepOutcome) -> Audience:
    """Who saw (or heard) a step first-hand, who peeked, and who was there but missed it."""
    verb = "Heard by" if outcome.action in COMMUNICATIONS else "Seen by"
    attentive = tuple(w for w in outcome.witnesses if w not in outcome.peeking)
    return Audience(verb, attentive, outcome.peeking, outcome.distracted)


def false_beliefs(data: TraceData, state: BeliefState, limit: int = 4) -> tuple[list[str], int]:
    """The first `limit` first-order beliefs the world contradicts, in words, and how many there are."""
    shown: list[str] = []
    count = 0
    facts = [(entity, prop) for entity in data.people + data.objects for prop in data.props.get(entity, ())]
    for person, entity, prop, belief, world in state.false_first_order(data.people, facts):
        count += 1
        if len(shown) < limit:   # only the first few are named; the rest are counted
            subject = entity if entity in data.people else f"the {entity}"
            shown.append(f"{person} believes {subject} is {where(prop, belief)} (really {where(prop, world)})")
    return shown, count
