"""The NCP-ExploreToM belief-state engine: world state, first- and second-order beliefs.

The semantics follow the reference belief tracker described in docs (BELIEFS.md), quirks included, because a
researcher stepping through a trace must see exactly what the benchmark's environment computed. Each quirk is
a `Quirk` member; every step records which quirks decided its outcome.

State is kept as one flat mapping from a *cell key* to a value, which makes per-step diffs, snapshots and
highlighting cheap:

* `("world", entity, prop)`                 the world
* `("first", person, entity, prop)`         what `person` believes
* `("second", person, other, entity, prop)` what `person` believes `other` believes
* `("first", person)` / `("second", person, other)` hold `SLOT`: the (possibly empty) belief table exists.

Values are strings (`"kitchen"`, `"not(kitchen)"`, `"not(???)"`), or a frozenset of topics for the
`KNOWLEDGE` property of entity `""`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Iterable, Mapping

ROOM = "room_location"
CONTAINER = "container_location"
KNOWLEDGE = "<knowledge>"
KNOWLEDGE_ENTITY = ""
STATE_PREFIX = "<state_update> "
UNKNOWN_WHEREABOUTS = "not(???)"

CellKey = tuple
Change = tuple  # (key, old value or MISSING, new value)


class _Sentinel:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


SLOT = _Sentinel("SLOT")
MISSING = _Sentinel("MISSING")


def negated(value: str) -> str:
    """The negative-knowledge form of a value: `not(kitchen)`."""
    return f"not({value})"


def is_positive(value: Any) -> bool:
    """True for a value that says where something is (not None, not a `not(...)` value)."""
    return isinstance(value, str) and not value.startswith("not(")


class Quirk(Enum):
    """Behaviours of the reference tracker a reader would not expect; each is reproduced on purpose."""

    OLD_ROOM_NOT_LEFT = "old_room_not_left"
    EMPTIED_CONTAINER_STILL_HIDES = "emptied_container_still_hides"
    LEAVE_CONTAINER_LOGGED_AS_LEAVE_ROOM = "leave_container_logged_as_leave_room"
    DISTRACTED_GET_SECOND_ORDER = "distracted_get_second_order"
    CONTAINER_ROOM_WORLD_ONLY = "container_room_world_only"
    ENTRY_SEEN_SECOND_ORDER_ONLY = "entry_seen_second_order_only"

    @property
    def title(self) -> str:
        return _QUIRK_TEXT[self][0]

    @property
    def explanation(self) -> str:
        return _QUIRK_TEXT[self][1]


_QUIRK_TEXT = {
    Quirk.OLD_ROOM_NOT_LEFT: (
        "Old room not left",
        "Entering a room does not leave the previous one: people still there keep believing the "
        "person is with them.",
    ),
    Quirk.EMPTIED_CONTAINER_STILL_HIDES: (
        "Taken-out object still hidden",
        "An object taken out of a container keeps the value not(container), which is not empty, so "
        "the object still counts as hidden and people entering do not see it.",
    ),
    Quirk.LEAVE_CONTAINER_LOGGED_AS_LEAVE_ROOM: (
        "Logged as leave_room",
        "The reference logs leave_container under the action name leave_room in its story tuples.",
    ),
    Quirk.DISTRACTED_GET_SECOND_ORDER: (
        "Distracted still get second-order beliefs",
        "A distracted witness learns nothing first-hand, yet records what every witness now "
        "believes (second order).",
    ),
    Quirk.CONTAINER_ROOM_WORLD_ONLY: (
        "Container's room recorded only in the world",
        "Moving an object into a container places the container in the room in the world only; "
        "witnesses form no belief about where the container is.",
    ),
    Quirk.ENTRY_SEEN_SECOND_ORDER_ONLY: (
        "Seen on entry: second order only",
        "When someone enters, the people already in the room record that everyone present sees the "
        "room's visible things (second order, themselves included), but their own first-order "
        "beliefs are not updated.",
    ),
}


@dataclass(frozen=True)
class QuirkNote:
    """A quirk that decided part of a step's outcome, with the specific consequence in words."""

    quirk: Quirk
    detail: str


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What one action did: its result, the story it told, what changed, who saw it, and why."""

    action: str
    args: tuple
    kwargs: Mapping[str, Any]
    returned: bool
    story_sentences: tuple[str, ...]
    changes: tuple[Change, ...]
    witnesses: tuple[str, ...]
    peeking: tuple[str, ...]
    distracted: tuple[str, ...]
    failed_preconditions: tuple[str, ...]
    quirks: tuple[QuirkNote, ...]
    logged_action: str


class UnknownActionError(ValueError):
    """The action name is not one the engine knows."""


class ActionArgumentError(ValueError):
    """The arguments do not fit the action's signature."""


