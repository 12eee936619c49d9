"""Annotation figures: tier redraw with 10,000 labels, one durable edit, exporting 100,000 labels.

Each value is the median of several runs. Labels are bulk-inserted with SQL to set up; the measured
parts go through the real view, `AnnotationModel`, `AnnotationStore` and `export_annotations`. The edit is
measured three times in the same run: as the store writes it, with the edit journal fsynced beside the
store (`annotation_edit_write_ms`); the same edit on a store opened without the journal (the baseline,
`annotation_edit_write_bare_ms`); and as the window makes it, one undoable command through the model
(`annotation_model_edit_ms`).
"""
from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

LABELS = ("laugh", "sigh", "overlap", "whisper", "hesitation", "backchannel")


def _store(folder: Path, stimuli: int, labels_per_stimulus: int, duration_s: float, *, journal: bool = True):
    from storage.store import Store

    store = Store.open(folder / "bench.duckdb", journal=journal)
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('bench', 'generic', ?) RETURNING id",
                          [str(folder / "root")]).fetchone()[0]
    cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) SELECT ?, 's' || lpad(i::VARCHAR, 5, '0'),"
                " 'generic' FROM range(?) t(i)", [dataset, stimuli])
    cur.execute("INSERT INTO media (stimulus_id, role, path, duration_s) SELECT id, 'audio', external_id || '.wav', ?"
                " FROM stimulus", [duration_s])
    step = duration_s / labels_per_stimulus
    cur.execute(
        "INSERT INTO annotation (stimulus_id, annotator, label_set, label, start_s, end_s)"
        " SELECT s.id, CASE WHEN i % 2 = 0 THEN 'ana' ELSE 'bo' END, 'vocal cues',"
        " list_extract(?, (i % 6)::INTEGER + 1), round(i * ?, 2), round(i * ? + ? * 1.4, 2)"
        " FROM stimulus s, range(?) t(i)", [list(LABELS), step, step, step, labels_per_stimulus])
    return store


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


def _redraw_ms(folder: Path) -> float:
    from PySide6.QtWidgets import QApplication

    from app.annotation_model import AnnotationModel
    from storage.annotations import AnnotationStore
    from widgets.annotation_tiers import AnnotationTiersView

    app = QApplication.instance() or QApplication([])
    store = _store(folder, 1, 10_000, 3600.0)
    try:
        model = AnnotationModel(AnnotationStore(store), annotator="ana")
        model.load(1)
        view = AnnotationTiersView(model)
        view.resize(1400, 260)
        view.set_annotator("ana")
        view.set_stimulus(1, 3600.0)
        view.show()
        app.processEvents()
        ranges = [(0.0, 3600.0), (600.0, 1200.0), (700.0, 760.0), (710.0, 716.0), (1800.0, 3000.0)]
        samples = []
        for i in range(30):
            t0, t1 = ranges[i % len(ranges)]
            shift = (i // len(ranges)) * 3.0  # pan a little each round
            start = time.perf_counter()
            view.setXRange(t0 + shift, t1 + shift, padding=0)
            view.grab()
            samples.append((time.perf_counter() - start) * 1000.0)
        view.close()
        return _median(samples)
    finally:
        store.close()


def _edit_ms(folder: Path, journal: bool = True) -> float:
    from storage.annotations import AnnotationStore

    store = _store(folder, 1, 100, 60.0, journal=journal)
    try:
        notes = AnnotationStore(store)
        item = notes.create(1, "ana", "vocal cues", "laugh", 1.0, 2.0)
        samples = []
        for i in range(50):
            start = time.perf_counter()
            notes.update(item.id, "ana", end_s=2.0 + i * 0.01)
            samples.append((time.perf_counter() - start) * 1000.0)
        return _median(samples)
    finally:
        store.close()


def _model_edit_ms(folder: Path) -> float:
    from app.annotation_model import AnnotationModel
    from storage.annotations import AnnotationStore

    store = _store(folder, 1, 100, 60.0)
    try:
        model = AnnotationModel(AnnotationStore(store), annotator="ana")
        model.load(1)
        item = model.add_label("vocal cues", "laugh", 1.0, 2.0)
        samples = []
        for i in range(50):
            start = time.perf_counter()
            model.resize(item.id, (1.0, 2.01 + i * 0.01))   # one drag of the end edge: one command
            samples.append((time.perf_counter() - start) * 1000.0)
        return _median(samples)
    finally:
        store.close()


def _export_s(folder: Path, fmt: str, out_name: str) -> float:
    from app.export_service import export_annotations

    store = _store(folder, 100, 1000, 600.0)
    try:
        samples = []
        for i in range(3):
            start = time.perf_counter()
            export_annotations(store, fmt, folder / f"{out_name}{i}")
            samples.append(time.perf_counter() - start)
        return _median(samples)
    finally:
        store.close()


def run() -> list[tuple[str, float, str]]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for name, make, unit in (("annotation_redraw_10k_labels_ms", _redraw_ms, "ms"),
                                 ("annotation_edit_write_ms", _edit_ms, "ms"),
                                 ("annotation_edit_write_bare_ms", lambda f: _edit_ms(f, journal=False), "ms"),
                                 ("annotation_model_edit_ms", _model_edit_ms, "ms"),
                                 ("export_100k_eaf_s", lambda f: _export_s(f, "eaf", "eaf"), "s"),
                                 ("export_100k_parquet_s", lambda f: _export_s(f, "parquet", "out.parquet"), "s")):
            folder = base / name
            folder.mkdir()
            results.append((name, round(make(folder), 3), unit))
    return results


if __name__ == "__main__":
    for name, value, unit in run():
        print(name, value, unit)
