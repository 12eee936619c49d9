"""NCP-ExploreToM's rules: which actions a task may use, its goals read from their sentences, and whether an
attempt reached its goal; and ExploreToM's story questions: a model's answer read and scored.

An attempt succeeds when every goal atom holds after its last step (played after the task's set-up), and the
world matches (a true-belief goal) or differs (a false-belief goal) as the task says. `score_attempt` is the
one scorer: imported attempts, the dashboard and live runs all call it.

An answer to a story question is right when it is the dataset's expected answer, compared as the engine's own
answers are (`app.beliefs.questions.answers_match`) once the reply is read down to its answer (`story_answer`).
`score_story` is that one scorer, for live replies and for the dashboard's answers without a stored verdict.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import polars as pl

from app.beliefs.actions import ACTIONS
from app.beliefs.engine import CONTAINER, KNOWLEDGE, ROOM
from app.beliefs.goals import (ANY_LOCATION, GoalAtom, GoalError, Vocabulary, atom_from_json, evaluate_goal,
                               goal_from_json, vocabulary_from_steps)
from app.beliefs.questions import answers_match
from app.beliefs.replay import TraceError, parse_steps, replay_steps
from app.beliefs.stories import STORY_KIND, interpret_stories
from app.benchmarks import generic
from app.benchmarks.chat import Message, conversation, text_part
from app.benchmarks.generic import open_answer
from app.benchmarks.profile import Asking, BenchmarkProfile, Frames, KindProfile, LiveChoice, Page
from app.dashboard_tables import ChartSpec, DashboardTable, table_of
from app.metrics import accuracy_table, ncp_success
from app.metrics.tables import NCP_FACTORS
from app.prompt_template import PromptTemplate
from storage.importers.common import ProblemLog, dumps
from storage.importers.plan import ImportPlan
from storage.importers.words import TASK_KIND
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames

NAME = "ncp"
RUN_KEY = ("model",)   # what one run is, in the failure filters
# The six state-changing actions a model may take in NCP, in the order its tools are offered. A task's
# set-up and reference steps may use any action of the engine (ExploreToM's golden traces also
# communicate); a model's own trace is kept whatever it calls, and the engine shows a bad call as failed.
NCP_ACTIONS: tuple[str, ...] = ("enter_room", "leave_room", "move_object_container", "leave_container",
                                "move_object_room", "update_object_state")
Step = dict[str, Any]

# The prompt a live model acts on a task with, through the tools for `NCP_ACTIONS`.
TASK_PROMPT = PromptTemplate(
    name="ncp.task",
    benchmark="NCP-ExploreToM",
    description="Act in a small world (with the six tools) until the belief goal holds.",
    system=(
        "You control the people in a small world of rooms, containers and objects. People only see what "
        "happens in the room they are in. Use the tools to act, one action per call. When you believe the goal "
        "is reached, stop calling tools and say so."
    ),
    user="Current state:\n{state}\n\nGoal: {goal}",
)

# The prompt a live model answers an ExploreToM story question with; its reply is read by `story_answer`.
STORY_PROMPT = PromptTemplate(
    name="exploretom.question",
    benchmark="ExploreToM",
    description="Read a story and answer one question about where someone will look or what they believe.",
    system="You read short stories and answer questions about what the people in them know and believe.",
    user=(
        "Story:\n{story}\n\nQuestion: {question}\n"
        "Answer with the answer alone: a container, a room, yes or no, or the words the question offers."
    ),
)


@dataclass(frozen=True)
class AttemptScore:
    """Whether an attempt reached its goal (None: no goal, or a goal that cannot be read), each atom's text
    and whether it holds after the last step, and what was wrong (an undecidable goal, a rejected trace)."""

    reached: bool | None
    atoms: tuple[tuple[str, bool], ...] = ()
    problem: str | None = None


def score_attempt(steps: Sequence[Step], goal: dict[str, Any] | None) -> AttemptScore:
    """Replay `steps` (set-up included) and check the goal after the last one.

    A trace the engine rejects (an unknown action, arguments of the wrong type) did not reach the goal."""
    if goal is None or not goal.get("atoms"):
        return AttemptScore(None, (), "no goal")
    try:
        replay = replay_steps(list(steps))
    except TraceError as exc:
        return AttemptScore(False, (), f"trace rejected: {exc}")
    try:
        parsed = goal_from_json(goal, vocabulary_from_steps(parse_steps(list(steps))))
    except GoalError as exc:
        return AttemptScore(None, (), f"goal not understood: {exc}")
    timeline = evaluate_goal(parsed, replay)
    if not timeline.satisfied:
        return AttemptScore(False, tuple((h.atom.text, False) for h in timeline.atoms))
    return AttemptScore(bool(timeline.satisfied[-1]), tuple((h.atom.text, h.holds[-1]) for h in timeline.atoms))


def goal_type(atom: GoalAtom, vocabulary: Vocabulary) -> str:
    """One of NCP's goal types for an atom.

    A place left open by the parser (`ANY_LOCATION`: named by no step and not a room word) is counted as a
    container: the parser already calls people's places and room-like names rooms, and the goal matches
    either way when it is evaluated."""
    if atom.property in (CONTAINER, ANY_LOCATION):
        return "object in container"
    if atom.property == ROOM:
        return "person in room" if atom.entity in vocabulary.people else "object in room"
    if atom.property == KNOWLEDGE:
        return "person heard about topic"
    return "object property value"


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(answer, correct) for a reply to a story question (`story_answer`, `score_story`); (the reply trimmed,
    None) for a task, which is scored from its trace, not its text (see `score_attempt`)."""
    if detail.kind == STORY_KIND:
        answer = story_answer(text)
        return answer, score_story(answer, detail.ground_truth)
    return open_answer(text), None


