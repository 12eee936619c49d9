"""ExploreToM's questions answered by the belief engine, from the state at the end of a replayed story.

Every template of the reference question generator is read (see BELIEFS.md and ExploreToM's tracker):
- where someone (first order) or someone-about-someone (second order) will search for a thing, by container
  or room ("In which container will Anne search for the ball?", "In which room does Anne think that Beth will
  search for the ball?", and the older "Where will ... search for the ...?", which asks for the container);
- "Does Anne know about the recipe?" and "What does Anne think about Beth's belief on the recipe?";
- "Does Anne believe that the apple peeled?" and "Does Anne think that Beth believes that the apple peeled?";
- factual questions about the world: where a thing was at the beginning, is now, or was before an event.

An answer says what it read: the holders, the fact, the believed value, the world's value, whether the belief
is a false one (the reference's `-True` / `-False` suffix of a question's params) and the step that last set
the belief, so a viewer can jump to it.
"""
from __future__ import annotations

import ast
import functools
import re
from typing import Any, NamedTuple

from app.beliefs.engine import CONTAINER, KNOWLEDGE, KNOWLEDGE_ENTITY, ROOM, STATE_PREFIX, is_positive
from app.beliefs.replay import Replay
from storage.errors import ThinsliceError

LOCATION = "location"
KNOWS = "knowledge"
STATE = "state"
FACTUAL = "factual"

_WHERE = {"container": CONTAINER, "room": ROOM}
_THING = r"(?:the )?(?P<thing>.+?)"
_TEMPLATES: tuple[tuple[re.Pattern[str], str, int, str | None], ...] = tuple(
    (re.compile(pattern + r"$"), kind, order, prop) for pattern, kind, order, prop in (
        (r"In which (?P<where>container|room) will (?P<a>.+?) search for " + _THING + r"\?", LOCATION, 1, None),
        (r"In which (?P<where>container|room) does (?P<a>.+?) think that (?P<b>.+?) will search for "
         + _THING + r"\?", LOCATION, 2, None),
        (r"Where will (?P<a>.+?) search for " + _THING + r"\?", LOCATION, 1, CONTAINER),
        (r"Where does (?P<a>.+?) think that (?P<b>.+?) will search for " + _THING + r"\?", LOCATION, 2, CONTAINER),
        (r"Does (?P<a>.+?) know about (?P<thing>.+?)\? Answer yes or no\.", KNOWS, 1, KNOWLEDGE),
        (r"What does (?P<a>.+?) think about (?P<b>.+?)'s belief on (?P<thing>.+?)\? \(knows about it / does not "
         r"know about it\)", KNOWS, 2, KNOWLEDGE),
        (r"Does (?P<a>.+?) think that (?P<b>.+?) believes that the (?P<thing>.+?) (?P<value>[^?]+)\? Answer yes "
         r"or no\.", STATE, 2, None),
        (r"Does (?P<a>.+?) believe that the (?P<thing>.+?) (?P<value>[^?]+)\? Answer yes or no\.", STATE, 1, None),
        (r"In which (?P<where>container|room) was the (?P<thing>.+?) at the beginning\?", FACTUAL, 0, "beginning"),
        (r"In which (?P<where>container|room) is the (?P<thing>.+?) now\?", FACTUAL, 0, "now"),
        (r"In which (?P<where>container|room) was the (?P<thing>.+?) before (?P<event>.+?)\?", FACTUAL, 0, "before"),
    ))


class QuestionError(ThinsliceError):
    """A question in none of ExploreToM's templates."""


class Question(NamedTuple):
    """What a question asks: its kind, order (0 for a factual one), holders, thing, property and extras."""

    text: str
    kind: str
    order: int
    holders: tuple[str, ...]
    entity: str
    prop: str
    value: str | None = None     # the state a yes/no state question names
    moment: str | None = None    # factual: "beginning", "now" or "before"
    event: str | None = None     # factual "before": the story sentence, as the question quotes it


