"""Signal detection for FriendBench: sensitivity d' and criterion c.

Convention (FORMATS.md): signal = familiar, "yes" = judged familiar. H = hits / N_familiar,
F = false alarms / N_stranger, d' = z(H) - z(F), c = -(z(H) + z(F)) / 2, so c > 0 means a
lean towards answering "stranger". Rates of 0 or 1 make z infinite; the correction is a named
choice carried in every result:

- ``loglinear`` (Hautus 1995): every rate becomes (k + 0.5) / (n + 1), whether extreme or not.
- ``half_over_n`` (Macmillan & Kaplan 1985): only a rate of 0 becomes 1 / (2N) and a rate of
  1 becomes 1 - 1 / (2N); other rates are left as they are.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from app.metrics.intervals import z_quantile
from app.metrics.tables import wilson_columns

Correction = Literal["loglinear", "half_over_n"]
CORRECTIONS: tuple[str, ...] = ("loglinear", "half_over_n")


@dataclass(frozen=True)
class SignalDetection:
    """d' and c from one set of counts, with the raw and corrected rates and the correction's name."""

    d_prime: float
    criterion: float
    hit_rate: float
    false_alarm_rate: float
    corrected_hit_rate: float
    corrected_false_alarm_rate: float
    n_signal: int
    n_noise: int
    correction: str


def corrected_rate(k: int, n: int, correction: Correction) -> float:
    """The rate k/n after ``correction``; NaN when ``n`` is 0."""
    if n <= 0:
        return math.nan
    if correction == "loglinear":
        return (k + 0.5) / (n + 1.0)
    if correction == "half_over_n":
        if k <= 0:
            return 1.0 / (2.0 * n)
        if k >= n:
            return 1.0 - 1.0 / (2.0 * n)
        return k / n
    raise ValueError(f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}")


def signal_detection(
    hits: int, n_signal: int, false_alarms: int, n_noise: int, correction: Correction = "loglinear"
) -> SignalDetection:
    """d' and c from hits among ``n_signal`` signal trials and false alarms among ``n_noise``.

    With no signal or no noise trials d' and c are NaN.
    """
    h = corrected_rate(hits, n_signal, correction)
    f = corrected_rate(false_alarms, n_noise, correction)
    if math.isnan(h) or math.isnan(f):
        d_prime = criterion = math.nan
    else:
        z_h, z_f = z_quantile(h), z_quantile(f)
        d_prime = z_h - z_f
        criterion = -(z_h + z_f) / 2.0
    return SignalDetection(
        d_prime=d_prime,
        criterion=criterion,
        hit_rate=hits / n_signal if n_signal else math.nan,
        false_alarm_rate=false_alarms / n_noise if n_noise else math.nan,
        corrected_hit_rate=h,
        corrected_false_alarm_rate=f,
        n_signal=n_signal,
        n_noise=n_noise,
        correction=correction,
    )


def _label_matchers(frame: pl.DataFrame, column: str, signal: str, noise: str) -> tuple[pl.Expr, pl.Expr]:
    """Expressions telling whether ``column`` holds the signal or the noise label.

    Labels are matched case-insensitively after trimming. When every value is already exactly
    one of the two labels (what the store hands over) the plain comparison is used, which is
    much cheaper on a million rows than normalising each string.
    """
    raw = pl.col(column)
    if frame.schema[column] not in (pl.String, pl.Categorical):
        raw = raw.cast(pl.String)
    other = frame.select(((raw != signal) & (raw != noise)).sum()).item()
    if other:
        raw = raw.cast(pl.String).str.strip_chars().str.to_lowercase()
    return raw == signal, raw == noise


def signal_detection_table(
    frame: pl.DataFrame,
    group_by: Sequence[str] = ("model", "modality"),
    answer_col: str = "answer",
    truth_col: str = "ground_truth",
    signal: str = "familiar",
    noise: str = "stranger",
    correction: Correction = "loglinear",
    level: float = 0.95,
    count_col: str | None = None,
) -> pl.DataFrame:
    """Accuracy (Wilson interval), d' and c per group.

    Expects ``frame`` with the ``group_by`` columns, ``answer_col`` (the parsed answer; null
    when unparseable) and ``truth_col`` (the true label), both holding the ``signal`` and
    ``noise`` labels (matched case-insensitively). Rows whose truth is neither label are left
    out. An answer that is neither label counts as wrong for accuracy and is left out of d'/c
    (shown in ``n_unanswered``). Returns the group columns plus ``n``, ``n_unanswered``,
    ``n_signal``, ``n_noise``, ``hits``, ``false_alarms``, ``accuracy``, ``ci_low``, ``ci_high``,
    ``ci_method``, ``hit_rate``, ``false_alarm_rate``, ``d_prime``, ``criterion``, ``correction``.
    With ``count_col`` each row stands for that many answers (counts aggregated beforehand, e.g. by
    the store); the result is the same as for the frame with each row repeated that many times.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}")
    keys = list(group_by)
    signal, noise = signal.strip().lower(), noise.strip().lower()
    says_signal, says_noise = _label_matchers(frame, answer_col, signal, noise)
    is_signal, is_noise = _label_matchers(frame, truth_col, signal, noise)

    def tally(matches: pl.Expr) -> pl.Expr:
        if count_col is None:
            return matches.sum()
        # Same type as a count of matching rows, so both forms give identical tables.
        return pl.when(matches).then(pl.col(count_col)).otherwise(0).sum().cast(pl.get_index_type())

    hits, misses = tally(says_signal & is_signal), tally(says_noise & is_signal)
    false_alarms, correct_rejections = tally(says_signal & is_noise), tally(says_noise & is_noise)
    # Eager, each step one pass: the frames are a few hundred counts or a few thousand ratings, where a lazy
    # plan's optimisation costs more than it saves.
    counts = (
        frame.group_by(keys)
        .agg(tally(is_signal | is_noise).alias("n"), hits.alias("hits"), misses.alias("misses"),
             false_alarms.alias("false_alarms"), correct_rejections.alias("correct_rejections"))
        .filter(pl.col("n") > 0)
        .sort(keys)
    )
    measures = [
        signal_detection(h, m + h, fa, fa + cr, correction)
        for h, m, fa, cr in zip(counts["hits"], counts["misses"], counts["false_alarms"], counts["correct_rejections"])
    ]
    n_signal, n_noise = pl.col("hits") + pl.col("misses"), pl.col("false_alarms") + pl.col("correct_rejections")
    n_correct = pl.col("hits") + pl.col("correct_rejections")
    return counts.select(
        *keys, "n", (pl.col("n") - n_signal - n_noise).alias("n_unanswered"), n_signal.alias("n_signal"),
        n_noise.alias("n_noise"), "hits", "false_alarms", (n_correct / pl.col("n")).alias("accuracy"),
        *wilson_columns(n_correct, pl.col("n"), level), pl.lit("wilson").alias("ci_method"),
        pl.Series("hit_rate", [m.hit_rate for m in measures], dtype=pl.Float64),
        pl.Series("false_alarm_rate", [m.false_alarm_rate for m in measures], dtype=pl.Float64),
        pl.Series("d_prime", [m.d_prime for m in measures], dtype=pl.Float64),
        pl.Series("criterion", [m.criterion for m in measures], dtype=pl.Float64),
        pl.lit(correction).alias("correction"),
    )


