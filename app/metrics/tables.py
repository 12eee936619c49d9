"""Grouped accuracy, judge-score means and success rates over polars frames.

Every table is long format (one row per group) with the interval method named in a
``ci_method`` column, so the store can feed it a frame straight from DuckDB and a chart can
read it without reshaping.
"""
from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from app.metrics.intervals import t_quantile, two_sided_z
from storage.importers.words import AGENTVISS_TASKS

NCP_FACTORS: tuple[str, ...] = ("goal_order", "goal_size", "false_belief")
# How `judge_means` makes its interval, for the notes under its tables.
JUDGE_MEANS_METHOD = ("95% Student t intervals with the stimulus as the unit: the mean of per-stimulus mean "
                      "scores, t with (stimuli - 1) degrees of freedom; n_units is the number of stimuli, "
                      "n the number of scores")


def wilson_columns(successes: str | pl.Expr, n: str | pl.Expr, level: float, prefix: str = "ci") -> list[pl.Expr]:
    """Polars expressions for the Wilson bounds ``{prefix}_low``/``{prefix}_high`` of successes/n (column names
    or expressions)."""
    z = two_sided_z(level)
    k = pl.col(successes) if isinstance(successes, str) else successes
    total = pl.col(n) if isinstance(n, str) else n
    p = k / total
    denominator = 1.0 + z * z / total
    centre = (p + z * z / (2.0 * total)) / denominator
    half_width = z * (p * (1.0 - p) / total + z * z / (4.0 * total ** 2)).sqrt() / denominator
    return [
        (centre - half_width).clip(0.0, 1.0).alias(f"{prefix}_low"),
        (centre + half_width).clip(0.0, 1.0).alias(f"{prefix}_high"),
    ]


def accuracy_table(
    frame: pl.DataFrame,
    group_by: Sequence[str] = ("model", "modality"),
    correct_col: str = "correct",
    level: float = 0.95,
    count_col: str | None = None,
) -> pl.DataFrame:
    """Binary accuracy per group with a Wilson interval.

    Expects ``frame`` to hold the ``group_by`` columns and a boolean ``correct_col``; rows whose
    correctness is null (unscored) are left out. Returns the group columns plus ``n``,
    ``n_correct``, ``accuracy``, ``ci_low``, ``ci_high``, ``ci_method`` ("wilson"), sorted by group;
    groups with no scored row are left out. With ``count_col`` each row stands for that many answers
    (counts aggregated beforehand, e.g. by the store); the result is the same as for the frame with
    each row repeated that many times.
    """
    keys = list(group_by)
    correct = pl.col(correct_col)
    if count_col is None:
        # Counting non-null values inside the aggregation avoids copying the frame through a filter.
        n, n_correct = correct.count(), correct.cast(pl.Int64).sum()
    else:
        # Same types as the counts of rows, so both forms give identical tables.
        n = pl.when(correct.is_not_null()).then(pl.col(count_col)).otherwise(0).sum().cast(pl.get_index_type())
        n_correct = pl.when(correct).then(pl.col(count_col)).otherwise(0).sum().cast(pl.Int64)
    counted = frame.lazy().group_by(keys).agg(n.alias("n"), n_correct.alias("n_correct")).filter(pl.col("n") > 0)
    return (
        counted.with_columns(
            (pl.col("n_correct") / pl.col("n")).alias("accuracy"), *wilson_columns("n_correct", "n", level)
        )
        .with_columns(pl.lit("wilson").alias("ci_method"))
        .sort(keys)
        .collect()
    )


def mcq_accuracy_by_type(
    frame: pl.DataFrame,
    type_col: str = "question_type",
    group_by: Sequence[str] = ("model",),
    correct_col: str = "correct",
    level: float = 0.95,
) -> pl.DataFrame:
    """Multiple-choice accuracy per group and question type (e.g. EchoMind understanding/reasoning).

    Same columns as :func:`accuracy_table`, grouped by ``group_by`` + ``type_col``.
    """
    return accuracy_table(frame, [*group_by, type_col], correct_col, level)