class Answer(NamedTuple):
    """The engine's answer and what it read."""

    question: Question
    answer: str | None
    belief: Any          # the value read: a belief, a knowledge set, or the world's value for a factual question
    world: Any
    false_belief: bool | None
    set_at_step: int | None

    def to_json(self) -> dict[str, Any]:
        q = self.question
        return {"question": q.text, "answer": self.answer, "order": q.order if q.order else -1, "kind": q.kind,
                "belief": {"holders": list(q.holders), "entity": q.entity, "property": q.prop,
                           "value": _plain(self.belief)},
                "world": _plain(self.world), "false_belief": self.false_belief, "set_at_step": self.set_at_step}


def params_property(params: Any) -> str | None:
    """The property a question's `qprop=params` names ("container_location-True" -> container_location)."""
    if isinstance(params, str):
        return _params_text_property(params)
    return _params_value_property(params)


@functools.lru_cache(maxsize=16384)
def _params_text_property(text: str) -> str | None:
    """`params_property` of params as the CSV writes them, read once per distinct text (a release repeats
    them, and reading Python literals is slow)."""
    try:
        params = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return _params_value_property(params)


def _params_value_property(params: Any) -> str | None:
    if not isinstance(params, (list, tuple)) or len(params) < 3 or not isinstance(params[2], str):
        return None
    prop = params[2]
    for suffix in ("-True", "-False"):
        if prop.endswith(suffix):
            prop = prop[:-len(suffix)]
    return prop.split("-", 1)[1] if prop.startswith(("memory-", "ground_truth-", "memory_before_event-")) else prop


def parse_question(text: str, params: Any = None) -> Question:
    """Read a question in one of the templates; `params` (the CSV's `qprop=params`) names a state's type."""
    if params is None or isinstance(params, str):
        return _parse_question_text(text, params)
    return _parse_question(text, params)


@functools.lru_cache(maxsize=16384)
def _parse_question_text(text: str, params: str | None) -> Question:
    """`parse_question` of a question and params as the CSV writes them, read once per distinct pair: a
    release asks the same questions of many stories."""
    return _parse_question(text, params)


def _parse_question(text: str, params: Any) -> Question:
    text = " ".join(text.split())
    for pattern, kind, order, prop in _TEMPLATES:
        match = pattern.match(text)
        if match is None:
            continue
        groups = match.groupdict()
        holders = tuple(h for h in (groups.get("a"), groups.get("b")) if h)
        thing = groups["thing"]
        if kind == KNOWS:
            return Question(text, kind, order, holders, KNOWLEDGE_ENTITY, KNOWLEDGE, thing)
        if kind == STATE:
            named = params_property(params)
            state = named if named and named.startswith(STATE_PREFIX) else ""
            return Question(text, kind, order, holders, thing, state, groups["value"])
        where = prop if kind == LOCATION and prop else _WHERE[groups["where"]]
        if kind == FACTUAL:
            return Question(text, kind, 0, (), thing, where, moment=prop, event=groups.get("event"))
        return Question(text, kind, order, holders, thing, where)
    raise QuestionError(f"question {text!r}: not one of ExploreToM's templates (In which container/room will X "
                        "search for the T?; ... does X think that Y will search for the T?; Does X know about T?; "
                        "What does X think about Y's belief on T?; Does X believe that the T V?; Does X think "
                        "that Y believes that the T V?; In which container/room was the T at the beginning / is "
                        "the T now / was the T before E?)")


def answer_question(replay: Replay, question: Question | str, params: Any = None) -> Answer:
    """The engine's answer to a question about the state after the last step of `replay`."""
    if isinstance(question, str) and (params is None or isinstance(params, str)):
        q, key, world_key = _read_text_question(question, params)
    else:
        q = parse_question(question, params) if isinstance(question, str) else question
        key, world_key = _cell_keys(q)
    if q.kind == FACTUAL:
        return _factual(replay, q)
    cells = replay.final_state().cells
    if q.kind == KNOWS:
        known = cells.get(key) or frozenset()
        heard = q.value in known
        if q.order == 1:
            answer, false = ("yes" if heard else "no"), False
        else:
            really = q.value in (cells.get(("first", q.holders[1], KNOWLEDGE_ENTITY, KNOWLEDGE)) or frozenset())
            answer, false = ("knows about it" if heard else "does not know about it"), heard != really
        step = _set_at(replay, key, lambda v: q.value in (v or ()))
        return _answer(Answer, (q, answer, sorted(known), None, false, step))
    if q.kind == STATE:
        q = q._replace(prop=_state_property(replay.final_state(), q))
        key, world_key = _cell_keys(q)
    belief = cells.get(key)
    world = cells.get(world_key)
    # The belief read is the cell's final value, so the step that set it is the cell's last write.
    step = replay.last_write(key)
    if q.kind == STATE:
        held = belief is not None and q.value in belief
        return _answer(Answer, (q, "yes" if held else "no", belief, world,
                                (belief != world) if belief is not None else None, step))
    return _answer(Answer, (q, belief if is_positive(belief) else None, belief, world,
                            belief != world if belief is not None else None, step))


