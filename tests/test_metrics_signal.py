"""FriendBench signal detection checked against SciPy on generated predictions and ratings."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import norm

from app.metrics import human_signal_detection, signal_detection, signal_detection_table


def _generated_predictions(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    # (model, modality) -> (P(say familiar | familiar), P(say familiar | stranger))
    profiles = {("m1", "text"): (0.7, 0.3), ("m1", "video"): (0.9, 0.6), ("m2", "text"): (0.2, 0.1), ("m2", "video"): (1.0, 0.0)}
    for (model, modality), (p_hit, p_fa) in profiles.items():
        for i in range(96):
            truth = "familiar" if i % 2 == 0 else "stranger"
            says_familiar = rng.random() < (p_hit if truth == "familiar" else p_fa)
            answer = "familiar" if says_familiar else "stranger"
            rows.append((f"dyad{i}", model, modality, answer, answer == truth, truth))
    frame = pl.DataFrame(rows, schema=["stimulus_id", "model", "modality", "answer", "correct", "ground_truth"], orient="row")
    # One unparseable answer: counted as wrong, left out of d'.
    return frame.with_columns(
        pl.when((pl.col("stimulus_id") == "dyad1") & (pl.col("model") == "m1") & (pl.col("modality") == "text"))
        .then(None)
        .otherwise(pl.col("answer"))
        .alias("answer")
    )


def _reference(frame: pl.DataFrame, correction: str) -> dict[tuple[str, str], tuple[float, float]]:
    """d' and c by direct counting and scipy's norm.ppf."""
    out = {}
    for (model, modality), group in frame.group_by(["model", "modality"]):
        answered = group.filter(pl.col("answer").is_not_null())
        fam = answered.filter(pl.col("ground_truth") == "familiar")
        strg = answered.filter(pl.col("ground_truth") == "stranger")
        hits, n_s = int((fam["answer"] == "familiar").sum()), fam.height
        fas, n_n = int((strg["answer"] == "familiar").sum()), strg.height
        if correction == "loglinear":
            h, f = (hits + 0.5) / (n_s + 1), (fas + 0.5) / (n_n + 1)
        else:
            h = min(max(hits / n_s, 1 / (2 * n_s)), 1 - 1 / (2 * n_s))
            f = min(max(fas / n_n, 1 / (2 * n_n)), 1 - 1 / (2 * n_n))
        out[(model, modality)] = (norm.ppf(h) - norm.ppf(f), -(norm.ppf(h) + norm.ppf(f)) / 2)
    return out


@pytest.mark.parametrize("correction", ["loglinear", "half_over_n"])
def test_d_prime_and_criterion_match_scipy_per_model_and_modality(correction):
    frame = _generated_predictions()
    table = signal_detection_table(frame, correction=correction)
    expected = _reference(frame, correction)
    assert table.height == 4
    for row in table.iter_rows(named=True):
        d, c = expected[(row["model"], row["modality"])]
        assert row["d_prime"] == pytest.approx(d, abs=1e-9)
        assert row["criterion"] == pytest.approx(c, abs=1e-9)
        assert row["correction"] == correction


def test_unparseable_answer_is_wrong_and_left_out_of_signal_detection():
    table = signal_detection_table(_generated_predictions())
    row = table.filter((pl.col("model") == "m1") & (pl.col("modality") == "text")).row(0, named=True)
    assert row["n"] == 96 and row["n_unanswered"] == 1
    assert row["n_signal"] + row["n_noise"] == 95
    assert row["ci_low"] < row["accuracy"] < row["ci_high"] and row["ci_method"] == "wilson"


def test_perfect_and_biased_models_read_the_right_way():
    table = signal_detection_table(_generated_predictions())
    perfect = table.filter((pl.col("model") == "m2") & (pl.col("modality") == "video")).row(0, named=True)
    # Rates of 1 and 0 stay finite thanks to the correction; log-linear on 48+48 trials:
    assert perfect["hit_rate"] == 1.0 and perfect["false_alarm_rate"] == 0.0
    assert perfect["d_prime"] == pytest.approx(2 * norm.ppf(48.5 / 49))
    leaning_stranger = table.filter((pl.col("model") == "m2") & (pl.col("modality") == "text")).row(0, named=True)
    leaning_familiar = table.filter((pl.col("model") == "m1") & (pl.col("modality") == "video")).row(0, named=True)
    assert leaning_stranger["criterion"] > 0 > leaning_familiar["criterion"]


def test_the_two_corrections_differ_only_where_documented():
    # Non-extreme rates: half_over_n leaves them alone, log-linear always shifts them.
    plain = signal_detection(30, 48, 10, 48, "half_over_n")
    assert plain.corrected_hit_rate == 30 / 48 and plain.correction == "half_over_n"
    assert signal_detection(30, 48, 10, 48, "loglinear").corrected_hit_rate == pytest.approx(30.5 / 49)
    extreme = signal_detection(48, 48, 0, 48, "half_over_n")
    assert extreme.corrected_hit_rate == 1 - 1 / 96 and extreme.corrected_false_alarm_rate == 1 / 96
    with pytest.raises(ValueError, match="loglinear"):
        signal_detection_table(_generated_predictions(), correction="probit")


def _generated_ratings(seed: int = 4) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    truth = pl.DataFrame({"stimulus_id": [f"dyad{i}" for i in range(20)], "ground_truth": ["familiar", "stranger"] * 10})
    rows = []
    for condition, skill in (("text", 0.55), ("video", 0.7)):
        for rater in range(15):
            for sid, gt in truth.iter_rows():
                right = rng.random() < skill
                answer = gt if right else ("stranger" if gt == "familiar" else "familiar")
                rows.append((sid, f"r{rater}", condition, answer, right))
    ratings = pl.DataFrame(rows, schema=["stimulus_id", "rater", "condition", "answer", "correct"], orient="row")
    return ratings, truth


def test_human_crowd_pooled_matches_scipy_and_truth_can_be_derived():
    ratings, truth = _generated_ratings()
    pooled = human_signal_detection(ratings, truth)
    derived = human_signal_detection(ratings)
    assert pooled.select("condition", "d_prime", "criterion").equals(derived.select("condition", "d_prime", "criterion"))
    video = ratings.filter(pl.col("condition") == "video").join(truth, on="stimulus_id")
    fam, strg = video.filter(pl.col("ground_truth") == "familiar"), video.filter(pl.col("ground_truth") == "stranger")
    h = ((fam["answer"] == "familiar").sum() + 0.5) / (fam.height + 1)
    f = ((strg["answer"] == "familiar").sum() + 0.5) / (strg.height + 1)
    row = pooled.filter(pl.col("condition") == "video").row(0, named=True)
    assert row["d_prime"] == pytest.approx(norm.ppf(h) - norm.ppf(f))
    assert row["n"] == 15 * 20


def test_human_crowd_per_rater_gives_one_row_per_rater_and_condition():
    ratings, truth = _generated_ratings()
    per_rater = human_signal_detection(ratings, truth, per_rater=True, correction="half_over_n")
    assert per_rater.height == 30 and set(per_rater["correction"]) == {"half_over_n"}
    assert per_rater.filter(pl.col("condition") == "video")["d_prime"].mean() > per_rater.filter(
        pl.col("condition") == "text"
    )["d_prime"].mean()
