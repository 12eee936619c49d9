"""What the rest of the app asks a benchmark: its profile, and the profile of each kind of stimulus it holds.

A `BenchmarkProfile` is everything that names one benchmark: its rules (interpreting an import, scoring a live
reply, its dashboard tables), the kinds of stimulus it holds with their labels, pages, player layouts and live
requests, the words that mark a label set as its own, the label set its annotators reach for first, the
extra frames its dashboard reads, whether its stimuli have voices to compare cues over, and its vocabularies.
Each benchmark module in `app.benchmarks` ends with one; the registry (`app.benchmarks`) finds them. Pages,
layouts and frames are named by the enums here; the window maps them to its own classes, so this stays Qt-free.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from app.prompt_template import PromptTemplate
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames
    from app.dashboard_tables import DashboardTable
    from storage.importers.common import ProblemLog
    from storage.importers.plan import ImportPlan

Condition = dict[str, str]
Message = dict[str, Any]
ROLE_PLAY_TASK = "Say your next line in this conversation, as your character would say it."


class Page(StrEnum):
    """The centre page a stimulus is shown on."""

    MEDIA = "media"      # the player over the annotation tiers
    SCENE = "scene"      # a scene's characters and dialogue, labels on a role or a turn
    TRACES = "traces"    # the stepper over a task's traces (or a story's)
    TEXT = "text"        # the stimulus's text and fields alone


class PlayerLayout(StrEnum):
    """How the player lays out a stimulus's media."""

    DYAD = "dyad"        # one video and one lane per participant
    VOICES = "voices"    # the same script in several voices, one lane each, target first
    VIDEO = "video"      # one video and its sound
    AUDIO = "audio"      # one lane per audio file


class Asking(StrEnum):
    """How a live model is asked about a stimulus."""

    ONCE = "once"             # one question, one reply
    ROLE_PLAY = "role_play"   # a character's next line, played as one of the scene's characters
    TOOLS = "tools"           # acted out with tools on the belief engine; the attempt is a trace


class Frames(StrEnum):
    """Frames a benchmark's dashboard reads beyond predictions, judgments and ratings."""

    SPEECH = "speech"        # transcriptions (WER) and conversation replies (BLEU, ROUGE-L)
    ATTEMPTS = "attempts"    # attempts at tasks, replayed for goal success


@dataclass(frozen=True)
class LiveChoice:
    """What the live panel chose for a question: the modality, the prompt setting, the character to play and
    what to ask of it."""

    modality: str = "text"
    prompt_setting: str = "no"
    role: str | None = None
    role_task: str = ROLE_PLAY_TASK


def transcript_of(detail: StimulusDetail) -> str:
    """The stimulus's turns as "speaker: text" lines, else its text."""
    lines = [f"{s.speaker}: {s.text}" if s.speaker else s.text for s in detail.segments if s.text]
    return "\n".join(lines) or (detail.text or "")


def text_messages(detail: StimulusDetail, template: PromptTemplate, choice: LiveChoice) -> list[Message]:
    """The template's system and user text with the stimulus's text (or transcript) after it."""
    return [{"role": "system", "content": template.system},
            {"role": "user", "content": f"{template.user}\n\n{detail.text or transcript_of(detail)}"}]


def chosen_modality(detail: StimulusDetail | None, chosen: Mapping[str, str | None]) -> Condition:
    """The condition of a plain question: the modality chosen (text when none)."""
    return {"modality": chosen.get("modality") or "text", "prompt_setting": "", "vision_mode": "", "context": ""}


Messages = Callable[[StimulusDetail, PromptTemplate, LiveChoice], list[Message]]
ConditionRule = Callable[[StimulusDetail, Mapping[str, str | None]], Condition]


@dataclass(frozen=True)
class KindProfile:
    """One kind of stimulus: how it is labelled in the table, shown, played, and asked live.

    `messages(detail, template, choice)` builds the chat messages (decoding media: call on a worker) and
    `condition(detail, chosen)` the run condition a live answer is stored under; `roles(detail)` the characters a
role-play may be played as. `modality` says whether the
    panel's modality choice applies, `prompt_settings` whether its prompt setting does, `question` whether the
    text is a question shown above the page (not a script to follow), `voices` whether its lanes are one script
    in several voices, `traces` whether it has a reference trace to step through."""

    name: str
    label: str = ""
    page: Page = Page.TEXT
    player: PlayerLayout | None = None
    template: PromptTemplate | None = None
    messages: Messages = text_messages
    condition: ConditionRule = chosen_modality
    asking: Asking = Asking.ONCE
    roles: Callable[[StimulusDetail], list[str]] | None = None
    modality: bool = True
    preferred_modality: str | None = None
    prompt_settings: bool = False
    question: bool = False
    voices: bool = False
    traces: bool = False

    @property
    def short_label(self) -> str:
        """What the stimulus table's kind column says."""
        return self.label or self.name


@dataclass(frozen=True)
class BenchmarkProfile:
    """Everything that names one benchmark. `name` is the dataset's benchmark as stored; `kinds` the kinds of
    stimulus its releases hold (the first is what a stimulus of an unknown kind in its datasets is asked as,
    when `asks_unknown_kinds`); `page_words` mark a label set as its own and `shares_label_sets_with` names the
    benchmarks whose sets its pages offer too; `condition_words` spell its run conditions' codes in its
    paper's words (by part: modality, prompt_setting, vision_mode); `vocabularies` its named lists (tasks,
    criteria, conditions)."""

    name: str
    title: str
    interpret: Callable[[ImportPlan, ProblemLog], None]
    score_reply: Callable[[StimulusDetail, str | None], tuple[str | None, bool | None]]
    dashboard_tables: Callable[[AnalysisFrames, str, list[str]], list[DashboardTable]]
    run_key: tuple[str, ...] = ("model", "modality")
    kinds: tuple[KindProfile, ...] = ()
    asks_unknown_kinds: bool = False
    page_words: tuple[str, ...] = ()
    shares_label_sets_with: tuple[str, ...] = ()
    default_label_set: str | None = None
    frames: frozenset[Frames] = frozenset()
    has_voices: bool = False
    condition_words: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    vocabularies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def templates(self) -> tuple[PromptTemplate, ...]:
        """The prompt templates its kinds are asked with, each once."""
        return tuple(dict.fromkeys(k.template for k in self.kinds if k.template is not None))
