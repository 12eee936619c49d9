"""A plain annotation JSON-lines file (one object a line, as Thinslice and most tools write it) is read in one
pass as a table; a file that is not plain is read line by line. Both readings give the same labels, and a
damaged line is still named by its number: two records on one line, a record over two lines, a value the
table reader would take that `json` does not."""
from __future__ import annotations

import json

import pytest

from annotation_files_fixtures import make_store, stored
from app.export_service import import_annotations
from storage.errors import ImportFailed
from storage.exporters.tables import JsonLinesExporter
from storage.importers.common import read_jsonl_table

ROW = {"stimulus": "fb-001", "annotator": "ana", "label_set": "cues", "label": "laugh \u00e9 \"quoted\"",
       "start_s": 1, "end_s": 2.5, "value": None, "note": "a\\tb", "media_role": None, "meta": None}
LINES = [json.dumps(ROW, ensure_ascii=False), json.dumps({**ROW, "label": "sigh", "start_s": 0.1, "end_s": None}),
         json.dumps({"stimulus": "fb-001", "annotator": "bo", "label_set": "cues", "label": "nod"})]


def test_texts_that_say_inf_nan_or_an_escape_leave_a_file_plain(tmp_path):
    path = tmp_path / "words.jsonl"
    path.write_text(json.dumps({**ROW, "label": "Info about NaN and Infinity", "note": "caf\u00e9"}) + "\n", encoding="utf-8")
    assert read_jsonl_table(path) is not None
    assert _reading(path)[0][0]["note"] == "caf\u00e9" and _reading(path)[0][0]["label"] == "Info about NaN and Infinity"


def _reading(path):
    rows = JsonLinesExporter().read(path).rows
    return [{k: v for k, v in row.items() if k != "origin"} for row in rows], [row["origin"] for row in rows]


@pytest.mark.parametrize("text", ["\n".join(LINES) + "\n", "\n".join(LINES)])
def test_a_plain_file_is_read_as_a_table_with_the_labels_and_lines_of_the_line_by_line_reading(tmp_path, text):
    plain, spaced = tmp_path / "plain.jsonl", tmp_path / "spaced.jsonl"
    plain.write_text(text, encoding="utf-8")
    spaced.write_text(text.replace("\n", "\n\n", 1), encoding="utf-8")  # a blank line: read line by line
    assert read_jsonl_table(plain) is not None and read_jsonl_table(spaced) is None
    labels, origins = _reading(plain)
    spaced_labels, spaced_origins = _reading(spaced)
    assert labels == spaced_labels
    assert [o.line for o in origins] == [1, 2, 3] and [o.line for o in spaced_origins] == [1, 3, 4]
    assert labels[0]["label"] == ROW["label"] and labels[0]["note"] == "a\\tb" and labels[1]["end_s"] is None


@pytest.mark.parametrize("lines, line, found", [
    # two records on line 2 and one over lines 3 and 4: as many records as lines, none of them one a line
    ([LINES[0], LINES[1] + " " + LINES[2], '{"stimulus": "fb-001", "annotator": "ana", "label_set": "x",',
      '"label": "y"}'], 2, "<invalid JSON: Extra data>"),
    # a value pyarrow reads as infinity and `json` does not, in a file whose texts say Inf and NaN too
    ([LINES[0].replace("laugh", "Info NaN"), LINES[1].replace('"start_s": 0.1', '"start_s": Inf')], 2,
     "<invalid JSON: Expecting value>"),
])
def test_a_damaged_line_is_named_whichever_reading_would_take_the_file(tmp_path, lines, line, found):
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data")
    try:
        (tmp_path / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ImportFailed) as refusal:
            import_annotations(store, "jsonl", tmp_path / "labels.jsonl", "friendbench")
        assert stored(store, "friendbench") == []
    finally:
        store.close()
    assert f"labels.jsonl:{line}: " in str(refusal.value) and found in str(refusal.value)
