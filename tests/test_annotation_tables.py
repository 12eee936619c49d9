"""One table reader for every table a user names: the same damage in a results table and in an annotation file
(a CSV table, a FriendBench CSV, JSON lines, EchoMind JSON, Parquet) gets the same one-line message naming file
and line, and the store is left exactly as it was."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from annotation_files_fixtures import make_store, stored
from app.annotation_files import read_annotation_file
from app.export_service import export_annotations, import_annotations
from app.import_service import run_import
from storage.annotations import AnnotationStore
from storage.errors import ImportFailed
from storage.exporters.registry import detect_format
from storage.importers.common import ImportOptions
from store_rows import store_rows

CSV_HEADER = "stimulus,annotator,label_set,label,start_s,end_s,value,note,media_role,meta\n"
CSV_ROW = "fb-001,x,vocal cues,sigh,3.0,4.0,,,,\n"
# a FriendBench export's shape with seven label-set columns: ten columns, as the annotation CSV has
FB_HEADER = "clip_id,annotator,familiarity,closeness,mood,topic,turns,pace,register,ranges\n"
FB_ROW = 'fb-001,x,familiar,close,calm,work,many,slow,casual,"[{""label_set"": ""vocal cues"", ""label"": ""sigh"",' \
         ' ""start_s"": 3.0, ""end_s"": 4.0}]"\n'
# the results importer reads each file as a model's answers: its id, model and answer columns
RESULTS_MAP = {"csv": {"stimulus": "stimulus", "model": "annotator", "answer": "label"},
               "friendbench": {"stimulus": "clip_id", "model": "annotator", "answer": "familiarity"},
               "jsonl": {"stimulus": "stimulus", "model": "annotator", "answer": "label"},
               "echomind": {"stimulus": "case_id", "model": "annotations", "answer": "annotations"}}


@pytest.fixture
def store(tmp_path):
    """FriendBench clips fb-001 and fb-002 (20 s each), one label already stored."""
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data", {"friendbench": [("fb-001", 20.0), ("fb-002", 20.0)]})
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"stimulus": "fb-001", "annotator": "ana", "label_set": "vocal cues",
                                 "label": "laugh", "start_s": 1.5, "end_s": 2.5}) + "\n")
    assert import_annotations(store, "jsonl", first, "friendbench") == 1
    yield store
    store.close()


def results_message(store, path: Path, format: str) -> str:
    """What the results importer says of the file (it must refuse it)."""
    with pytest.raises(ImportFailed) as refused:
        run_import(store, "generic", path, ImportOptions(dataset_name="answers", mapping=RESULTS_MAP[format]))
    return str(refused.value)


def annotation_messages(store, path: Path, format: str) -> set[str]:
    """What the annotation reader of `format` says of the file, asked by name (as the command line does) and
    found by content (as the window does)."""
    said = set()
    with pytest.raises(ImportFailed) as by_name:
        import_annotations(store, format, path, "friendbench", annotator="ana")
    said.add(str(by_name.value))
    with pytest.raises(ImportFailed) as by_content:
        read_annotation_file(AnnotationStore(store), detect_format(path).name, path, "friendbench", "ana")
    said.add(str(by_content.value))
    return said


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


DAMAGE = {
    # the issue's own row: 8 fields in a 10-column file
    "ragged": (lambda header, row: header + row + "fb_002,x,vocal cues,laugh,1.5,2.5,,\n", "utf-8",
               "labels.csv:3: found <8 fields>; expected 10 fields as in the header"),
    "utf-16": (lambda header, row: header + row, "utf-16",
               "labels.csv:1: found <byte 0xff that is not UTF-8 (it is UTF-16 text: save it as UTF-8)>;"
               " expected UTF-8 text"),
    "unclosed quote": (lambda header, row: header + row + 'fb-002,x,"vocal cues,laugh,1,2,,,,\n', "utf-8",
                       "labels.csv:3: found <a quote opened in this row and never closed>;"
                       " expected a closing quote for every opening one"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("format, header, row", [("csv", CSV_HEADER, CSV_ROW), ("friendbench", FB_HEADER, FB_ROW)])
def test_the_same_damage_gets_the_same_message_from_results_and_annotation_readers(store, tmp_path, damage, format,
                                                                                   header, row):
    make, encoding, expected = DAMAGE[damage]
    path = write(tmp_path / damage / "labels.csv", make(header, row), encoding)
    before = store_rows(store)
    said = results_message(store, path, format)
    assert said == f"Import failed, nothing was written: {expected}"
    assert annotation_messages(store, path, format) == {said}
    assert "\n" not in said
    assert store_rows(store) == before


@pytest.mark.parametrize("format, name, text", [
    ("jsonl", "labels.jsonl", json.dumps({"stimulus": "fb-001", "annotator": "x", "label_set": "vocal cues",
                                          "label": "sigh", "start_s": 3.0, "end_s": 4.0}) + "\n"),
    ("echomind", "labels.json", json.dumps([{"case_id": "fb-001", "annotations": [
        {"annotator": "x", "label_set": "vocal cues", "label": "sigh", "start_s": 3.0, "end_s": 4.0}]}]) + "\n"),
])
def test_utf16_json_gets_the_same_message_from_results_and_annotation_readers(store, tmp_path, format, name, text):
    path = write(tmp_path / name, text, "utf-16")
    before = store_rows(store)
    said = results_message(store, path, format)
    assert said == (f"Import failed, nothing was written: {name}:1: found <byte 0xff that is not UTF-8 (it is UTF-16"
                    " text: save it as UTF-8)>; expected UTF-8 text")
    assert annotation_messages(store, path, format) == {said}
    assert store_rows(store) == before


def test_a_damaged_parquet_file_gets_the_same_message_from_results_and_annotation_readers(store, tmp_path):
    whole = tmp_path / "whole.parquet"
    export_annotations(store, "parquet", whole, dataset="friendbench")
    path = tmp_path / "labels.parquet"
    path.write_bytes(whole.read_bytes()[:-40])   # cut short, as a copy that stopped part-way leaves it
    before = store_rows(store)
    said = results_message(store, path, "csv")
    assert said == ("Import failed, nothing was written: labels.parquet: found <a file cut short, or not Parquet:"
                    " it does not end with the mark every Parquet file ends with>; expected a Parquet file")
    with pytest.raises(ImportFailed) as refused:
        import_annotations(store, "parquet", path, "friendbench")
    assert str(refused.value) == said
    assert store_rows(store) == before


@pytest.mark.parametrize("suffix, line", [(".csv", 3), (".parquet", 2)])
def test_a_time_that_is_not_a_number_gets_the_same_message_from_results_and_annotation_readers(store, tmp_path,
                                                                                               suffix, line):
    """A CSV line or a Parquet record (counted from 1) whose time is text: the results importer and the
    annotation reader refuse it alike."""
    path = tmp_path / f"labels{suffix}"
    csv = write(tmp_path / "source.csv", CSV_HEADER + CSV_ROW + "fb-002,x,vocal cues,laugh,soon,2.5,,,,\n")
    if suffix == ".parquet":
        pl.read_csv(csv, infer_schema=False).write_parquet(path)   # the times as text, as some tools store them
    else:
        shutil.copyfile(csv, path)
    before = store_rows(store)
    with pytest.raises(ImportFailed) as results:
        run_import(store, "generic", path, ImportOptions(dataset_name="answers", mapping={
            "stimulus": "stimulus", "speaker": "annotator", "start": "start_s", "end": "end_s", "text": "label"}))
    said = str(results.value)
    assert said == (f"Import failed, nothing was written: labels{suffix}:{line}: field 'start_s' found 'soon';"
                    " expected a number, finite")
    assert annotation_messages(store, path, suffix.strip(".")) == {said}
    assert store_rows(store) == before


@pytest.mark.parametrize("ranges, found", [('"{""label"": ""sigh""}"', "'{\"label\": \"sigh\"}'"),
                                           ('"[1, 2]"', "'[1, 2]'")])
def test_friendbench_ranges_of_the_wrong_kind_are_refused_naming_file_and_line(store, tmp_path, ranges, found):
    path = write(tmp_path / "labels.csv", "clip_id,annotator,familiarity,ranges\nfb-001,x,familiar,[]\n"
                 f"fb-002,x,stranger,{ranges}\n")
    before = store_rows(store)
    with pytest.raises(ImportFailed) as refused:
        import_annotations(store, "friendbench", path, "friendbench")
    assert str(refused.value) == (f"Import failed, nothing was written: labels.csv:3: field 'ranges' found {found};"
                                  " expected a JSON list of ranges")
    assert store_rows(store) == before


def test_a_table_read_through_the_one_reader_keeps_every_field_and_line(store, tmp_path):
    """The reader change keeps what it read: blank lines and a quoted line break still give each row its own
    line, and meta, notes and times come through."""
    path = write(tmp_path / "labels.csv", CSV_HEADER + "\n" + 'fb-002,bo,vocal cues,two words,0.5,1.25,v,"a,\nnote",'
                 'audio:B,"{""tier"": ""cues""}"\n' + "fb-002,bo,familiarity,stranger,,,,,,\n")
    before = store_rows(store)
    assert import_annotations(store, "csv", path, "friendbench") == 2
    assert stored(store, "friendbench") == [
        ("fb-001", "ana", "vocal cues", "laugh", 1.5, 2.5, ""),
        ("fb-002", "bo", "familiarity", "stranger", None, None, ""),
        ("fb-002", "bo", "vocal cues", "two words", 0.5, 1.25, "audio:B")]
    notes = AnnotationStore(store)
    sid = notes.stimulus_ids(notes.dataset("friendbench").id)
    added = [a for a in notes.for_stimuli(sid) if a.label == "two words"][0]
    assert (added.value, added.note) == ("v", "a,\nnote")   # a note is free text; a label is a name
    after = store_rows(store)
    assert {t for t in after if after[t] != before[t]} == {"annotation", "annotation_event"}
    bad = write(tmp_path / "late.csv", CSV_HEADER + "\n" + CSV_ROW + "fb-002,x,vocal cues,laugh,nan,2.5,,,,\n")
    with pytest.raises(ImportFailed, match=r"late\.csv:4: field 'start_s' found 'nan'; expected a number, finite"):
        import_annotations(store, "csv", bad, "friendbench")

