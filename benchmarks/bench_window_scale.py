"""The window over a large results table: ten models' answers on a million clips (10,000,000 predictions)
against the same window over a thousand clips (10,000 predictions), both built in the same run.

Each store is made once per run, from a generated Parquet file imported with `thinslice import generic` as a
lab would. Each window opens in a fresh interpreter under the offscreen platform, at 1366x768:

- first paint: from starting the interpreter to the table's first rows painted (what a person sees as open);
- resident memory: the window process's peak (VmHWM) once everything the window starts at open is done;
- sort, filter and scroll: from the click (a header sort, a filter bar change, a jump of the scroll bar)
  to the rows it brings painted, each the median of several in each window; the filter on a model's
  wrong answers (which reads that model's outcomes, `storage/outcomes.py`: its one run's answers) is reported
  apart from the filters on the stimuli.

Every figure is the median of five windows; `THINSLICE_BENCH_WINDOW_CLIPS` sets the large store's clips (a
quicker run). Processor time sits beside the times (the window process's own CPU seconds, every thread's, to
first paint and for each answer): on a machine others share, waiting for a core inflates times unevenly.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = 10
RUNS = 5
# THINSLICE_BENCH_10M=0 (as for the import figures) opens a tenth of the large store
LARGE_CLIPS = int(os.environ.get("THINSLICE_BENCH_WINDOW_CLIPS",
                                 "100000" if os.environ.get("THINSLICE_BENCH_10M") == "0" else "1000000"))
SMALL_CLIPS = 1000
MAPPING = {"stimulus": "item_id", "model": "model", "answer": "answer", "label": "gold", "latency": "latency_s"}

_WINDOW = r"""
import json, os, random, resource, statistics, sys, time
t0 = float(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.session import Session
from storage.records import StimulusFilter
from storage.store import Store
from widgets.main_window import MainWindow, wait_until_idle
from widgets.stimulus_table import LOADING

store = Store.open(sys.argv[1])
win = MainWindow(store, Session(), QSettings(sys.argv[4], QSettings.Format.IniFormat))
win.resize(1366, 768)
win.show()
model, table = win.table_model, win.table
loads = []
model.idsLoaded.connect(loads.append)

def visible_rows():
    top = max(0, table.rowAt(0))
    bottom = table.rowAt(table.viewport().height() - 1)
    return range(top, (model.rowCount() - 1 if bottom < 0 else bottom) + 1)

def shown():
    return all(model.data(model.index(row, 0)) != LOADING for row in visible_rows())

cpu_ms = {}

def answer(action, kind, wait_for_load=True):
    # the time from the action to its rows painted, in milliseconds (and the process's CPU time for it)
    before = len(loads)
    start, cpu = time.perf_counter(), time.process_time()
    action()
    while (wait_for_load and len(loads) == before) or not shown():
        QCoreApplication.processEvents()
        time.sleep(0.0005)
    table.viewport().repaint()
    cpu_ms.setdefault(kind, []).append((time.process_time() - cpu) * 1000)
    return (time.perf_counter() - start) * 1000

while not loads or not shown():
    QCoreApplication.processEvents()
    time.sleep(0.0005)
table.viewport().repaint()
first_paint = time.time() - t0
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime
wait_until_idle(win, 120)
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))

rounds = 3
sorts = [answer(lambda order=order: table.sortByColumn(0, order), "sort")
         for _ in range(rounds) for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder)]
base = win.session.filter
stimulus_filters = [StimulusFilter(ground_truth="familiar"), StimulusFilter(text="4242")]
filters = [answer(lambda f=f: win.session.set_filter(f), "filter") for _ in range(rounds)
           for f in stimulus_filters + [base]]
wrong = StimulusFilter(model_outcomes=(("model-3", "incorrect"),))
outcome = [answer(lambda f=f: win.session.set_filter(f), "outcome" if f is wrong else "filter")
           for _ in range(rounds) for f in (wrong, base)][::2]
bar = table.verticalScrollBar()
rng = random.Random(7)
scrolls = [answer(lambda v=rng.randint(0, bar.maximum()): bar.setValue(v), "scroll", wait_for_load=False)
           for _ in range(4 * rounds)]
