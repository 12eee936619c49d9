"""Belief-state goals: atoms, their surface sentences, and when each holds along a replayed trace.

An atom names holders (`()` a world fact, `(p,)` first order, `(p, q)` second order), an entity, a
property and a value. Sentences use the reference's printed form ("Anne believes that Beth believes that
ball is in the box"); "X is in the Y" does not say whether Y is a room or a container, so the parser
resolves it from the task's vocabulary, and otherwise uses `ANY_LOCATION` (either one matches). This is
the one goal parser: imported goals and goals given to the stepper, the CLI or a live run all read here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from app.beliefs.actions import step_values
from app.beliefs.engine import CONTAINER, KNOWLEDGE, KNOWLEDGE_ENTITY, ROOM, STATE_PREFIX
from app.beliefs.replay import BeliefState, Replay, TraceError, apply_changes
from storage.errors import ThinsliceError

ANY_LOCATION = "location"
ANY_STATE = "state"

TRUE_BELIEF = "true_belief"
FALSE_BELIEF = "false_belief"
ANY_BELIEF = "any"

_PROPERTY_ALIASES = {"room": ROOM, "container": CONTAINER, "knowledge": KNOWLEDGE, ROOM: ROOM,
                     CONTAINER: CONTAINER, KNOWLEDGE: KNOWLEDGE, ANY_LOCATION: ANY_LOCATION, ANY_STATE: ANY_STATE}


class GoalError(ThinsliceError, ValueError):
    """A goal sentence or JSON atom that cannot be understood."""


@dataclass(frozen=True)
class GoalAtom:
    """One required cell value: `holders` believe(s) that `entity`'s `property` is `value`."""

    holders: tuple[str, ...]
    entity: str
    property: str
    value: str
    text: str = ""

    def __post_init__(self) -> None:
        if len(self.holders) > 2:
            raise GoalError(f"at most two holders (a second-order belief) are tracked, got {list(self.holders)}")
        if not self.text:
            object.__setattr__(self, "text", atom_sentence(self.holders, self.entity, self.property, self.value))

    def value_in(self, state: BeliefState, holders: tuple[str, ...] | None = None) -> bool:
        """True when the state (for `holders`, default the atom's own) has exactly this value."""
        holders = self.holders if holders is None else holders
        layer = ("world", "first", "second")[len(holders)]
        prefix = (layer, *holders, self.entity)
        if self.property == KNOWLEDGE:
            topics = state.get((*prefix, KNOWLEDGE))
            return bool(topics) and self.value in topics
        if self.property == ANY_LOCATION:
            return self.value in (state.get((*prefix, ROOM)), state.get((*prefix, CONTAINER)))
        if self.property == ANY_STATE:
            return any(
                key[-1].startswith(STATE_PREFIX) and value == self.value
                for key, value in _entity_cells(state, prefix)
            )
        return state.get((*prefix, self.property)) == self.value

    @property
    def order(self) -> int:
        """0 for a world fact, 1 for a first-order belief, 2 for a second-order one."""
        return len(self.holders)

    def holds(self, state: BeliefState) -> bool:
        return self.value_in(state)

    def world_matches(self, state: BeliefState) -> bool:
        return self.value_in(state, ())

    def to_json(self) -> dict:
        return {"holders": list(self.holders), "entity": self.entity, "property": self.property,
                "value": self.value, "text": self.text}


def _entity_cells(state: BeliefState, prefix: tuple) -> Iterable[tuple[tuple, Any]]:
    n = len(prefix)
    return ((key, value) for key, value in state.cells.items() if len(key) == n + 1 and key[:n] == prefix)


@dataclass(frozen=True)
class Goal:
    """A set of atoms; `kind` adds a condition on the world.

    A true-belief goal needs every belief atom to match the world; a false-belief goal needs at least one
    belief atom to differ from it (a story where someone is wrong, while others may be right).
    """

    atoms: tuple[GoalAtom, ...]
    kind: str = ANY_BELIEF

    def satisfied(self, state: BeliefState) -> bool:
        """All atoms hold, and the world condition of the goal's kind is met."""
        if not all(atom.holds(state) for atom in self.atoms):
            return False
        beliefs = [atom for atom in self.atoms if atom.holders]
        if self.kind == TRUE_BELIEF:
            return all(atom.world_matches(state) for atom in beliefs)
        if self.kind == FALSE_BELIEF:
            return any(not atom.world_matches(state) for atom in beliefs)
        return True