def human_signal_detection(
    ratings: pl.DataFrame,
    truth: pl.DataFrame | None = None,
    per_rater: bool = False,
    signal: str = "familiar",
    noise: str = "stranger",
    correction: Correction = "loglinear",
    level: float = 0.95,
) -> pl.DataFrame:
    """Accuracy, d' and c for the human crowd per condition (text, audio, video).

    Expects a ratings frame with ``stimulus_id``, ``rater``, ``condition``, ``answer`` and
    ``correct``. The true label comes from ``truth`` (``stimulus_id``, ``ground_truth``) when
    given, else from the ratings' own ``ground_truth`` column when they have one (the store's
    ratings frame does); otherwise it is derived from each rating (a correct answer is the truth,
    a wrong binary answer means the other label). Pooled over all ratings of a condition by default;
    with ``per_rater`` one row per condition and rater (average those rows' ``d_prime`` for the
    usual mean-of-participants figure). Columns as :func:`signal_detection_table`.
    """
    if truth is not None:
        labelled = ratings.drop("ground_truth", strict=False).join(truth.select("stimulus_id", "ground_truth"),
                                                                   on="stimulus_id", how="left")
    elif "ground_truth" in ratings.columns:
        labelled = ratings
    else:
        answer = pl.col("answer").cast(pl.String).str.strip_chars().str.to_lowercase()
        other = pl.when(answer == signal).then(pl.lit(noise)).when(answer == noise).then(pl.lit(signal))
        labelled = ratings.with_columns(
            pl.when(pl.col("correct").is_null())
            .then(None)
            .when(pl.col("correct"))
            .then(answer)
            .otherwise(other)
            .alias("ground_truth")
        )
    keys = ["condition", "rater"] if per_rater else ["condition"]
    return signal_detection_table(labelled, keys, "answer", "ground_truth", signal, noise, correction, level)

