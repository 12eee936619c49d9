"""ExploreToM stories at import: each story's structure read into its action trace, each question answered.

The ExploreToM reader keeps a story's structure as text (the stimulus text when the file has no infilled
story, else meta `story_structure`). This step, run on the plan before it is written, reads each distinct
structure once with the story parser, replays it, and gives every question of that story:
- the trace as its reference steps, stored once for all the story's questions (`storage.story_steps`), so
  the story opens in the belief stepper, and
- meta `engine_answer` (the engine's answer, None when it cannot say), `engine_matches` (whether that is the
  expected answer), `engine_false_belief` and `belief_step` (the step that last set the belief it read).
A structure with a sentence the tracker never writes keeps its questions as text only; the plan's notes say
which story and sentence, so nothing is lost silently.
"""
from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from app.beliefs.engine import ROOM, STATE_PREFIX
from app.beliefs.questions import (KNOWS, STATE, Question, QuestionError, answer_question, answers_match,
                                   params_property, parse_question)
from app.beliefs.replay import Replay, TraceError, replay_steps
from app.beliefs.story import StoryParseError, parse_story
from storage import analysis, lookups
from storage.exporters.report import without_cycle_collection
from storage.importers.common import dumps, json_objects, json_values
from storage.importers.exploretom import ExploreToMImporter
from storage.importers.plan import ImportPlan
from storage.importers.words import STORY_KIND
from storage.store import Store
from storage.story_questions import StoryQuestion

STRUCTURE_COLUMNS = ("story_structure", "raw_story")


def interpret_stories(plan: ImportPlan) -> None:
    """Give every story stimulus of `plan` that has a structure its trace steps and the engine's answers.

    The engine replays each story once and answers its questions in Python; the rest is done by polars over
    whole columns: reading each question's structure and params from its meta, and adding the engine's
    answers to the meta as `storage.importers.common.dumps` would write them.
    """
    # the replays' hundreds of thousands of cells and changes hold no cycles, yet each collection while they
    # live would walk them all again: a sixth of an import's time
    with without_cycle_collection():
        _interpret_stories(plan)


def _interpret_stories(plan: ImportPlan) -> None:
    stimuli = plan.frame("stimuli")
    if not stimuli.height or not stimuli.select(pl.col("kind").eq(STORY_KIND).any()).item():
        return
    structure_is_text = plan.mapping.get("text") in STRUCTURE_COLUMNS
    read = stimuli.select("title", "ground_truth", pl.col("kind") == STORY_KIND, "text", _meta_members(plan)).select(
        "title", "ground_truth",
        structure=pl.when("kind").then(pl.col("text") if structure_is_text else pl.col("story_structure")),
        params="params")
    # A state's type is named only by a question about it: gather each story's before reading it.
    state_types: dict[str, dict[str, str]] = {}
    for structure, title, params in read.filter(
            pl.col("structure").ne("") & pl.col("params").str.contains(STATE_PREFIX, literal=True)
    ).select("structure", "title", "params").iter_rows():
        _note_state_type(state_types.setdefault(structure, {}), title, params)
    # each distinct structure once, in the order the questions first name it, with the rows that ask about it:
    # the structures stay in polars, not copied into Python for every question
    asking = read.with_row_index("row").filter(pl.col("structure").ne("")).group_by(
        "structure", maintain_order=True).agg("row")
    titles, expected, params = (read.get_column(c).to_list() for c in ("title", "ground_truth", "params"))
    stories: list[StoredSteps | StoryParseError | TraceError] = []
    answers = _Answers(stimuli.height)
    # Story by story: each is replayed, its questions answered, and its replay let go before the next, so the
    # cells and changes of hundreds of replays are never all alive at once.
    for structure, rows in asking.iter_rows():
        story = _read(structure, state_types.get(structure, {}))
        if not isinstance(story, tuple):
            stories.append(story)
            continue
        stories.append(story[0])
        answers.add_story(rows, story[1] if len(story[1]) else None, titles, params, expected)
    plan.frames["stimuli"] = stimuli.with_columns(meta=answers.merged(
        stimuli.get_column("meta"), spliced=plan.importer == ExploreToMImporter.kind))
    traced = [number for number, story in enumerate(stories) if isinstance(story, list)]
    if traced:
        plan.add("story_steps", _story_steps(stories))
        # each question of a story read, by the story's number (its place in `stories`), in the stimuli's order
        asked = asking.select(story=pl.int_range(pl.len(), dtype=pl.Int64), row="row").explode("row").filter(
            pl.col("story").is_in(traced)).sort("row")
        plan.add("story_questions", asked.select(
            stimulus=stimuli.get_column("external_id").gather(asked.get_column("row")), story="story"))
    failed = [err for err in stories if not isinstance(err, list)]
    if failed:
        first = failed[0]
        plan.notes.append(f"{len(failed)} of {len(stories)} story structures have a sentence the belief tracker "
                          f"does not write, so their questions are shown as text only; the first: {first}")


