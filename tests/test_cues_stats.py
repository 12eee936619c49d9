"""The statistics behind cues against correctness equal scipy's and statsmodels' to 1e-9, and the interval
of Cliff's delta covers a known effect as often as it says, at small groups too (seeded simulation)."""
from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss
from statsmodels.stats.multitest import multipletests

from app.cues.compare import compare_cues, interval_text, judge_accuracy, summary_text
from app.cues.stats import (adjust, cliffs_delta, cliffs_delta_interval, mann_whitney_p, mann_whitney_u, rank_average,
                            spearman, student_t_two_sided_p)

SEEDS = range(6)


def groups(seed: int, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 40)), int(rng.integers(3, 40))
    if ties:
        return rng.integers(0, 6, n).astype(float), rng.integers(0, 7, m).astype(float)
    return rng.normal(size=n), rng.normal(0.4, 1.2, size=m)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("ties", [False, True])
def test_ranks_u_and_p_equal_scipy(seed, ties):
    x, y = groups(seed, ties)
    assert np.allclose(rank_average(np.concatenate([x, y])), ss.rankdata(np.concatenate([x, y])), atol=1e-12)
    ref = ss.mannwhitneyu(x, y, method="auto", use_continuity=True, alternative="two-sided")
    assert mann_whitney_u(x, y) == pytest.approx(ref.statistic, abs=1e-9)
    assert mann_whitney_p(x, y) == pytest.approx(ref.pvalue, abs=1e-9)


@pytest.mark.parametrize("sizes", [(3, 1), (1, 3), (2, 2), (3, 3), (5, 5), (8, 3), (8, 40), (40, 8), (6, 120), (9, 9)])
def test_small_groups_get_scipys_exact_p_and_ties_its_normal_approximation(sizes):
    rng = np.random.default_rng(sum(sizes))
    for _ in range(20):
        x, y = rng.normal(size=sizes[0]), rng.normal(0.8, 1.0, size=sizes[1])
        assert mann_whitney_p(x, y) == pytest.approx(ss.mannwhitneyu(x, y, method="auto").pvalue, abs=1e-12)
        if min(sizes) <= 8:
            assert mann_whitney_p(x, y) == pytest.approx(ss.mannwhitneyu(x, y, method="exact").pvalue, abs=1e-12)
        tied_x, tied_y = np.round(x), np.round(y)
        assert mann_whitney_p(tied_x, tied_y) == pytest.approx(
            ss.mannwhitneyu(tied_x, tied_y, method="auto").pvalue, abs=1e-12)
    # one right stimulus above three wrong ones: half the orderings are as extreme, not the 0.371 of the normal
    assert mann_whitney_p([4.0, 5.0, 6.0], [1.0]) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("ties", [False, True])
def test_cliffs_delta_is_the_pair_dominance_and_matches_scipy_u(seed, ties):
    x, y = groups(seed, ties)
    pairs = np.sign(x[:, None] - y[None, :]).mean()
    assert cliffs_delta(x, y) == pytest.approx(pairs, abs=1e-12)
    u = ss.mannwhitneyu(x, y, method="asymptotic").statistic
    assert cliffs_delta(x, y) == pytest.approx(2 * u / (len(x) * len(y)) - 1, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("ties", [False, True])
def test_spearman_equals_scipy(seed, ties):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(4, 60))
    x = rng.integers(0, 5, n).astype(float) if ties else rng.normal(size=n)
    y = x * 0.5 + rng.normal(size=n)
    ours, ref = spearman(x, y), ss.spearmanr(x, y)
    assert ours.rho == pytest.approx(ref.statistic, abs=1e-9)
    assert ours.p == pytest.approx(ref.pvalue, abs=1e-9)


