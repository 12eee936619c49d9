"""Grouped accuracy, MCQ accuracy by type, judge means, AgentViSS task scores and NCP success."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss

from app.metrics import (
    accuracy_table,
    agentviss_task_scores,
    judge_means,
    mcq_accuracy_by_type,
    ncp_success,
    t_mean_interval,
    t_quantile,
    wilson_interval,
)


def test_accuracy_table_counts_and_wilson_bounds_per_group():
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {
            "model": rng.choice(["a", "b"], 1000),
            "modality": rng.choice(["text", "audio", "video"], 1000),
            "correct": rng.random(1000) < 0.6,
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) % 50 == 0).then(None).otherwise(pl.col("correct")).alias("correct"))
    table = accuracy_table(frame)
    assert table.height == 6 and table["n"].sum() == 980
    for row in table.iter_rows(named=True):
        group = frame.filter((pl.col("model") == row["model"]) & (pl.col("modality") == row["modality"]))
        scored = group["correct"].drop_nulls()
        assert row["n_correct"] == scored.sum() and row["accuracy"] == pytest.approx(scored.mean())
        interval = wilson_interval(row["n_correct"], row["n"])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((interval.low, interval.high))


def test_mcq_accuracy_is_split_by_question_type():
    frame = pl.DataFrame(
        {
            "model": ["m"] * 6,
            "question_type": ["understanding"] * 4 + ["reasoning"] * 2,
            "correct": [True, True, True, False, False, True],
        }
    )
    table = mcq_accuracy_by_type(frame)
    assert dict(zip(table["question_type"], table["accuracy"])) == {"reasoning": 0.5, "understanding": 0.75}


def scipy_t_interval(values: np.ndarray) -> tuple[float, float]:
    low, high = ss.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=ss.sem(values))
    return float(low), float(high)


def test_judge_means_with_one_score_per_stimulus_match_scipys_t_interval():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame(
        {
            "stimulus_id": np.arange(400),
            "model": rng.choice(["x", "y"], 400),
            "criterion": rng.choice(["C1", "C2", "C3", "C4", "VES"], 400),
            "score": rng.integers(1, 6, 400).astype(float),
        }
    )
    table = judge_means(frame, criteria=["C1", "C2", "C3", "C4", "VES"])
    assert table.filter(pl.col("model") == "x")["criterion"].to_list() == ["C1", "C2", "C3", "C4", "VES"]
    for row in table.iter_rows(named=True):
        chosen = (pl.col("model") == row["model"]) & (pl.col("criterion") == row["criterion"])
        scores = frame.filter(chosen)["score"].to_numpy()
        assert row["mean"] == pytest.approx(scores.mean()) and row["n"] == row["n_units"] == len(scores)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(scipy_t_interval(scores), abs=1e-12)
        assert row["ci_method"] == "t"


@pytest.mark.parametrize("n", [2, 3, 6, 30, 1000])
def test_t_multiplier_equals_scipy(n):
    assert t_quantile(0.95, n - 1) == pytest.approx(ss.t.ppf(0.975, n - 1), abs=1e-12)
    assert t_quantile(0.9, n - 1) == pytest.approx(ss.t.ppf(0.95, n - 1), abs=1e-12)
    values = np.random.default_rng(n).normal(3.0, 1.0, n)
    interval = t_mean_interval(values.mean(), values.std(ddof=1), n)
    assert (interval.low, interval.high) == pytest.approx(scipy_t_interval(values), abs=1e-12)


def test_repeated_scores_of_the_same_stimuli_count_the_stimulus_as_the_unit():
    """EchoMind's shape: 6 stimuli, each scored 6 times (voices, judges): n = 6 stimuli, not 36 scores."""
    rng = np.random.default_rng(11)
    stimulus_effect = rng.normal(0.0, 1.0, 6)
    rows = [{"stimulus_id": s, "model": "m", "criterion": "C1", "score": 3.0 + stimulus_effect[s] + rng.normal(0, 0.3)}
            for s in range(6) for _ in range(6)]
    rows += [{"stimulus_id": 5, "model": "m", "criterion": "C1", "score": None}]  # a missing score is left out
    frame = pl.DataFrame(rows)
    row = judge_means(frame, criteria=["C1"]).row(0, named=True)
    per_stimulus = frame.drop_nulls("score").group_by("stimulus_id").agg(pl.col("score").mean())["score"].to_numpy()
    assert row["n"] == 36 and row["n_units"] == 6 and row["ci_method"] == "t_by_stimulus"
    assert row["mean"] == pytest.approx(per_stimulus.mean())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(scipy_t_interval(per_stimulus), abs=1e-12)
    naive = scipy_t_interval(frame["score"].drop_nulls().to_numpy())
    assert row["ci_high"] - row["ci_low"] > 2 * (naive[1] - naive[0])  # 36 "independent" scores claim far more


def test_a_t_interval_at_n_6_covers_about_95_percent_where_a_z_interval_does_not():
    rng = np.random.default_rng(5)
    samples = rng.normal(0.0, 1.0, (20000, 6))
    means, sds = samples.mean(axis=1), samples.std(axis=1, ddof=1)
    t_half, z_half = t_quantile(0.95, 5) * sds / np.sqrt(6), 1.959964 * sds / np.sqrt(6)
    assert 0.94 <= np.mean(np.abs(means) <= t_half) <= 0.96
    assert np.mean(np.abs(means) <= z_half) < 0.91


def test_agentviss_scores_by_task_in_benchmark_order_and_vision_mode():
    rows = [
        ("m", mode, task, score)
        for mode in ("VV", "DV")
        for task in ("Int-Out", "Char", "Expr", "Int-Reg", "Other")
        for score in (3.0, 4.0, 5.0)
    ]
    frame = pl.DataFrame(rows, schema=["model", "vision_mode", "criterion", "score"], orient="row")
    table = agentviss_task_scores(frame)
    assert table.filter(pl.col("vision_mode") == "DV")["task"].to_list() == ["Expr", "Char", "Int-Reg", "Int-Out"]
    assert set(table["mean"]) == {4.0}


def test_ncp_success_split_by_order_size_and_belief():
    frame = pl.DataFrame(
        {
            "model": ["m"] * 8,
            "goal_order": [1, 1, 2, 2, 1, 1, 2, 2],
            "goal_size": [1, 2, 3, 1, 2, 3, 1, 2],
            "false_belief": [True, False] * 4,
            "correct": [True, True, False, False, True, True, False, True],
        }
    )
    table = ncp_success(frame)
    rate = {(r["factor"], r["level"]): r["accuracy"] for r in table.iter_rows(named=True)}
    assert rate[("goal_order", "1")] == 1.0 and rate[("goal_order", "2")] == 0.25
    assert rate[("false_belief", "true")] == 0.5 and rate[("false_belief", "false")] == 0.75
    assert rate[("goal_size", "3")] == 0.5
