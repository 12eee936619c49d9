"""Inter-annotator agreement on labels: Cohen's kappa, Fleiss' kappa and Krippendorff's alpha (nominal).

Two kinds of unit are compared:
- whole-stimulus labels: one unit per stimulus, the value is the annotator's label in the set;
- time ranges: each stimulus is cut into frames of a stated grid (default 10 ms); frame i covers
  [i*grid, (i+1)*grid) and takes the label(s) whose range contains the frame's centre, joined with "+"
  when several overlap, or "none". An annotator takes part in a stimulus when they have at least one
  label of the set on it (so a stimulus nobody of them looked at is missing data, not "none").

Each figure says which formula, unit and grid it used. Undefined figures (every value the same, or no
pairable units) are NaN with a reason.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from storage.annotations import Annotation, AnnotationError, AnnotationStore

NONE = "none"
DEFAULT_GRID_S = 0.01
# the agreement scopes that make sense for each label-set scope (a set of whole-stimulus labels has no frames)
SCOPES_BY_LABEL_SET_SCOPE = {"interval": ("interval",), "whole": ("whole",), "both": ("interval", "whole")}

COHEN_FORMULA = "Cohen's kappa: (p_o - p_e) / (1 - p_e), p_e from each annotator's own label shares"
FLEISS_FORMULA = ("Fleiss' kappa: (P_bar - P_e) / (1 - P_e) over units rated by every annotator, "
                  "P_e = sum of squared pooled label shares")
KRIPPENDORFF_FORMULA = ("Krippendorff's alpha (nominal): 1 - D_o / D_e from the coincidence matrix, "
                        "units with >= 2 values, missing data allowed")


@dataclass(frozen=True)
class AgreementResult:
    measure: str          # cohen_kappa, fleiss_kappa, krippendorff_alpha
    value: float          # NaN when undefined
    formula: str
    unit: str             # "whole stimulus" or "10 ms frame"
    grid_s: float | None  # None for whole-stimulus labels
    n_units: int          # units the figure was computed on
    annotators: tuple[str, ...]
    reason: str = ""      # why the value is NaN, or a caveat


@dataclass(frozen=True)
class Disagreement:
    """Where annotators differ: a stimulus and a time range (None for whole-stimulus labels)."""

    stimulus_id: int
    start_s: float | None
    end_s: float | None
    labels: dict[str, str]  # annotator -> label(s) or "none"


@dataclass
class AgreementReport:
    label_set: str
    scope: str  # whole or interval
    annotators: tuple[str, ...]
    results: list[AgreementResult] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)


# -- the three formulas on a reliability matrix ------------------------------------------------
# A reliability matrix is annotators x units of integer category codes, -1 for a missing value.

def cohen_kappa(codes_a: np.ndarray, codes_b: np.ndarray) -> tuple[float, int]:
    """Cohen's kappa of two annotators over the units both rated; returns (kappa, units used)."""
    both = (codes_a >= 0) & (codes_b >= 0)
    a, b = codes_a[both], codes_b[both]
    n = int(a.size)
    if n == 0:
        return math.nan, 0
    k = int(max(a.max(), b.max())) + 1
    p_o = float(np.mean(a == b))
    p_e = float(np.dot(np.bincount(a, minlength=k) / n, np.bincount(b, minlength=k) / n))
    if p_e >= 1.0:
        return math.nan, n
    return (p_o - p_e) / (1.0 - p_e), n


def fleiss_kappa(matrix: np.ndarray) -> tuple[float, int]:
    """Fleiss' kappa over the units every annotator rated; returns (kappa, units used)."""
    complete = matrix[:, np.all(matrix >= 0, axis=0)]
    raters, n_units = complete.shape
    if n_units == 0 or raters < 2:
        return math.nan, n_units
    counts = _counts(complete)
    p_i = (np.sum(counts * counts, axis=1) - raters) / (raters * (raters - 1))
    p_bar = float(p_i.mean())
    shares = counts.sum(axis=0) / (n_units * raters)
    p_e = float(np.sum(shares * shares))
    if p_e >= 1.0:
        return math.nan, n_units
    return (p_bar - p_e) / (1.0 - p_e), n_units