# A reply's answer is its first line without a label ("Answer: ..."), emphasis or quotes, and without the
# preposition and article before a place ("In the drawer." answers "In which container ...?").
_LABEL = re.compile(r"^(?:final\s+)?answer\s*[:\-]\s*", re.IGNORECASE)
_PLACE = re.compile(r"^(?:(?:in|inside|on|at|into)\s+)?(?:the|a|an)\s+", re.IGNORECASE)
_YES_NO = re.compile(r"^(yes|no)\b", re.IGNORECASE)


def story_answer(text: str | None) -> str | None:
    """A reply to a story question read down to its answer ("**Answer:** In the drawer." -> "drawer"; "Yes,
    she does." -> "yes"); None for an empty reply."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip(" *_\"'`")), "")
    line = _LABEL.sub("", line.strip(" *_\"'`")).strip(" *_\"'`")
    yes_no = _YES_NO.match(line)
    if yes_no:
        return yes_no.group(1).lower()
    answer = _PLACE.sub("", line).strip().rstrip(".").strip()
    return answer or None


def score_story(answer: str | None, expected: str | None) -> bool | None:
    """Whether an answer to a story question is its expected answer (None without either)."""
    read = story_answer(answer)
    if read is None or not (expected or "").strip():
        return None
    return answers_match(read, expected)


def _task_steps(plan: ImportPlan) -> dict[str, list[tuple[str, list, dict]]]:
    """Each task's set-up and reference steps (the trace without a model), in order."""
    steps: dict[str, list[tuple[str, list, dict]]] = {}
    frame = plan.frame("trace_steps")
    if not frame.height:
        return steps
    reference = frame.filter(pl.col("model").is_null()).sort("stimulus", "step_index")
    for stimulus, action, args, kwargs in reference.select("stimulus", "action", "args", "kwargs").iter_rows():
        steps.setdefault(stimulus, []).append((action, json.loads(args or "[]"), json.loads(kwargs or "{}")))
    return steps


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Check each task's steps against the engine's actions and read its goal into atoms.

    The reader leaves the goal as written (sentences in `text`, or the given fields of an atom) and the names
    a task declares in its meta (`declared`); a goal of no known form, or a set-up step of an action the
    engine does not have, is a problem of that task, which is left out. ExploreToM's stories are read into
    traces and their questions answered by the engine first (`app.beliefs.stories`).
    """
    interpret_stories(plan)
    stimuli = plan.frame("stimuli")
    tasks = stimuli.filter(pl.col("kind") == TASK_KIND) if stimuli.height else stimuli
    if not tasks.height:
        return
    steps = _task_steps(plan)
    raw_goals: dict[str, list[dict[str, Any]]] = {}
    for row in plan.frame("goal_atoms").sort("stimulus", "ord").iter_rows(named=True):
        raw_goals.setdefault(row["stimulus"], []).append(row)
    bad: set[str] = set()
    metas: dict[str, str] = {}
    titles: dict[str, str] = {}
    atom_rows: list[dict[str, Any]] = []
    for external, title, meta_text in tasks.select("external_id", "title", "meta").iter_rows():
        meta = json.loads(meta_text) if meta_text else {}
        file, record, steps_field = plan.origins.get(external, ("?", None, "steps"))
        setup = int(meta.get("setup_steps") or 0)
        task_steps = steps.get(external, [])
        unknown = [(i, action) for i, (action, _a, _k) in enumerate(task_steps) if action not in ACTIONS]
        for i, action in unknown:
            where = f"initial_steps[{i}]" if i < setup else f"{steps_field}[{i - setup}]"
            log.add(file, record, where + ".action", action, "one of " + ", ".join(sorted(ACTIONS)))
        declared = meta.pop("declared", {})
        vocabulary = vocabulary_from_steps(task_steps).merged(
            declared.get("rooms", ()), declared.get("containers", ()), declared.get("people", ()),
            {str(k): "<state_update> " + str(v) for k, v in (declared.get("state_types") or {}).items()})
        atoms: list[GoalAtom] = []
        for index, row in enumerate(raw_goals.get(external, [])):
            item: Any = row["text"] if row["entity"] is None and row["property"] is None and row["value"] is None \
                else {"holders": json.loads(row["holders"]) if row["holders"] else [], "entity": row["entity"],
                      "property": row["property"], "value": row["value"], "text": row["text"]}
            try:
                atoms.append(atom_from_json(item, vocabulary))
            except GoalError as exc:
                log.add(file, record, f"goal[{index}]", f"<{exc}>",
                        "a goal sentence or an atom {holders, entity, property, value}")
                bad.add(external)
        if unknown:
            bad.add(external)
        if external in bad:
            continue
        meta.update({"goal_size": len(atoms), "goal_order": max((a.order for a in atoms), default=None)})
        meta["goal_types"] = meta.pop("goal_type_given", None) or sorted({goal_type(a, vocabulary) for a in atoms})
        metas[external] = dumps(meta)
        titles[external] = title or ("; ".join(a.text for a in atoms) if atoms else external)
        atom_rows += [{"stimulus": external, "ord": i, "holders": dumps(list(a.holders)), "entity": a.entity,
                       "property": a.property, "value": a.value, "text": a.text} for i, a in enumerate(atoms)]
    plan.frames["stimuli"] = stimuli.with_columns(
        pl.col("external_id").replace_strict(metas, default=pl.col("meta"), return_dtype=pl.String).alias("meta"),
        pl.col("external_id").replace_strict(titles, default=pl.col("title"), return_dtype=pl.String).alias("title"))
    plan.frames.pop("goal_atoms", None)
    if atom_rows:
        plan.add("goal_atoms", atom_rows)
    if bad:
        plan.drop_stimuli(bad)


def dashboard_tables(frames: AnalysisFrames, correction: str, notes: list[str]) -> list[DashboardTable]:
    """Story-question accuracy by order, true/false belief and story type, and goal success by order, goal size
    and true/false belief; accuracy per model when neither has a scored answer."""
    return (_story_tables(frames) + _success_tables(frames)) or generic.dashboard_tables(frames, correction, notes)


# nth_order as ExploreToM numbers it: -1 for a question about the world, not about anyone's belief
ORDER_NAMES = {-1: "factual", 1: "first order", 2: "second order"}
STORY_TYPE = "story_type"   # ExploreToM's `param=story_type`, named so by `storage.analysis`


def story_outcomes(predictions: pl.DataFrame, stimuli: pl.DataFrame) -> pl.DataFrame:
    """One row per model answer to a story question: stimulus_id, model, correct, order_n, order, belief and
    story_type (null where the release has none).

    `correct` is the stored verdict, else the answer scored by `score_story`. `belief` is "false belief" when
    the belief the question reads differs from the world, "true belief" when it does not, as the engine read
    the question at import (the release's own flag where the engine could not answer it), and null for a
    factual question."""
    stories = stimuli.filter(pl.col("kind") == STORY_KIND) if "kind" in stimuli.columns else stimuli.head(0)
    if not stories.height or not predictions.height:
        return pl.DataFrame(schema={"stimulus_id": pl.Int64, "model": pl.String, "correct": pl.Boolean,
                                    "order_n": pl.Int64, "order": pl.String, "belief": pl.String,
                                    STORY_TYPE: pl.String})

    def column(name: str, dtype: pl.DataType) -> pl.Expr:
        return (pl.col(name) if name in stories.columns else pl.lit(None)).cast(dtype).alias(name)

    factors = stories.select("stimulus_id", column("nth_order", pl.Int64), column("engine_false_belief", pl.Boolean),
                             column("false_belief", pl.Boolean), column(STORY_TYPE, pl.String))
    answers = predictions.select("stimulus_id", "model", "answer", "correct", "ground_truth").join(
        factors, on="stimulus_id", how="inner")
    scored = [stored if stored is not None else score_story(answer, truth) for stored, answer, truth in
              answers.select("correct", "answer", "ground_truth").iter_rows()]
    false_belief = pl.coalesce("engine_false_belief", "false_belief")
    return answers.select(
        "stimulus_id", "model", pl.Series("correct", scored, dtype=pl.Boolean),
        pl.col("nth_order").alias("order_n"),
        pl.col("nth_order").replace_strict(ORDER_NAMES, default=pl.format("order {}", pl.col("nth_order")),
                                           return_dtype=pl.String).alias("order"),
        pl.when(pl.col("nth_order") <= 0).then(None)
        .otherwise(pl.when(false_belief).then(pl.lit("false belief"))
                   .when(~false_belief).then(pl.lit("true belief"))).alias("belief"),
        STORY_TYPE)


def _story_tables(frames: AnalysisFrames) -> list[DashboardTable]:
    if not frames.stimuli.filter(pl.col("kind") == STORY_KIND).height:
        return []   # no story questions: the predictions need not be read
    outcomes = story_outcomes(frames.predictions, frames.stimuli).filter(pl.col("correct").is_not_null())
    if not outcomes.height:
        return []
    tables = []
    for key, title, group, note in (
            ("order", "by order", ["order_n", "order"],
             "first order: where someone will look or what they believe; second order: what someone thinks "
             "another believes; factual: where a thing is, or was at the start"),
            ("belief", "by true or false belief", ["belief"],
             "a false belief differs from the world at the end of the story, as the belief engine reads the "
             "question; factual questions are left out"),
            (STORY_TYPE, "by story type", [STORY_TYPE], "story types as the release names them (param=story_type)")):
        rows = outcomes.filter(pl.all_horizontal(pl.col(c).is_not_null() for c in group))
        if not rows.height:
            continue
        table = accuracy_table(rows, ["model", *group]).drop("order_n", strict=False)
        level = group[-1]
        tables.append(table_of(
            f"exploretom.{key}", f"ExploreToM question accuracy {title}",
            f"Share of answers that are the expected answer, with 95% Wilson intervals; {note}.",
            table, rows, ["model", level],
            ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high", category_cols=(level,),
                      series_col="model", y_label="accuracy", y_range=(0.0, 1.0)),
            describe=("model", level)))
    return tables


def _success_tables(frames: AnalysisFrames) -> list[DashboardTable]:
    attempts = frames.ncp
    if attempts is None or not attempts.height:
        return []
    factors = [c for c in ("goal_order", "goal_size", "false_belief") if c in attempts.columns]
    scored = attempts.filter(pl.col("correct").is_not_null())
    if not factors or not scored.height:
        return []
    table = ncp_success(scored, ["model"], factors)
    labelled = table.with_columns(pl.concat_str([pl.col("factor"), pl.col("level")], separator=" = ")
                                  .alias("factor_level"))
    source = pl.concat([scored.select("stimulus_id", "model", pl.lit(f).alias("factor"),
                                      pl.col(f).cast(pl.String).alias("level")) for f in factors])
    return [table_of(
        "ncp.success", "NCP goal success by order, size and belief",
        "Share of attempts whose goal holds after the last step, with 95% Wilson intervals.",
        labelled, source, ["model", "factor", "level"],
        ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high",
                  category_cols=("factor_level",), series_col="model", y_label="success rate", y_range=(0.0, 1.0)),
        describe=("model", "factor", "level"))]


def ncp_messages(goal: str, state: str, template: PromptTemplate = TASK_PROMPT) -> list[Message]:
    """The opening of an NCP episode: the goal and a description of the world."""
    system, user = template.render(goal=goal, state=state)
    return conversation(system, [text_part(user)])


def story_messages(detail: StimulusDetail, template: PromptTemplate, choice: LiveChoice) -> list[Message]:
    """A story question: the story is the stimulus's text, the question its title."""
    system, user = template.render(story=detail.text or "", question=detail.title or "")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def task_condition(detail: StimulusDetail, chosen: Mapping[str, str | None]) -> dict[str, str]:
    """As imported NCP attempts are stored: the task is the condition."""
    return {"modality": "", "prompt_setting": "", "vision_mode": "", "context": ""}


TASK = KindProfile(TASK_KIND, "task", Page.TRACES, None, TASK_PROMPT, condition=task_condition,
                   asking=Asking.TOOLS, modality=False, traces=True)
STORY = KindProfile(STORY_KIND, page=Page.TRACES, template=STORY_PROMPT, messages=story_messages, traces=True)
PROFILE = BenchmarkProfile(
    NAME, "NCP-ExploreToM", interpret, score_reply, dashboard_tables, RUN_KEY, kinds=(TASK, STORY),
    frames=frozenset({Frames.ATTEMPTS}), vocabularies={"actions": NCP_ACTIONS, "factors": NCP_FACTORS})
# ExploreToM's stories and golden traces are read by the same rules.
EXPLORETOM = replace(PROFILE, name="exploretom", title="ExploreToM")
