"""Per-stimulus frame, failure filters and the slice finder, on generated benchmark-like data."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from app.metrics import (
    all_models_wrong,
    correct_column,
    false_belief_failed,
    find_slices,
    judge_at_or_below,
    model_right,
    model_wrong,
    model_wrong_humans_right,
    models_disagree,
    per_stimulus_frame,
    run_keys,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 600
    stimuli = pl.DataFrame(
        {
            "stimulus_id": [f"s{i:03d}" for i in range(n)],
            "site": rng.choice(["V00", "V01", "V02"], n),
            "gender_mix": rng.choice(["same", "mixed"], n),
            "false_belief": rng.random(n) < 0.5,
            "rare": ["odd" if i < 5 else "common" for i in range(n)],
        }
    )
    predictions, judgments = [], []
    for sid, site, mix, _fb, rare in stimuli.iter_rows():
        for model in ("alpha", "beta", "gamma"):
            skill = 0.8
            if model == "alpha" and mix == "mixed":
                skill = 0.3  # the planted weakness
            if model == "alpha" and rare == "odd":
                skill = 0.0  # a tiny slice with a huge gap
            predictions.append((sid, model, "video", bool(rng.random() < skill)))
            for criterion in ("C1", "VES"):
                judgments.append((sid, model, "video", criterion, float(rng.integers(1, 6))))
    human = [(sid, f"r{r}", "video", bool(rng.random() < 0.7)) for sid in stimuli["stimulus_id"] for r in range(5)]
    return {
        "stimuli": stimuli,
        "predictions": pl.DataFrame(predictions, schema=["stimulus_id", "model", "modality", "correct"], orient="row"),
        "judgments": pl.DataFrame(judgments, schema=["stimulus_id", "model", "modality", "criterion", "score"], orient="row"),
        "human": pl.DataFrame(human, schema=["stimulus_id", "rater", "condition", "correct"], orient="row"),
    }


@pytest.fixture(scope="module")
def wide(data):
    return per_stimulus_frame(
        data["predictions"], human=data["human"], human_condition="video", judgments=data["judgments"], stimuli=data["stimuli"]
    )


def _records(data):
    """Plain dictionaries for the independent check."""
    correct = {(s, m): c for s, m, _mod, c in data["predictions"].iter_rows()}
    human = {}
    for s, _r, _c, right in data["human"].iter_rows():
        human.setdefault(s, []).append(right)
    scores = {(s, m, c): v for s, m, _mod, c, v in data["judgments"].iter_rows()}
    meta = {row["stimulus_id"]: row for row in data["stimuli"].iter_rows(named=True)}
    return correct, {s: sum(v) / len(v) > 0.5 for s, v in human.items()}, scores, meta


def test_per_stimulus_frame_has_one_row_per_stimulus_and_named_columns(wide):
    assert wide.height == 600
    assert run_keys(wide) == ["alpha / video", "beta / video", "gamma / video"]
    assert {"human_n", "human_share_correct", "human_majority_correct", "score:beta / video:VES", "site"} <= set(wide.columns)
    assert set(wide["human_n"]) == {5}


def test_failure_filters_match_a_plain_computation(data, wide):
    correct, humans, scores, meta = _records(data)
    ids = sorted(meta)
    models = ("alpha", "beta", "gamma")
    expected = {
        "alpha wrong humans right": {s for s in ids if not correct[(s, "alpha")] and humans[s]},
        "disagree": {s for s in ids if len({correct[(s, m)] for m in models}) == 2},
        "all wrong": {s for s in ids if not any(correct[(s, m)] for m in models)},
        "C1 low": {s for s in ids if any(scores[(s, m, "C1")] <= 2 for m in models)},
        "false belief failed by beta": {s for s in ids if meta[s]["false_belief"] and not correct[(s, "beta")]},
    }
    got = {
        "alpha wrong humans right": model_wrong_humans_right("alpha / video").apply(wide),
        "disagree": models_disagree().apply(wide),
        "all wrong": all_models_wrong().apply(wide),
        "C1 low": judge_at_or_below("C1", 2).apply(wide),
        "false belief failed by beta": false_belief_failed("beta / video").apply(wide),
    }
    for name, result in got.items():
        assert set(result.stimulus_ids) == expected[name], name
        assert result.count == len(expected[name]) > 0


def test_filters_combine_with_and_or_not(data, wide):
    correct, humans, _scores, meta = _records(data)
    alpha_wrong = model_wrong("alpha / video")
    beta_right = model_right("beta / video")
    combined = (alpha_wrong & beta_right) | judge_at_or_below("VES", 1, "gamma / video")
    result = combined.apply(wide)
    assert "AND" in result.label and "OR" in result.label
    _c, _h, scores, _m = _records(data)
    expected = {
        s for s in meta if (not correct[(s, "alpha")] and correct[(s, "beta")]) or scores[(s, "gamma", "VES")] <= 1
    }
    assert set(result.stimulus_ids) == expected
    assert (~alpha_wrong).apply(wide).count == 600 - alpha_wrong.apply(wide).count
    with pytest.raises(KeyError, match="delta"):
        model_wrong("delta").apply(wide)


def test_missing_predictions_never_count_as_failures():
    predictions = pl.DataFrame({"stimulus_id": ["a", "b"], "model": ["m", "m"], "modality": ["text", "text"], "correct": [False, None]})
    other = pl.DataFrame({"stimulus_id": ["a", "b"], "model": ["n", "n"], "modality": ["text", "text"], "correct": [False, False]})
    wide = per_stimulus_frame(pl.concat([predictions, other]))
    assert wide[correct_column("m / text")].to_list() == [False, None]
    assert model_wrong("m / text").apply(wide).stimulus_ids == ("a",)
    assert all_models_wrong().apply(wide).stimulus_ids == ("a", "b")


def test_slice_finder_ranks_the_planted_weakness_first_and_does_not_oversell_tiny_slices(wide):
    table = find_slices(wide, correct_column("beta / video"), correct_column("alpha / video"), min_size=20)
    top = table.row(0, named=True)
    assert (top["column_1"], top["value_1"]) == ("gender_mix", "mixed")
    assert top["gap"] > 0.2 and top["ci_low"] > 0 and top["ci_method"] == "newcombe_paired"
    assert "odd" not in table["value_1"].to_list()  # five stimuli: below the minimum size
    assert {"stimulus_id", "human_n"}.isdisjoint(set(table["column_1"]))

    small = find_slices(wide, correct_column("beta / video"), correct_column("alpha / video"), min_size=5)
    odd = small.filter(pl.col("value_1") == "odd").row(0, named=True)
    ranks = small["slice"].to_list()
    assert odd["gap"] > top["gap"]
    assert ranks.index(odd["slice"]) > ranks.index("gender_mix = mixed")


def test_slice_finder_pairs_and_model_versus_humans(wide):
    table = find_slices(
        wide, "human_majority_correct", correct_column("alpha / video"), columns=["site", "gender_mix"], pairs=True, min_size=30
    )
    pair_rows = table.filter(pl.col("column_2").is_not_null())
    assert pair_rows.height == 6
    assert all(" & " in label for label in pair_rows["slice"])
    row = table.row(0, named=True)
    assert row["ci_low"] <= row["gap"] <= row["ci_high"]
    assert find_slices(wide, "human_majority_correct", correct_column("alpha / video"), min_size=10_000).is_empty()
