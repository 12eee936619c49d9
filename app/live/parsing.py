"""Reading a model's free text as a benchmark answer.

Parsers are tolerant of prose ("I think they are strangers.") and return None when the text
does not settle the answer, so an unparseable reply is shown as such instead of being guessed.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from app.live.messages import option_letters
from storage.importers.familiarity_text import parse_familiarity as parse_forced_choice  # noqa: F401 (re-exported)


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