def _meta_members(plan: ImportPlan) -> pl.Expr:
    """Each stimulus's meta members `story_structure` and `params` (null where it has none), as two fields.

    The ExploreToM reader writes both as JSON text, so each meta is decoded once for both; a meta another
    reader wrote may hold any JSON there, which is read as its JSON text."""
    meta = pl.col("meta")
    if plan.importer == ExploreToMImporter.kind:
        return meta.str.json_decode(pl.Struct({"story_structure": pl.String, "params": pl.String})).struct.unnest()
    return pl.struct(story_structure=meta.str.json_path_match("$.story_structure"),
                     params=meta.str.json_path_match("$.params")).struct.unnest()


_ALWAYS = ("engine_answer", "engine_matches")          # in every answer (`_Answers.add`)
_WITH_BELIEF = ("belief_step", "engine_false_belief")  # in an answer the engine could give


class _Answers:
    """The engine's answers to a plan's stimuli, row by row, as the columns added to their meta.

    A row answered has `engine_answer` and `engine_matches` (null when the engine cannot say: no question, an
    empty story, or a question in none of the templates); one the engine could answer also has
    `engine_false_belief` and `belief_step` (the step that last set the belief it read).
    """

    def __init__(self, rows: int) -> None:
        self.answered = [False] * rows
        self.believed = [False] * rows
        self.columns: dict[str, list[Any]] = {key: [None] * rows for key in (*_ALWAYS, *_WITH_BELIEF)}

    def add_story(self, rows: list[int], replay: Replay | None, questions: list[str | None], params: list[Any],
                  expected: list[str | None]) -> None:
        """Answer the questions of the stimuli `rows` (their places in `questions`, `params` and `expected`) from
        the end of their story's `replay` (None: the story has no steps, so there is nothing to read)."""
        answered, believed = self.answered, self.believed
        answers, matches, false_beliefs, steps = (self.columns[key] for key in (
            "engine_answer", "engine_matches", "engine_false_belief", "belief_step"))
        for row in rows:
            answered[row] = True
            question = questions[row]
            if replay is None or not question:
                continue
            try:
                answer = answer_question(replay, question, params[row])
            except QuestionError:
                continue
            answers[row] = answer.answer
            matches[row] = answers_match(answer.answer, expected[row])
            false_beliefs[row] = answer.false_belief
            steps[row] = answer.set_at_step
            believed[row] = True

    def of(self, row: int) -> dict[str, Any]:
        """The members row `row` adds to its meta."""
        keys = (*_ALWAYS, *_WITH_BELIEF) if self.believed[row] else _ALWAYS
        return {key: self.columns[key][row] for key in keys}

    def merged(self, metas: pl.Series, spliced: bool) -> pl.Series:
        """Each meta with its row's answer added, as `dumps` writes the merged object; a row not answered
        keeps its meta.

        With `spliced` (the metas are the ExploreToM reader's, written as `dumps` writes them), a meta none of
        whose keys sorts before the engine's gets the answer's members put first by polars, rather than
        decoded and written again by Python; any other meta is merged in Python.
        """
        frame = pl.DataFrame({"meta": metas, "answered": self.answered, "believed": self.believed, **self.columns},
                             schema={"meta": pl.String, "answered": pl.Boolean, "believed": pl.Boolean,
                                     "engine_answer": pl.String, "engine_matches": pl.Boolean,
                                     "engine_false_belief": pl.Boolean, "belief_step": pl.Int64})
        members = {key: pl.when(pl.col("answered" if key in _ALWAYS else "believed")).then(json_values(pl.col(key)))
                   for key in (*_ALWAYS, *_WITH_BELIEF)}
        engine = json_objects(members)
        meta = pl.col("meta")
        first_key = meta.str.extract(r'^\{"([^"\\]*)"', 1)
        merged = frame.select(
            pl.when(~pl.col("answered")).then(meta)
            .when(meta.is_null() | meta.eq("{}")).then(engine)   # dumps({}) is "{}", whoever wrote it
            .when(pl.lit(spliced) & (first_key > max(_ALWAYS + _WITH_BELIEF)))
            .then(engine.str.head(-1) + ", " + meta.str.slice(1))
        ).to_series()
        unspliced = (frame.get_column("answered") & merged.is_null()).arg_true().to_list()
        if unspliced:
            merged = merged.scatter(unspliced, [dumps({**json.loads(metas[i]), **self.of(i)}) for i in unspliced])
        return merged.alias("meta")


StoredSteps = list[tuple[int, str, str, str]]   # step index, action, args and kwargs as the JSON stored


def _story_steps(stories: list[StoredSteps | StoryParseError | TraceError]) -> pl.DataFrame:
    """The steps of every story read, once each, by the story's number (its place in `stories`)."""
    numbers: list[int] = []
    columns: tuple[list, ...] = ([], [], [], [])   # step index, action, args, kwargs
    for number, story in enumerate(stories):
        if isinstance(story, list):
            numbers += itertools.repeat(number, len(story))
            for column, values in zip(columns, zip(*story)):
                column += values
    return pl.DataFrame(dict(zip(("story", "step_index", "action", "args", "kwargs"), (numbers, *columns))),
                        schema={"story": pl.Int64, "step_index": pl.Int32, "action": pl.String, "args": pl.String,
                                "kwargs": pl.String})


