"""The questions of one ExploreToM story: every stimulus of the dataset that tells the same story.

ExploreToM releases one row per question, so a story's questions are separate stimuli that share its
structure (meta `story_structure`, or the text when the release has no infilled prose).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb

_SAME_STORY = "coalesce(json_extract_string({t}.meta, '$.story_structure'), {t}.text)"


@dataclass(frozen=True)
class StoryQuestion:
    """One question of a story: its stimulus, text, expected answer, meta and each model's answer."""

    stimulus_id: int
    question: str
    expected: str | None
    meta: dict[str, Any]
    model_answers: tuple[tuple[str, str | None, bool | None], ...]   # (model, answer, correct)


def story_questions(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> list[StoryQuestion]:
    """The questions of the story `stimulus_id` tells (itself included), in the dataset's order."""
    rows = cur.execute(
        "SELECT s.id, s.title, s.ground_truth, s.meta FROM stimulus s, stimulus me"
        " WHERE me.id = ? AND s.dataset_id = me.dataset_id AND s.kind = me.kind"
        f" AND {_SAME_STORY.format(t='s')} = {_SAME_STORY.format(t='me')} ORDER BY s.id", [stimulus_id]).fetchall()
    answers: dict[int, list[tuple[str, str | None, bool | None]]] = {}
    ids = [row[0] for row in rows]
    if ids:
        for sid, model, answer, correct in cur.execute(
                "SELECT p.stimulus_id, m.name, p.answer, p.correct FROM prediction p JOIN run r ON r.id = p.run_id"
                " JOIN model m ON m.id = r.model_id WHERE p.stimulus_id IN (SELECT unnest(?::BIGINT[]))"
                " ORDER BY m.name, r.modality, r.prompt_setting, r.context", [ids]).fetchall():
            answers.setdefault(sid, []).append((model, answer, correct))
    return [StoryQuestion(sid, title or "", truth, json.loads(meta) if meta else {}, tuple(answers.get(sid, ())))
            for sid, title, truth, meta in rows]
