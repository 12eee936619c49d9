"""Every benchmark, one module each, found through one registry.

A benchmark module holds all of that benchmark's rules and ends with its `BenchmarkProfile`
(`app.benchmarks.profile`): `interpret(plan, log)` reads an imported plan's raw text before it is written
(answers parsed and scored, goals read, steps checked against the belief engine's actions); `score_reply(detail,
text)` reads and scores a live reply with the same parsers; `dashboard_tables` are the tables its dashboard
shows; `run_key` the columns that tell one of its runs from another; its kinds of stimulus with their labels,
pages, player layouts, live requests and conditions; its label-set words and default set, its extra frames,
whether it has voices, its vocabularies. The rest of the app asks these functions, by a dataset's benchmark
or a stimulus's kind, and compares no benchmark's or kind's name of its own.

Profiles register through the entry-point group `thinslice.benchmarks` (name: the benchmark as stored,
value: `module:PROFILE`); the built-ins are declared there in `pyproject.toml` too, and are loaded from
`BUILT_INS` when the package is not installed (run from a clone). An installed profile of the same name as a
built-in takes its place.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from app.benchmarks.profile import BenchmarkProfile, KindProfile
from storage.errors import ThinsliceError
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from storage.importers.plan import ImportPlan

GROUP = "thinslice.benchmarks"
GENERIC = "generic"   # the benchmark of a dataset no profile names
UNDECLARED = "app.benchmarks.generic:UNDECLARED"   # the kind of a stimulus no benchmark declares
# name -> module:attribute of each built-in profile, in the order their kinds are looked up. Seamless
# Interaction dyads are asked FriendBench's question, and ExploreToM's golden traces are NCP tasks.
BUILT_INS: dict[str, str] = {
    "friendbench": "app.benchmarks.friendbench:PROFILE",
    "seamless": "app.benchmarks.friendbench:SEAMLESS",
    "echomind": "app.benchmarks.echomind:PROFILE",
    "agentviss": "app.benchmarks.agentviss:PROFILE",
    "ncp": "app.benchmarks.ncp:PROFILE",
    "exploretom": "app.benchmarks.ncp:EXPLORETOM",
    GENERIC: "app.benchmarks.generic:PROFILE",
}


class BenchmarkProfileError(ThinsliceError):
    """An entry point of `thinslice.benchmarks` that is not a benchmark profile of its own name."""


def _load(target: str) -> object:
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)


@dataclass(frozen=True)
class Registry:
    """Every registered benchmark by name, and every kind of stimulus they declare (the first to declare one
    holds it)."""

    profiles: dict[str, BenchmarkProfile]
    kinds: dict[str, KindProfile]
    undeclared: KindProfile
    condition_words: dict[str, dict[str, str]]


@cache
def registry() -> Registry:
    """The built-ins, then the profiles the installed packages declare, read once per process (a test that
    puts a package on the path reads them again after `registry.cache_clear()`). Read on the first question,
    not at import: the window paints before any benchmark's rules (and polars under them) are loaded."""
    from importlib.metadata import entry_points

    found = {name: _load(target) for name, target in BUILT_INS.items()}
    for point in entry_points(group=GROUP):
        found[point.name] = point.load()
    for name, profile in found.items():
        if not isinstance(profile, BenchmarkProfile) or profile.name != name:
            raise BenchmarkProfileError(f"the {GROUP} entry point {name!r} is {profile!r}, not the "
                                        f"BenchmarkProfile named {name!r}")
    kinds: dict[str, KindProfile] = {}
    for profile in found.values():
        for kind in profile.kinds:   # type: ignore[union-attr]
            kinds.setdefault(kind.name, kind)
    words: dict[str, dict[str, str]] = {}
    for profile in found.values():
        for part, spelled in profile.condition_words.items():   # type: ignore[union-attr]
            words.setdefault(part, {}).update(spelled)
    return Registry(found, kinds, _load(UNDECLARED), words)   # type: ignore[arg-type]


def profiles() -> dict[str, BenchmarkProfile]:
    """Every registered benchmark by name: the built-ins, then those the installed packages declare."""
    return registry().profiles


def profile_for(benchmark: str | None) -> BenchmarkProfile:
    """The profile of a dataset's benchmark (the generic one for a benchmark no profile names)."""
    known = profiles()
    return known.get(benchmark or GENERIC, known[GENERIC])


def kinds() -> tuple[KindProfile, ...]:
    """Every registered kind of stimulus, each once."""
    return tuple(registry().kinds.values())


def kind_profile(kind: str | None, benchmark: str | None = None) -> KindProfile:
    """The profile of a stimulus's kind. A kind no benchmark declares (a generic table's stimuli) is its
    benchmark's first kind when that benchmark asks such kinds as its own, else the undeclared stimulus."""
    known = registry().kinds.get(kind or "")
    if known is not None:
        return known
    profile = profile_for(benchmark)
    if profile.asks_unknown_kinds and profile.kinds:
        return profile.kinds[0]
    return registry().undeclared


def condition_words(part: str) -> dict[str, str]:
    """Every benchmark's words for the codes of one part of a run condition (modality, prompt_setting,
    vision_mode)."""
    return registry().condition_words.get(part, {})


def kind_label(kind: str) -> str:
    """What the stimulus table says for a kind: its short label (the kind itself when none is registered)."""
    known = registry().kinds.get(kind)
    return known.short_label if known is not None else kind


def interpret_plan(plan: ImportPlan, skip_bad: bool) -> ImportPlan:
    """Apply the plan's benchmark rules to what its reader read; bad rows fail the import unless skipped."""
    from storage.importers.common import ProblemLog   # the readers' module: loaded with the first import

    log = ProblemLog(skip_bad)
    profile_for(plan.dataset.benchmark).interpret(plan, log)
    log.finish(plan)
    return plan


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(answer, correct) for a live reply to `detail`, as its benchmark scores it; correct is None without a
    ground truth or an answer."""
    return profile_for(detail.benchmark).score_reply(detail, text)
