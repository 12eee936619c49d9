"""Reading a model's free text as a benchmark answer.

Parsers are tolerant of prose ("I think they are strangers.") and return None when the text
does not settle the answer, so an unparseable reply is shown as such instead of being guessed.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from app.live.messages import option_letters

_FAMILIAR = "familiar"
_STRANGER = "stranger"
# Negated and multi-word forms first: they are blanked out before single words are looked at,
# so "not strangers" is not also read as "strangers" and "unfamiliar" not as "familiar".
_PHRASES: tuple[tuple[str, str], ...] = (
    (r"\bnot\s+(?:a\s+)?strangers?\b", _FAMILIAR),
    (r"\b(?:not|never)\s+(?:been\s+)?(?:familiar|friends|acquainted)\b", _STRANGER),
    (r"\bunfamiliar\b", _STRANGER),
    (r"\b(?:don'?t|do\s+not|didn'?t|did\s+not)\s+know\s+each\s+other\b", _STRANGER),
    (r"\b(?:never|just|first\s+time\s+they)\s+met\b", _STRANGER),
    (r"\bknow\s+each\s+other\b", _FAMILIAR),
    (r"\bfamiliar\b", _FAMILIAR),
    (r"\bstrangers?\b", _STRANGER),
    (r"\bfriends\b", _FAMILIAR),
    (r"\bacquainted\b", _FAMILIAR),
)
_MARKER = re.compile(r"(?:final\s+answer|answer|verdict|classification)\s*(?:is|:|=|-)\s*\**\s*", re.I)


def _labels_in(text: str) -> list[tuple[int, str]]:
    """(position, label) for every familiar/stranger expression in ``text``."""
    found: list[tuple[int, str]] = []
    remaining = text
    for pattern, label in _PHRASES:
        for match in re.finditer(pattern, remaining):
            found.append((match.start(), label))
        remaining = re.sub(pattern, lambda m: " " * len(m.group(0)), remaining)
    return sorted(found)


def parse_forced_choice(text: str | None) -> str | None:
    """"familiar", "stranger", or None when the reply names neither or both without a verdict.

    An explicit "Answer: ..." wins; otherwise the reply must point one way only.
    """
    if not text:
        return None
    lowered = text.lower()
    marker = None
    for marker in _MARKER.finditer(lowered):
        pass
    if marker is not None:
        after = _labels_in(lowered[marker.end() : marker.end() + 60])
        if after:
            return after[0][1]
    labels = {label for _, label in _labels_in(lowered)}
    return labels.pop() if len(labels) == 1 else None


def _option_text(option: str) -> str:
    """The option without a leading "A." / "(A)" / "A)" of its own."""
    return re.sub(r"^\s*\(?[A-Za-z][\).:]\s+", "", option).strip().lower()


def parse_multiple_choice(text: str | None, options: Sequence[str]) -> str | None:
    """The chosen option's letter ("A", "B", ...), or None.

    Accepts a bare letter, "(B)", "B.", "B)", "Answer: B", "option B", or the text of exactly
    one option quoted in the reply.
    """
    if not text or not options:
        return None
    letters = "".join(option_letters(len(options)))
    stripped = text.strip()
    patterns = (
        rf"^\(?([{letters}])\)?[\.\):]?$",
        rf"(?:answer|option|choice)\s*(?:is|:)?\s*\(?\**([{letters}])\**\)?(?![A-Za-z])",
        rf"^\(?([{letters}])[\)\.:]\s",
        rf"\(([{letters}])\)",
    )
    for pattern in patterns:
        match = re.search(pattern, stripped, flags=re.I if pattern.startswith("(?:") else 0)
        if match:
            return match.group(1).upper()
    lowered = stripped.lower()
    texts = {letter: _option_text(option) for letter, option in zip(letters, options)}
    hits = [letter for letter, option in texts.items() if option and option in lowered]
    if len(hits) > 1:
        # Prefer the longest option text when it contains the others ("sad" inside "very sad").
        longest = max(hits, key=lambda letter: len(texts[letter]))
        hits = [longest] if all(texts[h] in texts[longest] for h in hits) else hits
    return hits[0] if len(hits) == 1 else None


def parse_open_response(text: str | None) -> str:
    """An open reply as it is, trimmed."""
    return (text or "").strip()
