"""The statistics that set a cue against correctness, in numpy and the standard library.

- Cliff's delta: P(x > y) - P(x < y) for x from the first group and y from the second, from the
  Mann-Whitney U statistic (delta = 2U / (n m) - 1), with a percentile bootstrap confidence interval
  (each group resampled with replacement, seeded, so a figure is the same on every run);
- the Mann-Whitney U test, two-sided, normal approximation with tie correction and continuity correction;
- Spearman's rank correlation with the t approximation of its p-value (n - 2 degrees of freedom);
- Holm's step-down and Benjamini-Hochberg's step-up adjustment of p-values for the number of cues.
These are the same definitions scipy.stats and statsmodels use (the tests check them to 1e-9).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
# Up to this many resample x pair comparisons the bootstrap compares all pairs in one array operation.
BROADCAST_PAIRS = 4_000_000
CORRECTIONS = {"holm": "Holm step-down", "bh": "Benjamini-Hochberg step-up (false discovery rate)"}


def rank_average(values: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties given the mean of the ranks they span."""
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    boundaries = np.flatnonzero(np.diff(ordered) != 0) + 1
    starts = np.concatenate([[0], boundaries])
    ends = np.concatenate([boundaries, [len(x)]])
    ranks = np.empty(len(x), dtype=np.float64)
    for lo, hi in zip(starts, ends):
        ranks[order[lo:hi]] = (lo + hi + 1) / 2.0
    return ranks


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> float:
    """U of the first group: the number of pairs with x > y, ties counting a half."""
    n = len(x)
    ranks = rank_average(np.concatenate([np.asarray(x, float), np.asarray(y, float)]))
    return float(ranks[:n].sum() - n * (n + 1) / 2.0)


def cliffs_delta(x: Sequence[float], y: Sequence[float]) -> float:
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        return float("nan")
    return 2.0 * mann_whitney_u(x, y) / (n * m) - 1.0


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p of the Mann-Whitney U test (normal approximation, tie and continuity corrections)."""
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        return float("nan")
    joined = np.concatenate([np.asarray(x, float), np.asarray(y, float)])
    u1 = mann_whitney_u(x, y)
    u = max(u1, n1 * n2 - u1)
    n = n1 + n2
    _, counts = np.unique(joined, return_counts=True)
    ties = float(np.sum(counts**3 - counts))
    variance = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return float("nan")
    z = (u - n1 * n2 / 2.0 - 0.5) / math.sqrt(variance)
    return min(1.0, 2.0 * _normal_sf(z))


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def bootstrap_delta_ci(x: Sequence[float], y: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES,
                       confidence: float = CONFIDENCE, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of Cliff's delta, each group resampled on its own."""
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    if len(xa) < 2 or len(ya) < 2:
        return Interval(float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    bx = xa[rng.integers(0, len(xa), size=(resamples, len(xa)))]
    by = ya[rng.integers(0, len(ya), size=(resamples, len(ya)))]
    if resamples * len(xa) * len(ya) <= BROADCAST_PAIRS:
        # delta over all pairs of each resample at once: sign(x_i - y_j) averaged
        deltas = np.sign(bx[:, :, None] - by[:, None, :]).mean(axis=(1, 2))
    else:  # large groups: count the pairs by binary search in the sorted second group
        by.sort(axis=1)
        deltas = np.empty(resamples)
        for i in range(resamples):
            below = np.searchsorted(by[i], bx[i], side="left").sum()
            above = len(ya) - np.searchsorted(by[i], bx[i], side="right")
            deltas[i] = (below - above.sum()) / (len(xa) * len(ya))
    alpha = (1.0 - confidence) / 2.0
    return Interval(float(np.quantile(deltas, alpha)), float(np.quantile(deltas, 1.0 - alpha)))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def student_t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return regularized_beta(df / 2.0, 0.5, df / (df + t * t))


@dataclass(frozen=True)
class Correlation:
    rho: float
    p: float
    n: int


def spearman(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman's rho (Pearson's r of average ranks) and its two-sided p (t with n - 2 df)."""
    n = len(x)
    if n < 3:
        return Correlation(float("nan"), float("nan"), n)
    rx, ry = rank_average(x), rank_average(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denominator = math.sqrt(float(np.sum(rx * rx) * np.sum(ry * ry)))
    if denominator == 0:
        return Correlation(float("nan"), float("nan"), n)
    rho = float(np.sum(rx * ry) / denominator)
    rho = max(-1.0, min(1.0, rho))
    if abs(rho) == 1.0:
        return Correlation(rho, 0.0, n)
    t = rho * math.sqrt((n - 2) / ((1.0 - rho) * (1.0 + rho)))
    return Correlation(rho, student_t_two_sided_p(t, n - 2), n)


def adjust(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """p-values adjusted for their number (NaN ones are left out of the count and stay NaN)."""
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r} (known: {', '.join(CORRECTIONS)})")
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p), np.nan)
    valid = np.flatnonzero(np.isfinite(p))
    m = len(valid)
    if m == 0:
        return out.tolist()
    order = valid[np.argsort(p[valid], kind="mergesort")]
    ordered = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate((m - np.arange(m)) * ordered)
    else:
        adjusted = np.minimum.accumulate((m / np.arange(1, m + 1) * ordered)[::-1])[::-1]
    out[order] = np.minimum(adjusted, 1.0)
    return out.tolist()