COMMON_ROOMS = frozenset({
    "kitchen", "garden", "hall", "hallway", "office", "garage", "attic", "basement", "cellar", "porch",
    "balcony", "patio", "yard", "backyard", "library", "lobby", "corridor", "pantry", "study", "studio",
    "church", "park", "gym", "cafeteria", "laundry", "workshop", "nursery", "terrace", "landing",
})


@dataclass(frozen=True)
class Vocabulary:
    """Names a task uses, so that "X is in the Y" can tell a room from a container and "apple poisoned"
    its object from its state: rooms, containers, people, other entities, and state value -> property."""

    rooms: frozenset[str] = frozenset()
    containers: frozenset[str] = frozenset()
    entities: frozenset[str] = frozenset()
    people: frozenset[str] = frozenset()
    states: Mapping[str, str] = field(default_factory=dict)

    def merged(self, rooms: Iterable[str] = (), containers: Iterable[str] = (), people: Iterable[str] = (),
               states: Mapping[str, str] | None = None) -> Vocabulary:
        """This vocabulary with names a task declares besides its steps."""
        people = frozenset(people)
        return Vocabulary(self.rooms | frozenset(rooms), self.containers | frozenset(containers),
                          self.entities | people, self.people | people, {**self.states, **(states or {})})

    def location_property(self, entity: str, value: str) -> str:
        """ROOM or CONTAINER as the names say, else ANY_LOCATION (either one matches).

        A person is always somewhere in a room; a place is a room or a container when the task used it as
        only one of them, and a room when its name says so ("kitchen", "activity room")."""
        inner = value[4:-1] if value.startswith("not(") and value.endswith(")") else value
        if entity in self.people:
            return ROOM
        if inner in self.containers and inner not in self.rooms:
            return CONTAINER
        if inner in self.rooms and inner not in self.containers:
            return ROOM
        lowered = inner.lower()
        if inner not in self.containers and (lowered in COMMON_ROOMS or lowered.endswith("room")):
            return ROOM
        return ANY_LOCATION


def vocabulary_from_steps(steps: Iterable[tuple[str, Sequence, Mapping]]) -> Vocabulary:
    """Collect rooms, containers, people, entities and state values from parsed steps (action, args, kwargs).

    Arguments are read by the engine's own parameter names; an entity declared with
    `is_thinking_entity` false is a thing, not a person."""
    rooms: set[str] = set()
    containers: set[str] = set()
    people: set[str] = set()
    things: set[str] = set()
    states: dict[str, str] = {}
    for action, args, kwargs in steps:
        values = step_values(action, list(args), dict(kwargs))
        for name, value in values.items():
            if not isinstance(value, str):
                continue
            if name in ("room", "new_room"):
                rooms.add(value)
            elif name == "container":
                containers.add(value)
            elif name in ("person", "speaker", "listener"):
                people.add(value)
            elif name == "entity":
                (people if values.get("is_thinking_entity", True) else things).add(value)
            elif name == "obj":
                things.add(value)
        value, state_type = values.get("state_value"), values.get("state_type")
        if isinstance(value, str) and isinstance(state_type, str):
            states[value] = STATE_PREFIX + state_type
    return Vocabulary(frozenset(rooms), frozenset(containers), frozenset(people | things | containers),
                      frozenset(people), states)


# ----- sentences ------------------------------------------------------------------------------------
# "<holder> believes that ...", "<holder> thinks that ...", "<holder> believes ..." (that is optional).
_BELIEVES = re.compile(r"^\s*(?P<holder>.+?)\s+(?:believes|thinks)(?:\s+that)?\s+(?P<rest>.+)$")
_LOCATION = re.compile(r"^(?:the\s+)?(?P<entity>.+?)\s+is\s+in\s+the\s+(?P<value>.+)$")
_HEARD = re.compile(r"^(?P<holder>.+?)\s+heard\s+about\s+(?:the\s+)?(?P<topic>.+)$")


