"""AgentViSS's rules: role-play replies are open text, judged on Expr, Char, Int-Reg and Int-Out.

A reply is kept as it is (judges score it, not a parser); the release's judged scores are read as they are.
"""
from __future__ import annotations

from app.benchmarks.generic import open_answer
from storage.importers.common import ProblemLog
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

NAME = "agentviss"


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(the reply trimmed, None): a role-play reply is judged, not parsed."""
    return open_answer(text), None


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Nothing to do: judged scores are numbers the release states."""