def krippendorff_alpha(matrix: np.ndarray) -> tuple[float, int]:
    """Krippendorff's alpha for nominal data with missing values; returns (alpha, pairable units)."""
    counts = _counts(matrix)
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    counts, m_u = counts[pairable], m_u[pairable]
    n_units = int(counts.shape[0])
    if n_units == 0:
        return math.nan, 0
    weights = 1.0 / (m_u - 1.0)
    coincidence = (counts * weights[:, None]).T @ counts
    coincidence -= np.diag((counts * weights[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = float(n_c.sum())
    observed = float(coincidence.sum() - np.trace(coincidence))
    expected = float(n_c.sum() ** 2 - np.sum(n_c * n_c))
    if expected <= 0:
        return math.nan, n_units
    return 1.0 - (n - 1.0) * observed / expected, n_units


def _counts(matrix: np.ndarray) -> np.ndarray:
    """Units x categories: how many annotators gave each category to each unit."""
    k = int(matrix.max()) + 1 if matrix.size and matrix.max() >= 0 else 1
    units = matrix.shape[1]
    counts = np.zeros((units, k), dtype=np.float64)
    for row in matrix:
        seen = row >= 0
        np.add.at(counts, (np.nonzero(seen)[0], row[seen]), 1.0)
    return counts


def figures(matrix: np.ndarray, annotators: Sequence[str], unit: str, grid_s: float | None) -> list[AgreementResult]:
    """Cohen's kappa (when there are exactly two annotators), Fleiss' kappa and Krippendorff's alpha."""
    names = tuple(annotators)
    results = []

    def result(measure: str, value: float, n: int, formula: str) -> AgreementResult:
        reason = ""
        if math.isnan(value):
            reason = "no units to compare" if n == 0 else "undefined: every value is the same"
        return AgreementResult(measure, value, formula, unit, grid_s, n, names, reason)

    if len(names) == 2:
        value, n = cohen_kappa(matrix[0], matrix[1])
        results.append(result("cohen_kappa", value, n, COHEN_FORMULA))
    if len(names) >= 2:
        value, n = fleiss_kappa(matrix)
        results.append(result("fleiss_kappa", value, n, FLEISS_FORMULA))
        value, n = krippendorff_alpha(matrix)
        results.append(result("krippendorff_alpha", value, n, KRIPPENDORFF_FORMULA))
    return results


# -- building the units from annotations ---------------------------------------------------------

def _annotator_list(annotations: Sequence[Annotation], annotators: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(annotators) if annotators is not None else tuple(sorted({a.annotator for a in annotations}))


def whole_agreement(annotations: Iterable[Annotation], label_set: str,
                    annotators: Sequence[str] | None = None) -> AgreementReport:
    """Agreement on whole-stimulus labels of one set: one unit per stimulus (latest label per annotator)."""
    items = [a for a in annotations if a.label_set == label_set and a.is_whole and a.label and not a.deleted]
    names = _annotator_list(items, annotators)
    per_unit: dict[int, dict[str, str]] = {}
    for item in sorted(items, key=lambda a: (a.updated_at is not None, a.updated_at or 0, a.id)):
        if item.annotator in names:
            per_unit.setdefault(item.stimulus_id, {})[item.annotator] = item.label
    stimuli = sorted(per_unit)
    categories = sorted({label for unit in per_unit.values() for label in unit.values()})
    code = {c: i for i, c in enumerate(categories)}
    matrix = np.full((len(names), len(stimuli)), -1, dtype=np.int64)
    for j, stimulus in enumerate(stimuli):
        for i, name in enumerate(names):
            if name in per_unit[stimulus]:
                matrix[i, j] = code[per_unit[stimulus][name]]
    report = AgreementReport(label_set, "whole", names, figures(matrix, names, "whole stimulus", None))
    for stimulus in stimuli:
        given = per_unit[stimulus]
        if len(given) >= 2 and len(set(given.values())) > 1:
            report.disagreements.append(Disagreement(stimulus, None, None, dict(sorted(given.items()))))
    return report


def frame_values(annotations: Sequence[Annotation], duration_s: float, grid_s: float) -> list[str]:
    """The value of each grid frame for one annotator on one stimulus: label(s) joined by '+', or 'none'."""
    n_frames = max(0, int(math.ceil(duration_s / grid_s - 1e-9)))
    names = sorted({a.label or "" for a in annotations})
    bits = np.zeros(n_frames, dtype=np.int64)
    centres = (np.arange(n_frames) + 0.5) * grid_s
    for item in annotations:
        lo = int(np.searchsorted(centres, item.start_s, side="left"))
        hi = int(np.searchsorted(centres, item.end_s, side="left"))
        bits[lo:hi] |= 1 << names.index(item.label or "")
    lookup: dict[int, str] = {}
    values = []
    for b in bits.tolist():
        if b not in lookup:
            chosen = [names[i] for i in range(len(names)) if b >> i & 1]
            lookup[b] = "+".join(chosen) if chosen else NONE
        values.append(lookup[b])
    return values


def interval_agreement(annotations: Iterable[Annotation], label_set: str, durations: Mapping[int, float],
                       grid_s: float = DEFAULT_GRID_S,
                       annotators: Sequence[str] | None = None) -> AgreementReport:
    """Agreement on time-range labels of one set, frame by frame on a grid of `grid_s` seconds.

    `durations` gives each stimulus's length; a stimulus without one is compared up to its last label end.
    """
    if grid_s <= 0:
        raise ValueError("the grid must be a positive number of seconds")
    items = [a for a in annotations if a.label_set == label_set and not a.is_whole and not a.deleted]
    names = _annotator_list(items, annotators)
    by_stimulus: dict[int, dict[str, list[Annotation]]] = {}
    for item in items:
        if item.annotator in names:
            by_stimulus.setdefault(item.stimulus_id, {}).setdefault(item.annotator, []).append(item)
    columns: list[list[str | None]] = [[] for _ in names]
    spans: list[tuple[int, int, int]] = []  # (stimulus, first column, frame count)
    for stimulus in sorted(by_stimulus):
        given = by_stimulus[stimulus]
        duration = durations.get(stimulus) or max(a.end_s for labels in given.values() for a in labels)
        n_frames = max(0, int(math.ceil(duration / grid_s - 1e-9)))
        spans.append((stimulus, len(columns[0]) if columns else 0, n_frames))
        for i, name in enumerate(names):
            if name in given:
                columns[i].extend(frame_values(given[name], duration, grid_s))
            else:
                columns[i].extend([None] * n_frames)
    categories = sorted({v for col in columns for v in col if v is not None})
    code = {c: k for k, c in enumerate(categories)}
    n_units = len(columns[0]) if columns else 0
    matrix = np.array([[code[v] if v is not None else -1 for v in col] for col in columns],
                      dtype=np.int64).reshape(len(names), n_units)
    unit = f"{grid_s * 1000:g} ms frame"
    report = AgreementReport(label_set, "interval", names, figures(matrix, names, unit, grid_s))
    report.disagreements = _interval_disagreements(matrix, names, categories, spans, grid_s)
    return report


def _interval_disagreements(matrix: np.ndarray, names: Sequence[str], categories: Sequence[str],
                            spans: Sequence[tuple[int, int, int]], grid_s: float) -> list[Disagreement]:
    """Runs of consecutive frames where the annotators present give different values."""
    found = []
    for stimulus, first, n_frames in spans:
        block = matrix[:, first:first + n_frames]
        present = block >= 0
        if present.sum(axis=0).max(initial=0) < 2:
            continue
        high = np.where(present, block, -1).max(axis=0)
        low = np.where(present, block, np.iinfo(np.int64).max).min(axis=0)
        differs = (present.sum(axis=0) >= 2) & (high != low)
        # a new run starts where "differs" switches on, or where the combination of values changes
        change = np.ones(n_frames, dtype=bool)
        change[1:] = np.any(block[:, 1:] != block[:, :-1], axis=0) | (differs[1:] != differs[:-1])
        starts = np.nonzero(change)[0].tolist() + [n_frames]
        for lo, hi in zip(starts[:-1], starts[1:]):
            if differs[lo]:
                labels = {names[i]: categories[block[i, lo]] for i in range(len(names)) if block[i, lo] >= 0}
                found.append(Disagreement(stimulus, round(lo * grid_s, 6), round(hi * grid_s, 6), labels))
    return found


def scopes_for(label_set_scope: str) -> tuple[str, ...]:
    """The agreement scopes offered for a label set of this scope ('interval', 'whole' or 'both')."""
    return SCOPES_BY_LABEL_SET_SCOPE.get(label_set_scope, ("interval", "whole"))


def agreement_for(store: AnnotationStore, stimulus_ids: Iterable[int], label_set: str, *,
                  scope: str = "interval", grid_s: float = DEFAULT_GRID_S,
                  annotators: Sequence[str] | None = None) -> AgreementReport:
    """Fetch the set's labels on the given stimuli and compute agreement (scope 'interval' or 'whole').

    Raises AnnotationError when the set is unknown or the scope does not apply to it (see `scopes_for`).
    """
    found = store.label_set(label_set)
    if found is None:
        raise AnnotationError(f"Agreement: no label set named {label_set!r}.")
    if scope not in scopes_for(found.scope):
        raise AnnotationError(f"Agreement on {label_set!r}: scope {scope!r} does not apply to a set of "
                              f"{found.scope} labels; expected {' or '.join(scopes_for(found.scope))}.")
    ids = list(stimulus_ids)
    items = store.for_stimuli(ids, label_set=label_set)
    if scope == "whole":
        return whole_agreement(items, label_set, annotators)
    return interval_agreement(items, label_set, store.stimulus_durations(ids), grid_s, annotators)