def parse_goal_sentence(text: str, vocabulary: Vocabulary | None = None) -> GoalAtom:
    """Parse one surface sentence into an atom; raises `GoalError` if it has none of the known forms.

    Forms (a trailing full stop is ignored; "thinks that" and a bare "believes" read as "believes that"):
      "ball is in the basket"                                   world fact (a room or a container)
      "Beth believes that ball is in the box"                   first order
      "Anne believes that Beth believes that ball is in the box"  second order
      "Beth heard about the party"                              knowledge of a topic
      "apple peeled", "apple is peeled", "Beth believes that apple covered in chocolate"   object state
    Which place is a room and which state an object's comes from `vocabulary` (`Vocabulary.location_property`);
    a state the vocabulary does not know is `ANY_STATE`, resolved against the trace when it is evaluated.
    """
    if not isinstance(text, str) or not text.strip():
        raise GoalError(f"empty goal sentence {text!r}")
    vocab = vocabulary or Vocabulary()
    sentence = " ".join(text.strip().rstrip(".").split())
    holders: list[str] = []
    rest = sentence
    while True:
        heard = _HEARD.match(rest)
        if heard and not _BELIEVES.match(heard.group("holder")):
            holders.append(heard.group("holder").strip())
            if len(holders) > 2:
                break
            return GoalAtom(tuple(holders), KNOWLEDGE_ENTITY, KNOWLEDGE, heard.group("topic").strip(), sentence)
        believes = _BELIEVES.match(rest)
        if not believes:
            break
        holders.append(believes.group("holder").strip())
        rest = believes.group("rest").strip()
    if len(holders) > 2:
        raise GoalError(f"{text!r}: at most second-order beliefs are tracked")
    location = _LOCATION.match(rest)
    if location:
        entity, value = location.group("entity").strip(), location.group("value").strip()
        return GoalAtom(tuple(holders), entity, vocab.location_property(entity, value), value, sentence)
    entity, value = _split_state(rest, vocab)
    if not entity or not value:
        raise GoalError(f"cannot read {text!r}: expected '<thing> is in the <place>', '<object> <state>' or "
                        "'<person> heard about <topic>', optionally after '<person> believes that'")
    return GoalAtom(tuple(holders), entity, vocab.states.get(value, ANY_STATE), value, sentence)


def _split_state(rest: str, vocabulary: Vocabulary) -> tuple[str, str]:
    """Split "apple covered in chocolate" into entity and state: the longest known entity name, else the
    longest known state value, else the first word."""
    if rest.startswith("the "):
        rest = rest[4:]
    entity = next((name for name in sorted(vocabulary.entities, key=len, reverse=True)
                   if rest.startswith(name + " ")), None)
    if entity is None:
        entity = next((rest[:-len(value) - 1] for value in sorted(vocabulary.states, key=len, reverse=True)
                       if rest.endswith(" " + value)), None)
    if entity is None:
        entity = rest.partition(" ")[0]
    value = rest[len(entity) + 1:]
    return entity, value[3:] if value.startswith("is ") else value


def atom_sentence(holders: Sequence[str], entity: str, prop: str, value: str) -> str:
    """The reference's surface form of a belief, e.g. 'Anne believes that Beth believes that ball is in the box'.

    `parse_goal_sentence` reads every sentence this writes back into the same atom (given the vocabulary
    that resolved its property)."""
    if prop == KNOWLEDGE:
        *outer, last = holders or ("someone",)
        core = f"{last} heard about the {value}"
        return "".join(f"{h} believes that " for h in outer) + core
    if prop in (ROOM, CONTAINER, ANY_LOCATION):
        core = f"{entity} is in the {value}"
    else:
        core = f"{entity} {value}"
    return "".join(f"{h} believes that " for h in holders) + core


# ----- JSON -----------------------------------------------------------------------------------------
def atom_from_json(item: Any, vocabulary: Vocabulary | None = None) -> GoalAtom:
    """An atom from a sentence string or {holders, entity, property, value[, text]}.

    `holders` may be one name or a list of at most two; `property` may be "room", "container",
    "knowledge", "location" (the default: a room or a container, as the vocabulary says) or a state type
    such as "<is_peeled>"."""
    if isinstance(item, str):
        return parse_goal_sentence(item, vocabulary)
    if not isinstance(item, dict):
        raise GoalError(f"a goal atom must be a sentence or an object, got {item!r}")
    holders = item.get("holders", [])
    if isinstance(holders, str):
        holders = [holders]
    if not isinstance(holders, list) or not all(isinstance(h, str) and h for h in holders):
        raise GoalError(f"goal atom holders must be a list of names, got {holders!r}")
    missing = [k for k in ("entity", "value") if not isinstance(item.get(k), str) or not item[k]]
    if missing:
        raise GoalError(f"goal atom {item!r} lacks a text value for {', '.join(missing)}")
    entity, value = item["entity"], item["value"]
    prop = item.get("property", ANY_LOCATION)
    if not isinstance(prop, str) or not prop:
        raise GoalError(f"goal atom {item!r}: property must be a name such as 'room' or '<is_peeled>'")
    prop = _PROPERTY_ALIASES.get(prop, prop)
    if prop == ANY_LOCATION and vocabulary is not None:
        prop = vocabulary.location_property(entity, value)
    if prop not in (ROOM, CONTAINER, KNOWLEDGE, ANY_LOCATION, ANY_STATE) and not prop.startswith(STATE_PREFIX):
        prop = STATE_PREFIX + prop  # a bare state type such as "<is_edible>"
    text = item.get("text") if isinstance(item.get("text"), str) else ""
    return GoalAtom(tuple(holders), entity, prop, value, text)


