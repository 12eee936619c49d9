"""How long a 1,000,000-row predictions CSV takes through the generic importer, against a bare load.

The baseline reads the same file with `polars.read_csv` and inserts it into a fresh DuckDB table in the
same run; the ratio is import time over baseline time (median of three each), and its processor-time twin
(every thread's CPU seconds) the same for the work done, steady on a machine others share.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from storage.importers.common import ImportOptions
from storage.importers.generic import GenericImporter
from storage.importers.writer import write_plan
from storage.store import Store

ROWS = 1_000_000
MODELS = 8
MAPPING = {"stimulus": "item_id", "model": "model", "answer": "answer", "label": "gold",
           "latency": "latency_s"}


def write_predictions_csv(path: Path, rows: int = ROWS, seed: int = 7) -> None:
    """A predictions table: `rows // MODELS` items, each answered by every model."""
    rng = np.random.default_rng(seed)
    items = rows // MODELS
    labels = np.array(["familiar", "stranger"])
    frame = pl.DataFrame({
        "item_id": np.tile(np.arange(items), MODELS).astype(str),
        "model": np.repeat([f"model-{m}" for m in range(MODELS)], items),
        "answer": labels[rng.integers(0, 2, rows)],
        "gold": labels[np.tile(rng.integers(0, 2, items), MODELS)],
        "latency_s": rng.uniform(0.2, 3.0, rows).round(3),
    }).with_columns(pl.format("clip-{}", pl.col("item_id")).alias("item_id"))
    frame.write_csv(path)


def _import_once(csv_path: Path, folder: Path) -> tuple[float, float]:
    store = Store.open(folder / "import.duckdb")
    try:
        start, cpu = time.perf_counter(), time.process_time()
        plan = GenericImporter().plan(csv_path, ImportOptions(dataset_name="bench", mapping=dict(MAPPING)))
        write_plan(store, plan)
        return time.perf_counter() - start, time.process_time() - cpu
    finally:
        store.close()


def _baseline_once(csv_path: Path, folder: Path) -> tuple[float, float]:
    con = duckdb.connect(str(folder / "baseline.duckdb"))
    try:
        start, cpu = time.perf_counter(), time.process_time()
        frame = pl.read_csv(csv_path)
        con.register("frame", frame.to_arrow())
        con.execute("CREATE TABLE predictions AS SELECT * FROM frame")
        return time.perf_counter() - start, time.process_time() - cpu
    finally:
        con.close()


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        csv_path = tmp_path / "predictions.csv"
        write_predictions_csv(csv_path)
        imports, baselines = [], []
        for attempt in range(3):
            folder = tmp_path / f"run{attempt}"
            folder.mkdir()
            baselines.append(_baseline_once(csv_path, folder))
            imports.append(_import_once(csv_path, folder))
        median_import, median_baseline = (statistics.median(t for t, _ in runs) for runs in (imports, baselines))
        cpu_import, cpu_baseline = (statistics.median(c for _, c in runs) for runs in (imports, baselines))
    return [("import_1m_predictions_s", median_import, "s"),
            ("import_1m_vs_baseline_ratio", median_import / median_baseline, "x"),
            ("import_1m_cpu_vs_baseline_ratio", cpu_import / cpu_baseline, "x")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.3f} {unit}")
