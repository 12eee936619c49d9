"""Intervals agree with independent computations: SciPy's normal quantile and the bootstrap."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from app.metrics import bootstrap_interval, newcombe_paired_bounds, wilson_bounds, wilson_interval, z_quantile


@pytest.mark.parametrize("p", [1e-6, 0.001, 0.025, 0.2, 0.5, 0.731, 0.975, 0.999999])
def test_z_quantile_matches_scipy(p):
    assert z_quantile(p) == pytest.approx(norm.ppf(p), abs=1e-9)


@pytest.mark.parametrize("true_p,n", [(0.5, 400), (0.8, 250), (0.93, 600)])
def test_wilson_agrees_with_bootstrap_on_generated_answers(true_p, n):
    rng = np.random.default_rng(7)
    answers = rng.random(n) < true_p
    wilson = wilson_interval(int(answers.sum()), n)
    boot = bootstrap_interval(answers.astype(float), resamples=4000, seed=3)
    assert wilson.method == "wilson" and boot.method == "bootstrap_percentile"
    assert wilson.low == pytest.approx(boot.low, abs=0.012)
    assert wilson.high == pytest.approx(boot.high, abs=0.012)


def test_wilson_stays_inside_zero_one_at_the_extremes_and_is_nan_without_data():
    all_right = wilson_interval(20, 20)
    assert all_right.high == 1.0 and 0.8 < all_right.low < 1.0
    none_right = wilson_interval(0, 20)
    assert none_right.low == pytest.approx(0.0, abs=1e-12) and 0.0 < none_right.high < 0.2
    assert np.isnan(wilson_interval(0, 0).low)


def test_vectorised_wilson_matches_scalar():
    k, n = np.array([0, 3, 50, 99]), np.array([10, 10, 100, 100])
    low, high = wilson_bounds(k, n)
    for i in range(4):
        interval = wilson_interval(int(k[i]), int(n[i]))
        assert (low[i], high[i]) == pytest.approx((interval.low, interval.high))


def test_bootstrap_with_a_custom_statistic_is_seeded():
    values = np.random.default_rng(1).normal(10, 2, 300)
    first = bootstrap_interval(values, statistic=np.median, resamples=500, seed=5)
    again = bootstrap_interval(values, statistic=np.median, resamples=500, seed=5)
    assert first == again and first.low < np.median(values) < first.high


def test_newcombe_paired_gap_interval_agrees_with_a_paired_bootstrap():
    rng = np.random.default_rng(11)
    n = 500
    a = rng.random(n) < 0.75
    # B agrees with A most of the time (paired, positively correlated), and is a little worse.
    b = np.where(rng.random(n) < 0.8, a, rng.random(n) < 0.55)
    counts = [np.sum(a & b), np.sum(a & ~b), np.sum(~a & b), np.sum(~a & ~b)]
    low, high = newcombe_paired_bounds(*[np.array([c]) for c in counts])
    boot = bootstrap_interval(a.astype(float) - b.astype(float), resamples=4000, seed=2)
    gap = a.mean() - b.mean()
    assert low[0] < gap < high[0]
    assert low[0] == pytest.approx(boot.low, abs=0.015)
    assert high[0] == pytest.approx(boot.high, abs=0.015)
