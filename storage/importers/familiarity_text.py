"""Reading a familiar/stranger verdict out of a model's free text, for imported and live FriendBench answers.

Replies are prose ("I think they are strangers.", "They are clearly not strangers."), so negation decides the
verdict as often as the label word does. The parser returns None when the text does not settle the answer,
so an unparseable reply is counted as such instead of being guessed.
"""
from __future__ import annotations

import re

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
