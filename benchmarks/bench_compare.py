"""Dashboard recompute from the store over a million predictions, and switching the compared stimulus.

- ``dashboard_recompute_1m_predictions_ms``: SQL -> frames -> FriendBench tables (accuracy with Wilson
  intervals, d' and c per model x modality) for 1,000,000 stored predictions (40,000 dyads x 25 models),
  median of several runs. Its baseline, timed in the same run, is a bare
  ``SELECT model, avg(correct) ... GROUP BY model`` in DuckDB; the ratio says what the frames and the
  statistics cost on top.
- ``compare_switch_repaint_ms``: `CompareView.set_detail` for another stimulus (4 models, 3 conditions,
  judge bars, word diffs) until the view has repainted, median.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

N_STIMULI = 40_000
N_MODELS = 25
REPEATS = 5
SWITCHES = 15


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times)


def dashboard_figures(folder: Path) -> list[tuple[str, float, str]]:
    from app.benchmarks.friendbench import dashboard_tables as friendbench_tables
    from app.dashboard import load_frames
    from storage.analysis import bare_accuracy
    from fixtures_store import big_predictions_plan, make_store

    store = make_store(folder / "big.duckdb", big_predictions_plan(folder, N_STIMULI, N_MODELS))
    try:
        dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
        count = store.cursor().execute("SELECT count(*) FROM prediction").fetchall()[0][0]
        assert count == N_STIMULI * N_MODELS

        def recompute() -> None:
            tables = friendbench_tables(load_frames(store, dataset_id), "loglinear", [])
            assert tables and tables[0].frame.height == N_MODELS

        recompute()  # warm the file cache and polars
        full = _median_ms(recompute, REPEATS)
        bare = _median_ms(lambda: bare_accuracy(store.cursor(), dataset_id), REPEATS)
    finally:
        store.close()
    return [("dashboard_recompute_1m_predictions_ms", full, "ms"),
            ("dashboard_recompute_1m_vs_bare_groupby_ratio", full / bare, "x")]


def switch_figure(folder: Path) -> list[tuple[str, float, str]]:
    from PySide6.QtWidgets import QApplication

    from fixtures_store import friendbench_like_plan, make_store
    from storage import queries
    from widgets.compare_view import CompareView

    app = QApplication.instance() or QApplication([])
    models = ("alpha", "beta", "gamma", "delta")
    store = make_store(folder / "fb.duckdb", friendbench_like_plan(folder, n_stimuli=SWITCHES + 1, models=models))
    try:
        cur = store.cursor()
        details = [queries.stimulus_detail(cur, sid) for (sid,) in
                   cur.execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    finally:
        store.close()
    view = CompareView()
    view.resize(1400, 900)
    view.set_compared_models(models)
    view.show()
    view.set_detail(details[0])
    app.processEvents()
    times = []
    for detail in details[1:]:
        start = time.perf_counter()
        view.set_detail(detail)
        view.repaint()
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000.0)
    view.close()
    return [("compare_switch_repaint_ms", statistics.median(times), "ms")]


def run() -> list[tuple[str, float, str]]:
    import sys

    root = Path(__file__).resolve().parents[1]
    for folder in (str(root), str(root / "tests")):   # the app, and the test store builders
        if folder not in sys.path:
            sys.path.insert(0, folder)
    with tempfile.TemporaryDirectory(prefix="bench_compare_") as tmp:
        folder = Path(tmp)
        return dashboard_figures(folder) + switch_figure(folder)


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
