"""Plain records that the store hands to the rest of the app (no Qt, no SQL)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Dataset:
    id: int
    name: str
    benchmark: str
    root: str
    source: str
    synthetic: bool
    stimulus_count: int = 0


@dataclass(frozen=True)
class StimulusFilter:
    """What the filter bar asks for. Empty fields do not filter."""

    dataset_id: int | None = None
    benchmark: str | None = None
    kind: str | None = None
    modality: str | None = None        # restricts which predictions count for the per-model outcome filters
    ground_truth: str | None = None
    text: str | None = None            # matched against id, title, text and metadata
    model_outcomes: tuple[tuple[str, str], ...] = ()   # (model name, "correct"|"incorrect")
    models_disagree: bool = False      # the compared models gave different answers
    compared_models: tuple[str, ...] = ()
    stimulus_ids: tuple[int, ...] | None = None   # set by drill-downs from charts and failure filters


@dataclass(frozen=True)
class StimulusRow:
    id: int
    external_id: str
    kind: str
    ground_truth: str | None
    title: str | None
    outcomes: dict[str, bool | None] = field(default_factory=dict)   # model -> correct (any modality: majority)
    human_share_correct: float | None = None
    human_n: int = 0
    n_predictions: int = 0


@dataclass(frozen=True)
class MediaRef:
    """One media file of a stimulus. `path` is absolute; `offset_s` is where the stimulus starts in it."""

    role: str  # video, audio, video:A, audio:B, audio:target, image:group, image:portrait:<name>:<turn> ...
    path: Path
    present: bool
    offset_s: float = 0.0
    duration_s: float | None = None
    sample_rate: int | None = None


@dataclass(frozen=True)
class Word:
    word: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Segment:
    """A transcript segment or dialogue turn, in seconds relative to the stimulus start."""

    ord: int
    speaker: str
    start_s: float | None
    end_s: float | None
    text: str
    words: tuple[Word, ...] = ()
    media_role: str | None = None


@dataclass(frozen=True)
class Judgment:
    judge: str
    criterion: str
    score: float | None
    scale_max: float | None
    rationale: str | None


@dataclass(frozen=True)
class Prediction:
    id: int
    model: str
    modality: str | None
    prompt_setting: str | None
    vision_mode: str | None
    context: str | None
    answer: str | None
    raw_output: str | None
    correct: bool | None
    latency_s: float | None
    is_live: bool
    judgments: tuple[Judgment, ...] = ()

    @property
    def condition(self) -> str:
        parts = [p for p in (self.modality, self.prompt_setting, self.vision_mode, self.context) if p]
        return " / ".join(parts) if parts else "-"


@dataclass(frozen=True)
class HumanSplit:
    """Human ratings of one stimulus in one condition."""

    condition: str
    n: int
    answers: dict[str, int]
    n_correct: int

    @property
    def share_correct(self) -> float | None:
        return self.n_correct / self.n if self.n else None


@dataclass(frozen=True)
class GoalAtomRecord:
    ord: int
    holders: tuple[str, ...]
    entity: str
    property: str
    value: str
    text: str


@dataclass(frozen=True)
class TraceStepRecord:
    step_index: int
    action: str
    args: list[Any]
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class StimulusDetail:
    id: int
    dataset_id: int
    dataset_name: str
    benchmark: str
    external_id: str
    kind: str
    ground_truth: str | None
    split: str | None
    title: str | None
    text: str | None
    meta: dict[str, Any]
    media: tuple[MediaRef, ...]
    segments: tuple[Segment, ...]
    predictions: tuple[Prediction, ...]
    human: tuple[HumanSplit, ...]
    goal_atoms: tuple[GoalAtomRecord, ...] = ()
    annotation_count: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def short_title(self) -> str:
        """The title without a repeat of the id (releases often write "fb_001: book or movie")."""
        return (self.title or "").removeprefix(self.external_id).lstrip(" :—-")

    def media_by_role(self, prefix: str) -> list[MediaRef]:
        return [m for m in self.media if m.role == prefix or m.role.startswith(prefix + ":")]
