"""An annotation JSON-lines file is read as columns; a value of the wrong kind (a list where a label is
expected, a word where a time is) refuses the file, naming its line, field, what was found and what was
expected, and nothing is written."""
from __future__ import annotations

import json

import pytest

from annotation_files_fixtures import make_store, stored
from app.export_service import import_annotations
from storage.errors import ImportFailed

ROW = {"stimulus": "fb-001", "annotator": "ana", "label_set": "cues", "label": "laugh", "start_s": 1, "end_s": 2.5}


def _write(path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_labels_of_every_kind_right_are_written(tmp_path):
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data")
    try:
        _write(tmp_path / "labels.jsonl", [ROW, {**ROW, "label": "sigh", "start_s": 3, "end_s": 4,
                                                 "meta": {"tier": "words"}}])
        assert import_annotations(store, "jsonl", tmp_path / "labels.jsonl", "friendbench") == 2
        assert stored(store, "friendbench") == [("fb-001", "ana", "cues", "laugh", 1.0, 2.5, ""),
                                                ("fb-001", "ana", "cues", "sigh", 3.0, 4.0, "")]
    finally:
        store.close()


@pytest.mark.parametrize("field, value, found, expected", [
    ("label", ["a", "b"], "['a', 'b']", "text"),
    ("start_s", "soon", "'soon'", "a number"),
])
def test_a_value_of_the_wrong_kind_refuses_the_file_at_its_line(tmp_path, field, value, found, expected):
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data")
    try:
        _write(tmp_path / "labels.jsonl", [ROW, {**ROW, field: value}])
        with pytest.raises(ImportFailed) as refusal:
            import_annotations(store, "jsonl", tmp_path / "labels.jsonl", "friendbench")
        assert stored(store, "friendbench") == []
    finally:
        store.close()
    message = str(refusal.value)
    assert f"labels.jsonl:2: field '{field}' found {found}" in message and f"expected {expected}" in message
