"""Annotation files in and out at corpus size: 100,000 labels on 100 stimuli, every format.

Figures, each the median of several runs: `annotation_file_export_100k_<format>_s` (store to files) and
`annotation_file_import_100k_<format>_s` (files to a fresh store, reading, placing, checking and writing
with history), beside `annotation_bulk_insert_100k_baseline_s`, one plain INSERT of the same 100,000 rows
into the same DuckDB table, `annotation_import_100k_<format>_vs_bulk_insert_ratio`, each format's import over
that baseline, and `annotation_import_100k_worst_vs_bulk_insert_ratio`, the slowest format's (`..._cpu_...`: the
same in processor seconds). Each round times the baseline and
then every format's import, so that a machine busier in one stretch of the run than in another weighs on both
sides of the ratio alike;
`annotation_import_100k_worst_cpu_vs_bulk_insert_ratio` is the same ratio of processor time (every thread's
CPU seconds), steady where others share the machine and waiting for a core inflates times unevenly. Targets:
import under 3 s, export under 2 s, and every format's import at most 5 times the bulk insert.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

LABELS = 100_000
STIMULI = 100
RUNS = 5


def _store(path: Path, with_labels: bool):
    from storage.store import Store
    store = Store.open(path)
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('bench', 'generic', ?) RETURNING id",
                          [str(path.parent)]).fetchone()[0]
    ids = []
    for number in range(STIMULI):
        sid = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, ?, 'generic') RETURNING id",
                          [dataset, f"clip/{number:03d}"]).fetchone()[0]
        cur.execute("INSERT INTO media (stimulus_id, role, path, duration_s) VALUES (?, 'audio', ?, 600.0)",
                    [sid, f"audio/{number}.wav"])
        ids.append(sid)
    if with_labels:
        from storage.annotations import AnnotationStore
        AnnotationStore(store).create_many(None, "", _rows(ids))
    return store


def _rows(ids: list[int]) -> list[dict]:
    per = LABELS // len(ids)
    return [{"stimulus_id": sid, "annotator": ("ana", "bo")[i % 2], "label_set": "cues",
             "label": f"label {i % 17}", "start_s": i * 0.5, "end_s": i * 0.5 + (0.0 if i % 10 == 0 else 0.4)}
            for sid in ids for i in range(per)]


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


def _bulk_insert(path: Path) -> tuple[float, float]:
    """One INSERT of the same rows (and no history, checks or dedupe) into the annotation table of a new store:
    its seconds and processor seconds."""
    store = _store(path, False)
    try:
        ids = [r[0] for r in store.cursor().execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
        frame = pl.DataFrame(_rows(ids))
        cur = store.cursor()
        start, cpu = time.perf_counter(), time.process_time()
        cur.register("bench_rows", frame.to_arrow())
        cur.execute("INSERT INTO annotation (stimulus_id, annotator, label_set, label, start_s, end_s)"
                    " SELECT stimulus_id, annotator, label_set, label, start_s, end_s FROM bench_rows")
        elapsed = time.perf_counter() - start, time.process_time() - cpu
        cur.unregister("bench_rows")
        return elapsed
    finally:
        store.close()


def run() -> list[tuple[str, float, str]]:
    from app.export_service import export_annotations, import_annotations
    from storage.exporters.registry import exporters

    results = []
    exports = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = _store(folder / "source.duckdb", True)
        try:
            written = {}
            for exporter in exporters():
                samples = []
                for run in range(RUNS):
                    out = folder / f"{exporter.name}{run}" / f"all{exporter.extension}"
                    start = time.perf_counter()
                    written[exporter.name] = export_annotations(source, exporter.name, out).path
                    samples.append(time.perf_counter() - start)
                exports.append((f"annotation_file_export_100k_{exporter.name}_s", round(_median(samples), 3), "s"))
        finally:
            source.close()
        bulk_samples: list[tuple[float, float]] = []
        imports: dict[str, list[tuple[float, float]]] = {exporter.name: [] for exporter in exporters()}
        for run in range(RUNS):
            bulk_samples.append(_bulk_insert(folder / f"base{run}.duckdb"))
            for exporter in exporters():
                fresh = _store(folder / f"in-{exporter.name}{run}.duckdb", False)
                try:
                    start, cpu = time.perf_counter(), time.process_time()
                    added = import_annotations(fresh, exporter.name, written[exporter.name], "bench", annotator="x")
                    imports[exporter.name].append((time.perf_counter() - start, time.process_time() - cpu))
                    assert added == LABELS, (exporter.name, added)
                finally:
                    fresh.close()
    bulk, bulk_cpu = (_median([sample[i] for sample in bulk_samples]) for i in (0, 1))
    results.append(("annotation_bulk_insert_100k_baseline_s", round(bulk, 3), "s"))
    results.append(("annotation_bulk_insert_100k_baseline_cpu_s", round(bulk_cpu, 3), "s"))
    results += exports
    results += [(f"annotation_file_import_100k_{name}_s", round(_median([s for s, _ in samples]), 3), "s")
                for name, samples in imports.items()]
    results += [(f"annotation_file_import_100k_{name}_cpu_s", round(_median([c for _, c in samples]), 3), "s")
                for name, samples in imports.items()]
    results += [(f"annotation_import_100k_{name}_vs_bulk_insert_ratio", round(_median([s for s, _ in samples]) / bulk, 2),
                 "x") for name, samples in imports.items()]
    results += [(f"annotation_import_100k_{name}_cpu_vs_bulk_insert_ratio",
                 round(_median([c for _, c in samples]) / bulk_cpu, 2), "x") for name, samples in imports.items()]
    worst = max(_median([s for s, _ in samples]) for samples in imports.values())
    worst_cpu = max(_median([c for _, c in samples]) for samples in imports.values())
    results.append(("annotation_import_100k_worst_vs_bulk_insert_ratio", round(worst / bulk, 2), "x"))
    results.append(("annotation_import_100k_worst_cpu_vs_bulk_insert_ratio", round(worst_cpu / bulk_cpu, 2), "x"))
    return results


if __name__ == "__main__":
    for name, value, unit in run():
        print(name, value, unit)
