"""Rules for a dataset of no known benchmark: a reply is an open answer, kept as it is and not scored.

An imported generic table says its own answers and correctness (the generic reader reads them column by
column), so there is nothing left to interpret.
"""
from __future__ import annotations

from storage.importers.common import ProblemLog
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

NAME = "generic"


def open_answer(text: str | None) -> str:
    """An open reply as it is, trimmed."""
    return (text or "").strip()


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(the reply trimmed, None): an open reply has no correctness of its own."""
    return open_answer(text), None


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Nothing to do: the table's own columns are the answers."""
