"""Confidence intervals and the normal and Student t quantiles, with no SciPy at run time.

Methods are named in every result so a figure can say how its interval was made:
- ``wilson``: Wilson score interval for one binomial proportion (Wilson 1927).
- ``newcombe_paired``: Newcombe's score-based interval for the difference of two paired
  proportions (Newcombe 1998, "method 10"), built from the two Wilson intervals.
- ``t``: mean +- t(n - 1) * SD / sqrt(n), Student's t interval for a mean of n independent scores.
- ``t_by_stimulus``: the same over per-stimulus means, n the number of stimuli, for scores that repeat
  per stimulus (several judges or runs scoring the same item are not independent of each other).
- ``bootstrap_percentile``: percentile bootstrap.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

_STANDARD_NORMAL = NormalDist()


def z_quantile(p: float) -> float:
    """The standard normal quantile z(p) (inverse CDF) for 0 < p < 1."""
    return _STANDARD_NORMAL.inv_cdf(p)


def two_sided_z(level: float) -> float:
    """The z multiplier of a two-sided interval at confidence ``level`` (1.959964 for 0.95)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be between 0 and 1, got {level}")
    return z_quantile(0.5 + level / 2.0)


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


def t_quantile(level: float, df: float) -> float:
    """The t multiplier of a two-sided interval at confidence ``level`` with ``df`` degrees of freedom
    (2.570582 for 0.95 and 5), by bisection of the two-sided tail (scipy.stats.t.ppf to 1e-12)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be between 0 and 1, got {level}")
    tail = 1.0 - level
    lo, hi = 0.0, 1.0
    while student_t_two_sided_p(hi, df) > tail:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if student_t_two_sided_p(mid, df) > tail else (lo, mid)
        if hi - lo < 1e-15 * hi:
            break
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Interval:
    """A confidence interval with the name of the method that made it."""

    low: float
    high: float
    method: str
    level: float = 0.95


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n``; NaN bounds when ``n`` is 0."""
    if n <= 0:
        return Interval(math.nan, math.nan, "wilson", level)
    z = two_sided_z(level)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denominator
    half_width = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denominator
    return Interval(max(0.0, centre - half_width), min(1.0, centre + half_width), "wilson", level)


def wilson_bounds(successes: np.ndarray, n: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised Wilson bounds; entries with ``n`` 0 give NaN."""
    z = two_sided_z(level)
    successes = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = successes / n
        denominator = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denominator
        half_width = z * np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denominator
    low = np.clip(centre - half_width, 0.0, 1.0)
    high = np.clip(centre + half_width, 0.0, 1.0)
    return low, high


def newcombe_paired_bounds(
    both: np.ndarray, only_a: np.ndarray, only_b: np.ndarray, neither: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds for accuracy(A) - accuracy(B) on the same items (Newcombe 1998, method 10).

    The four arrays count items where both were right, only A, only B, and neither. The
    correlation term phi uses Newcombe's continuity-corrected numerator. Vectorised.
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (both, only_a, only_b, neither))
    n = a + b + c + d
    low_a, high_a = wilson_bounds(a + b, n, level)
    low_b, high_b = wilson_bounds(a + c, n, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_a = (a + b) / n
        p_b = (a + c) / n
        cross = a * d - b * c
        cross = np.where(cross > 0, np.maximum(cross - n / 2.0, 0.0), cross)
        margins = (a + b) * (c + d) * (a + c) * (b + d)
        phi = np.where(margins > 0, cross / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)
        gap = p_a - p_b
        down_a, up_b = p_a - low_a, high_b - p_b
        up_a, down_b = high_a - p_a, p_b - low_b
        low = gap - np.sqrt(np.maximum(down_a**2 - 2.0 * phi * down_a * up_b + up_b**2, 0.0))
        high = gap + np.sqrt(np.maximum(up_a**2 - 2.0 * phi * up_a * down_b + down_b**2, 0.0))
    return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def t_mean_interval(mean: float, sd: float, n: int, level: float = 0.95) -> Interval:
    """mean +- t(level, n - 1) * SD / sqrt(n) (Student); NaN bounds with fewer than two values."""
    if n < 2 or math.isnan(sd):
        return Interval(math.nan, math.nan, "t", level)
    half_width = t_quantile(level, n - 1) * sd / math.sqrt(n)
    return Interval(mean - half_width, mean + half_width, "t", level)


def bootstrap_interval(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], float] | None = None,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval of ``statistic`` (the mean when None) over ``values``.

    Resampling is seeded, so the same call gives the same interval. The mean is computed in
    vectorised chunks so large inputs stay within a bounded amount of memory.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Interval(math.nan, math.nan, "bootstrap_percentile", level)
    rng = np.random.default_rng(seed)
    estimates = np.empty(resamples)
    if statistic is None:
        # Bound each chunk to about four million drawn indices.
        chunk = max(1, 4_000_000 // data.size)
        for start in range(0, resamples, chunk):
            stop = min(resamples, start + chunk)
            indices = rng.integers(0, data.size, size=(stop - start, data.size))
            estimates[start:stop] = data[indices].mean(axis=1)
    else:
        for i in range(resamples):
            estimates[i] = statistic(data[rng.integers(0, data.size, size=data.size)])
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(estimates, [tail, 1.0 - tail])
    return Interval(float(low), float(high), "bootstrap_percentile", level)
