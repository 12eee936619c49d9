"""ExploreToM story structures back into action traces: the tracker's own sentences, one action each.

ExploreToM releases each story's structure as the sentences its belief tracker wrote ("Anne entered the
kitchen. Beth moved the ball to the box, which is also located in the kitchen."). `parse_story` reads every
form the tracker writes (see BELIEFS.md) into the `{action, args, kwargs}` steps `thinslice ncp replay` reads:
entering, leaving a room or a container, location declarations, moving an object to a container or a room,
state updates, the "While this action was happening, ..." sentence of peekers and the distracted, and private
and broadcast communication.

What the sentences leave unsaid is settled the way the tracker's stories are written:
- "X left the Y." leaves a container when the story last put X into Y, else a room.
- "X is in the Y." declares a thinking entity unless X is a thing the story moves, or is written in lower case.
- A told fact "the ball is in the box" is about a container unless the story names the box as a room; a told
  fact replaces what was believed before (the tracker's sentence is the same for one that adds to a set).
- Any other sentence "<person> <words> the <object>[ <words>]." by someone in the story is a state update: the
  words around the object are the new value ("covered the apple in chocolate": "covered in chocolate"), its
  state type is `<is_<value with underscores>>` unless the caller knows it, and it is visible.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Mapping, NamedTuple

from app.beliefs.engine import CONTAINER, ROOM
from storage.errors import ThinsliceError

Step = dict[str, Any]

_SENTENCE_END = re.compile(r"(?<=\.)\s+")
_WHILE = re.compile(r"^While this action was happening, (?P<rest>.+)\.$")
_PEEKING = re.compile(r"^(?P<names>.+?) witnessed this action in secret \(and only this action\)$")
_DISTRACTED = re.compile(r"^(?P<names>.+?) got distracted and did not realize what happened, without anyone "
                         r"noticing the brief lack of attention, and going back to paying attention immediately "
                         r"after the action was finished$")
_PRIVATE = re.compile(r"^(?P<speaker>.+?) told privately to (?P<listener>.+?) (?:about (?P<topic>.+)|that (?P<fact>.+))\.$")
_BROADCAST = re.compile(r"^(?P<speaker>.+?) told out loud (?:about (?P<topic>.+)|that (?P<fact>.+))\.$")
_TO_CONTAINER = re.compile(r"^(?P<person>.+?) moved the (?P<obj>.+?) to the (?P<container>.+?), which is also "
                           r"located in the (?P<room>.+)\.$")
_TO_ROOM_LEAVING = re.compile(r"^(?P<person>.+?) moved the (?P<obj>.+?) to the (?P<room>.+?), leaving the "
                              r"(?P<container>.+?) in its original location\.$")
_TO_ROOM = re.compile(r"^(?P<person>.+?) moved the (?P<obj>.+?) to the (?P<room>.+)\.$")
_ENTERED = re.compile(r"^(?P<person>.+?) entered the (?P<room>.+)\.$")
_LEFT = re.compile(r"^(?P<entity>.+?) left the (?P<place>.+)\.$")
_DECLARED = re.compile(r"^(?:[Tt]he (?P<thing>.+?)|(?P<entity>.+?)) is in the (?P<room>.+)\.$")
_FACT = re.compile(r"^(?:the (?P<thing>.+?)|(?P<person>.+?)) is in the (?P<value>.+)$")
_STATE_REST = re.compile(r"^(?P<value>.+?) the (?P<obj>[^.]+)\.$")
# Sentences whose subject is someone (an object also "leaves" a container, so leaving does not tell).
_ACTOR = re.compile(r"^(?P<person>.+?) (?:entered the|moved the|told privately to|told out loud) ")
_MOVED_THING = re.compile(r" moved the (?P<obj>.+?) to the ")
# Actions whose step takes the peeking and distraction lists.
_WATCHED = frozenset({"location_declaration", "enter_room", "leave_room", "leave_container", "move_object_container",
                      "update_object_state", "private_communication", "broadcast_communication"})

FORMS = ("X entered the R.", "X left the R.", "X is in the R.",
         "X moved the O to the C, which is also located in the R.", "X moved the O to the R.",
         "X moved the O to the R, leaving the C in its original location.", "X <state words> the O.",
         "X told privately to Y about the T.", "X told privately to Y that F.", "X told out loud about the T.",
         "X told out loud that F.", "While this action was happening, ... witnessed this action in secret ...")


class StoryParseError(ThinsliceError):
    """A story sentence that is none of the tracker's forms; names the sentence and its position."""

    def __init__(self, position: int, sentence: str, reason: str) -> None:
        self.position = position
        self.sentence = sentence
        super().__init__(f"sentence {position} (1-based) {sentence!r}: {reason}; expected one of the tracker's "
                         "sentence forms (" + "; ".join(FORMS) + ")")