@pytest.mark.parametrize("t,df", [(0.3, 3), (2.1, 7), (-4.5, 20), (12.0, 2), (0.0, 11), (1.96, 400)])
def test_t_tail_equals_scipy(t, df):
    assert student_t_two_sided_p(t, df) == pytest.approx(2 * ss.t.sf(abs(t), df), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_holm_and_benjamini_hochberg_equal_statsmodels(seed):
    rng = np.random.default_rng(200 + seed)
    p = rng.uniform(0, 0.3, int(rng.integers(2, 30)))
    p[::4] = p[0]  # ties
    assert np.allclose(adjust(p, "holm"), multipletests(p, method="holm")[1], atol=1e-9, rtol=0)
    assert np.allclose(adjust(p, "bh"), multipletests(p, method="fdr_bh")[1], atol=1e-9, rtol=0)
    assert np.allclose(adjust(p, "bh"), ss.false_discovery_control(p, method="bh"), atol=1e-9, rtol=0)


def test_undefined_p_values_are_left_out_of_the_count():
    adjusted = adjust([0.01, float("nan"), 0.04], "holm")
    assert adjusted[0] == pytest.approx(0.02) and np.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def coverage(m: int, n: int, draw, true_delta: float, data_sets: int, rng: np.random.Generator) -> float:
    """Share of `data_sets` seeded data sets whose interval holds `true_delta`. The interval depends on the
    data only through delta, so it is computed once per delta seen."""
    x, y = draw(rng, (data_sets, m), True), draw(rng, (data_sets, n), False)
    deltas = np.sign(x[:, :, None] - y[:, None, :]).mean(axis=(1, 2))
    held = {}
    for i, d in enumerate(deltas):
        if d not in held:
            ci = cliffs_delta_interval(x[i], y[i])
            held[d] = ci.low <= true_delta <= ci.high
    return float(np.mean([held[d] for d in deltas]))


SHIFTS = (0.0, 0.5, 1.0, 2.0, 3.0)
SIZES = ((2, 2), (3, 3), (3, 5), (5, 5), (8, 3), (3, 8), (4, 7), (6, 12), (3, 30), (10, 30), (30, 30))


@pytest.mark.parametrize("m,n", SIZES)
def test_the_delta_interval_covers_a_known_effect_in_at_least_93_percent_of_data_sets(m, n):
    """Normal groups shifted by 0 to 3 SD (true delta 2 Phi(shift / sqrt 2) - 1) and Poisson counts, as a
    labelled cue is (ties, true delta from the two distributions): coverage in [0.93, 1]."""
    rng = np.random.default_rng(1000 * m + n)
    for shift in SHIFTS:
        true_delta = 2 * ss.norm.cdf(shift / math.sqrt(2)) - 1

        def draw(r, shape, first, s=shift):
            return r.standard_normal(shape) + (s if first else 0.0)
        assert 0.93 <= coverage(m, n, draw, true_delta, 3000, rng) <= 1.0, shift
    for rates in ((1.0, 1.0), (2.0, 1.0), (3.0, 0.5)):
        k = np.arange(60)
        px, py = ss.poisson.pmf(k, rates[0]), ss.poisson.pmf(k, rates[1])
        true_delta = float(np.sum(px[:, None] * py[None, :] * np.sign(k[:, None] - k[None, :])))

        def draw(r, shape, first, lam=rates):
            return r.poisson(lam[0] if first else lam[1], shape).astype(float)
        assert 0.93 <= coverage(m, n, draw, true_delta, 3000, rng) <= 1.0, rates


def test_the_old_percentile_bootstrap_would_not_have_covered_at_3_vs_3():
    """What the interval replaced, for the record: a percentile bootstrap covers delta 0 in far fewer than 95%
    of 3-vs-3 data sets (every data set separated by chance gets [1, 1]), while Newcombe's interval covers."""
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((2000, 3)), rng.standard_normal((2000, 3))
    covered_boot = 0
    for xi, yi in zip(x[:400], y[:400]):
        bx, by = xi[rng.integers(0, 3, (500, 3))], yi[rng.integers(0, 3, (500, 3))]
        boot = np.sign(bx[:, :, None] - by[:, None, :]).mean(axis=(1, 2))
        low, high = np.quantile(boot, [0.025, 0.975])
        covered_boot += low <= 0.0 <= high
    assert covered_boot / 400 < 0.9
    assert coverage(3, 3, lambda r, shape, _first: r.standard_normal(shape), 0.0, 2000, rng) >= 0.93


def test_the_interval_holds_the_estimate_and_stays_inside_minus_one_one():
    for seed in SEEDS:
        for ties in (False, True):
            x, y = groups(seed, ties)
            ci = cliffs_delta_interval(x, y)
            assert -1.0 <= ci.low <= cliffs_delta(x, y) <= ci.high <= 1.0
    separated = cliffs_delta_interval(np.arange(10) + 100.0, np.arange(10.0))
    assert separated.high == 1.0 and 0.5 < separated.low < 1.0  # not the bootstrap's precise-looking [1, 1]
    assert cliffs_delta_interval([1.0], [2.0, 3.0]) is None  # a group of one: no interval


def test_a_constant_cue_does_not_vary_and_gets_no_delta_p_or_interval():
    accuracy = {("humans", "audio"): {1: 1.0, 2: 1.0, 3: 0.0, 4: 0.0, 5: 0.0, 6: 1.0}}
    values = {"laughs": {s: 0.0 for s in range(1, 7)}, "pitch": {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0, 6: 6.0}}
    rows = {c.cue: c for c in compare_cues(values, accuracy, ["laughs", "pitch"])}
    flat = rows["laughs"]
    assert not flat.varies and flat.flag == "does not vary"
    assert all(math.isnan(v) for v in (flat.delta, flat.ci_low, flat.ci_high, flat.p, flat.p_adjusted))
    assert interval_text(flat) == "does not vary" and summary_text(flat).startswith("does not vary")
    assert "[" not in summary_text(flat)  # no precise-looking [0.00, 0.00]
    # the constant cue is not counted in the adjustment: the other p is adjusted over one cue
    assert rows["pitch"].p_adjusted == pytest.approx(rows["pitch"].p)
    assert rows["pitch"].flag == "group under 5" and rows["pitch"].small_group
    assert "n 3 right / 3 wrong" in summary_text(rows["pitch"]) and "group under 5" in summary_text(rows["pitch"])


def test_a_cue_against_a_judge_splits_stimuli_by_majority_and_adjusts_over_cues():
    outcomes = pl.DataFrame({"stimulus_id": [1, 2, 3, 4, 5, 6, 1, 2], "who": ["humans"] * 6 + ["m"] * 2,
                             "condition": ["audio"] * 6 + ["video"] * 2, "n": [4, 4, 4, 4, 4, 4, 1, 1],
                             "n_correct": [4, 3, 2, 1, 0, 4, 1, 0]})
    accuracy = judge_accuracy(outcomes)
    assert accuracy[("humans", "pooled")][3] == 0.5
    values = {"pitch": {1: 10.0, 2: 9.0, 3: 8.0, 4: 7.0, 5: 6.0, 6: 11.0}, "rate": {1: 1.0, 2: 2.0, 4: 3.0, 5: 4.0}}
    rows = {(c.who, c.condition, c.cue): c for c in compare_cues(values, accuracy, ["pitch", "rate"], "holm")}
    pitch = rows[("humans", "audio", "pitch")]
    assert pitch.right_stimuli == [1, 2, 6] and pitch.wrong_stimuli == [4, 5]  # stimulus 3 is a tie
    assert pitch.delta == 1.0 and pitch.n_stimuli == 6
    ps = [rows[("humans", "audio", c)].p for c in ("pitch", "rate")]
    assert [rows[("humans", "audio", c)].p_adjusted for c in ("pitch", "rate")] == pytest.approx(
        list(multipletests(ps, method="holm")[1]), abs=1e-9)
    ref = ss.spearmanr([10, 9, 8, 7, 6, 11], [1, 0.75, 0.5, 0.25, 0, 1])
    assert pitch.rho == pytest.approx(ref.statistic, abs=1e-9) and pitch.rho_p == pytest.approx(ref.pvalue, abs=1e-9)
    assert rows[("m", "video", "pitch")].right == [10.0] and rows[("m", "video", "pitch")].wrong == [9.0]
