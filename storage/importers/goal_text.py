"""Goal sentences, in the surface form the ExploreToM belief tracker prints, turned into goal atoms.

Forms understood (a trailing full stop is ignored, "thinks that" is accepted for "believes that"):
  "ball is in the basket"                                  world fact
  "Beth believes that ball is in the box"                  first order
  "Anne believes that Beth believes that ball is in the box"  second order
  "Anne believes that Beth is in the kitchen"              a person's room
  "apple peeled", "Beth believes that apple covered in chocolate"   object state

"X is in the Y" is printed for rooms and containers alike. A `GoalVocabulary` built from the task's steps
says which names are rooms or containers, which objects exist and which state values belong to which state
type. A name it does not know is a room when it is a common room word or ends in "room", otherwise a
container; an object state's
property is guessed as "<state_update> <is_VALUE>" (spaces as underscores), the reference's naming habit.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ROOM = "room_location"
CONTAINER = "container_location"
STATE_PREFIX = "<state_update> "

# Rooms recognised without a vocabulary (lower case); any name ending in "room" counts too.
COMMON_ROOMS = frozenset({
    "kitchen", "garden", "hall", "hallway", "office", "garage", "attic", "basement", "cellar", "porch",
    "balcony", "patio", "yard", "backyard", "library", "lobby", "corridor", "pantry", "study", "studio",
    "church", "park", "gym", "cafeteria", "laundry", "workshop", "nursery", "terrace", "landing",
})

_BELIEVES = re.compile(r"^(?P<holder>.+?) (?:believes|thinks) that (?P<rest>.+)$")
_IS_IN = re.compile(r"^(?P<entity>.+?) is in the (?P<value>.+)$")


class GoalParseError(ValueError):
    """A goal sentence this parser cannot read; the message says what form was expected."""


@dataclass(frozen=True)
class GoalAtom:
    holders: tuple[str, ...]
    entity: str
    property: str
    value: str
    text: str | None = None

    @property
    def order(self) -> int:
        return len(self.holders)

    def as_row(self) -> dict[str, Any]:
        return {"holders": list(self.holders), "entity": self.entity, "property": self.property,
                "value": self.value, "text": self.text}


@dataclass
class GoalVocabulary:
    """Names known from a task's steps: rooms, people, objects and state values (value -> property)."""

    rooms: set[str] = field(default_factory=set)
    containers: set[str] = field(default_factory=set)
    people: set[str] = field(default_factory=set)
    things: set[str] = field(default_factory=set)
    states: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_steps(cls, steps: Iterable[dict[str, Any]]) -> "GoalVocabulary":
        """Collect names from `{action, args, kwargs}` steps (set-up, reference or model traces)."""
        vocab = cls()
        for step in steps:
            action = step.get("action")
            args = list(step.get("args") or [])
            kwargs = dict(step.get("kwargs") or {})
            if action in ("enter_room", "leave_room", "location_declaration"):
                entity = args[0] if args else kwargs.get("person") or kwargs.get("entity")
                room = args[1] if len(args) > 1 else kwargs.get("room")
                thinking = kwargs.get("is_thinking_entity", True)
                if isinstance(entity, str):
                    (vocab.people if thinking else vocab.things).add(entity)
                if isinstance(room, str):
                    vocab.rooms.add(room)
            elif action in ("move_object_container", "move_object_room", "update_object_state"):
                names = ["person", "obj", "container" if action == "move_object_container" else "new_room"]
                if action == "update_object_state":
                    names = ["person", "obj", "value", "state_type"]
                values = {name: (args[i] if i < len(args) else kwargs.get(name)) for i, name in enumerate(names)}
                if isinstance(values.get("person"), str):
                    vocab.people.add(values["person"])
                if isinstance(values.get("obj"), str):
                    vocab.things.add(values["obj"])
                if action == "move_object_room" and isinstance(values.get("new_room"), str):
                    vocab.rooms.add(values["new_room"])
                if action == "move_object_container" and isinstance(values.get("container"), str):
                    vocab.containers.add(values["container"])
                if action == "update_object_state" and isinstance(values.get("value"), str) \
                        and isinstance(values.get("state_type"), str):
                    vocab.states[values["value"]] = STATE_PREFIX + values["state_type"]
            elif action == "leave_container":
                obj = args[0] if args else kwargs.get("obj")
                if isinstance(obj, str):
                    vocab.things.add(obj)
        return vocab

    def is_room(self, name: str) -> bool:
        if name in self.rooms:
            return True
        if name in self.containers:
            return False
        lowered = name.lower()
        return lowered in COMMON_ROOMS or lowered.endswith("room")