def _read(structure: str, state_types: dict[str, str]) -> tuple[StoredSteps, Replay] | StoryParseError | TraceError:
    """A story's steps (as stored: every question of the story shares the text) and its replay."""
    try:
        steps = parse_story(structure, state_types)
        replay = replay_steps(steps)
    except (StoryParseError, TraceError) as exc:
        return exc
    return [(i, s["action"], _args_json(s["args"]), _step_json(s["kwargs"]) if s["kwargs"] else "{}")
            for i, s in enumerate(steps)], replay


# json.dumps(value, ensure_ascii=False) with its encoder made once, not for each of a release's steps (most of
# whose keyword arguments are none: "{}")
_step_json = json.JSONEncoder(ensure_ascii=False).encode


def _args_json(args: list[Any]) -> str:
    """`_step_json(args)` of a story step's arguments, worked out once per distinct list of names and flags: a
    release's stories take the same steps ("Anne", "kitchen") story after story. A story's steps hold names,
    flags and told facts (lists) but never a number, so no two different lists of them are equal (as True and 1
    would be); one with a told fact is not looked up."""
    try:
        return _plain_args_json(tuple(args))
    except TypeError:   # a told fact: a list, which cannot be looked up
        return _step_json(args)


@functools.lru_cache(maxsize=16384)
def _plain_args_json(args: tuple[str | bool, ...]) -> str:
    return _step_json(args)   # a tuple is written as the list it came from


def _note_state_type(types: dict[str, str], question: str | None, params: Any) -> None:
    """A yes/no state question names a state value and (in its params) that state's type."""
    prop = params_property(params)
    if not question or not prop or not prop.startswith("<state_update> "):
        return
    try:
        parsed = parse_question(question, params)
    except QuestionError:
        return
    if parsed.value:
        types.setdefault(parsed.value, prop[len("<state_update> "):])


def engine_agreement(store: Store, dataset_name: str | None = None) -> dict[str, dict[str, int]]:
    """Per dataset with story questions: how many questions it has, how many the engine answered from the
    story's trace, and how many of those answers are the dataset's expected answer."""
    cur = store.cursor()
    out: dict[str, dict[str, int]] = {}
    for dataset in lookups.datasets(cur, dataset_name):
        frame = analysis.stimuli_frame(cur, dataset.id).filter(pl.col("kind") == STORY_KIND)
        if not frame.height:
            continue
        answered = frame.get_column("engine_answer").is_not_null().sum() if "engine_answer" in frame.columns else 0
        matches = frame.get_column("engine_matches").sum() if "engine_matches" in frame.columns else 0
        out[dataset.name] = {"questions": frame.height, "engine_answered": int(answered),
                             "expected_reproduced": int(matches or 0)}
    return out


@dataclass(frozen=True)
class QuestionRow:
    """One of a story's questions as the story page lists it."""

    stimulus_id: int
    question: str
    expected: str | None
    engine: str | None
    engine_matches: bool | None
    order: int | None
    false_belief: bool | None
    belief: str                 # what the engine read, in words (`belief_words`)
    belief_step: int | None     # the step that last set that belief (None: never set)
    model_answers: tuple[tuple[str, str | None, bool | None], ...]


def story_question_rows(questions: Sequence[StoryQuestion], steps: list[dict[str, Any]]) -> list[QuestionRow]:
    """The story's questions with the engine's answers, read from the end of the story's trace `steps`."""
    try:
        replay = replay_steps(steps) if steps else None
    except TraceError:
        replay = None
    rows = []
    for q in questions:
        answer = None
        if replay is not None and len(replay):
            try:
                answer = answer_question(replay, q.question, q.meta.get("params"))
            except QuestionError:
                answer = None
        if answer is None:
            rows.append(QuestionRow(q.stimulus_id, q.question, q.expected, None, None, q.meta.get("nth_order"),
                                    q.meta.get("false_belief"), "", None, q.model_answers))
            continue
        parsed = answer.question
        rows.append(QuestionRow(q.stimulus_id, q.question, q.expected, answer.answer,
                                answers_match(answer.answer, q.expected), parsed.order or None, answer.false_belief,
                                belief_words(parsed), answer.set_at_step, q.model_answers))
    return rows


def belief_words(question: Question) -> str:
    """What a question reads, in words: "Anne thinks Beth believes: where the ball is (container)"."""
    holders = question.holders
    who = ("the world" if not holders else f"{holders[0]} believes" if len(holders) == 1
           else f"{holders[0]} thinks {holders[1]} believes")
    if question.kind == KNOWS:
        return f"{who}: heard about {question.value}"
    if question.kind == STATE:
        return f"{who}: the {question.entity} {question.value}"
    return f"{who}: where the {question.entity} is ({'room' if question.prop == ROOM else 'container'})"
