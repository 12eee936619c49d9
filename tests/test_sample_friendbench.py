"""The bundled FriendBench sample agrees with itself: its published baselines are the dashboard's own figures
under the stated rule for unanswered outputs, and building the sample twice gives the same bytes."""
from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from app.dashboard import compute_dashboard, load_frames
from resources.sample_build.friendbench import build
from storage.lookups import datasets

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "friendbench"
# the published file writes four decimals
PUBLISHED_ROUNDING = 5e-5
# published metric -> the recomputed table's column
SAME_FIGURE = {"n_items": "n", "accuracy": "accuracy", "hit_rate": "hit_rate",
               "false_alarm_rate": "false_alarm_rate", "d_prime": "d_prime", "c": "criterion"}


def test_published_and_recomputed_tables_agree_on_every_model_and_modality(sample_store_copy):
    [friendbench] = [d for d in datasets(sample_store_copy.cursor()) if d.benchmark == "friendbench"]
    dashboard = compute_dashboard(load_frames(sample_store_copy, friendbench.id))
    recomputed = dashboard.table("friendbench.signal").frame.filter(pl.col("model").is_in(
        dashboard.table("imported").frame["model"].unique().to_list()))
    published = (dashboard.table("imported").frame.filter(pl.col("metric").is_in(list(SAME_FIGURE)))
                 .pivot(on="metric", index=["model", "metric_group"], values="value")
                 .rename({"metric_group": "modality"}))
    keys = ["model", "modality"]
    assert published.height == 12
    assert sorted(published.select(keys).rows()) == sorted(recomputed.select(keys).rows())
    # outputs that are neither label are in the sample, so the rule is what decides these rows
    assert recomputed["n_unanswered"].sum() > 0
    for row in published.iter_rows(named=True):
        mine = recomputed.filter((pl.col("model") == row["model"]) & (pl.col("modality") == row["modality"]))
        assert mine.height == 1, row
        for metric, column in SAME_FIGURE.items():
            assert abs(row[metric] - mine[column].item()) <= PUBLISHED_ROUNDING, (row["model"], row["modality"], metric)


def test_the_note_under_the_signal_table_states_the_rule_the_published_figures_follow(sample_store_copy):
    [friendbench] = [d for d in datasets(sample_store_copy.cursor()) if d.benchmark == "friendbench"]
    dashboard = compute_dashboard(load_frames(sample_store_copy, friendbench.id))
    assert "neither label is left out of H and F" in dashboard.table("friendbench.signal").note
    assert "left out of the hit and false-alarm rates" in (SAMPLE / "SYNTHETIC.md").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="the sample's speech is made by espeak-ng")
def test_two_builds_give_the_same_files_and_the_bundled_baselines(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    build(first)
    build(second)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert [f for f in files if (first / f).read_bytes() != (second / f).read_bytes()] == []
    # the bundled tables are what a build writes (they come from the seed and the stated rule alone)
    for table in ("validation/baselines/results.csv", "validation/ratings/model_predictions.csv"):
        assert (first / table).read_bytes() == (SAMPLE / table).read_bytes(), table