def split_sentences(text: str) -> list[str]:
    """The story's sentences, as the tracker joined them (one space after each full stop)."""
    return [part.strip() for part in _SENTENCE_END.split(text.strip()) if part.strip()]


def parse_story(text: str, state_types: Mapping[str, str] | None = None) -> list[Step]:
    """The action trace a story structure tells, one step per action sentence; raises `StoryParseError`.

    `state_types` names the state type of a state value when something else says it (an ExploreToM
    question's params do): value -> type such as "peeled" -> "<is_peeled>".
    """
    return _StoryReader(split_sentences(text), state_types or {}).steps()


def story_trace(text: str) -> dict[str, Any]:
    """The trace JSON `thinslice ncp replay` reads, for a story structure."""
    return {"steps": parse_story(text)}


def names_in(text: str) -> list[str]:
    """"Anne", "Anne and Beth", "Anne, Beth, and Carl" (or without the last comma) as a list of names."""
    head, _, last = text.rpartition(" and ")
    if not head:
        return [text.strip()]
    return [name.strip() for name in head.split(",") if name.strip()] + [last.strip()]


class _Sentence(NamedTuple):
    """What one sentence says by itself, whatever story it is in (see `_read_sentence`)."""

    watchers: str | None                # the rest of a "While this action was happening, ..." sentence
    form: int | None                    # the first of `_FORMS` it matches (None: no form, a state update)
    match: re.Match[str] | None         # that form's match
    actor: str | None                   # the subject of a sentence whose subject is someone
    moved: str | None                   # the thing a "moved the ..." sentence moves
    declared_thing: str | None          # the thing a "The <thing> is in the <room>." sentence places
    room: str | None                    # the room a sentence names, unless it is a told fact
    container: str | None               # the container it names with that room, if any


# The forms in the order they are tried, so that the first that fits a sentence reads it.
_FORMS = (_PRIVATE, _BROADCAST, _TO_CONTAINER, _TO_ROOM_LEAVING, _TO_ROOM, _ENTERED, _LEFT, _DECLARED)
_PLACE_FORMS = (_TO_CONTAINER, _TO_ROOM_LEAVING, _TO_ROOM, _ENTERED, _DECLARED)


@functools.lru_cache(maxsize=16384)
def _read_sentence(sentence: str) -> _Sentence:
    """Every pattern's verdict on a sentence, worked out once per distinct sentence: a release's stories say
    "Anne entered the kitchen." again and again, and the verdicts depend on the sentence alone (what the story
    around it decides is left to `_StoryReader`)."""
    watchers = _WHILE.match(sentence)
    form, match = next(((i, m) for i, pattern in enumerate(_FORMS) if (m := pattern.match(sentence))), (None, None))
    actor = _ACTOR.match(sentence)
    moved = _MOVED_THING.search(sentence)
    declared = _DECLARED.match(sentence)
    room = container = None
    if not (_PRIVATE.match(sentence) or _BROADCAST.match(sentence)):
        # a told fact says where someone believes a thing is, not what the place is
        place = next((m for pattern in _PLACE_FORMS if (m := pattern.match(sentence))), None)
        if place:
            groups = place.groupdict()
            room, container = groups["room"], groups.get("container")
    return _Sentence(watchers.group("rest") if watchers else None, form, match,
                     actor.group("person") if actor else None, moved.group("obj") if moved else None,
                     declared.group("thing") if declared else None, room, container)


