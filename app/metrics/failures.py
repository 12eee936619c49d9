"""Failure filters: composable predicates over the per-stimulus frame.

A filter knows how to build a polars expression for a given frame (so "all models" means the
runs present in that frame). Combine filters with ``&`` (AND), ``|`` (OR) and ``~`` (NOT);
``apply`` returns the matching stimulus ids and their count. Each basic predicate is definite:
a missing value (no prediction, no ratings, no score) never matches.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from app.metrics.stimuli import correct_column, run_keys, score_column, score_columns


@dataclass(frozen=True)
class FilterResult:
    """The stimuli a filter selected."""

    label: str
    stimulus_ids: tuple
    count: int


@dataclass(frozen=True)
class StimulusPredicate:
    """A named predicate over the per-stimulus frame."""

    label: str
    build: Callable[[pl.DataFrame], pl.Expr]

    def __and__(self, other: StimulusPredicate) -> StimulusPredicate:
        return StimulusPredicate(f"({self.label}) AND ({other.label})", lambda f: self.build(f) & other.build(f))

    def __or__(self, other: StimulusPredicate) -> StimulusPredicate:
        return StimulusPredicate(f"({self.label}) OR ({other.label})", lambda f: self.build(f) | other.build(f))

    def __invert__(self) -> StimulusPredicate:
        return StimulusPredicate(f"NOT ({self.label})", lambda f: ~self.build(f))

    def apply(self, frame: pl.DataFrame) -> FilterResult:
        """The stimulus ids (in frame order) for which the predicate holds."""
        ids = frame.filter(self.build(frame))["stimulus_id"].to_list()
        return FilterResult(self.label, tuple(ids), len(ids))


def _definite(expr: pl.Expr) -> pl.Expr:
    return expr.fill_null(False)


def _keys(frame: pl.DataFrame, keys: Sequence[str] | None) -> list[str]:
    chosen = list(keys) if keys is not None else run_keys(frame)
    missing = [k for k in chosen if correct_column(k) not in frame.columns]
    if missing:
        raise KeyError(f"no predictions for: {', '.join(missing)}")
    return chosen


def _counts(frame: pl.DataFrame, keys: Sequence[str] | None) -> tuple[pl.Expr, pl.Expr]:
    columns = [pl.col(correct_column(k)) for k in _keys(frame, keys)]
    if not columns:
        return pl.lit(0), pl.lit(0)
    right = pl.sum_horizontal([c.cast(pl.Int64) for c in columns])
    wrong = pl.sum_horizontal([(~c).cast(pl.Int64) for c in columns])
    return right, wrong


def model_wrong(run_key: str) -> StimulusPredicate:
    """The run answered and was wrong."""

    def build(frame: pl.DataFrame) -> pl.Expr:
        return _definite(~pl.col(correct_column(_keys(frame, [run_key])[0])))

    return StimulusPredicate(f"{run_key} wrong", build)


def model_right(run_key: str) -> StimulusPredicate:
    """The run answered and was right."""
    return StimulusPredicate(f"{run_key} right", lambda f: _definite(pl.col(correct_column(_keys(f, [run_key])[0]))))


def humans_right() -> StimulusPredicate:
    """Most human raters were right."""
    return StimulusPredicate("humans right", lambda f: _definite(pl.col("human_majority_correct")))


def model_wrong_humans_right(run_key: str) -> StimulusPredicate:
    """The run was wrong where most human raters were right."""
    both = model_wrong(run_key) & humans_right()
    return StimulusPredicate(f"{run_key} wrong, humans right", both.build)


def models_disagree(keys: Sequence[str] | None = None) -> StimulusPredicate:
    """At least one of the runs (all runs when None) was right and at least one was wrong."""

    def build(frame: pl.DataFrame) -> pl.Expr:
        right, wrong = _counts(frame, keys)
        return (right > 0) & (wrong > 0)

    return StimulusPredicate("models disagree" if keys is None else f"disagree: {', '.join(keys)}", build)


def all_models_wrong(keys: Sequence[str] | None = None) -> StimulusPredicate:
    """Every run that answered was wrong (at least one answered)."""

    def build(frame: pl.DataFrame) -> pl.Expr:
        right, wrong = _counts(frame, keys)
        return (right == 0) & (wrong > 0)

    return StimulusPredicate("all models wrong" if keys is None else f"all wrong: {', '.join(keys)}", build)


def judge_at_or_below(criterion: str, k: float, run_key: str | None = None) -> StimulusPredicate:
    """The judge scored ``criterion`` at or below ``k`` (for ``run_key``, or for any run)."""

    def build(frame: pl.DataFrame) -> pl.Expr:
        columns = [score_column(run_key, criterion)] if run_key else score_columns(frame, criterion)
        columns = [c for c in columns if c in frame.columns]
        if not columns:
            return pl.lit(False)
        return pl.any_horizontal([_definite(pl.col(c) <= k) for c in columns])

    who = run_key or "any model"
    return StimulusPredicate(f"{criterion} <= {k:g} ({who})", build)


def false_belief_failed(run_key: str | None = None, false_belief_col: str = "false_belief") -> StimulusPredicate:
    """A false-belief goal that ``run_key`` (or any run, when None) failed."""

    def build(frame: pl.DataFrame) -> pl.Expr:
        is_false_belief = _definite(pl.col(false_belief_col).cast(pl.Boolean))
        if run_key is not None:
            return is_false_belief & model_wrong(run_key).build(frame)
        _, wrong = _counts(frame, None)
        return is_false_belief & (wrong > 0)

    return StimulusPredicate(f"false-belief goal failed ({run_key or 'any model'})", build)
