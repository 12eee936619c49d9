"""Time and peak memory of a results import against a bare load of the same file, at 1M and 10M rows.

Each figure runs in a fresh interpreter (so that its peak resident memory is its own): the import is
`app.import_service.run_import` of a generated predictions CSV into a new store, as `thinslice import generic`
runs it (its modules loaded before the clock starts, as the baseline's polars and DuckDB are); the baseline
reads the same file with `polars.read_csv` and inserts it into a new DuckDB table. Both are measured
alternately in the same run, and each ratio is of medians (three runs each at 1M, two at 10M;
`THINSLICE_BENCH_10M=0` leaves the 10M figures out). Peak memory is each process's own high-water mark
(VmHWM). The processor-time ratio (every thread's CPU seconds) says the same as the time ratio on an idle
machine and stays steady on a shared one, where waiting for a core inflates both runs' times unevenly.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_import import MAPPING, write_predictions_csv

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"1m": (1_000_000, 3), "10m": (10_000_000, 2)}

_CHILD = r"""
import json, sys, time
from pathlib import Path
mode, csv_path, folder, mapping = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
if mode == "bare":
    import duckdb, polars as pl
    start, cpu = time.perf_counter(), time.process_time()
    con = duckdb.connect(str(folder / "bare.duckdb"))
    frame = pl.read_csv(csv_path)
    con.register("frame", frame.to_arrow())
    con.execute("CREATE TABLE predictions AS SELECT * FROM frame")
    con.close()
else:
    from app.import_service import run_import
    from storage.importers.common import ImportOptions
    from storage.importers.registry import importers
    from storage.store import Store
    importers()   # the importers' modules are loaded before the clock starts, as the bare load's libraries are
    start, cpu = time.perf_counter(), time.process_time()
    store = Store.open(folder / "import.duckdb")
    run_import(store, "generic", csv_path, ImportOptions(dataset_name="bench", mapping=mapping))
    store.close()
seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
# this process's own peak: getrusage's maximum outlives exec, so it would report the parent's size
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"s": seconds, "cpu_s": cpu_seconds, "rss_mb": peak_kb / 1024}))
"""


def measure(mode: str, csv_path: Path, folder: Path) -> dict[str, float]:
    """One run of `mode` ("bare" or "import") in a fresh interpreter: seconds and peak resident MB."""
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, str(csv_path), str(folder), json.dumps(MAPPING)],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the {mode} run failed:\n" + "\n".join(done.stderr.strip().splitlines()[-5:]))
    return json.loads(done.stdout.strip().splitlines()[-1])


def _figures(label: str, rows: int, runs: int, tmp: Path) -> list[tuple[str, float, str]]:
    csv_path = tmp / f"predictions_{label}.csv"
    write_predictions_csv(csv_path, rows)
    bare, imports = [], []
    try:
        for attempt in range(runs):
            bare.append(measure("bare", csv_path, tmp / f"{label}_bare{attempt}"))
            imports.append(measure("import", csv_path, tmp / f"{label}_import{attempt}"))
    finally:
        csv_path.unlink(missing_ok=True)
    med = {(kind, key): statistics.median(r[key] for r in runs_)
           for kind, runs_ in (("bare", bare), ("import", imports)) for key in ("s", "cpu_s", "rss_mb")}
    return [(f"import_{label}_s", med["import", "s"], "s"),
            (f"import_{label}_bare_load_s", med["bare", "s"], "s"),
            (f"import_{label}_vs_bare_ratio", med["import", "s"] / med["bare", "s"], "x"),
            (f"import_{label}_cpu_vs_bare_ratio", med["import", "cpu_s"] / med["bare", "cpu_s"], "x"),
            (f"import_{label}_peak_rss_mb", med["import", "rss_mb"], "MB"),
            (f"import_{label}_bare_load_peak_rss_mb", med["bare", "rss_mb"], "MB"),
            (f"import_{label}_peak_rss_vs_bare_ratio", med["import", "rss_mb"] / med["bare", "rss_mb"], "x")]


def run() -> list[tuple[str, float, str]]:
    wanted = [k for k in SIZES if k != "10m" or os.environ.get("THINSLICE_BENCH_10M", "1") != "0"]
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        for label in wanted:
            rows, runs = SIZES[label]
            figures += _figures(label, rows, runs, Path(tmp))
    return figures


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.3f} {unit}")