class _StoryReader:
    """Reads sentences in order, keeping what the forms need: people, rooms, containers, what is in what."""

    def __init__(self, sentences: list[str], state_types: Mapping[str, str]) -> None:
        self.sentences = sentences
        self.readings = [_read_sentence(sentence) for sentence in sentences]
        self.state_types = state_types
        self.people: set[str] = set()
        self.things: set[str] = set()
        for reading in self.readings:
            if reading.actor is not None:
                self.people.add(reading.actor)
            if reading.moved is not None:
                self.things.add(reading.moved)
            if reading.declared_thing:
                self.things.add(reading.declared_thing)
        # Every room and container the story names anywhere, so a told fact can say which one it is about.
        self.rooms: set[str] = set()
        self.containers: set[str] = set()
        for reading in self.readings:
            if reading.room is not None:
                self.rooms.add(reading.room)
                if reading.container:
                    self.containers.add(reading.container)
        self.inside: dict[str, str] = {}
        self.present: set[str] = set()
        self.out: list[Step] = []

    def steps(self) -> list[Step]:
        readers: tuple[Callable[[re.Match[str]], Step], ...] = (
            self._private, self._broadcast, self._to_container, self._to_room, self._to_room, self._entered,
            self._left, self._declared)
        for position, (sentence, reading) in enumerate(zip(self.sentences, self.readings), start=1):
            self.position, self.sentence = position, sentence
            if reading.watchers is not None:
                self._watchers(reading.watchers)
            elif reading.match is not None:
                self.out.append(readers[reading.form](reading.match))
            else:
                self.out.append(self._state_update(sentence))
        return self.out

    def _error(self, reason: str) -> StoryParseError:
        return StoryParseError(self.position, self.sentence, reason)

    @staticmethod
    def _step(action: str, *args: Any, **kwargs: Any) -> Step:
        return {"action": action, "args": list(args), "kwargs": kwargs}

    def _watchers(self, rest: str) -> None:
        if not self.out or self.out[-1]["action"] not in _WATCHED or self.out[-1]["kwargs"].keys() & {
                "people_peeking", "people_distracted"}:
            raise self._error("a peeking or distraction sentence must follow the action it is about, once")
        kwargs = self.out[-1]["kwargs"]
        for part in rest.split("; also, "):
            peeking, distracted = _PEEKING.match(part), _DISTRACTED.match(part)
            if peeking and "people_peeking" not in kwargs and "people_distracted" not in kwargs:
                kwargs["people_peeking"] = names_in(peeking.group("names"))
            elif distracted and "people_distracted" not in kwargs:
                kwargs["people_distracted"] = names_in(distracted.group("names"))
            else:
                raise self._error(f"cannot read {part!r} as who peeked or who was distracted")
        for name in kwargs.get("people_peeking", []):
            self.people.add(name)

    def _topic(self, match: re.Match[str]) -> Any:
        if match.group("topic") is not None:
            topic = match.group("topic")
            return topic[4:] if topic.startswith("the ") else topic
        fact = _FACT.match(match.group("fact"))
        if fact is None:
            raise self._error("a told fact reads 'the <object> is in the <place>' or '<person> is in the <room>'")
        if fact.group("person") is not None:
            return [fact.group("person"), ROOM, fact.group("value"), True]
        value = fact.group("value")
        prop = ROOM if value in self.rooms and value not in self.containers else CONTAINER
        return [fact.group("thing"), prop, value, True]

    def _private(self, match: re.Match[str]) -> Step:
        speaker, listener = match.group("speaker"), match.group("listener")
        self.people.update((speaker, listener))
        return self._step("private_communication", speaker, listener, self._topic(match))

    def _broadcast(self, match: re.Match[str]) -> Step:
        return self._step("broadcast_communication", match.group("speaker"), self._topic(match))

    def _to_container(self, match: re.Match[str]) -> Step:
        person, obj, container = match.group("person", "obj", "container")
        self.containers.add(container)
        self.rooms.add(match.group("room"))
        self.inside[obj] = container
        return self._step("move_object_container", person, obj, container)

    def _to_room(self, match: re.Match[str]) -> Step:
        person, obj, room = match.group("person", "obj", "room")
        self.rooms.add(room)
        self.inside.pop(obj, None)
        return self._step("move_object_room", person, obj, room)

    def _entered(self, match: re.Match[str]) -> Step:
        person, room = match.group("person", "room")
        self.rooms.add(room)
        self.present.add(person)
        return self._step("enter_room", person, room)

    def _left(self, match: re.Match[str]) -> Step:
        entity, place = match.group("entity", "place")
        if self.inside.get(entity) == place:
            del self.inside[entity]
            return self._step("leave_container", entity, place)
        self.rooms.add(place)
        return self._step("leave_room", entity, place)

    def _declared(self, match: re.Match[str]) -> Step:
        room = match.group("room")
        self.rooms.add(room)
        if match.group("thing") is not None:
            return self._step("location_declaration", match.group("thing"), room, is_thinking_entity=False)
        entity = match.group("entity")
        if entity in self.things or (entity not in self.people and not entity[:1].isupper()):
            return self._step("location_declaration", entity, room, is_thinking_entity=False)
        self.present.add(entity)
        return self._step("location_declaration", entity, room)

    def _state_update(self, sentence: str) -> Step:
        for person in sorted(self.present | self.people, key=len, reverse=True):
            if sentence.startswith(person + " ") and sentence.endswith("."):
                found = self._state_words(sentence[len(person) + 1:-1])
                if found:
                    value, obj = found
                    state_type = self.state_types.get(value) or "<is_" + value.replace(" ", "_") + ">"
                    return self._step("update_object_state", person, obj, value, state_type, sentence, True)
        raise self._error("no sentence form fits (a state update must start with someone already in the story "
                          "and name 'the <object>')")

    def _state_words(self, rest: str) -> tuple[str, str] | None:
        """(value, object) of "<words> the <object>[ <more words>]": a thing the story knows, else the last words."""
        for thing in sorted(self.things, key=len, reverse=True):
            before, found, after = rest.partition(f" the {thing}")
            if found and before and (not after or after.startswith(" ")):
                return (before + after).strip(), thing
        match = _STATE_REST.match(rest + ".")
        if match:
            self.things.add(match.group("obj"))
            return match.group("value"), match.group("obj")
        return None