def judge_means(
    judgments: pl.DataFrame,
    group_by: Sequence[str] = ("model", "criterion"),
    score_col: str = "score",
    level: float = 0.95,
    criteria: Sequence[str] | None = None,
    cluster_col: str = "stimulus_id",
) -> pl.DataFrame:
    """Mean judge score per group with Student's t interval, the stimulus as the unit.

    Expects a judgments frame with the ``group_by`` columns (typically model and criterion, plus
    condition columns such as prompt_setting) and a numeric ``score_col``; null scores are left
    out. ``criteria`` keeps only those criterion values, in that order. Scores of the same
    ``cluster_col`` value (one stimulus scored by several judges, voices or runs) are not independent
    of each other, so each group's mean is the mean of its per-stimulus means and its interval
    mean +- t(level, k - 1) * SD / sqrt(k) over those k per-stimulus means (``ci_method``
    "t_by_stimulus"); a group whose stimuli each have one score gets the same numbers, named "t" (the
    plain t interval over its scores). Without ``cluster_col`` in the frame every score is its own unit.
    Returns the group columns plus ``n`` (scores), ``n_units`` (stimuli, or scores), ``mean``, ``sd``
    (of the units), ``ci_low``, ``ci_high`` (null under two units), ``ci_method``, ``ci_level``.
    """
    keys = list(group_by)
    lazy = judgments.lazy().filter(pl.col(score_col).is_not_null())
    if criteria is not None:
        lazy = lazy.filter(pl.col("criterion").is_in(list(criteria)))
    unit = [cluster_col] if cluster_col in judgments.columns else []
    if not unit:
        lazy = lazy.with_row_index("_unit")
        unit = ["_unit"]
    units = lazy.group_by([*keys, *unit]).agg(pl.col(score_col).cast(pl.Float64).mean().alias("_mean"),
                                               pl.len().alias("_count"))
    table = (
        units.group_by(keys)
        .agg(
            pl.col("_count").sum().cast(pl.Int64).alias("n"),
            pl.len().cast(pl.Int64).alias("n_units"),
            pl.col("_mean").mean().alias("mean"),
            pl.col("_mean").std(ddof=1).alias("sd"),
            (pl.col("_count").max() > 1).alias("_repeated"),
        )
        .collect()
    )
    multipliers = {k: t_quantile(level, k - 1) for k in set(table["n_units"].to_list()) if k >= 2}
    half_width = (pl.col("n_units").replace_strict(multipliers, default=None, return_dtype=pl.Float64)
                  * pl.col("sd") / pl.col("n_units").cast(pl.Float64).sqrt())
    table = table.with_columns(
        pl.when(pl.col("n_units") >= 2).then(pl.col("mean") - half_width).alias("ci_low"),
        pl.when(pl.col("n_units") >= 2).then(pl.col("mean") + half_width).alias("ci_high"),
        pl.when(pl.col("_repeated")).then(pl.lit("t_by_stimulus")).otherwise(pl.lit("t")).alias("ci_method"),
        pl.lit(level).alias("ci_level"),
    ).drop("_repeated")
    if criteria is not None and "criterion" in keys:
        order = pl.col("criterion").replace_strict(list(criteria), list(range(len(criteria))), return_dtype=pl.Int64)
        others = [k for k in keys if k != "criterion"]
        return table.sort([*others, order])
    return table.sort(keys)


def agentviss_task_scores(
    judgments: pl.DataFrame,
    group_by: Sequence[str] = ("model", "vision_mode"),
    score_col: str = "score",
    level: float = 0.95,
) -> pl.DataFrame:
    """AgentViSS judged scores per task (Expr, Char, Int-Reg, Int-Out) and vision mode (VV, DV).

    Expects judgments with ``model``, ``vision_mode``, ``criterion`` (the task name) and
    ``score``. Returns :func:`judge_means` columns with the tasks in benchmark order and the
    criterion column renamed ``task``.
    """
    table = judge_means(judgments, [*group_by, "criterion"], score_col, level, criteria=AGENTVISS_TASKS)
    return table.rename({"criterion": "task"})


def ncp_success(
    frame: pl.DataFrame,
    group_by: Sequence[str] = ("model",),
    factors: Sequence[str] = NCP_FACTORS,
    correct_col: str = "correct",
    level: float = 0.95,
) -> pl.DataFrame:
    """NCP goal success rates per model, split by each factor in turn.

    Expects one row per attempt with ``group_by`` columns, a boolean ``correct_col`` (goal
    reached) and the factor columns: ``goal_order`` (1 or 2), ``goal_size`` (1, 2, 3) and
    ``false_belief`` (bool). Returns long format: group columns, ``factor`` (column name),
    ``level`` (its value as text), then the :func:`accuracy_table` columns (``accuracy`` is the
    success rate).
    """
    parts = []
    for factor in factors:
        table = accuracy_table(frame, [*group_by, factor], correct_col, level)
        parts.append(
            table.with_columns(
                pl.lit(factor).alias("factor"), pl.col(factor).cast(pl.String).alias("level")
            ).drop(factor)
        )
    columns = [*group_by, "factor", "level", "n", "n_correct", "accuracy", "ci_low", "ci_high", "ci_method"]
    return pl.concat([p.select(columns) for p in parts])
