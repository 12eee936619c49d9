"""Slice finder: where do two sets of answers to the same stimuli differ most?

Given a per-stimulus frame with metadata columns and two boolean correctness columns (model A
vs model B, or a model vs the human majority), every slice "column = value" (and, on request,
every pair "c1 = v1 & c2 = v2") gets the accuracy gap A - B with Newcombe's paired interval.
Slices below ``min_size`` stimuli are dropped, and the ranking is by ``evidence``: how far the
interval stays from zero (the lower bound for a positive gap, minus the upper bound for a
negative one). So a 100% gap on four stimuli does not outrank a steady 20% gap on four hundred.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import polars as pl

from app.metrics.intervals import newcombe_paired_bounds
from app.metrics.stimuli import CORRECT_PREFIX, SCORE_PREFIX

_SKIPPED_PREFIXES = (CORRECT_PREFIX, SCORE_PREFIX, "human_")
_OUTPUT_SCHEMA = {
    "slice": pl.String,
    "column_1": pl.String,
    "value_1": pl.String,
    "column_2": pl.String,
    "value_2": pl.String,
    "n": pl.Int64,
    "accuracy_a": pl.Float64,
    "accuracy_b": pl.Float64,
    "gap": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "ci_method": pl.String,
    "evidence": pl.Float64,
}


def slice_columns(frame: pl.DataFrame, max_values: int = 50) -> list[str]:
    """Metadata columns worth slicing on: not ids, correctness or scores, and at most
    ``max_values`` distinct values (free text and ids would make one slice per row)."""
    chosen = []
    for name in frame.columns:
        if name == "stimulus_id" or name.startswith(_SKIPPED_PREFIXES):
            continue
        if isinstance(frame.schema[name], (pl.List, pl.Struct, pl.Array, pl.Object)):
            continue
        if frame[name].n_unique() <= max_values:
            chosen.append(name)
    return chosen


def _counts_by(frame: pl.DataFrame, group: Sequence[str]) -> pl.DataFrame:
    a, b = pl.col("_a"), pl.col("_b")
    return frame.group_by(list(group)).agg(
        pl.len().alias("n"),
        (a & b).sum().alias("both"),
        (a & ~b).sum().alias("only_a"),
        (~a & b).sum().alias("only_b"),
        (~a & ~b).sum().alias("neither"),
    )


def find_slices(
    frame: pl.DataFrame,
    a_col: str,
    b_col: str,
    columns: Sequence[str] | None = None,
    pairs: bool = False,
    min_size: int = 20,
    level: float = 0.95,
    max_values: int = 50,
) -> pl.DataFrame:
    """Rank slices by the accuracy gap between ``a_col`` and ``b_col`` (see the module notes).

    Rows where either correctness is null are left out. ``columns`` defaults to
    :func:`slice_columns`. Missing metadata values form their own slice (value null). Returns
    ``slice`` (a readable label), ``column_1``, ``value_1``, ``column_2``, ``value_2`` (null
    for single-column slices; values as text), ``n``, ``accuracy_a``, ``accuracy_b``, ``gap``,
    ``ci_low``, ``ci_high``, ``ci_method`` ("newcombe_paired"), ``evidence``, best first.
    """
    usable = frame.filter(pl.col(a_col).is_not_null() & pl.col(b_col).is_not_null()).with_columns(
        pl.col(a_col).cast(pl.Boolean).alias("_a"), pl.col(b_col).cast(pl.Boolean).alias("_b")
    )
    names = list(columns) if columns is not None else slice_columns(frame.drop(a_col, b_col), max_values)
    groups: list[tuple[str, ...]] = [(c,) for c in names]
    if pairs:
        groups += list(combinations(names, 2))
    parts = []
    for group in groups:
        counts = _counts_by(usable, group).filter(pl.col("n") >= min_size)
        if counts.is_empty():
            continue
        values = [counts[c].cast(pl.String) for c in group]
        second_column = group[1] if len(group) == 2 else None
        parts.append(
            pl.DataFrame(
                {
                    "column_1": [group[0]] * counts.height,
                    "value_1": values[0],
                    "column_2": pl.Series([second_column] * counts.height, dtype=pl.String),
                    "value_2": values[1] if len(group) == 2 else pl.Series([None] * counts.height, dtype=pl.String),
                    "n": counts["n"].cast(pl.Int64),
                    "both": counts["both"],
                    "only_a": counts["only_a"],
                    "only_b": counts["only_b"],
                    "neither": counts["neither"],
                }
            )
        )
    if not parts:
        return pl.DataFrame(schema=_OUTPUT_SCHEMA)
    table = pl.concat(parts)
    both, only_a, only_b, neither = (table[c].to_numpy().astype(float) for c in ("both", "only_a", "only_b", "neither"))
    low, high = newcombe_paired_bounds(both, only_a, only_b, neither, level)
    n = table["n"].to_numpy().astype(float)
    gap = (only_a - only_b) / n
    label = pl.concat_str(
        [pl.col("column_1"), pl.lit(" = "), pl.col("value_1").fill_null("(missing)")]
    ) + pl.when(pl.col("column_2").is_not_null()).then(
        pl.concat_str([pl.lit(" & "), pl.col("column_2"), pl.lit(" = "), pl.col("value_2").fill_null("(missing)")])
    ).otherwise(pl.lit(""))
    return (
        table.with_columns(
            label.alias("slice"),
            pl.Series("accuracy_a", (both + only_a) / n),
            pl.Series("accuracy_b", (both + only_b) / n),
            pl.Series("gap", gap),
            pl.Series("ci_low", low),
            pl.Series("ci_high", high),
            pl.lit("newcombe_paired").alias("ci_method"),
            pl.Series("evidence", np.where(gap >= 0, low, -high)),
        )
        .sort(["evidence", "n"], descending=[True, True])
        .select(list(_OUTPUT_SCHEMA))
    )
