"""AgentViSS's rules: role-play replies are open text, judged on Expr, Char, Int-Reg and Int-Out.

A reply is kept as it is (judges score it, not a parser); the release's judged scores are read as they are.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from app.benchmarks.chat import Message, conversation, image_part, text_part
from app.benchmarks.generic import open_answer
from app.benchmarks.profile import ROLE_PLAY_TASK, Asking, BenchmarkProfile, KindProfile, LiveChoice, Page, transcript_of
from app.dashboard_tables import ChartSpec, DashboardTable, table_of
from app.metrics import AGENTVISS_TASKS, JUDGE_MEANS_METHOD, agentviss_task_scores
from app.prompt_template import PromptTemplate
from storage.importers.common import ProblemLog
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames

NAME = "agentviss"
RUN_KEY = ("model", "vision_mode")   # what one run is, in the failure filters
SCENE_KIND = "agentviss_scene"
VISION_MODES = ("VV", "DV")   # verbalized vision (the scene described in words) and direct vision (its images)

# The prompt a live model plays a character with; judges score the reply.
ROLE_PLAY_PROMPT = PromptTemplate(
    name="agentviss.role_play",
    benchmark="AgentViSS",
    description="Play one character in a Friends scene; the task says what to produce (Expr, Char, Int-Reg, Int-Out).",
    system=(
        "You are {character} in a scene from the TV show Friends. Stay in character.\n"
        "Your profile: {profile}\nYour emotional state: {emotional_state}"
    ),
    user="Scene: {scene}\n\nDialogue so far:\n{dialogue}\n\nTask: {task}",
)


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(the reply trimmed, None): a role-play reply is judged, not parsed."""
    return open_answer(text), None


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Nothing to do: judged scores are numbers the release states."""


def dashboard_tables(frames: AnalysisFrames, correction: str, notes: list[str]) -> list[DashboardTable]:
    """Mean judged score per task and vision mode."""
    judged = frames.judgments.filter(pl.col("criterion").is_in(list(AGENTVISS_TASKS)))
    if not judged.height:
        return []
    scores = agentviss_task_scores(judged, ["model", "vision_mode"])
    scale = judged["scale_max"].drop_nulls()
    top = float(scale.max()) if scale.len() else None
    source = judged.rename({"criterion": "task"})
    scores = scores.with_columns(pl.concat_str([pl.col("model"), pl.col("vision_mode")], separator=" · ")
                                 .alias("model_mode"))
    return [table_of(
        "agentviss.tasks", "AgentViSS judged scores by task and vision mode",
        "Mean judge score per task (Expr, Char, Int-Reg, Int-Out) in verbalized (VV) and direct (DV) vision; "
        f"{JUDGE_MEANS_METHOD}.", scores, source, ["model", "vision_mode", "task"],
        ChartSpec("bars", value_col="mean", low_col="ci_low", high_col="ci_high", category_cols=("task",),
                  series_col="model_mode", y_label="mean score", y_range=(0.0, top) if top else None),
        describe=("model", "vision_mode", "task"))]


def agentviss_messages(
    character: str,
    profile: str,
    emotional_state: str,
    scene: str,
    dialogue: str,
    task: str,
    images_jpeg: Sequence[bytes] = (),
    template: PromptTemplate = ROLE_PLAY_PROMPT,
) -> list[Message]:
    """An AgentViSS role-play turn. Direct vision (DV) passes the scene images; verbalized vision
    (VV) passes none and describes them in ``scene``."""
    system, user = template.render(
        character=character, profile=profile, emotional_state=emotional_state, scene=scene, dialogue=dialogue, task=task
    )
    return conversation(system, [text_part(user), *[image_part(jpeg) for jpeg in images_jpeg]])


def characters_of(detail: StimulusDetail) -> list[str]:
    """An AgentViSS scene's characters in order (the importer's list, else the dialogue's speakers)."""
    named = detail.meta.get("characters")
    if isinstance(named, list) and named:
        return [str(c) for c in named]
    return list(dict.fromkeys(s.speaker for s in detail.segments if s.speaker))


def _phrase(parts: Sequence[tuple[str, Any]]) -> str:
    return "; ".join(f"{label}{value}" for label, value in parts if value not in (None, ""))


def role_play_messages(detail: StimulusDetail, character: str, task: str = ROLE_PLAY_TASK,
                       template: PromptTemplate = ROLE_PLAY_PROMPT) -> list[Message]:
    """An AgentViSS role-play turn in verbalised vision (VV): the scene and dialogue as text, no images."""
    roles = detail.meta.get("roles") if isinstance(detail.meta.get("roles"), dict) else {}
    role = roles.get(character) if isinstance(roles.get(character), dict) else {}
    profile = _phrase([("", role.get("gender")), ("age ", role.get("age")), ("", role.get("occupation")),
                       ("expression style: ", role.get("expression_style")),
                       ("conflict style: ", role.get("conflict_trait"))]) or "not given"
    emotional_state = _phrase([("feels ", role.get("initial_emotion")), ("face: ", role.get("facial_expression")),
                               ("body: ", role.get("body_action"))]) or "not given"
    setting = _phrase([("dialogue type: ", detail.meta.get("dialogue_type")),
                       ("conflict intensity: ", detail.meta.get("conflict_intensity"))])
    others = [c for c in characters_of(detail) if c != character]
    scene = "\n".join(part for part in (detail.text or "", f"({setting})" if setting else "",
                                        f"With you: {', '.join(others)}." if others else "") if part)
    return agentviss_messages(character, profile, emotional_state, scene or "not described",
                              transcript_of(detail) or "(no one has spoken yet)", task, (), template)


def scene_messages(detail: StimulusDetail, template: PromptTemplate, choice: LiveChoice) -> list[Message]:
    """The scene role-played as the chosen character (default: its first)."""
    characters = characters_of(detail)
    character = choice.role or (characters[0] if characters else "")
    if not character:
        raise ValueError(f"{detail.external_id} names no character to play")
    return role_play_messages(detail, character, choice.role_task, template)


def scene_condition(detail: StimulusDetail, chosen: Mapping[str, str | None]) -> dict[str, str]:
    """Verbalized vision, as the character played (the chosen one when the scene has it, else its first)."""
    characters = characters_of(detail)
    role = chosen.get("role") if chosen.get("role") in characters else (characters[0] if characters else "")
    return {"modality": "", "prompt_setting": "", "vision_mode": "VV", "context": role or ""}


SCENE = KindProfile(SCENE_KIND, "scene", Page.SCENE, None, ROLE_PLAY_PROMPT, scene_messages, scene_condition,
                    Asking.ROLE_PLAY, characters_of, modality=False)
PROFILE = BenchmarkProfile(
    NAME, "AgentViSS", interpret, score_reply, dashboard_tables, RUN_KEY, kinds=(SCENE,),
    page_words=("agentviss",),
    condition_words={"vision_mode": {"VV": "verbalized vision (VV)", "DV": "direct vision (DV)"}}, vocabularies={"tasks": AGENTVISS_TASKS, "vision modes": VISION_MODES})
