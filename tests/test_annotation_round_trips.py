"""Every export format of every benchmark's dataset reads back into a fresh store as the same labels:
overlapping ranges, point labels, whole-stimulus labels, media roles, two annotators, and ids that hold a '/'."""
from __future__ import annotations

import pytest

from annotation_files_fixtures import BENCHMARK_STIMULI, make_store, stored
from app.export_service import export_annotations, import_annotations
from storage.annotations import AnnotationStore
from storage.exporters.registry import exporters, get_exporter
from storage.exporters.report import TransferReport

FORMATS = [e.name for e in exporters()]
NO_NOTES = {"audacity"}   # no place for a label's note or value: exported only when told to leave them out


def notes_and_values(store, dataset: str) -> list[tuple]:
    notes = AnnotationStore(store)
    ids = notes.stimulus_ids(notes.dataset(dataset).id)
    return sorted((ids[a.stimulus_id], a.label, a.note, a.value) for a in notes.for_stimuli(ids) if a.note or a.value)


def add_labels(store, dataset: str) -> None:
    notes = AnnotationStore(store)
    ids = {ext: sid for sid, ext in notes.stimulus_ids(notes.dataset(dataset).id).items()}
    first, second = sorted(ids)
    plan = [(first, "ana", "cues", "laugh", 1.0, 2.5), (first, "ana", "cues", "overlap", 2.0, 3.25),
            (first, "ana", "cues", "click", 4.0, 4.0), (first, "ana", "cues", "click", 4.5, 4.5),
            (first, "bo", "cues", 'say "hé"', 1.2, 2.4), (first, "bo", "cues", "tap", 2.4, 2.4),
            (second, "bo", "cues", "sigh", 0.0, 0.75), (second, "ana", "cues", "end", 8.5, 8.999),
            (first, "ana", "familiarity", "familiar", None, None), (second, "bo", "familiarity", "stranger", None, None)]
    rows = [{"stimulus_id": ids[ext], "annotator": who, "label_set": label_set, "label": label, "start_s": start,
             "end_s": end} for ext, who, label_set, label, start, end in plan]
    rows[0]["media_role"] = rows[4]["media_role"] = "audio:A"   # labels of one speaker's channel
    rows[6]["media_role"] = "video"
    rows[1]["note"], rows[3]["value"] = "starts over", "2"
    notes.create_many(None, "", rows)


@pytest.mark.parametrize("benchmark", sorted(BENCHMARK_STIMULI))
@pytest.mark.parametrize("name", FORMATS)
def test_export_then_import_gives_the_same_labels(tmp_path, benchmark, name):
    source = make_store(tmp_path / "a.duckdb", tmp_path / "a")
    fresh = make_store(tmp_path / "b.duckdb", tmp_path / "b")
    try:
        add_labels(source, benchmark)
        result = export_annotations(source, name, tmp_path / "out" / f"all{get_exporter(name).extension}",
                                    dataset=benchmark, skip_unrepresentable=name in NO_NOTES)
        assert result.report.written == 10 and result.report.left_out == 0
        report = TransferReport()
        added = import_annotations(fresh, name, result.path, benchmark, annotator="nobody", report=report)
        assert added == 10 and report.written == 10 and report.read == 10
        assert stored(fresh, benchmark) == stored(source, benchmark)
        if name not in NO_NOTES:
            assert notes_and_values(fresh, benchmark) == notes_and_values(source, benchmark) != []
        # the same file again adds nothing
        assert import_annotations(fresh, name, result.path, benchmark, annotator="nobody") == 0
    finally:
        source.close()
        fresh.close()
