"""The dashboard of a 100M-prediction release kept as Parquet and attached in place, against the bare group-by.

A release of 100 models' answers to 1M clips (four columns: clip, model, answer, label) is written by DuckDB's own
Parquet writer into a folder of parts in a temporary folder (never kept), attached to a new store as
`thinslice attach` does (`app.attach_service.attach_dataset`), and its dashboard computed as the window computes a
dataset's first dashboard (`app.dashboard.load_frames` then `compute_dashboard`: the answers counted per run and
correctness through the store's predictions view, the statistics from those counts).

- ``dashboard_100m_predictions_s``: that dashboard, median of three, each reading the files again;
- ``dashboard_100m_bare_groupby_s``: the baseline in the same run: DuckDB's own group-by of the same files,
  model by correctness (the answer equal to the label ignoring case), with nothing of the store;
- ``dashboard_100m_predictions_cpu_s`` and ``dashboard_100m_bare_groupby_cpu_s``: the same in processor seconds;
- ``dashboard_100m_vs_bare_ratio`` and ``dashboard_100m_vs_bare_cpu_ratio``: the first over the second, by wall
  time and by processor time (every thread's: on a shared machine waiting for a core inflates wall times unevenly);
- ``attach_100m_s``: the attach itself (every row checked, the stimuli, models and runs written).

`THINSLICE_BENCH_ATTACH_ROWS` sets another size (the figures' names keep "100m"; the size is printed on stderr).
"""
from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
ROWS = int(os.environ.get("THINSLICE_BENCH_ATTACH_ROWS", 100_000_000))
MODELS = 100
RUNS = 3
MAPPING = {"stimulus": "clip", "model": "model", "answer": "answer", "label": "label"}


def _cpu() -> float:
    """Processor seconds of every thread of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_release(folder: Path, rows: int, models: int = MODELS) -> Path:
    """`rows` predictions of `models` models (rows / models clips each) as Parquet parts of about 100 MB."""
    clips = rows // models
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT 'clip-' || (i % {clips}) AS clip, 'model-' || (i // {clips}) AS model,
                    CASE WHEN hash(i) % 3 = 0 THEN 'yes' ELSE 'no' END AS answer,
                    CASE WHEN (i % {clips}) % 2 = 0 THEN 'yes' ELSE 'no' END AS label
                    FROM range({rows}) t(i)) TO '{folder}' (FORMAT parquet, FILE_SIZE_BYTES '100MB')""")
    con.close()
    return folder


def _timed(work) -> tuple[float, float]:
    start, cpu = time.perf_counter(), _cpu()
    work()
    return time.perf_counter() - start, _cpu() - cpu


def run() -> list[tuple[str, float, str]]:
    sys.path.insert(0, str(ROOT))
    from app.attach_service import attach_dataset
    from app.dashboard import compute_dashboard, load_frames
    from storage.store import Store

    with tempfile.TemporaryDirectory(prefix="thinslice-attach-") as tmp:
        folder = write_release(Path(tmp) / "release", ROWS)
        store = Store.open(Path(tmp) / "store.duckdb")
        attach_s, _ = _timed(lambda: attach_dataset(store, folder, "bench", MAPPING))
        dataset_id = int(store.cursor().execute("SELECT id FROM dataset WHERE name = 'bench'").fetchall()[0][0])
        bare_con = duckdb.connect()
        bare_sql = (f"SELECT model, lower(answer) = lower(label) AS correct, count(*)"
                    f" FROM read_parquet('{folder}/*.parquet') GROUP BY ALL")
        shown: list = []
        dashboard, bare = [], []
        for _ in range(RUNS):   # alternately, so that a busy moment of the machine falls on both
            dashboard.append(_timed(lambda: shown.append(compute_dashboard(load_frames(store, dataset_id)))))
            bare.append(_timed(lambda: bare_con.execute(bare_sql).fetchall()))
        counted = sum(int(r["n"]) for r in shown[-1].tables[0].frame.iter_rows(named=True))
        if counted != ROWS:
            raise RuntimeError(f"the dashboard counted {counted} predictions of {ROWS}")
        store.close()
        bare_con.close()
    print(f"# bench_attach: {ROWS} predictions ({MODELS} models), {RUNS} runs each", file=sys.stderr)
    d_s, d_cpu = statistics.median(t for t, _ in dashboard), statistics.median(c for _, c in dashboard)
    b_s, b_cpu = statistics.median(t for t, _ in bare), statistics.median(c for _, c in bare)
    return [("dashboard_100m_predictions_s", d_s, "s"),
            ("dashboard_100m_bare_groupby_s", b_s, "s"),
            ("dashboard_100m_predictions_cpu_s", d_cpu, "s"),
            ("dashboard_100m_bare_groupby_cpu_s", b_cpu, "s"),
            ("dashboard_100m_vs_bare_ratio", d_s / b_s, "x"),
            ("dashboard_100m_vs_bare_cpu_ratio", d_cpu / b_cpu, "x"),
            ("attach_100m_s", attach_s, "s")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
