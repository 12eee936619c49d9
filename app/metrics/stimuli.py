"""One row per stimulus: each run's correctness, the human majority and judge scores side by side.

This wide frame is what the failure filters and the slice finder read. Column names:
- ``correct:<run key>``: boolean; a run key is the run's ``key_cols`` values joined by " / "
  (e.g. "gpt-4o / video"). With several predictions for one stimulus and run, the stimulus
  counts as correct when most are correct (a tie counts as wrong).
- ``human_n``, ``human_share_correct``, ``human_majority_correct`` (share > 0.5; null without ratings).
- ``score:<run key>:<criterion>``: mean judge score.
- every column of the optional ``stimuli`` frame (metadata such as ground_truth, gender_mix,
  goal_order, false_belief).
"""
from __future__ import annotations

from collections.abc import Sequence

import polars as pl

CORRECT_PREFIX = "correct:"
SCORE_PREFIX = "score:"
RUN_KEY_SEPARATOR = " / "


def correct_column(run_key: str) -> str:
    """Name of the correctness column of ``run_key`` in the per-stimulus frame."""
    return CORRECT_PREFIX + run_key


def score_column(run_key: str, criterion: str) -> str:
    """Name of the mean judge score column of ``run_key`` on ``criterion``."""
    return f"{SCORE_PREFIX}{run_key}:{criterion}"


def run_keys(frame: pl.DataFrame) -> list[str]:
    """The run keys that have a correctness column, in column order."""
    return [c[len(CORRECT_PREFIX) :] for c in frame.columns if c.startswith(CORRECT_PREFIX)]


def score_columns(frame: pl.DataFrame, criterion: str) -> list[str]:
    """All judge score columns on ``criterion``."""
    suffix = ":" + criterion
    return [c for c in frame.columns if c.startswith(SCORE_PREFIX) and c.endswith(suffix)]


def _run_key_expr(key_cols: Sequence[str]) -> pl.Expr:
    parts = [pl.col(c).cast(pl.String) for c in key_cols]
    return pl.concat_str(parts, separator=RUN_KEY_SEPARATOR, ignore_nulls=True).alias("run_key")


def per_stimulus_frame(
    predictions: pl.DataFrame,
    key_cols: Sequence[str] = ("model", "modality"),
    human: pl.DataFrame | None = None,
    human_condition: str | None = None,
    judgments: pl.DataFrame | None = None,
    stimuli: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Build the wide per-stimulus frame described in the module notes.

    Expects ``predictions`` with ``stimulus_id``, the ``key_cols`` and boolean ``correct``;
    ``human`` with ``stimulus_id``, ``condition`` and ``correct`` (only ``human_condition`` rows
    are used when given); ``judgments`` with ``stimulus_id``, the ``key_cols``, ``criterion`` and
    ``score``; ``stimuli`` with ``stimulus_id`` and metadata columns. Stimuli appear if they have
    a prediction or a row in ``stimuli``.
    """
    correctness = (
        predictions.lazy()
        .filter(pl.col("correct").is_not_null())
        .select("stimulus_id", _run_key_expr(key_cols), pl.col("correct").cast(pl.Float64))
        .group_by("stimulus_id", "run_key")
        .agg((pl.col("correct").mean() > 0.5).alias("correct"))
        .collect()
    )
    keys = correctness["run_key"].unique(maintain_order=True).sort().to_list()
    wide = correctness.pivot(on="run_key", index="stimulus_id", values="correct").select(
        "stimulus_id", *[pl.col(k).alias(correct_column(k)) for k in keys]
    )
    if stimuli is not None:
        wide = stimuli.join(wide, on="stimulus_id", how="full", coalesce=True)
    if human is not None:
        ratings = human if human_condition is None else human.filter(pl.col("condition") == human_condition)
        crowd = (
            ratings.filter(pl.col("correct").is_not_null())
            .group_by("stimulus_id")
            .agg(pl.len().alias("human_n"), pl.col("correct").cast(pl.Float64).mean().alias("human_share_correct"))
            .with_columns((pl.col("human_share_correct") > 0.5).alias("human_majority_correct"))
        )
        wide = wide.join(crowd, on="stimulus_id", how="left").with_columns(pl.col("human_n").fill_null(0))
    if judgments is not None:
        scores = (
            judgments.lazy()
            .filter(pl.col("score").is_not_null())
            .select("stimulus_id", _run_key_expr(key_cols), "criterion", pl.col("score").cast(pl.Float64))
            .with_columns(pl.concat_str([pl.col("run_key"), pl.col("criterion")], separator=":").alias("column"))
            .group_by("stimulus_id", "column")
            .agg(pl.col("score").mean())
            .collect()
        )
        columns = scores["column"].unique().sort().to_list()
        score_wide = scores.pivot(on="column", index="stimulus_id", values="score").select(
            "stimulus_id", *[pl.col(c).alias(SCORE_PREFIX + c) for c in columns]
        )
        wide = wide.join(score_wide, on="stimulus_id", how="left")
    return wide.sort("stimulus_id")