def goal_from_json(spec: Any, vocabulary: Vocabulary | None = None) -> Goal:
    """A goal from a list of atoms, a single sentence, or {"atoms": [...], "kind" | "false_belief": ...}."""
    kind = ANY_BELIEF
    if isinstance(spec, str):
        spec = [spec]
    if isinstance(spec, dict):
        if "kind" in spec:
            kind = spec["kind"]
            if kind not in (ANY_BELIEF, TRUE_BELIEF, FALSE_BELIEF):
                raise GoalError(f"goal kind must be {TRUE_BELIEF!r}, {FALSE_BELIEF!r} or {ANY_BELIEF!r}, got {kind!r}")
        elif "false_belief" in spec:
            kind = FALSE_BELIEF if spec["false_belief"] else TRUE_BELIEF
        spec = spec.get("atoms")
    if not isinstance(spec, list):
        raise GoalError("a goal must be a list of atoms or an object with an 'atoms' list")
    return Goal(tuple(atom_from_json(item, vocabulary) for item in spec), kind)


# ----- evaluation along a trace ---------------------------------------------------------------------
@dataclass(frozen=True)
class AtomHistory:
    """Whether one atom holds after each step, and the steps where that changed."""

    atom: GoalAtom
    holds: tuple[bool, ...]
    became_true: tuple[int, ...] = field(default=())
    stopped_being_true: tuple[int, ...] = field(default=())


@dataclass(frozen=True)
class GoalTimeline:
    """A goal evaluated after every step of a replay."""

    goal: Goal
    atoms: tuple[AtomHistory, ...]
    satisfied: tuple[bool, ...]

    def step_json(self, index: int) -> dict:
        """The goal block of the replay CLI output for one step."""
        return {
            "atoms": [{"text": h.atom.text, "holds": h.holds[index]} for h in self.atoms],
            "satisfied": self.satisfied[index],
        }

    def first_satisfied(self) -> int | None:
        return next((i for i, ok in enumerate(self.satisfied) if ok), None)


def resolve_state_atoms(goal: Goal, replay: Replay) -> Goal:
    """Give each "apple poisoned"-style atom the one state property the trace ever sets to that value."""
    found: dict[tuple[str, str], set[str]] = {}
    for record in replay.records:
        for key, _old, new in record.outcome.changes:
            if key[0] == "world" and key[2].startswith(STATE_PREFIX):
                found.setdefault((key[1], new), set()).add(key[2])
    atoms = []
    for atom in goal.atoms:
        props = found.get((atom.entity, atom.value), set())
        if atom.property == ANY_STATE and len(props) == 1:
            atom = GoalAtom(atom.holders, atom.entity, props.pop(), atom.value, atom.text)
        atoms.append(atom)
    return Goal(tuple(atoms), goal.kind)


def evaluate_goal(goal: Goal, replay: Replay) -> GoalTimeline:
    """Evaluate every atom after every step (walking the diffs once, not materialising each state)."""
    goal = resolve_state_atoms(goal, replay)
    cells: dict = {}
    state = BeliefState(cells)
    per_atom: list[list[bool]] = [[] for _ in goal.atoms]
    satisfied: list[bool] = []
    for record in replay.records:
        apply_changes(cells, record.outcome.changes_flat)
        for values, atom in zip(per_atom, goal.atoms):
            values.append(atom.holds(state))
        satisfied.append(goal.satisfied(state))
    histories = []
    for values, atom in zip(per_atom, goal.atoms):
        rises = tuple(i for i, v in enumerate(values) if v and (i == 0 or not values[i - 1]))
        falls = tuple(i for i, v in enumerate(values) if not v and i > 0 and values[i - 1])
        histories.append(AtomHistory(atom, tuple(values), rises, falls))
    return GoalTimeline(goal, tuple(histories), tuple(satisfied))


def goal_or_trace_error(spec: Any, vocabulary: Vocabulary | None) -> Goal:
    """`goal_from_json`, reporting problems as a `TraceError` (for the CLI)."""
    try:
        return goal_from_json(spec, vocabulary)
    except GoalError as exc:
        raise TraceError(f"goal: {exc}") from None
