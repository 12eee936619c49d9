"""Guessing which source column holds which field, when a release does not document its column names.

Each guess carries a confidence (0..1) and a reason, so the GUI and `--dry-run` can show how sure the guess
is; a mapping given by the user (FIELD=COLUMN) always wins. Evidence comes from the column name (exact
synonym or a synonym as one of its words) and from a sample of values (familiar/stranger labels,
text/audio/video conditions, true/false flags, numbers, file paths, long free text, unique ids).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.tables import Table
from storage.importers.words import BOOLEAN_WORDS, CONDITION_WORDS, FAMILIARITY_WORDS

# Field -> column-name synonyms, compared after `normalise_name`. The fields of `common.MAP_FIELDS` plus
# the FriendBench metadata fields (site, gender, part, relationship_detail, topic, organisation, duration,
# and per-participant media columns).
FIELD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "stimulus": ("clip_id", "clip", "stimulus", "stimulus_id", "item", "item_id", "id", "dyad_id", "dyad",
                 "sample_id", "video_id", "case_id", "scene_id", "task_id", "question_id", "interaction_id",
                 "uid", "clip_name", "stim_id"),
    "label": ("label", "truth", "ground_truth", "gt", "gold", "gold_label", "target", "true_label",
              "relationship", "familiarity", "y_true", "answer_key", "correct_answer", "true_relationship"),
    "model": ("model", "model_name", "model_id", "system", "llm", "mllm"),
    "organisation": ("organisation", "organization", "org", "company", "provider", "developer", "lab_name"),
    "modality": ("modality", "condition", "mode", "input_modality", "stimulus_type", "medium", "channel",
                 "presentation"),
    "answer": ("answer", "response", "prediction", "predicted", "pred", "parsed_answer", "parsed", "choice",
               "judgment", "judgement", "guess", "y_pred", "predicted_label", "rating", "parsed_prediction",
               "decision"),
    "raw": ("raw_output", "raw", "output", "completion", "response_text", "generation", "model_output",
            "raw_response", "raw_text", "full_response"),
    "correct": ("correct", "is_correct", "accuracy", "acc", "hit", "right", "match", "is_right"),
    "rater": ("rater", "rater_id", "annotator", "annotator_id", "worker", "worker_id", "subject",
              "subject_id", "respondent", "respondent_id", "participant", "participant_id", "prolific_pid",
              "prolific_id", "user", "user_id", "judge_id"),
    "judge": ("judge", "judge_model", "evaluator", "grader"),
    "criterion": ("criterion", "criteria", "metric", "dimension", "aspect"),
    "score": ("score", "value", "points", "judge_score"),
    "rationale": ("rationale", "reason", "explanation", "justification", "reasoning"),
    "text": ("text", "transcript_text", "utterance", "content", "sentence", "dialogue", "story"),
    "speaker": ("speaker", "spk", "speaker_id", "character", "role"),
    "start": ("start", "start_s", "start_time", "begin", "onset", "clip_start", "clip_start_s", "start_sec",
              "window_start", "offset_s", "start_ms"),
    "end": ("end", "end_s", "end_time", "stop", "clip_end", "clip_end_s", "end_sec", "window_end", "end_ms"),
    "duration": ("duration", "duration_s", "length", "length_s", "clip_duration", "dur", "duration_ms"),
    "media": ("media", "path", "file", "filename", "file_name", "file_path", "media_path", "clip_path",
              "video_path", "video_file", "audio_path", "audio_file"),
    "split": ("split", "subset", "partition", "fold"),
    "prompt": ("prompt_setting", "prompt", "prompt_type", "prompt_id", "setting"),
    "vision": ("vision_mode", "vision", "visual_mode"),
    "latency": ("latency", "latency_s", "latency_ms", "elapsed", "elapsed_s", "inference_time"),
    "response_time": ("rt", "rt_s", "rt_ms", "response_time", "response_time_s", "response_time_ms",
                      "reaction_time", "time_taken", "decision_time"),
    "site": ("site", "vendor", "vendor_id", "recording_site", "location", "lab", "site_id", "source_site"),
    "gender": ("gender_composition", "gender", "gender_mix", "genders", "sex_composition", "dyad_gender",
               "gender_pair"),
    "part": ("part", "position", "phase", "early_late", "clip_part", "portion", "section", "clip_position",
             "time_part"),
    "relationship_detail": ("relationship_detail", "relation_detail", "relationship_type", "relation",
                            "relationship_subtype", "detail"),
    "topic": ("topic", "theme", "icebreaker", "question", "game", "activity"),
    "video_a": ("video_a", "video_path_a", "a_video", "video_1", "video_p1", "video_left"),
    "video_b": ("video_b", "video_path_b", "b_video", "video_2", "video_p2", "video_right"),
    "audio_a": ("audio_a", "audio_path_a", "a_audio", "audio_1", "audio_p1", "audio_left"),
    "audio_b": ("audio_b", "audio_path_b", "b_audio", "audio_2", "audio_p2", "audio_right"),
    "transcript": ("transcript", "transcript_path", "transcript_file", "transcription", "words_file"),
}

MEDIA_SUFFIXES = (".mp4", ".mov", ".mkv", ".webm", ".avi", ".wav", ".flac", ".mp3", ".m4a", ".ogg",
                  ".opus", ".aac", ".png", ".jpg", ".jpeg", ".json")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Guess:
    """One field's column: `reason` says why ("mapping", "name", "name+values", "values")."""

    field: str
    column: str
    confidence: float
    reason: str


