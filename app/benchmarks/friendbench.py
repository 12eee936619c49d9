"""FriendBench's rules: reading a familiar/stranger verdict out of a model's reply, and scoring it.

Replies are prose ("I think they are strangers.", "They are clearly not strangers."), so negation decides the
verdict as often as the label word does. The parser returns None when the text does not settle the answer,
so an unparseable reply is counted as such instead of being guessed. Imported answers and live replies are
read by the same parser; the release's own spellings of the two labels ("friends", "1") are normalised by
the reader before this runs.
"""
from __future__ import annotations

import json
import re

import polars as pl

from storage.importers.common import ProblemLog, dumps
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

NAME = "friendbench"
FAMILIAR = "familiar"
STRANGER = "stranger"

# A negation and up to two words before what it negates ("do not seem familiar", "aren't really friends"),
# within one clause; "not just friends" and "not sure, but friends" are not negations of the label.
_NEGATION = r"(?:\bnot|\bnever|n't|\bno\s+longer)"
_GAP = r"\s+(?:(?!(?:but|and|or|yet|just|only|merely)\b)\w+\s+){0,2}?"
# Negated and multi-word forms first: each is blanked out before the later, shorter ones are looked for, so
# "not strangers" is not also read as "strangers" and "unfamiliar" not as "familiar".
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern, re.IGNORECASE), label) for pattern, label in (
    (rf"{_NEGATION}{_GAP}unfamiliar\b", FAMILIAR),
    (rf"{_NEGATION}{_GAP}(?:a\s+)?strangers?\b", FAMILIAR),
    (rf"{_NEGATION}{_GAP}(?:familiar|friends?|acquainted|know\s+each\s+other)\b", STRANGER),
    (r"\bunfamiliar\b", STRANGER),
    (r"\b(?:never|just|first\s+time\s+they(?:'ve|\s+have)?)\s+met\b", STRANGER),
    (r"\bknow\s+each\s+other\b", FAMILIAR),
    (r"\bfamiliar\b", FAMILIAR),
    (r"\bstrangers?\b", STRANGER),
    (r"\bfriends?\b", FAMILIAR),
    (r"\bacquainted\b", FAMILIAR),
))
# "Answer: ...", "final answer is ...", and the JSON form {"answer": "..."}.
_MARKER = re.compile(r"\b(?:final\s+answer|answer|verdict|classification|prediction)\b\"?\s*(?:is|:|=|-)\s*[\"*]*\s*",
                     re.IGNORECASE)


def labels_in(text: str) -> list[tuple[int, str]]:
    """(position, "familiar" or "stranger") for every familiarity expression in `text`, in order."""
    found: list[tuple[int, str]] = []
    remaining = text
    for pattern, label in _PHRASES:
        found.extend((match.start(), label) for match in pattern.finditer(remaining))
        remaining = pattern.sub(lambda m: " " * len(m.group(0)), remaining)
    return sorted(found)


def parse_familiarity(text: str | None) -> str | None:
    """"familiar", "stranger", or None when the text names neither, or both without a marked verdict.

    After the last "Answer: ..." marker the first expression counts; without one the text must point one way.
    """
    if not text:
        return None
    markers = list(_MARKER.finditer(text))
    if markers:
        after = labels_in(text[markers[-1].end():markers[-1].end() + 60])
        if after:
            return after[0][1]
    labels = {label for _, label in labels_in(text)}
    return labels.pop() if len(labels) == 1 else None


def answer_of(given: str | None, raw: str | None) -> str | None:
    """The verdict of an imported answer: the answer column when the file has one, else the raw output."""
    if given in (FAMILIAR, STRANGER):
        return given
    return parse_familiarity(given) if given is not None else parse_familiarity(raw)


def is_correct(answer: str | None, truth: str | None, given: bool | None = None) -> bool | None:
    """Whether a verdict matches the clip's truth; `given` (the file's own flag) when either is unknown."""
    if answer is None or truth is None:
        return given
    return answer == truth.strip().lower()


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(verdict, correct) for a live reply."""
    answer = parse_familiarity(text)
    return answer, (is_correct(answer, detail.ground_truth) if answer else None)


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Read each prediction's verdict from its answer or raw output and score it against the clip's truth."""
    predictions = plan.frame("predictions")
    if not predictions.height:
        return
    truth = dict(plan.frame("stimuli").select("external_id", "ground_truth").iter_rows())
    answers, correct, metas, unparsed = [], [], [], 0
    for stimulus, raw, given, flag, meta_text in predictions.select(
            "stimulus", "raw_output", "answer", "correct", "meta").iter_rows():
        answer = answer_of(given, raw)
        if answer is None:
            unparsed += 1
            meta = json.loads(meta_text) if meta_text else {}
            meta["unparsed"] = True
            meta_text = dumps(meta)
        answers.append(answer)
        correct.append(is_correct(answer, truth.get(stimulus), flag))
        metas.append(meta_text)
    plan.frames["predictions"] = predictions.with_columns(
        pl.Series("answer", answers, dtype=pl.String), pl.Series("correct", correct, dtype=pl.Boolean),
        pl.Series("meta", metas, dtype=pl.String))
    if unparsed:
        plan.notes.append(f"{unparsed} predictions without a familiar/stranger answer")
