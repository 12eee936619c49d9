"""Reading a model's free text as a benchmark answer, for the live panel.

The parsers are the benchmarks' own (`app.benchmarks`), so a live reply reads exactly as the same text in an
imported file does.
"""
from __future__ import annotations

from collections.abc import Sequence

from app.benchmarks.echomind import choice_letter, options_by_letter
from app.benchmarks.friendbench import parse_familiarity as parse_forced_choice
from app.benchmarks.generic import open_answer as parse_open_response

__all__ = ["parse_forced_choice", "parse_multiple_choice", "parse_open_response"]


def parse_multiple_choice(text: str | None, options: Sequence[str]) -> str | None:
    """The chosen option's letter ("A", "B", ...) among `options` listed in letter order, or None."""
    return choice_letter(text, options_by_letter(list(options)))
