"""Annotation files are recognised by what they hold, not by their names: every export of every format, and the
files the other tools write themselves (ELAN through pympi-ling, Praat's own text, short, chronological and
binary TextGrids, an Audacity label track), are found to be what they are, under a misleading name too."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import parselmouth
import pympi
import pytest
from parselmouth.praat import call

from annotation_files_fixtures import eaf_text, make_store, praat_binary
from app.export_service import export_annotations, import_annotations
from storage.errors import ImportFailed
from storage.exporters.registry import detect_format, exporters

FORMATS = [e.name for e in exporters()]


@pytest.fixture
def store(tmp_path):
    """Two FriendBench clips with labels of two annotators, time ranges and whole-clip labels."""
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data", {"friendbench": [("fb-001", 20.0), ("fb-002", 12.0)]})
    labels = tmp_path / "labels.csv"
    labels.write_text("stimulus,annotator,label_set,label,start_s,end_s\n"
                      "fb-001,ana,vocal cues,laugh,1.5,2.5\nfb-001,bo,vocal cues,sigh,7.0,8.25\n"
                      "fb-002,ana,vocal cues,hesitation,0.0,0.75\nfb-001,ana,familiarity,familiar,,\n")
    assert import_annotations(store, "csv", labels, "friendbench") == 4
    yield store
    store.close()


@pytest.mark.parametrize("format", FORMATS)
def test_every_export_is_recognised_as_its_own_format(store, tmp_path, format):
    exporter = next(e for e in exporters() if e.name == format)
    out = tmp_path / "out" / f"labels{exporter.extension}"
    written = export_annotations(store, format, out, dataset="friendbench").path
    assert detect_format(written).name == format
    files = sorted(p for p in Path(written).rglob("*") if p.is_file()) if Path(written).is_dir() else [Path(written)]
    assert files and all(detect_format(f).name == format for f in files)
    # the content decides: the same file under a name that says nothing, or another format's suffix
    for suffix in (".data", ".json" if exporter.extension != ".json" else ".csv"):
        renamed = tmp_path / f"renamed{suffix}"
        shutil.copyfile(files[0], renamed)
        assert detect_format(renamed).name == format, suffix


def test_a_friendbench_export_is_not_taken_for_a_flat_csv_table(store, tmp_path):
    """Both are .csv files; the FriendBench one has clip_id, annotator, one column per set and ranges."""
    fb = export_annotations(store, "friendbench", tmp_path / "fb.csv", dataset="friendbench").path
    flat = export_annotations(store, "csv", tmp_path / "flat.csv", dataset="friendbench").path
    assert (detect_format(fb).name, detect_format(flat).name) == ("friendbench", "csv")


def test_files_the_other_tools_write_are_recognised(tmp_path):
    eaf = tmp_path / "rec01.eaf"
    eaf.write_text(eaf_text(), encoding="utf-8")
    written_by_pympi = tmp_path / "pympi.eaf"
    doc = pympi.Elan.Eaf()
    doc.add_tier("speech")
    doc.add_annotation("speech", 100, 900, "hello")
    pympi.Elan.to_eaf(str(written_by_pympi), doc)
    found = {path.name: detect_format(path).name for path in (eaf, written_by_pympi)}
    # Praat itself, in each form it saves (the text form in UTF-16, as Praat writes text that is not ASCII)
    grid = parselmouth.TextGrid(0.0, 3.0, "words tones", "tones")
    call(grid, "Insert boundary", 1, 0.5)
    call(grid, "Set interval text", 1, 2, "héllo")
    call(grid, "Insert point", 2, 0.75, "H*")
    for command, name in (("Save as text file", "long.TextGrid"), ("Save as short text file", "short.TextGrid"),
                          ("Save as chronological text file", "chrono.TextGrid"),
                          ("Save as binary file", "binary.TextGrid")):
        call(grid, command, str(tmp_path / name))
        found[name] = detect_format(tmp_path / name).name
    assert (tmp_path / "long.TextGrid").read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    (tmp_path / "fixture.TextGrid").write_bytes(praat_binary(0.0, 2.0, [("IntervalTier", "w", [(0.0, 2.0, "a")])]))
    found["fixture.TextGrid"] = detect_format(tmp_path / "fixture.TextGrid").name
    # Audacity's label track: start, end and text by tabs, a frequency line after a spectral label
    (tmp_path / "track.txt").write_text("1.500000\t2.500000\tlaugh\n\\\t120.5\t3400\n7.000000\t7.000000\tclick\n")
    found["track.txt"] = detect_format(tmp_path / "track.txt").name
    assert found == {"rec01.eaf": "eaf", "pympi.eaf": "eaf", "long.TextGrid": "textgrid",
                     "short.TextGrid": "textgrid", "chrono.TextGrid": "textgrid", "binary.TextGrid": "textgrid",
                     "fixture.TextGrid": "textgrid", "track.txt": "audacity"}


def test_a_folder_of_one_format_is_recognised_by_its_files(store, tmp_path):
    for format in ("eaf", "textgrid", "audacity"):
        folder = export_annotations(store, format, tmp_path / format, dataset="friendbench").path
        assert Path(folder).is_dir() and detect_format(folder).name == format


def test_a_damaged_file_still_reaches_its_reader_by_its_name(tmp_path):
    """When the content says nothing (UTF-16, cut short), the suffix is the last resort, so the reader can name
    what is wrong; a table's damaged row does not hide what its header says it is."""
    (tmp_path / "cut.eaf").write_text("")
    (tmp_path / "u16.jsonl").write_bytes('{"stimulus": "fb-001"}\n'.encode("utf-16"))
    (tmp_path / "ragged.csv").write_text("clip_id,annotator,familiarity,ranges\nfb-001,ana\n")
    assert [detect_format(tmp_path / n).name for n in ("cut.eaf", "u16.jsonl", "ragged.csv")] == [
        "eaf", "jsonl", "friendbench"]


def test_a_file_in_no_format_is_refused_in_one_line(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# what I heard\nlaughter at the start\n")
    with pytest.raises(ImportFailed) as refused:
        detect_format(notes)
    said = str(refused.value)
    assert said.startswith("Import failed, nothing was written: notes.md: found <a file in no annotation format"
                           " Thinslice reads>; expected one of: ")
    assert "ELAN" in said and "Praat TextGrid" in said and "\n" not in said


def test_a_large_echomind_list_written_on_one_line_is_recognised(tmp_path):
    """Another tool may write the whole list on one line, its first case longer than the head looked at."""
    cases = [{"case_id": "synthesis/901", "annotations": [
        {"annotator": "ana", "label_set": "vocal cues", "label": f"cue {i}", "start_s": i * 0.01, "end_s": i * 0.01}
        for i in range(3000)]}]
    path = tmp_path / "cases.data"
    path.write_text(json.dumps(cases, separators=(",", ":")))
    assert path.stat().st_size > 64 * 1024 and b"\n" not in path.read_bytes()
    assert detect_format(path).name == "echomind"