print(json.dumps({"first_paint_s": first_paint, "cpu_s": cpu, "rss_mb": peak_kb / 1024,
                  "rows": model.rowCount(), "held_rows": model.cached_rows(),
                  "sort_ms": statistics.median(sorts), "filter_ms": statistics.median(filters),
                  "filter_outcome_ms": statistics.median(outcome), "scroll_ms": statistics.median(scrolls),
                  **{f"{kind}_cpu_ms": statistics.median(times) for kind, times in cpu_ms.items()}}))
sys.stdout.flush()
os._exit(0)
"""


def write_predictions(path: Path, clips: int, seed: int = 7) -> None:
    """A results table as a benchmark release ships it: every model's answer on every clip (ids 0..clips-1)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    labels = np.array(["familiar", "stranger"])
    rows = clips * MODELS
    pl.DataFrame({
        "item_id": np.tile(np.arange(clips), MODELS).astype(str),
        "model": np.repeat([f"model-{m}" for m in range(MODELS)], clips),
        "answer": labels[rng.integers(0, 2, rows)],
        "gold": labels[np.tile(rng.integers(0, 2, clips), MODELS)],
        "latency_s": rng.uniform(0.2, 3.0, rows).round(3),
    }).write_parquet(path)


def build_store(folder: Path, clips: int) -> Path:
    """A store holding the generated table, imported by `thinslice import generic`."""
    table, db = folder / f"predictions_{clips}.parquet", folder / f"window_{clips}.duckdb"
    write_predictions(table, clips)
    maps = [arg for field, column in MAPPING.items() for arg in ("--map", f"{field}={column}")]
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), "import", "generic", str(table), "--db", str(db),
                           "--create", "--dataset", "release", *maps], capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise RuntimeError("the import failed:\n" + "\n".join(done.stderr.strip().splitlines()[-5:]))
    table.unlink()
    return db


def open_window(db: Path, folder: Path) -> dict[str, float]:
    """One window over the store in a fresh interpreter: its figures (see the module's note)."""
    settings = folder / "settings.ini"
    settings.unlink(missing_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _WINDOW, str(db), repr(time.time()), str(ROOT), str(settings)],
                          capture_output=True, text=True, env=env, timeout=600)
    if done.returncode:
        raise RuntimeError("the window failed:\n" + "\n".join(done.stderr.strip().splitlines()[-8:]))
    return json.loads(done.stdout.strip().splitlines()[-1])


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        large, small = build_store(folder, LARGE_CLIPS), build_store(folder, SMALL_CLIPS)
        runs: dict[str, list[dict[str, float]]] = {"large": [], "small": []}
        for _ in range(RUNS):   # alternately, so that a busy spell of the machine falls on both
            runs["large"].append(open_window(large, folder))
            runs["small"].append(open_window(small, folder))
    med = {(size, key): statistics.median(r[key] for r in results) for size, results in runs.items()
           for key in runs["large"][0]}
    label = f"{LARGE_CLIPS * MODELS // 1_000_000}m" if LARGE_CLIPS * MODELS >= 1_000_000 else str(LARGE_CLIPS * MODELS)
    figures = [(f"window_open_{label}_predictions_first_paint_s", med["large", "first_paint_s"], "s"),
               (f"window_open_{label}_predictions_rss_mb", med["large", "rss_mb"], "MB"),
               ("window_open_10k_predictions_first_paint_s", med["small", "first_paint_s"], "s"),
               ("window_open_10k_predictions_rss_mb", med["small", "rss_mb"], "MB"),
               (f"window_open_{label}_vs_10k_ratio", med["large", "first_paint_s"] / med["small", "first_paint_s"], "x"),
               (f"window_open_{label}_vs_10k_cpu_ratio", med["large", "cpu_s"] / med["small", "cpu_s"], "x"),
               (f"window_open_{label}_table_rows_held", med["large", "held_rows"], "rows")]
    for key, name in (("sort", "sort"), ("filter", "filter"), ("filter_outcome", "filter_model_wrong"),
                      ("scroll", "scroll")):
        cpu = "outcome" if key == "filter_outcome" else key
        figures += [(f"window_{label}_table_{name}_ms", med["large", f"{key}_ms"], "ms"),
                    (f"window_{label}_table_{name}_cpu_ms", med["large", f"{cpu}_cpu_ms"], "ms"),
                    (f"window_10k_table_{name}_ms", med["small", f"{key}_ms"], "ms")]
    return figures


if __name__ == "__main__":
    for figure, value, unit in run():
        print(f"{figure} {value:.4g} {unit}")
