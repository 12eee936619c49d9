"""Which tiers of an ELAN export can be written back as the dependent tiers they were read from.

A tier read from an ELAN file keeps its parent tier and constraint in `meta`. On export it is written as a
dependent tier again when its parent is in the same file on one tier and its labels still fit the
constraint: Included In, within a parent annotation; Time Subdivision, tiling each parent annotation they
fall in; Symbolic Association, one per parent annotation with its span; Symbolic Subdivision, splitting a
parent annotation evenly (the times ELAN, and our reader, give them). Otherwise it is written as an
independent tier, and the report says its parent and constraint were not kept. Boundaries ELAN had left
unaligned are written aligned, at the times ELAN proposed for them.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from storage.exporters.common import Tier

TIME_ALIGNABLE = {"Included_In": True, "Time_Subdivision": True, "Symbolic_Association": False,
                  "Symbolic_Subdivision": False}
REFERRING = ("Symbolic_Association", "Symbolic_Subdivision")
DEFAULT_TYPE = "default-lt"


@dataclass(frozen=True)
class Dependent:
    """A tier written under `parent` with `constraint`; `parents[i]` is the parent annotation (its index on
    the parent tier) that the tier's i-th annotation belongs to."""

    parent: str
    constraint: str
    parents: tuple[int, ...]


def common_meta(tier: Tier, key: str) -> str | None:
    """The value every label of the tier has for `meta[key]`, or None when they differ or have none."""
    values = {(row.get("meta") or {}).get(key) for *_, row in tier.intervals}
    return values.pop() if len(values) == 1 else None


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _fit(tier: Tier, parent: Tier, constraint: str) -> tuple[int, ...] | None:
    """For each annotation of `tier`, the parent annotation it belongs to under `constraint`; None if one does not fit."""
    starts = [_ms(start) for start, *_ in parent.intervals]
    owners: list[int] = []
    for start, end, *_ in tier.intervals:
        index = bisect.bisect_right(starts, _ms(start)) - 1
        if index < 0 or _ms(end) > _ms(parent.intervals[index][1]):
            return None
        owners.append(index)
    children: dict[int, list[tuple[int, int]]] = {}
    for (start, end, *_), owner in zip(tier.intervals, owners):
        children.setdefault(owner, []).append((_ms(start), _ms(end)))
    for owner, spans in children.items():
        parent_start, parent_end = _ms(parent.intervals[owner][0]), _ms(parent.intervals[owner][1])
        if constraint == "Symbolic_Association" and spans != [(parent_start, parent_end)]:
            return None
        if constraint == "Time_Subdivision" and (spans[0][0] != parent_start or spans[-1][1] != parent_end
                                                 or any(a[1] != b[0] for a, b in zip(spans, spans[1:]))):
            return None
        if constraint == "Symbolic_Subdivision":
            step = (parent_end - parent_start) / len(spans)
            even = [(round(parent_start + i * step), round(parent_start + (i + 1) * step)) for i in range(len(spans))]
            if any(abs(a - c) > 1 or abs(b - d) > 1 for (a, b), (c, d) in zip(spans, even)):
                return None
    return tuple(owners)


def plan_hierarchy(tiers: list[Tier]) -> dict[str, Dependent]:
    """The tiers (by name) that are written as dependent tiers, and how."""
    by_name = {tier.name: tier for tier in tiers}
    plan: dict[str, Dependent] = {}
    for tier in tiers:
        parent_name, constraint = common_meta(tier, "parent_tier"), common_meta(tier, "tier_type")
        parent = by_name.get(parent_name or "")
        if (parent is None or constraint not in TIME_ALIGNABLE or tier.copy > 1 or tier.whole or parent.whole
                or f"{parent.name} #2" in by_name or parent is tier):
            continue
        owners = _fit(tier, parent, constraint)
        if owners is not None:
            plan[tier.name] = Dependent(parent.name, constraint, owners)
    # a parent chain that loops (hand-edited meta) cannot be written as a hierarchy
    for name in list(plan):
        seen, current = {name}, plan[name].parent
        while current in plan and current not in seen:
            seen.add(current)
            current = plan[current].parent
        if current in seen:
            plan.pop(name, None)
    return plan


def linguistic_types(tiers: list[Tier], plan: dict[str, Dependent]) -> dict[str, tuple[str, str | None]]:
    """Each tier's linguistic type (its id and constraint): the one it was read with where that still
    holds, else one named after the constraint (`default-lt` for an independent tier)."""
    constraint_of: dict[str, str | None] = {}
    chosen = {}
    for tier in tiers:
        dependent = plan.get(tier.name)
        constraint = dependent.constraint if dependent else None
        wanted = common_meta(tier, "linguistic_type")
        if not wanted or constraint_of.get(wanted, constraint) != constraint:
            wanted = f"{constraint}-lt" if constraint else DEFAULT_TYPE
        constraint_of.setdefault(wanted, constraint)
        chosen[tier.name] = (wanted, constraint)
    return chosen


def carried_meta(tier: Tier, plan: dict[str, Dependent], types: dict[str, tuple[str, str | None]]) -> tuple[str, ...]:
    """The `meta` keys a tier's labels keep when written as planned."""
    keys: tuple[str, ...] = ("tier", "speaker")
    if types[tier.name][0] == common_meta(tier, "linguistic_type"):
        keys += ("linguistic_type",)
    dependent = plan.get(tier.name)
    if dependent is None:
        return keys
    # `times` says where ELAN found a label's times; a boundary ELAN interpolated is written aligned at the
    # time ELAN proposed, so the times themselves come back exactly
    return keys + ("parent_tier", "tier_type", "times")
