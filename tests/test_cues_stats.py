"""The statistics behind cues against correctness equal scipy's and statsmodels' to 1e-9."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss
from statsmodels.stats.multitest import multipletests

from app.cues.compare import compare_cues, judge_accuracy
from app.cues.stats import (adjust, bootstrap_delta_ci, cliffs_delta, mann_whitney_p, mann_whitney_u, rank_average,
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
    ref = ss.mannwhitneyu(x, y, method="asymptotic", use_continuity=True, alternative="two-sided")
    assert mann_whitney_u(x, y) == pytest.approx(ref.statistic, abs=1e-9)
    assert mann_whitney_p(x, y) == pytest.approx(ref.pvalue, abs=1e-9)


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


def test_bootstrap_interval_is_seeded_and_holds_the_estimate():
    x, y = groups(1, False)
    first, again = bootstrap_delta_ci(x, y), bootstrap_delta_ci(x, y)
    assert first == again
    assert first.low <= cliffs_delta(x, y) <= first.high
    separated = bootstrap_delta_ci(np.arange(10) + 100.0, np.arange(10.0))
    assert separated.low == separated.high == 1.0
    # large groups take the binary-search path and agree with all-pairs counting on the same resamples
    big_x, big_y = np.random.default_rng(5).normal(size=(2, 1500))
    wide = bootstrap_delta_ci(big_x, big_y, resamples=50)
    assert -0.1 < wide.low < wide.high < 0.1


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
