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

The tracker also indexes the same cells by entity (the world) and by fact and person (beliefs), so that the
questions a step asks most ("does each witness already believe this?") are lookups by name. The index is
kept by the tracker alone; every reader sees `cells`.
"""
from __future__ import annotations

import inspect
from bisect import insort
from collections import defaultdict
from enum import Enum
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from storage.errors import ThinsliceError

ROOM = "room_location"
CONTAINER = "container_location"
KNOWLEDGE = "<knowledge>"
KNOWLEDGE_ENTITY = ""
STATE_PREFIX = "<state_update> "
UNKNOWN_WHEREABOUTS = "not(???)"

CellKey = tuple
Change = tuple  # (key, old value or MISSING, new value)
_BeliefRow = dict  # name -> believed value: one row of the tracker's belief index


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
    PEEKER_LEARNS_FAILED_TALK = "peeker_learns_failed_talk"
    PEEKER_NEWS_COUNTS = "peeker_news_counts"

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
        "When someone enters a room, or an object is placed or carried into one, the people already in the "
        "room record that everyone present sees the room's visible things (second order, themselves "
        "included), but their own first-order beliefs are not updated.",
    ),
    Quirk.PEEKER_LEARNS_FAILED_TALK: (
        "Peeker learns from failed talk",
        "What peekers learn of an abstract topic does not count as a change, so talk that is news only to "
        "them fails and writes no sentence, yet they have learnt the topic.",
    ),
    Quirk.PEEKER_NEWS_COUNTS: (
        "News to a peeker counts",
        "For a world-state fact, what peekers learn does count as a change: talk that is news only to a "
        "peeker succeeds.",
    ),
}


class QuirkNote(NamedTuple):
    """A quirk that decided part of a step's outcome, with the specific consequence in words."""

    quirk: Quirk
    detail: str


class StepOutcome(NamedTuple):
    """What one action did: its result, the story it told, what changed, who saw it, and why.

    A named tuple, and its changes one flat tuple, because a replay keeps one per step: thousands of small
    objects fewer for the garbage collector to walk, which in a long replay costs more than building them.
    """

    action: str
    args: tuple
    kwargs: Mapping[str, Any]
    returned: bool
    story_sentences: tuple[str, ...]
    changes_flat: tuple   # key, old value (or MISSING), new value: three entries per change, in order
    witnesses: tuple[str, ...]
    peeking: tuple[str, ...]
    distracted: tuple[str, ...]
    failed_preconditions: tuple[str, ...]
    quirks: tuple[QuirkNote, ...]
    logged_action: str

    @property
    def changes(self) -> tuple[Change, ...]:
        """(key, old value or MISSING, new value) for every cell the step wrote, in order."""
        flat = self.changes_flat
        return tuple(zip(flat[0::3], flat[1::3], flat[2::3]))


_outcome = tuple.__new__   # StepOutcome's fields as one tuple, without the named tuple's own constructor


class UnknownActionError(ThinsliceError, ValueError):
    """The action name is not one the engine knows."""


class ActionArgumentError(ThinsliceError, ValueError):
    """The arguments do not fit the action's signature."""


