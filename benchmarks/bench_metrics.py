"""Dashboard recompute on one million FriendBench-like predictions.

``dashboard_recompute_1m_ms`` is what the metrics view recomputes when a filter changes:
accuracy with Wilson intervals per model x modality plus d'/c per model x modality. The baseline
is a bare polars ``group_by(model, modality).agg(correct.mean())`` over the same frame, timed in
the same run; the ratio says how much the extra statistics cost.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
import polars as pl

from app.metrics import accuracy_table, signal_detection_table

ROWS = 1_000_000
REPEATS = 7


def predictions_frame(rows: int = ROWS, seed: int = 0) -> pl.DataFrame:
    """26 models x 3 modalities over generated dyads, with familiar/stranger answers."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(["familiar", "stranger"], rows)
    says_truth = rng.random(rows) < 0.65
    answer = np.where(says_truth, truth, np.where(truth == "familiar", "stranger", "familiar"))
    return pl.DataFrame(
        {
            "stimulus_id": rng.integers(0, 12_820, rows),
            "model": pl.Series(rng.integers(0, 26, rows)).cast(pl.String).str.zfill(2),
            "modality": rng.choice(["text", "audio", "video"], rows),
            "answer": answer,
            "correct": says_truth,
            "ground_truth": truth,
        }
    )


def dashboard_recompute(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The figures the metrics view shows for FriendBench."""
    return accuracy_table(frame, ("model", "modality")), signal_detection_table(frame, ("model", "modality"))


def _median_ms(work: Callable[[], object]) -> float:
    work()  # warm-up
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def run() -> list[tuple[str, float, str]]:
    frame = predictions_frame()
    recompute_ms = _median_ms(lambda: dashboard_recompute(frame))
    baseline_ms = _median_ms(lambda: frame.group_by("model", "modality").agg(pl.col("correct").mean()))
    return [
        ("dashboard_recompute_1m_ms", recompute_ms, "ms"),
        ("dashboard_groupby_mean_baseline_1m_ms", baseline_ms, "ms"),
        ("dashboard_recompute_vs_groupby_mean_ratio", recompute_ms / baseline_ms, "x"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.2f} {unit}")