class _StepContext:
    """What the running step has done so far (a plain class: one is made for every step)."""

    __slots__ = ("changes", "witnesses", "failed", "quirks", "sentences")

    def __init__(self) -> None:
        self.changes: list = []
        self.witnesses: list = []
        self.failed: list = []
        self.quirks: list = []
        self.sentences: list = []


class BeliefTracker:
    """Applies actions one at a time to a live belief state and reports each step's outcome.

    `apply(action, args, kwargs)` never raises for a failed precondition (it returns an outcome with
    `returned` False and no changes); it raises `UnknownActionError` / `ActionArgumentError` for
    malformed calls.
    """

    ACTIONS = (
        "location_declaration",
        "enter_room",
        "leave_room",
        "leave_container",
        "move_object_container",
        "move_object_room",
        "update_object_state",
        "private_communication",
        "broadcast_communication",
    )

    def __init__(self) -> None:
        self.cells: dict[CellKey, Any] = {}
        self.people: list[str] = []
        self._people_set: set[str] = set()
        self._world_props: dict[str, list[str]] = {}
        self._visible: dict[tuple[str, str], bool] = {}
        # Who is in each room, as `_people_in` found it; forgotten whenever anyone's room or the people change.
        self._present: dict[Any, list[str]] = {}
        # The world's room of every entity (None if it has none), in the order of `_world_props`.
        self._room_of: dict[str, Any] = {}
        self._ctx = _StepContext()
        self._record = self._ctx.changes.append
        self._parameters = {name: _Signature(_parameters_of(getattr(self, name))) for name in self.ACTIONS}

    # ----- public ---------------------------------------------------------------------------------
    def apply(self, action: str, args: Iterable[Any] = (), kwargs: Mapping[str, Any] | None = None) -> StepOutcome:
        """Run one action; see the class docstring for what is raised and what is returned."""
        signature = self._parameters.get(action)
        if signature is None:
            raise UnknownActionError(f"unknown action {action!r} (known: {', '.join(self.ACTIONS)})")
        args = tuple(args)
        kwargs = dict(kwargs) if kwargs else {}
        arguments = _bind(action, signature, args, kwargs)
        _check_argument_types(action, arguments)
        self._ctx = ctx = _StepContext()
        self._record = ctx.changes.append
        returned = bool(getattr(self, action)(**arguments))
        logged = "leave_room" if action == "leave_container" else action
        if not returned:
            # Every action checks all its preconditions before writing, so nothing can have changed.
            assert not ctx.changes, f"{action} wrote before failing"
            return StepOutcome(action, args, kwargs, False, (), (), tuple(dict.fromkeys(ctx.witnesses)), (), (),
                               tuple(ctx.failed), (), logged)
        return StepOutcome(
            action,
            args,
            kwargs,
            True,
            tuple(ctx.sentences),
            tuple(ctx.changes),
            tuple(dict.fromkeys(ctx.witnesses)),
            tuple(arguments.get("people_peeking") or ()),
            tuple(arguments.get("people_distracted") or ()),
            tuple(ctx.failed),
            tuple(ctx.quirks),
            logged,
        )

    def get(self, key: CellKey) -> Any:
        return self.cells.get(key)

    def world(self, entity: str, prop: str) -> Any:
        return self.cells.get(("world", entity, prop))

    def first(self, person: str, entity: str, prop: str) -> Any:
        return self.cells.get(("first", person, entity, prop))

    # ----- actions (names and parameters are the trace format) ------------------------------------
    def location_declaration(self, entity: str, room: str, is_thinking_entity: bool = True,
                             people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """Place `entity` in `room` at the start of a story; observed like an entrance."""
        ok = self._enter(entity, room, is_thinking_entity, people_peeking or [], people_distracted or [])
        if ok:
            self._say(f"{entity} is in the {room}.")
            self._say_secret_watchers(people_peeking, people_distracted)
        return ok

    def enter_room(self, person: str, room: str, is_thinking_entity: bool = True,
                   people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`person` enters `room`; fails if already there."""
        ok = self._enter(person, room, is_thinking_entity, people_peeking or [], people_distracted or [])
        if ok:
            self._say(f"{person} entered the {room}.")
            self._say_secret_watchers(people_peeking, people_distracted)
        return ok

    def leave_room(self, person: str, room: str,
                   people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`person` leaves `room`; fails unless they are in it."""
        ok = self._leave(person, room, people_peeking or [], people_distracted or [])
        if ok:
            self._say(f"{person} left the {room}.")
            self._say_secret_watchers(people_peeking, people_distracted)
        return ok

    def leave_container(self, obj: str, container: str,
                        people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`obj` comes out of `container`; fails unless it is in it."""
        if self.world(obj, CONTAINER) != container:
            return self._fail(f"{obj} is not in the {container}")
        room = self.world(obj, ROOM)
        present = self._people_in(room) if room is not None else []
        if not self._watchers_ok(present, None, people_peeking or [], people_distracted or []):
            return False
        self._set(("world", obj, CONTAINER), negated(container))
        self._observe(obj, CONTAINER, negated(container), *self._sight(room, people_peeking or [], people_distracted or []))
        self._note(Quirk.LEAVE_CONTAINER_LOGGED_AS_LEAVE_ROOM,
                   f"The reference story tuple for this step reads leave_room({obj}, {container}).")
        self._say(f"{obj} left the {container}.")
        self._say_secret_watchers(people_peeking, people_distracted)
        return True

    def move_object_container(self, person: str, obj: str, container: str,
                              people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`person` puts `obj` into `container` in the room they are in."""
        room = self._hands_on_room(person, obj)
        if room is None:
            return False
        if self.world(obj, CONTAINER) == container:
            return self._fail(f"{obj} is already in the {container}")
        if not self._watchers_ok(self._people_in(room), person, people_peeking or [], people_distracted or []):
            return False
        witnesses, real = self._sight(room, people_peeking or [], people_distracted or [])
        container_room_before = self.world(container, ROOM)
        self._set(("world", obj, CONTAINER), container)
        self._set(("world", obj, ROOM), room)
        self._set(("world", container, ROOM), room)
        self._observe(obj, CONTAINER, container, witnesses, real)
        self._observe(obj, ROOM, room, witnesses, real)
        # Everyone present, distracted or not, records that everyone present saw the move.
        for b in witnesses:
            for w in witnesses:
                self._set(("second", b, w, obj, CONTAINER), container)
                self._set(("second", b, w, obj, ROOM), room)
        distracted = people_distracted or []
        if distracted:
            self._note(Quirk.DISTRACTED_GET_SECOND_ORDER,
                       f"{_names(distracted)} did not see the move (no first-order change) but now "
                       f"{'believes' if len(distracted) == 1 else 'believe'} that everyone present believes "
                       f"the {obj} is in the {container}.")
        if container_room_before != room:
            self._note(Quirk.CONTAINER_ROOM_WORLD_ONLY,
                       f"The world now places the {container} in the {room}; no witness believes it.")
        self._say(f"{person} moved the {obj} to the {container}, which is also located in the {room}.")
        self._say_secret_watchers(people_peeking, people_distracted)
        return True

    def move_object_room(self, person: str, obj: str, new_room: str) -> bool:
        """`person` carries `obj` from their room to `new_room` (leaving any container behind)."""
        person_room = self.world(person, ROOM)
        obj_room = self.world(obj, ROOM)
        if not is_positive(person_room):
            return self._fail(f"{person}'s room is not known")
        if not is_positive(obj_room):
            return self._fail(f"the {obj}'s room is not known")
        if person_room != obj_room:
            return self._fail(f"{person} is in the {person_room} but the {obj} is in the {obj_room}")
        if new_room == person_room:
            return self._fail(f"the {obj} is already in the {new_room}")
        container = self.world(obj, CONTAINER)
        left_container = is_positive(container)
        if left_container:
            seen = self._sight(obj_room, [], [])
            self._set(("world", obj, CONTAINER), negated(container))
            self._observe(obj, CONTAINER, negated(container), *seen)
        self._leave(obj, obj_room, [], [])
        self._leave(person, person_room, [], [])
        self._enter(person, new_room, True, [], [])
        self._enter(obj, new_room, False, [], [])
        if left_container:
            self._say(f"{person} moved the {obj} to the {new_room}, leaving the {container} in its original location.")
        else:
            self._say(f"{person} moved the {obj} to the {new_room}.")
        return True

    def update_object_state(self, person: str, obj: str, state_value: str, state_type: str, story_text: str,
                            visible: bool = True,
                            people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`person` changes a property of `obj`; later entrants see it only if `visible`."""
        room = self._hands_on_room(person, obj)
        if room is None:
            return False
        prop = STATE_PREFIX + state_type
        if self.world(obj, prop) == state_value:
            return self._fail(f"the {obj} is already {state_value}")
        if not self._watchers_ok(self._people_in(room), person, people_peeking or [], people_distracted or []):
            return False
        witnesses, real = self._sight(room, people_peeking or [], people_distracted or [])
        self._visible[(obj, prop)] = bool(visible)
        self._set(("world", obj, ROOM), room)
        self._set(("world", obj, prop), state_value)
        self._observe(obj, prop, state_value, witnesses, real)
        self._observe(obj, ROOM, room, witnesses, real)
        self._say(story_text)
        self._say_secret_watchers(people_peeking, people_distracted)
        return True

    def private_communication(self, speaker: str, listener: str, topic: Any) -> bool:
        """`speaker` tells `listener` a fact `[entity, property, value, is_true]` or a topic string."""
        self._register_all([speaker, listener])
        pairs = ((listener, listener), (listener, speaker), (speaker, listener))
        if isinstance(topic, str):
            self._learn_topic(listener, pairs, topic)
            self._say(f"{speaker} told privately to {listener} about the {topic}.")
            return True
        entity, prop, value, is_true = topic
        told = value if is_true else negated(value)
        self._set(("first", listener, entity, prop), told)
        for p, q in pairs:
            self._set(("second", p, q, entity, prop), told)
        self._say(f"{speaker} told privately to {listener} that {self._fact_text(entity, prop, value, is_true)}.")
        return True

    def broadcast_communication(self, speaker: str, topic: str,
                                people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`speaker` talks about `topic` out loud; everyone in the room (and peekers) hears it."""
        room = self.world(speaker, ROOM)
        if not is_positive(room):
            return self._fail(f"{speaker}'s room is not known")
        if not self._watchers_ok(self._people_in(room), speaker, people_peeking or [], people_distracted or []):
            return False
        witnesses, real = self._sight(room, people_peeking or [], people_distracted or [])
        for w in real:
            self._add_topic(("first", w, KNOWLEDGE_ENTITY, KNOWLEDGE), topic)
            for b in witnesses:
                self._add_topic(("second", w, b, KNOWLEDGE_ENTITY, KNOWLEDGE), topic)
        self._say(f"{speaker} told out loud about the {topic}.")
        self._say_secret_watchers(people_peeking, people_distracted)
        return True

    # ----- building blocks ------------------------------------------------------------------------
    def _enter(self, entity: str, room: str, thinking: bool, peeking: list, distracted: list) -> bool:
        old_room = self.world(entity, ROOM)
        if old_room == room:
            return self._fail(f"{entity} is already in the {room}")
        present = self._people_in(room) + ([entity] if thinking else [])
        if not self._watchers_ok(present, entity, peeking, distracted):
            return False
        if thinking:
            self._register(entity)
        self._set(("world", entity, ROOM), room)
        witnesses, real = self._sight(room, peeking, distracted)
        self._observe(entity, ROOM, room, witnesses, real)
        if is_positive(old_room):
            stale = [q for q in self._people_in(old_room) if q != entity and self.first(q, entity, ROOM) == old_room]
            if stale:
                self._note(Quirk.OLD_ROOM_NOT_LEFT,
                           f"{_names(stale)} still {'believes' if len(stale) == 1 else 'believe'} "
                           f"{entity} is in the {old_room}.")
        if thinking:
            self._look_around(entity, room, witnesses, real)
        return True

    def _leave(self, entity: str, room: str, peeking: list, distracted: list) -> bool:
        if self.world(entity, ROOM) != room:
            return self._fail(f"{entity} is not in the {room}")
        if not self._watchers_ok(self._people_in(room), entity, peeking, distracted):
            return False
        witnesses, real = self._sight(room, peeking, distracted)
        self._set(("world", entity, ROOM), negated(room))
        self._observe(entity, ROOM, negated(room), witnesses, real)
        return True

    def _look_around(self, entrant: str, room: str, witnesses: list[str], real: list[str]) -> None:
        """What the entrant sees of the room, and what everyone present assumes the others saw."""
        diverged: list[tuple[str, str]] = []
        cells = self.cells
        get = cells.get
        record = self._record
        visible = self._visible
        for entity in self._entities_in(room):
            hidden_in = get(("world", entity, CONTAINER))
            if hidden_in is None:
                for prop in self._world_props[entity]:
                    if prop == CONTAINER or (prop != ROOM and not visible.get((entity, prop), True)):
                        continue
                    value = get(("world", entity, prop))
                    key = ("first", entrant, entity, prop)
                    old = get(key, MISSING)
                    if old != value:
                        cells[key] = value
                        record((key, old, value))
                    for w in real:
                        if w != entrant and get(("first", w, entity, prop)) != value:
                            diverged.append((entity, w))
                        # What `w` now believes each witness believes; inlined: the busiest loop of a replay.
                        for other in witnesses:
                            key = ("second", w, other, entity, prop)
                            old = get(key, MISSING)
                            if old != value:
                                cells[key] = value
                                record((key, old, value))
                continue
            if not is_positive(hidden_in):
                self._note(Quirk.EMPTIED_CONTAINER_STILL_HIDES,
                           f"The {entity} is out of the {hidden_in[4:-1]} but still counts as hidden, "
                           f"so {entrant} does not see it.")
            believed_visible = self.first(entrant, entity, CONTAINER) is None
            if believed_visible and is_positive(self.first(entrant, entity, ROOM)):
                # The entrant expected to see it and does not: they no longer know where it is.
                self._set(("first", entrant, entity, ROOM), UNKNOWN_WHEREABOUTS)
                for w in real:
                    self._set(("second", w, entrant, entity, ROOM), UNKNOWN_WHEREABOUTS)
                for b in witnesses:
                    self._set(("second", entrant, b, entity, ROOM), UNKNOWN_WHEREABOUTS)
        if diverged:
            self._note(Quirk.ENTRY_SEEN_SECOND_ORDER_ONLY,
                       "Second-order only (own first-order beliefs unchanged): "
                       + ", ".join(f"{entity} ({w})" for entity, w in dict.fromkeys(diverged)) + ".")

    def _hands_on_room(self, person: str, obj: str) -> str | None:
        """The room where `person` can handle `obj`, or None (with the failed precondition recorded)."""
        room = self.world(person, ROOM)
        if not is_positive(room):
            self._fail(f"{person}'s room is not known" if room is None else f"{person} is in no room ({room})")
            return None
        obj_room = self.world(obj, ROOM)
        if obj_room is not None and obj_room != room:
            self._fail(f"the {obj} is in the {obj_room}, not with {person} in the {room}")
            return None
        return room

    def _watchers_ok(self, witnesses: list[str], actor: str | None, peeking: list, distracted: list) -> bool:
        """Peekers must not already see the action; the distracted must be witnesses; neither the actor."""
        for name in peeking:
            if name in witnesses or name == actor:
                return self._fail(f"{name} cannot peek: they already see the action")
        for name in distracted:
            if name not in witnesses or name == actor:
                return self._fail(f"{name} cannot be distracted: only a witness other than the actor can")
        return True

    def _sight(self, room: Any, peeking: list, distracted: list) -> tuple[list, list]:
        """(witnesses, real witnesses) of an action in `room`; call only after `_watchers_ok`."""
        witnesses = self._people_in(room) if room is not None else []
        if peeking or distracted:
            real = [w for w in witnesses if w not in distracted] + [p for p in peeking if p not in witnesses]
            self._register_all(real)
        else:
            real = witnesses   # everyone present, all already registered
        self._ctx.witnesses.extend(real)
        return witnesses, real

    def _observe(self, entity: str, prop: str, value: Any, witnesses: list[str], real: list[str]) -> None:
        """The usual update: real witnesses believe the fact and believe every witness does too."""
        cells = self.cells
        get = cells.get
        record = self._record
        for w in real:
            key = ("first", w, entity, prop)
            old = get(key, MISSING)
            if old != value:
                cells[key] = value
                record((key, old, value))
            for other in witnesses:
                key = ("second", w, other, entity, prop)
                old = get(key, MISSING)
                if old != value:
                    cells[key] = value
                    record((key, old, value))

    def _learn_topic(self, listener: str, pairs: Iterable[tuple[str, str]], topic: str) -> None:
        self._add_topic(("first", listener, KNOWLEDGE_ENTITY, KNOWLEDGE), topic)
        for p, q in pairs:
            self._add_topic(("second", p, q, KNOWLEDGE_ENTITY, KNOWLEDGE), topic)

    def _add_topic(self, key: CellKey, topic: str) -> None:
        known = self.cells.get(key) or frozenset()
        self._set(key, known | {topic})

    def _register(self, person: str) -> None:
        """Make belief tables for a new thinking entity: its own, and one for every pair with it."""
        if person in self._people_set:
            return
        self.people.append(person)
        self._people_set.add(person)
        self._present.clear()
        self._set(("first", person), SLOT)
        for other in self.people:
            self._set(("second", person, other), SLOT)
            self._set(("second", other, person), SLOT)

    def _register_all(self, people: Iterable[str]) -> None:
        for person in people:
            self._register(person)

    def _people_in(self, room: str) -> list[str]:
        """The people in `room`, in the order they appeared (a shared list: callers must not change it)."""
        present = self._present.get(room)
        if present is None:
            room_of = self._room_of
            present = self._present[room] = [p for p in self.people if room_of.get(p) == room]
        return present

    def _entities_in(self, room: str) -> list[str]:
        """The entities in `room`, in the order they appeared."""
        return [entity for entity, where in self._room_of.items() if where == room]

    def _set(self, key: CellKey, value: Any) -> None:
        cells = self.cells
        old = cells.get(key, MISSING)
        if old == value:
            return
        cells[key] = value
        self._record((key, old, value))
        if key[0] == "world":
            entity, prop = key[1], key[2]
            props = self._world_props.get(entity)
            if props is None:
                self._world_props[entity] = [prop]
                self._room_of[entity] = None
            elif prop not in props:
                props.append(prop)
            if prop == ROOM:
                self._room_of[entity] = value
                # Only the rooms the entity left and entered have different people in them now.
                present = self._present
                present.pop(old, None)
                present.pop(value, None)

    def _fail(self, reason: str) -> bool:
        self._ctx.failed.append(reason)
        return False

    def _note(self, quirk: Quirk, detail: str) -> None:
        self._ctx.quirks.append(QuirkNote(quirk, detail))

    def _say(self, sentence: str) -> None:
        self._ctx.sentences.append(sentence)

    def _say_secret_watchers(self, peeking: list | None, distracted: list | None) -> None:
        parts = []
        if peeking:
            parts.append(f"{_names(peeking)} witnessed this action in secret (and only this action)")
        if distracted:
            parts.append(
                f"{_names(distracted)} got distracted and did not realize what happened, without anyone noticing "
                "the brief lack of attention, and going back to paying attention immediately after the action "
                "was finished"
            )
        if parts:
            self._say("While this action was happening, " + "; also, ".join(parts) + ".")

    def _fact_text(self, entity: str, prop: str, value: str, is_true: bool) -> str:
        subject = entity if entity in self._people_set else f"the {entity}"
        if prop.startswith(STATE_PREFIX):
            return f"{subject} is {'' if is_true else 'not '}{value}"
        return f"{subject} is {'' if is_true else 'not '}in the {value}"


_REQUIRED = _Sentinel("REQUIRED")


def _parameters_of(method: Callable) -> tuple[tuple[str, Any], ...]:
    """(name, default or _REQUIRED) for each parameter of an action method."""
    return tuple((p.name, _REQUIRED if p.default is inspect.Parameter.empty else p.default)
                 for p in inspect.signature(method).parameters.values())


class _Signature:
    """An action's parameters, with what binding needs worked out once: names, and defaults per arity."""

    __slots__ = ("parameters", "names", "tails")

    def __init__(self, parameters: tuple[tuple[str, Any], ...]) -> None:
        self.parameters = parameters
        self.names = tuple(name for name, _default in parameters)
        # For each count of positional arguments: the first required parameter left unset (or None), and
        # the (name, default) pairs of the parameters after them.
        self.tails = tuple(
            (next((name for name, default in parameters[given:] if default is _REQUIRED), None), parameters[given:])
            for given in range(len(parameters) + 1)
        )


def _bind(action: str, signature: _Signature, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Match a step's args/kwargs to the action's parameters, as a Python call would (but cheaper)."""
    parameters = signature.parameters
    if len(args) > len(parameters):
        raise ActionArgumentError(f"{action}: takes at most {len(parameters)} arguments, got {len(args)}")
    names = signature.names
    arguments = dict(zip(names, args))
    if not kwargs:
        # The usual step: positional arguments only, so the rest are defaults known in advance.
        missing, defaults = signature.tails[len(args)]
        if missing is not None:
            raise ActionArgumentError(f"{action}: missing a required argument: {missing!r}")
        arguments.update(defaults)
        return arguments
    for name, value in kwargs.items():
        if name not in names:
            raise ActionArgumentError(f"{action}: got an unexpected keyword argument {name!r}")
        if name in arguments:
            raise ActionArgumentError(f"{action}: got multiple values for argument {name!r}")
        arguments[name] = value
    for name, default in parameters[len(args):]:
        if name not in arguments:
            if default is _REQUIRED:
                raise ActionArgumentError(f"{action}: missing a required argument: {name!r}")
            arguments[name] = default
    return arguments


def _names(people: Iterable[str]) -> str:
    people = list(people)
    if len(people) <= 1:
        return "".join(people)
    return ", ".join(people[:-1]) + " and " + people[-1]


_LIST_ARGS = {"people_peeking", "people_distracted"}
_STRING_ARGS = {"person", "entity", "room", "obj", "container", "new_room", "state_value", "state_type",
                "story_text", "speaker", "listener"}


def _check_argument_types(action: str, arguments: Mapping[str, Any]) -> None:
    """Reject arguments whose JSON type cannot be meant (a list for a room, a string for watchers...)."""
    for name, value in arguments.items():
        if name in _STRING_ARGS:
            if not isinstance(value, str):
                raise ActionArgumentError(f"{action}: {name} must be a string, got {value!r}")
        elif name in _LIST_ARGS and value is not None and not (
            isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        ):
            raise ActionArgumentError(f"{action}: {name} must be a list of names, got {value!r}")
    topic = arguments.get("topic", "")
    if action == "private_communication" and not isinstance(topic, str):
        if not (isinstance(topic, (list, tuple)) and len(topic) == 4 and all(isinstance(t, str) for t in topic[:3])):
            raise ActionArgumentError(
                f"{action}: topic must be a string or [entity, property, value, is_true], got {topic!r}")
    if action == "broadcast_communication" and not isinstance(topic, str):
        raise ActionArgumentError(f"{action}: topic must be a string, got {topic!r}")
