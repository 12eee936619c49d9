"""Every benchmark's rules, one module each, behind one registry.

A benchmark module holds all of that benchmark's rules, behind the same names:
- `interpret(plan, log)`: an imported plan's raw text read before it is written (answers parsed and
  scored, goals read, steps checked against the belief engine's actions);
- `score_reply(detail, text)`: a live reply read and scored by the same parsers;
- `dashboard_tables(frames, correction, notes)`: the tables its metrics dashboard shows;
- `RUN_KEY`: the columns that tell one of its runs from another (for the failure filters).
Adding a benchmark is one module here plus its reader in `storage/importers/`. Readers read, this
interprets, the writer writes.
"""
from __future__ import annotations

from types import ModuleType

from app.benchmarks import agentviss, echomind, friendbench, generic, ncp
from storage.importers.common import ProblemLog
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

# dataset benchmark name -> its rules; Seamless Interaction dyads are asked FriendBench's question, and
# ExploreToM's golden traces are NCP tasks.
BENCHMARKS: dict[str, ModuleType] = {
    **{module.NAME: module for module in (friendbench, echomind, agentviss, ncp, generic)},
    "seamless": friendbench, "exploretom": ncp,
}


def rules_for(benchmark: str) -> ModuleType:
    """The rules module of a dataset's benchmark (the generic rules for one this registry does not know)."""
    return BENCHMARKS.get(benchmark, generic)


def interpret_plan(plan: ImportPlan, skip_bad: bool) -> ImportPlan:
    """Apply the plan's benchmark rules to what its reader read; bad rows fail the import unless skipped."""
    log = ProblemLog(skip_bad)
    rules_for(plan.dataset.benchmark).interpret(plan, log)
    log.finish(plan)
    return plan


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(answer, correct) for a live reply to `detail`, as its benchmark scores it; correct is None without a
    ground truth or an answer."""
    return rules_for(detail.benchmark).score_reply(detail, text)