_answer = tuple.__new__   # an Answer from its fields as one tuple, without the named tuple's own constructor


def _cell_keys(q: Question) -> tuple[tuple, tuple]:
    """The cell a question reads (its holders' belief about the thing's property) and the world's cell of it."""
    layer = ("first", *q.holders) if q.order == 1 else ("second", *q.holders)
    return (*layer, q.entity, q.prop), ("world", q.entity, q.prop)


@functools.lru_cache(maxsize=16384)
def _read_text_question(text: str, params: str | None) -> tuple[Question, tuple, tuple]:
    """`parse_question` of a question as the CSV writes it, with its `_cell_keys`, worked out once per distinct
    question: a release asks the same questions of many stories."""
    q = _parse_question_text(text, params)
    return (q, *_cell_keys(q))


def answers_match(engine: str | None, expected: str | None) -> bool:
    """Whether the engine's answer is the dataset's expected answer (case, spaces and a full stop aside)."""
    return engine is not None and _compared(engine) == _compared(expected)


@functools.lru_cache(maxsize=16384)
def _compared(text: str | None) -> str:
    """An answer as `answers_match` compares it, worked out once per distinct text (a release's answers are
    a few places and yes or no, again and again)."""
    return " ".join((text or "").strip().rstrip(".").lower().split())


def _state_property(state: Any, q: Question) -> str:
    """The state property a yes/no question is about: the one its params name if the story has it, else the
    one of the thing that holds (or held) the named value, else the type a story sentence would give it."""
    if q.prop and state.world(q.entity, q.prop) is not None:
        return q.prop
    for key, value in state.cells.items():
        if key[0] == "world" and key[1] == q.entity and key[2].startswith(STATE_PREFIX) and value == q.value:
            return key[2]
    return q.prop or STATE_PREFIX + "<is_" + (q.value or "").replace(" ", "_") + ">"


def _set_at(replay: Replay, key: tuple, holds: Any) -> int | None:
    """The last step that wrote `key` with a value for which `holds` is true, each step counting with its last
    write of `key` (None: no step did)."""
    last = replay.last_write(key)
    if last is None:
        return None
    if holds(replay.final_state().cells[key]):
        return last   # the usual answer, without a search: the last step's last write is the final value
    for record in reversed(replay.records[:last]):
        flat = record.outcome.changes_flat
        for i in range(len(flat) - 3, -1, -3):
            if flat[i] == key:
                if holds(flat[i + 2]):
                    return record.index
                break
    return None


def _factual(replay: Replay, q: Question) -> Answer:
    """Where the world had the thing at the beginning, now, or just before an event of the story."""
    key = ("world", q.entity, q.prop)
    history: list[tuple[int, Any]] = []
    for record in replay.records:
        flat = record.outcome.changes_flat
        for i in range(0, len(flat), 3):
            if flat[i] == key:
                history.append((record.index, flat[i + 2]))
    if q.moment == "before":
        event = (q.event or "").strip().rstrip(".")
        # the reference quotes the step's last story sentence, without its full stop and room
        at = next((r.index for r in replay.records if r.outcome.story_sentences and
                   r.outcome.story_sentences[-1].strip(".").split(", which is also located in")[0] == event),
                  None)
        earlier = [(i, v) for i, v in history if at is not None and i < at]
        step, value = earlier[-1] if earlier else (None, None)
    elif history:
        step, value = history[0] if q.moment == "beginning" else history[-1]
    else:
        step, value = None, None
    return Answer(q, value if is_positive(value) else None, value, value, None, step)


def _plain(value: Any) -> Any:
    return sorted(value) if isinstance(value, (frozenset, set)) else value