class _StepContext:
    """What the running step has done so far: one per tracker, its lists emptied as each step starts."""

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
        # The step that last wrote each cell, counted from 0 by `apply`: a replay's questions ask when a belief
        # was set, and keeping it here, where each cell is written, spares reading every step's changes again.
        self.written_at: dict[CellKey, int] = {}
        self.steps_applied = 0
        self.people: list[str] = []
        self._people_set: set[str] = set()
        # The world again, by entity: property -> value, in the order the properties were first set.
        self._world_of: dict[str, dict[str, Any]] = {}
        self._visible: dict[tuple[str, str], bool] = {}
        # Who is in each room, and every entity in each room, as `_people_in` / `_entities_in` found them and
        # kept up to date as things move (with new lists: a caller may still hold the old one).
        self._present: dict[Any, list[str]] = {}
        self._contents: dict[Any, list[str]] = {}
        # The order of appearance that those lists follow.
        self._person_rank: dict[str, int] = {}
        self._entity_rank: dict[str, int] = {}
        # The world's room of every entity (None if it has none), in the order of `_world_of`.
        self._room_of: dict[str, Any] = {}
        # The belief cells again, indexed by fact (entity, property): person -> value, and person -> other ->
        # value. Most of a replay is checking whether each witness already believes what everyone saw: lookups
        # by name cost far less than building and hashing a cell key for every pair; a key is made only for a
        # cell that changes. Both make an empty entry when first asked.
        self._first_by_fact: defaultdict[tuple[str, str], _BeliefRow] = defaultdict(dict)
        self._second_by_fact: defaultdict[tuple[str, str], defaultdict[str, _BeliefRow]] = defaultdict(_belief_rows)
        # Abstract topics talked about with success, in the order first told (the reference's story topics).
        self.topics: list[str] = []
        self._ctx = _StepContext()
        self._record = self._ctx.changes.extend

    # ----- public ---------------------------------------------------------------------------------
    def apply(self, action: str, args: Iterable[Any] = (), kwargs: Mapping[str, Any] | None = None) -> StepOutcome:
        """Run one action; see the class docstring for what is raised and what is returned."""
        signature = _SIGNATURES.get(action)
        if signature is None:
            raise UnknownActionError(f"unknown action {action!r} (known: {', '.join(self.ACTIONS)})")
        args = tuple(args)
        kwargs = dict(kwargs) if kwargs else {}
        values = signature.bind(args, kwargs)
        # The step's lists are the last step's, emptied: the outcome keeps copies of them, not the lists.
        ctx = self._ctx
        changes, witnessed, failed = ctx.changes, ctx.witnesses, ctx.failed
        quirks, sentences = ctx.quirks, ctx.sentences
        changes.clear()
        witnessed.clear()
        failed.clear()
        quirks.clear()
        sentences.clear()
        returned = signature.function(self, *values)
        self.steps_applied += 1
        logged = "leave_room" if action == "leave_container" else action
        witnesses = tuple(dict.fromkeys(witnessed)) if witnessed else ()
        if not returned and not changes:
            # The usual failure: a precondition failed before anything was written.
            return _outcome(StepOutcome, (action, args, kwargs, False, (), (), witnesses, (), (), tuple(failed), (),
                                          logged))
        peeking = signature.peeking
        distracted = signature.distracted
        # A communication can fail and still have written (Quirk.PEEKER_LEARNS_FAILED_TALK); a failed step
        # never tells a story. (Made as a plain tuple of its fields: one is made for every step.)
        return _outcome(StepOutcome, (
            action,
            args,
            kwargs,
            returned,
            tuple(sentences) if returned else (),
            tuple(changes),
            witnesses,
            tuple(values[peeking] or ()) if peeking is not None else (),
            tuple(values[distracted] or ()) if distracted is not None else (),
            tuple(failed) if failed else (),
            tuple(quirks) if quirks else (),
            logged,
        ))

    def get(self, key: CellKey) -> Any:
        return self.cells.get(key)

    def world(self, entity: str, prop: str) -> Any:
        facts = self._world_of.get(entity)
        return None if facts is None else facts.get(prop)

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
        self._set_world(obj, CONTAINER, negated(container))
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
        self._set_world(obj, CONTAINER, container)
        self._set_world(obj, ROOM, room)
        self._set_world(container, ROOM, room)
        self._observe(obj, CONTAINER, container, witnesses, real)
        self._observe(obj, ROOM, room, witnesses, real)
        if real is not witnesses:
            # Everyone present, distracted or not, records that everyone present saw the move (`_observe`
            # has done so already when everyone present really saw it).
            self._believe_seen(witnesses, witnesses, obj, CONTAINER, container)
            self._believe_seen(witnesses, witnesses, obj, ROOM, room)
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
            self._set_world(obj, CONTAINER, negated(container))
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
        self._set_world(obj, ROOM, room)
        self._set_world(obj, prop, state_value)
        self._observe(obj, prop, state_value, witnesses, real)
        self._observe(obj, ROOM, room, witnesses, real)
        self._say(story_text)
        self._say_secret_watchers(people_peeking, people_distracted)
        return True

    def private_communication(self, speaker: str, listener: str, topic: Any,
                              people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`speaker` tells `listener` a topic string or a fact `[entity, property, value, replaces_previous]`.

        The two are the only witnesses, wherever they are (a message, a phone call). The speaker does not tell
        what they already believe the listener knows.
        """
        if speaker == listener:
            return self._fail(f"{speaker} cannot tell themselves")
        if speaker in self._people_set and listener in self._people_set and self._believes_known(
                ("second", speaker, listener), topic):
            return self._fail(f"{speaker} already believes {listener} knows {_topic_text(topic, self._people_set)}")
        peeking, distracted = people_peeking or [], people_distracted or []
        witnesses = [speaker, listener]
        if not self._watchers_ok(witnesses, speaker, peeking, distracted):
            return False
        self._register_all(peeking)
        # Both become thinking entities here, before anything is known to be learnt (as the reference does).
        self._register_all(witnesses)
        told = self._tell(topic, witnesses, peeking, distracted)
        if not told:
            self._fail("it was news to nobody, so nothing was told")
        if told:
            text = _topic_text(topic, self._people_set)
            self._say(f"{speaker} told privately to {listener} {'about ' if isinstance(topic, str) else 'that '}{text}.")
            self._say_secret_watchers(people_peeking, people_distracted)
        return told

    def broadcast_communication(self, speaker: str, topic: Any,
                                people_peeking: list | None = None, people_distracted: list | None = None) -> bool:
        """`speaker` says a topic or fact out loud to everyone in their room; fails with nobody to speak to."""
        room = self.world(speaker, ROOM)
        if not is_positive(room):
            return self._fail(f"{speaker}'s room is not known" if room is None else f"{speaker} is in no room ({room})")
        witnesses = self._people_in(room)
        if len(witnesses) == 1:
            return self._fail(f"{speaker} is alone in the {room}: nobody to speak to")
        peeking, distracted = people_peeking or [], people_distracted or []
        if not self._watchers_ok(witnesses, speaker, peeking, distracted):
            return False
        self._register_all(peeking)
        told = self._tell(topic, witnesses, peeking, distracted)
        if not told:
            self._fail("it was news to nobody, so nothing was told")
        if told:
            text = _topic_text(topic, self._people_set)
            self._say(f"{speaker} told out loud {'about ' if isinstance(topic, str) else 'that '}{text}.")
            self._say_secret_watchers(people_peeking, people_distracted)
        return told

    def _believes_known(self, table: CellKey, topic: Any) -> bool:
        """Whether a belief table (`("second", p, q)`) says its subject already knows the topic."""
        if isinstance(topic, str):
            known = self.cells.get((*table, KNOWLEDGE_ENTITY, KNOWLEDGE))
            return known is not None and topic in known
        return self.cells.get((*table, topic[0], topic[1])) == topic[2]

    def _tell(self, topic: Any, witnesses: list[str], peeking: list, distracted: list) -> bool:
        """What a communication teaches; True when a witness (or, for a fact, a peeker) learnt something new.

        Each attentive witness records the topic and that every witness now knows it; peekers do the same.
        """
        if isinstance(topic, str):
            entity, prop, value, replaces = KNOWLEDGE_ENTITY, KNOWLEDGE, topic, False
        else:
            entity, prop, value, replaces = topic
        hearers = [w for w in witnesses if w not in distracted]
        changed = False
        for w in hearers:
            changed |= self._learn(("first", w, entity, prop), value, replaces)
            for b in witnesses:
                changed |= self._learn(("second", w, b, entity, prop), value, replaces)
        peeker_news = False
        for w in peeking:
            peeker_news |= self._learn(("first", w, entity, prop), value, replaces)
            for b in witnesses:
                peeker_news |= self._learn(("second", w, b, entity, prop), value, replaces)
        self._ctx.witnesses.extend(hearers + [p for p in peeking if p not in hearers])
        if peeker_news and not changed:
            if isinstance(topic, str):
                self._note(Quirk.PEEKER_LEARNS_FAILED_TALK,
                           f"{_names(peeking)} learnt about the {topic}, although it was news to no witness, "
                           "so the action failed.")
            else:
                self._note(Quirk.PEEKER_NEWS_COUNTS,
                           f"Only {_names(peeking)} (peeking) learnt anything, yet the action counts as done.")
                changed = True
        if changed and isinstance(topic, str) and topic not in self.topics:
            self.topics.append(topic)
        return changed

    def _learn(self, key: CellKey, value: str, replaces: bool) -> bool:
        """Record a told value in one belief cell (replacing it, or adding it to a set); True if it changed."""
        old = self.cells.get(key)
        if replaces:
            new: Any = value
        elif isinstance(old, frozenset):
            new = old | {value}
        else:
            # A single value believed before (seen, or told as replacing) joins the set.
            new = frozenset((value,) if old is None else (old, value))
        if new == old:
            return False
        self._set(key, new)
        return True

    # ----- building blocks ------------------------------------------------------------------------
    def _enter(self, entity: str, room: str, thinking: bool, peeking: list, distracted: list) -> bool:
        old_room = self.world(entity, ROOM)
        if old_room == room:
            return self._fail(f"{entity} is already in the {room}")
        # (with nobody peeking or distracted there is nothing to check)
        if (peeking or distracted) and not self._watchers_ok(
                self._people_in(room) + ([entity] if thinking else []), entity, peeking, distracted):
            return False
        if thinking:
            self._register(entity)
        self._set_world(entity, ROOM, room)
        witnesses, real = self._sight(room, peeking, distracted)
        self._observe(entity, ROOM, room, witnesses, real)
        if is_positive(old_room):
            stale = [q for q in self._people_in(old_room) if q != entity and self.first(q, entity, ROOM) == old_room]
            if stale:
                self._note(Quirk.OLD_ROOM_NOT_LEFT,
                           f"{_names(stale)} still {'believes' if len(stale) == 1 else 'believe'} "
                           f"{entity} is in the {old_room}.")
        # An object arriving looks around too: it learns nothing, but the people present still record that
        # everyone there sees the room's visible things (Quirk.ENTRY_SEEN_SECOND_ORDER_ONLY).
        self._look_around(entity, room, witnesses, real)
        return True

    def _leave(self, entity: str, room: str, peeking: list, distracted: list) -> bool:
        if self.world(entity, ROOM) != room:
            return self._fail(f"{entity} is not in the {room}")
        if (peeking or distracted) and not self._watchers_ok(self._people_in(room), entity, peeking, distracted):
            return False
        witnesses, real = self._sight(room, peeking, distracted)
        self._set_world(entity, ROOM, negated(room))
        self._observe(entity, ROOM, negated(room), witnesses, real)
        return True

    def _look_around(self, entrant: str, room: str, witnesses: list[str], real: list[str]) -> None:
        """What the entrant sees of the room, and what everyone present assumes the others saw.

        Only a thinking entity sees for itself (first order, and losing sight of what is now hidden); the
        second-order update holds for whatever entered, a declared or carried object included.
        """
        diverged: list[tuple[str, str]] = []
        visible = self._visible
        world_of = self._world_of
        sees = entrant in self._people_set
        entrant_only = [entrant]
        for entity in self._entities_in(room):
            facts = world_of[entity]
            hidden_in = facts.get(CONTAINER)
            if hidden_in is None:
                for prop, value in facts.items():
                    if prop == ROOM:
                        if entity == entrant:
                            continue   # `_observe` has just recorded the entrant's own arrival for every witness
                    elif prop == CONTAINER or not visible.get((entity, prop), True):
                        continue
                    if sees:
                        firsts = self._believe(entrant_only, entity, prop, value)
                    else:
                        firsts = self._first_by_fact[entity, prop]
                    for w in real:
                        if w != entrant and firsts.get(w) != value:
                            diverged.append((entity, w))
                    self._believe_seen(real, witnesses, entity, prop, value)
                continue
            if not sees:
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
        self._believe(real, entity, prop, value)
        self._believe_seen(real, witnesses, entity, prop, value)

    def _believe(self, people: list[str], entity: str, prop: str, value: Any) -> dict[str, Any]:
        """Each of `people` now believes entity.prop is `value`; returns every person's belief about that fact."""
        firsts = self._first_by_fact[entity, prop]
        for person in people:
            old = firsts.get(person, MISSING)
            if old != value:
                firsts[person] = value
                key = ("first", person, entity, prop)
                # as `_write` writes (inline: this runs for every witness of every step)
                self.cells[key] = value
                self.written_at[key] = self.steps_applied
                self._record((key, old, value))
        return firsts

    def _believe_seen(self, believers: list[str], seen_by: list[str], entity: str, prop: str, value: Any) -> None:
        """Each of `believers` now believes that each of `seen_by` believes entity.prop is `value`."""
        by_believer = self._second_by_fact[entity, prop]
        cells, written_at, step = self.cells, self.written_at, self.steps_applied
        record = self._record
        for b in believers:
            row = by_believer[b]
            get = row.get
            # The busiest loop of a replay: one name lookup per pair, a cell key made only for a cell that
            # changes, and each change written as `_write` writes it (inline: a call per change would cost a
            # tenth more).
            for other in seen_by:
                old = get(other, MISSING)
                if old != value:
                    row[other] = value
                    key = ("second", b, other, entity, prop)
                    cells[key] = value
                    written_at[key] = step
                    record((key, old, value))

    def _register(self, person: str) -> None:
        """Make belief tables for a new thinking entity: its own, and one for every pair with it."""
        if person in self._people_set:
            return
        self._person_rank[person] = len(self.people)
        self.people.append(person)
        self._people_set.add(person)
        self._present.clear()
        self._make_table(("first", person))
        for other in self.people:
            self._make_table(("second", person, other))
            self._make_table(("second", other, person))

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
        """The entities in `room`, in the order they appeared (a shared list: callers must not change it)."""
        contents = self._contents.get(room)
        if contents is None:
            contents = self._contents[room] = [entity for entity, where in self._room_of.items() if where == room]
        return contents

    def _write(self, key: CellKey, old: Any, value: Any) -> None:
        """Write one cell and record the change (`old` is its value before, or MISSING)."""
        self.cells[key] = value
        self.written_at[key] = self.steps_applied
        self._record((key, old, value))

    def _make_table(self, key: CellKey) -> None:
        """Mark a belief table (`("first", p)`, `("second", p, q)`) as existing, if it does not yet."""
        if key not in self.cells:
            self._write(key, MISSING, SLOT)

    def _set(self, key: CellKey, value: Any) -> None:
        """Write a belief cell (`("first", p, entity, prop)`, `("second", p, q, entity, prop)`), keeping the
        belief indexes; the world's cells go through `_set_world`, a table's SLOT through `_make_table`."""
        old = self.cells.get(key, MISSING)
        if old == value:
            return
        self._write(key, old, value)
        if len(key) == 4:
            self._first_by_fact[key[2], key[3]][key[1]] = value
        else:
            self._second_by_fact[key[3], key[4]][key[1]][key[2]] = value

    def _set_world(self, entity: str, prop: str, value: Any) -> None:
        """The world now has entity.prop = `value`; its copy by entity and the rooms' member lists follow."""
        facts = self._world_of.get(entity)
        if facts is None:
            facts = self._world_of[entity] = {}
            self._entity_rank[entity] = len(self._room_of)
            self._room_of[entity] = None
        old = facts.get(prop, MISSING)
        if old == value:
            return
        facts[prop] = value
        self._write(("world", entity, prop), old, value)
        if prop == ROOM:
            self._room_of[entity] = value
            _move_member(self._contents, self._entity_rank, entity, old, value)
            if entity in self._people_set:
                _move_member(self._present, self._person_rank, entity, old, value)

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
            parts.append(f"{enumeration(peeking)} witnessed this action in secret (and only this action)")
        if distracted:
            parts.append(
                f"{enumeration(distracted)} got distracted and did not realize what happened, without anyone noticing "
                "the brief lack of attention, and going back to paying attention immediately after the action "
                "was finished"
            )
        if parts:
            self._say("While this action was happening, " + "; also, ".join(parts) + ".")


_REQUIRED = _Sentinel("REQUIRED")
_LIST_ARGS = {"people_peeking", "people_distracted"}
_STRING_ARGS = {"person", "entity", "room", "obj", "container", "new_room", "state_value", "state_type",
                "story_text", "speaker", "listener"}


class _Signature:
    """An action's parameters with what binding and checking a call needs worked out once."""

    __slots__ = ("action", "function", "names", "defaults", "required", "strings", "leading_strings", "lists",
                 "peeking", "distracted")

    def __init__(self, action: str, function: Callable) -> None:
        parameters = list(inspect.signature(function).parameters.values())[1:]   # without self
        self.action = action
        self.function = function
        self.names = tuple(p.name for p in parameters)
        self.defaults = tuple(_REQUIRED if p.default is inspect.Parameter.empty else p.default for p in parameters)
        # Required parameters always come first, so a call with fewer positional arguments misses names[given].
        self.required = sum(default is _REQUIRED for default in self.defaults)
        self.strings = tuple(i for i, name in enumerate(self.names) if name in _STRING_ARGS)
        self.lists = tuple(i for i, name in enumerate(self.names) if name in _LIST_ARGS)
        self.peeking = self.names.index("people_peeking") if "people_peeking" in self.names else None
        self.distracted = self.names.index("people_distracted") if "people_distracted" in self.names else None
        # How many parameters from the first are all names: a call giving only those, all as strings, needs
        # no further checks (the rest are defaults that pass).
        self.leading_strings = next((i for i, name in enumerate(self.names) if name not in _STRING_ARGS),
                                    len(self.names))

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        """The call's values in parameter order, checked as a Python call would (but cheaper) and typed."""
        action, names = self.action, self.names
        given = len(args)
        if given > len(names):
            raise ActionArgumentError(f"{action}: takes at most {len(names)} arguments, got {given}")
        if not kwargs:
            # The usual step: positional arguments only.
            if given < self.required:
                raise ActionArgumentError(f"{action}: missing a required argument: {names[given]!r}")
            values = args + self.defaults[given:]
            if given <= self.leading_strings:
                for arg in args:
                    if arg.__class__ is not str:
                        break
                else:
                    return values
        else:
            for name in kwargs:
                if name not in names:
                    raise ActionArgumentError(f"{action}: got an unexpected keyword argument {name!r}")
                if names.index(name) < given:
                    raise ActionArgumentError(f"{action}: got multiple values for argument {name!r}")
            values = args + tuple(kwargs.get(name, default) for name, default in
                                  zip(names[given:], self.defaults[given:]))
            for name, value in zip(names, values):
                if value is _REQUIRED:
                    raise ActionArgumentError(f"{action}: missing a required argument: {name!r}")
        self._check_types(values)
        return values

    def _check_types(self, values: tuple) -> None:
        """Reject arguments whose JSON type cannot be meant (a list for a room, a string for watchers...)."""
        action = self.action
        for i in self.strings:
            if not isinstance(values[i], str):
                raise ActionArgumentError(f"{action}: {self.names[i]} must be a string, got {values[i]!r}")
        for i in self.lists:
            value = values[i]
            if value is not None and not (
                isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
            ):
                raise ActionArgumentError(f"{action}: {self.names[i]} must be a list of names, got {value!r}")
        if action in _TOPIC_ARG:
            _check_topic(action, values[_TOPIC_ARG[action]])


_TOPIC_ARG = {"private_communication": 2, "broadcast_communication": 1}
TOLD_FACT_PROPERTIES = (ROOM, CONTAINER)


def _check_topic(action: str, topic: Any) -> None:
    """A topic is a string or a location fact [entity, property, value, replaces_previous]."""
    if isinstance(topic, str):
        return
    if not (isinstance(topic, (list, tuple)) and len(topic) == 4 and all(isinstance(t, str) for t in topic[:3])
            and isinstance(topic[3], bool)):
        raise ActionArgumentError(
            f"{action}: topic must be a string or [entity, property, value, replaces_previous], got {topic!r}")
    if topic[1] not in TOLD_FACT_PROPERTIES:
        # The reference tracker can put only where something is into words.
        raise ActionArgumentError(f"{action}: a told fact must be about {' or '.join(TOLD_FACT_PROPERTIES)}, "
                                  f"got {topic[1]!r}")


def _topic_text(topic: Any, people: set[str] | frozenset[str]) -> str:
    """How a story tells a topic: "the secret recipe", "the ball is in the box", "Anne is in the kitchen"."""
    if isinstance(topic, str):
        return f"the {topic}"
    entity, _prop, value, _replaces = topic
    return f"{entity if entity in people else 'the ' + entity} is in the {value}"


_SIGNATURES = {action: _Signature(action, getattr(BeliefTracker, action)) for action in BeliefTracker.ACTIONS}


def _belief_rows() -> defaultdict[str, _BeliefRow]:
    """An empty second-order index of one fact: believer -> `_BeliefRow`."""
    return defaultdict(dict)


def _move_member(rooms: dict[Any, list[str]], rank: dict[str, int], member: str, old: Any, new: Any) -> None:
    """Update cached room lists for a member that moved from `old` to `new`, keeping order of appearance."""
    left = rooms.get(old)
    if left is not None and member in left:
        left = rooms[old] = left.copy()
        left.remove(member)   # a member is listed once
    joined = rooms.get(new)
    if joined is not None:
        joined = rooms[new] = joined.copy()
        insort(joined, member, key=rank.__getitem__)


def _names(people: Iterable[str]) -> str:
    people = list(people)
    if len(people) <= 1:
        return "".join(people)
    return ", ".join(people[:-1]) + " and " + people[-1]


def enumeration(people: Iterable[str]) -> str:
    """Names as the reference's story sentences list them: "Anne", "Anne and Beth", "Anne, Beth, and Carl"."""
    people = list(people)
    if len(people) <= 2:
        return " and ".join(people)
    return ", ".join(people[:-1]) + ", and " + people[-1]
