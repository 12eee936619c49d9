"""Which label sets a stimulus's page offers, and what an AgentViSS scene's label is attached to.

A label set made for one benchmark names it in its name or its source ("AgentViSS conflict trait", a source
citing FriendBench), in one of the words its profile lists (`BenchmarkProfile.page_words`); such a set is
offered on that benchmark's stimuli only, and on those of the benchmarks it shares label sets with. A set that
names no benchmark ("vocal cues") is offered everywhere.

On an AgentViSS scene a label describes one role (its profile: expression style, conflict trait) or one turn
of the dialogue. The label's `value` says which: the role's name, or `turn:N` for the turn with order N.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.benchmarks import profile_for, profiles
from storage.annotations import LabelSet
from storage.records import Segment

TURN_PREFIX = "turn:"


def benchmarks_of(label_set: LabelSet) -> set[str]:
    """The benchmarks a label set was made for (empty: any benchmark)."""
    text = f"{label_set.name} {label_set.source or ''}".lower()
    return {name for name, profile in profiles().items() if any(w in text for w in profile.page_words)}


def applies_to(label_set: LabelSet, benchmark: str | None) -> bool:
    """True when the set belongs on a stimulus of `benchmark` (every set applies when it is unknown)."""
    own = benchmarks_of(label_set)
    if not own or benchmark is None:
        return True
    return bool(own & {benchmark, *profile_for(benchmark).shares_label_sets_with})


def label_sets_for(sets: Iterable[LabelSet], benchmark: str | None) -> list[LabelSet]:
    """The sets a page of `benchmark` offers, in the order given."""
    return [s for s in sets if applies_to(s, benchmark)]


def default_label_set(benchmark: str | None) -> str | None:
    """The label set an annotator of `benchmark` reaches for first (None: no preference)."""
    return profile_for(benchmark).default_label_set


def turn_target(ord_: int) -> str:
    """The `value` of a label attached to the turn with order `ord_`."""
    return f"{TURN_PREFIX}{ord_}"


def target_turn(value: str | None) -> int | None:
    """The turn order a label's `value` names, or None when it names a role (or nothing)."""
    if value and value.startswith(TURN_PREFIX) and value[len(TURN_PREFIX):].isdigit():
        return int(value[len(TURN_PREFIX):])
    return None


def describe_target(value: str | None, segments: Sequence[Segment]) -> str:
    """What a scene label is attached to, for people: 'Yusra', 'turn 3 (Benedikt)' or 'the whole scene'."""
    turn = target_turn(value)
    if turn is None:
        return value or "the whole scene"
    speaker = next((s.speaker for s in segments if s.ord == turn), None)
    return f"turn {turn + 1}" + (f" ({speaker})" if speaker else "")