def state_property(value: str, vocabulary: GoalVocabulary | None = None) -> str:
    """The world-state property an object-state value belongs to."""
    if vocabulary and value in vocabulary.states:
        return vocabulary.states[value]
    return f"{STATE_PREFIX}<is_{value.strip().replace(' ', '_')}>"


def parse_goal_sentence(text: str, vocabulary: GoalVocabulary | None = None) -> GoalAtom:
    """Read one goal sentence into an atom; raise `GoalParseError` naming the sentence when it has no known form."""
    if not isinstance(text, str) or not text.strip():
        raise GoalParseError(f"empty goal sentence {text!r}")
    vocab = vocabulary or GoalVocabulary()
    rest = " ".join(text.strip().rstrip(".").split())
    holders: list[str] = []
    while (match := _BELIEVES.match(rest)) is not None:
        holders.append(match["holder"])
        rest = match["rest"]
    if len(holders) > 2:
        raise GoalParseError(f"goal {text!r} nests {len(holders)} beliefs; at most two (second order) exist")
    if (match := _IS_IN.match(rest)) is not None:
        entity, value = match["entity"], match["value"]
        person = entity in vocab.people or (not vocab.people and entity[:1].isupper())
        prop = ROOM if (person or vocab.is_room(value)) else CONTAINER
        return GoalAtom(tuple(holders), entity, prop, value, text)
    entity, value = _split_state(rest, vocab)
    if not entity or not value:
        raise GoalParseError(
            f"goal {text!r}: expected '<thing> is in the <place>' or '<object> <state>', optionally after "
            "'<person> believes that'")
    return GoalAtom(tuple(holders), entity, state_property(value, vocab), value, text)


def _split_state(rest: str, vocab: GoalVocabulary) -> tuple[str, str]:
    """Split "apple covered in chocolate" into (object, state), preferring the longest known object name."""
    for name in sorted(vocab.things, key=len, reverse=True):
        if rest.startswith(name + " "):
            return name, rest[len(name) + 1:]
    for value in sorted(vocab.states, key=len, reverse=True):
        if rest.endswith(" " + value):
            return rest[: -len(value) - 1], value
    head, _, tail = rest.partition(" ")
    return head, tail


def atom_from_mapping(record: dict[str, Any], vocabulary: GoalVocabulary | None = None) -> GoalAtom:
    """A structured atom {holders, entity, property, value[, text]}; raise `GoalParseError` for a bad one.

    `property` may be given as "room", "container" or a state type ("<is_peeled>") for convenience.
    """
    holders = record.get("holders", [])
    if isinstance(holders, str):
        holders = [holders]
    if not isinstance(holders, list) or not all(isinstance(h, str) and h for h in holders) or len(holders) > 2:
        raise GoalParseError(f"holders {holders!r}: expected a list of at most two names")
    missing = [k for k in ("entity", "property", "value") if not isinstance(record.get(k), str) or not record[k]]
    if missing:
        raise GoalParseError(f"goal atom {record!r} lacks a text value for {', '.join(missing)}")
    prop = record["property"]
    prop = {"room": ROOM, "container": CONTAINER}.get(prop, prop)
    if prop.startswith("<") and not prop.startswith(STATE_PREFIX):
        prop = STATE_PREFIX + prop
    text = record.get("text") if isinstance(record.get("text"), str) else None
    return GoalAtom(tuple(holders), record["entity"], prop, record["value"], text or atom_sentence(
        GoalAtom(tuple(holders), record["entity"], prop, record["value"])))


def atom_sentence(atom: GoalAtom) -> str:
    """The atom in the reference's surface form, e.g. "Anne believes that ball is in the box"."""
    if atom.property in (ROOM, CONTAINER):
        fact = f"{atom.entity} is in the {atom.value}"
    else:
        fact = f"{atom.entity} {atom.value}"
    return "".join(f"{h} believes that " for h in atom.holders) + fact
