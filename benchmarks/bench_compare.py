"""Switching the compared stimulus (the dashboard over a million stored answers is timed, as the window computes
it, by `bench_metrics`).

- ``compare_switch_repaint_ms``: `CompareView.set_detail` for another stimulus (4 models, 3 conditions,
  judge bars, word diffs) until the view has repainted, median.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SWITCHES = 15


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
        return switch_figure(folder)


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