def normalise_name(column: str) -> str:
    """Lower case with runs of non-alphanumerics and camelCase boundaries turned into single underscores."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", column.strip())
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


def unit_scale(column: str) -> float:
    """Factor that turns the column's numbers into seconds: 0.001 for names ending in `ms`, else 1."""
    name = normalise_name(column)
    return 0.001 if name == "ms" or name.endswith("_ms") or name.endswith("msec") else 1.0


def _name_score(field: str, name: str) -> float:
    synonyms = FIELD_SYNONYMS[field]
    if name in synonyms:
        return 0.9
    words = name.split("_")
    joined = {"_".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}
    # a synonym as whole words of a longer name ("human_answer", "clip_id_str"): weaker evidence
    if any(s in joined for s in synonyms if len(s) > 2):
        return 0.6
    return 0.0


@dataclass(frozen=True)
class _Profile:
    """What a sample of a column's values looks like."""

    count: int
    distinct_ratio: float
    familiarity: float      # share of values that are familiar/stranger-like labels
    modality: float
    boolean: float
    numeric: float
    path: float
    mean_length: float


def _profile(values: Sequence[Any]) -> _Profile:
    texts = [str(v).strip() for v in values if v is not None and str(v).strip() != ""]
    if not texts:
        return _Profile(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    lowered = [t.lower() for t in texts]
    n = len(texts)

    def share(test) -> float:
        return sum(1 for t in lowered if test(t)) / n

    return _Profile(
        count=n,
        distinct_ratio=len(set(texts)) / n,
        familiarity=share(lambda t: t in FAMILIARITY_WORDS),
        modality=share(lambda t: t in CONDITION_WORDS),
        boolean=share(lambda t: t in BOOLEAN_WORDS),
        numeric=share(lambda t: bool(_NUMBER.match(t))),
        path=share(lambda t: t.endswith(MEDIA_SUFFIXES) or ("/" in t and " " not in t)),
        mean_length=sum(len(t) for t in texts) / n,
    )


def _value_score(field: str, p: _Profile) -> tuple[float, float]:
    """(bonus added to a name match, score on values alone) for `field` given a column's profile."""
    if p.count == 0:
        return 0.0, 0.0
    labels_only = p.familiarity > 0.9 and p.numeric < 0.5
    if field in ("label", "answer"):
        if labels_only:
            return 0.1, 0.4
        if field == "answer" and p.mean_length > 40:
            return -0.4, 0.0   # long free text is a raw output, not a parsed answer
        return (0.05 if p.familiarity > 0.9 else 0.0), 0.0
    if field == "modality":
        return (0.1, 0.7) if p.modality > 0.9 else (-0.3, 0.0)
    if field == "correct":
        return (0.1, 0.3) if p.boolean > 0.95 else (-0.3, 0.0)
    if field in ("start", "end", "duration", "latency", "response_time", "score"):
        return (0.05, 0.0) if p.numeric > 0.95 else (-0.3, 0.0)
    if field in ("media", "video_a", "video_b", "audio_a", "audio_b", "transcript"):
        if p.path > 0.9:
            return 0.1, (0.5 if field == "media" else 0.0)
        return (-0.2 if field == "media" else 0.0), 0.0
    if field in ("raw", "rationale", "text"):
        return (0.1, 0.0) if p.mean_length > 40 else (0.0, 0.0)
    if field == "stimulus":
        return (0.05, 0.0) if p.distinct_ratio > 0.05 and p.numeric < 1.0 else (0.0, 0.0)
    return 0.0, 0.0


def sniff_columns(columns: Sequence[str], samples: Mapping[str, Sequence[Any]] | None = None, *,
                  fields: Iterable[str] | None = None, overrides: Mapping[str, str] | None = None,
                  min_confidence: float = 0.35) -> dict[str, Guess]:
    """Guess a column for each of `fields` (default: every known field).

    `samples` holds a few values per column. Each column serves one field at most. A mapping in
    `overrides` (field -> column) wins with confidence 1 in every table that has that column; a table
    without it is sniffed as usual for that field (one mapping serves every file of a release, and files
    may name the same field differently). Fields below `min_confidence` are left out.
    """
    wanted = list(fields) if fields is not None else list(FIELD_SYNONYMS)
    overrides = dict(overrides or {})
    samples = samples or {}
    result: dict[str, Guess] = {}
    taken: set[str] = set()
    for field, column in overrides.items():
        if field in wanted and column in columns:
            result[field] = Guess(field, column, 1.0, "mapping")
            taken.add(column)
    candidates: list[tuple[float, int, int, Guess]] = []
    for ci, column in enumerate(columns):
        if column in taken:
            continue
        name = normalise_name(column)
        profile = _profile(samples.get(column, ()))
        for fi, field in enumerate(wanted):
            if field in result or field not in FIELD_SYNONYMS:
                continue
            by_name = _name_score(field, name)
            bonus, alone = _value_score(field, profile)
            if by_name > 0:
                score, reason = min(1.0, by_name + bonus), ("name+values" if bonus > 0 else "name")
            else:
                score, reason = alone, "values"
            if score >= min_confidence:
                candidates.append((score, -fi, -ci, Guess(field, column, round(score, 2), reason)))
    # strongest evidence first; ties go to the earlier field, then the earlier column
    for _score, _fi, _ci, guess in sorted(candidates, key=lambda c: (c[0], c[1], c[2]), reverse=True):
        if guess.field in result or guess.column in taken:
            continue
        result[guess.field] = guess
        taken.add(guess.column)
    return result


def sniff_frame(frame: pl.DataFrame, *, fields: Iterable[str] | None = None,
                overrides: Mapping[str, str] | None = None, sample_rows: int = 200,
                min_confidence: float = 0.35) -> dict[str, Guess]:
    """`sniff_columns` on a polars frame, sampling its first `sample_rows` rows."""
    head = frame.head(sample_rows)
    samples = {c: head.get_column(c).cast(pl.String, strict=False).to_list() for c in frame.columns}
    return sniff_columns(frame.columns, samples, fields=fields, overrides=overrides,
                         min_confidence=min_confidence)


def mapping_of(guesses: Mapping[str, Guess]) -> dict[str, str]:
    """Field -> column of a set of guesses (the shape of `ImportPlan.mapping`)."""
    return {field: guess.column for field, guess in guesses.items()}


def require_fields(table: Table, guesses: Mapping[str, Guess], fields: Sequence[str],
                   descriptions: Mapping[str, str]) -> None:
    """Fail naming the file, the missing field and the columns that do exist when a needed field is unmapped."""
    missing = [f for f in fields if f not in guesses]
    if missing:
        columns = ", ".join(table.columns) or "none"
        raise ImportFailed([RowProblem(table.name, 1, f, f"<no column for it; columns are: {columns}>",
                                       f"a column holding {descriptions.get(f, f)} (name it with --map {f}=COLUMN)")
                            for f in missing])
