"""Grouped accuracy, MCQ accuracy by type, judge means, AgentViSS task scores and NCP success."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from app.metrics import (
    accuracy_table,
    agentviss_task_scores,
    judge_means,
    mcq_accuracy_by_type,
    ncp_success,
    normal_mean_interval,
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


def test_judge_means_match_numpy_with_a_normal_interval():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame(
        {
            "model": rng.choice(["x", "y"], 400),
            "criterion": rng.choice(["C1", "C2", "C3", "C4", "VES"], 400),
            "score": rng.integers(1, 6, 400).astype(float),
        }
    )
    table = judge_means(frame, criteria=["C1", "C2", "C3", "C4", "VES"])
    assert table.filter(pl.col("model") == "x")["criterion"].to_list() == ["C1", "C2", "C3", "C4", "VES"]
    for row in table.iter_rows(named=True):
        scores = frame.filter((pl.col("model") == row["model"]) & (pl.col("criterion") == row["criterion"]))["score"].to_numpy()
        assert row["mean"] == pytest.approx(scores.mean())
        expected = normal_mean_interval(scores.mean(), scores.std(ddof=1), len(scores))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.low, expected.high))


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
