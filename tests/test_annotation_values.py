"""Every road a label takes into the store holds it to the release importers' value rule: finite times of 0 s or
more, an end at or after the start, names and labels without control characters, the kinds the fields need,
rows with every field. A bad value in any annotation format (CSV, JSON lines, Parquet, ELAN, Praat, Audacity,
FriendBench and EchoMind exports) is refused in one line naming the file and its line (or tier and item), and
the store is left exactly as it was; a good one lands as the file says."""
from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from annotation_files_fixtures import make_store
from app.cli import dispatch
from app.export_service import import_annotations
from storage.annotations import AnnotationError, AnnotationStore
from storage.errors import ImportFailed
from storage.store import Store
from store_rows import changed_rows, store_rows

STIMULUS, DURATION = "fb_001", 20.0
INTENT = [("laugh", 1.0, 2.0), ("sigh", 3.0, 3.5), ("nod", 5.0, 6.0)]   # (label, start, end) of ana's labels
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")   # the characters no name or label may hold
LABELS = ["giggle", "élan", "a\x00b", "a\x01b", "x\x7fy", "tab\there", "line\nbreak", "\x9f"]
TIMES = [0.0, 4.0, 19.5, 20.0, -1.0, math.nan, math.inf, -math.inf, 25.0]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("values")
    make_store(root / "v.duckdb", root / "data", {"fb": [(STIMULUS, DURATION), ("fb_002", DURATION)]}).close()
    return root / "v.duckdb"


@pytest.fixture(scope="module")
def store(db):
    opened = Store.open(db)
    yield opened
    opened.close()


# -- each format written as its tool writes it, from (label, start, end) rows ----------------------------------
# A writer returns the file and, per row, the places a refusal of that row may name ("file:line", "tier 'x', item n").

def _number(value: float) -> str:
    return repr(float(value))


def write_csv(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["stimulus", "annotator", "label_set", "label", "start_s", "end_s"])
    for index, (label, start, end) in enumerate(rows):
        fields = [STIMULUS, "ana", label_set, label, _number(start), _number(end)]
        writer.writerow(fields[:-1] if index == missing else fields)
    path = folder / "labels.csv"
    path.write_text(out.getvalue(), encoding="utf-8", newline="")
    return path, [[f"labels.csv:{i + 2}"] for i in range(len(rows))]


def _records(label_set: str, rows: list, missing: int | None, stimulus: bool = True) -> list[dict]:
    records = []
    for index, (label, start, end) in enumerate(rows):
        record = {"stimulus": STIMULUS, "annotator": "ana", "label_set": label_set, "label": label,
                  "start_s": start, "end_s": end}
        if not stimulus:
            del record["stimulus"]
        if index == missing:
            del record["end_s"]
        records.append(record)
    return records


def write_jsonl(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    path = folder / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(label_set, rows, missing)), encoding="utf-8")
    return path, [[f"labels.jsonl:{i + 1}"] for i in range(len(rows))]


def write_parquet(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    path = folder / "labels.parquet"
    pl.DataFrame({"stimulus": [STIMULUS] * len(rows), "annotator": ["ana"] * len(rows),
                  "label_set": [label_set] * len(rows), "label": [r[0] for r in rows],
                  "start_s": [float(r[1]) for r in rows],
                  "end_s": [None if i == missing else float(r[2]) for i, r in enumerate(rows)]}).write_parquet(path)
    return path, [[f"labels.parquet:{i + 1}"] for i in range(len(rows))]


def write_audacity(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    """Audacity's label track; a row `missing` its label field is written as `start<TAB>end` alone."""
    lines = [f"{_number(s)}\t{_number(e)}" + ("" if i == missing else f"\t{label}")
             for i, (label, s, e) in enumerate(rows)]
    path = folder / f"{STIMULUS}.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    # a line break in a label ends its line: the rest is the next line
    return path, [[f"{path.name}:{i + 1}", f"{path.name}:{i + 2}"] for i in range(len(rows))]


def _praat_number(value: float) -> str:
    return "1e999" if value == math.inf else "-1e999" if value == -math.inf else repr(float(value))


def write_textgrid(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    """Praat's long text form: one interval tier, the stretches between the intended labels as empty intervals."""
    items: list[tuple[float, float, str, int | None]] = []
    at = 0.0
    for index, ((label, start, end), (_, planned_start, planned_end)) in enumerate(zip(rows, INTENT)):
        if planned_start > at:
            items.append((at, planned_start, "", None))
        items.append((start, end, label, index))
        at = planned_end
    items.append((at, DURATION, "", None))
    text = ['File type = "ooTextFile"', 'Object class = "TextGrid"', "", "xmin = 0", f"xmax = {DURATION}",
            "tiers? <exists>", "size = 1", "item []:", "    item [1]:", '        class = "IntervalTier"',
            f'        name = "{label_set}"', "        xmin = 0", f"        xmax = {DURATION}",
            f"        intervals: size = {len(items)}"]
    where: list[list[str]] = [[] for _ in rows]
    for number, (start, end, label, row) in enumerate(items, start=1):
        first = len(text) + 1
        quoted = label.replace('"', '""')
        text += [f"        intervals [{number}]:", f"            xmin = {_praat_number(start)}",
                 f"            xmax = {_praat_number(end)}", f'            text = "{quoted}"']
        if row is not None:
            where[row] = [f"tier '{label_set}', item {number}"] + [
                f"{STIMULUS}.TextGrid:{line}" for line in range(first, first + 4 + label.count("\n"))]
    path = folder / f"{STIMULUS}.TextGrid"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path, where


def write_eaf(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    """ELAN 3.0: a time slot per boundary in milliseconds, one alignable annotation per label (a row `missing`
    its end slot reference lacks TIME_SLOT_REF2)."""
    def ms(value: float) -> str:
        return str(value * 1000) if not math.isfinite(value) else f"{value * 1000:g}"

    slots = "".join(f'<TIME_SLOT TIME_SLOT_ID="ts{2 * i + 1}" TIME_VALUE="{ms(s)}"/>'
                    f'<TIME_SLOT TIME_SLOT_ID="ts{2 * i + 2}" TIME_VALUE="{ms(e)}"/>' for i, (_, s, e) in enumerate(rows))
    head = ['<?xml version="1.0" encoding="UTF-8"?>',
            '<ANNOTATION_DOCUMENT AUTHOR="" DATE="2024-05-01T10:00:00+01:00" FORMAT="3.0" VERSION="3.0">',
            '<HEADER MEDIA_FILE="" TIME_UNITS="milliseconds"/>', f"<TIME_ORDER>{slots}</TIME_ORDER>",
            f'<TIER LINGUISTIC_TYPE_REF="default-lt" TIER_ID="{label_set}">']
    body, where = [], []
    for index, (label, _, _) in enumerate(rows):
        end = "" if index == missing else f' TIME_SLOT_REF2="ts{2 * index + 2}"'
        text = label.replace("&", "&amp;").replace("<", "&lt;")
        where.append([f"tier '{label_set}', item {index + 1}", f"{STIMULUS}.eaf:{len(head) + len(body) + 1}"])
        body.append(f'<ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a{index + 1}" TIME_SLOT_REF1="ts{2 * index + 1}"'
                    f'{end}><ANNOTATION_VALUE>{text}</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>')
    tail = ["</TIER>", '<LINGUISTIC_TYPE GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="default-lt"'
            ' TIME_ALIGNABLE="true"/>', "</ANNOTATION_DOCUMENT>"]
    path = folder / f"{STIMULUS}.eaf"
    path.write_text("\n".join(head + body + tail) + "\n", encoding="utf-8")
    return path, where


def write_friendbench(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    ranges = [{k: v for k, v in r.items() if k not in ("stimulus", "annotator")}
              for r in _records(label_set, rows, missing)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([["clip_id", "annotator", "ranges"], [STIMULUS, "ana", json.dumps(ranges)]])
    path = folder / "friendbench.csv"
    path.write_text(out.getvalue(), encoding="utf-8", newline="")
    return path, [["friendbench.csv:2"] for _ in rows]


def write_echomind(folder: Path, label_set: str, rows: list, missing: int | None = None) -> tuple[Path, list]:
    path = folder / "echomind.json"
    path.write_text(json.dumps([{"case_id": STIMULUS,
                                 "annotations": _records(label_set, rows, missing, stimulus=False)}]), encoding="utf-8")
    return path, [["echomind.json, item 1", "echomind.json:1"] for _ in rows]


WRITERS = {"csv": write_csv, "jsonl": write_jsonl, "parquet": write_parquet, "audacity": write_audacity,
           "textgrid": write_textgrid, "eaf": write_eaf, "friendbench": write_friendbench, "echomind": write_echomind}
# what each format can write of a time: Praat has no word for "not a number"
TIMES_OF = {name: TIMES for name in WRITERS} | {"textgrid": [t for t in TIMES if not math.isnan(t)]}
# damage that leaves a row short of a field, where the format can be written so
MISSING = ("csv", "jsonl", "parquet", "audacity", "eaf", "friendbench", "echomind")
# values of the wrong kind, where the format keeps a value's kind (JSON)
WRONG_KINDS = [["x"], {"a": 1}, True, "1.5"]
KEEPS_KINDS = ("jsonl", "friendbench", "echomind")


def intended(format_name: str, rows: list) -> list[tuple[str, float, float]] | None:
    """What the file means, as each tool reads it, or None when the store may not hold it: Audacity reads an end
    before its start as the label between them; nothing holds a control character, a time that is not finite,
    below 0 or past the 20 s stimulus, or an end before its start."""
    meant = []
    for label, start, end in rows:
        if not isinstance(label, str) or any(isinstance(t, bool) or not isinstance(t, (int, float)) for t in (start, end)):
            return None
        if format_name == "audacity" and end < start:
            start, end = end, start
        if CONTROL.search(label) or not (math.isfinite(start) and math.isfinite(end)) \
                or not 0 <= start <= end <= DURATION:
            return None
        meant.append((label, float(start), float(end)))
    return sorted(meant)


def _labels(store: Store, label_set: str) -> list[tuple[str, float, float]]:
    return sorted((a.label, a.start_s, a.end_s) for a in AnnotationStore(store).for_stimuli(
        [sid for sid, ext in AnnotationStore(store).stimulus_ids(AnnotationStore(store).dataset("fb").id).items()])
        if a.label_set == label_set and a.annotator == "ana")


_sets = itertools.count(1)


@st.composite
def damaged_rows(draw, format_name: str):
    """The intended rows with one row's label, start or end replaced (in JSON, also by a value of the wrong
    kind), or (where the format allows) a field left out; and that row's index."""
    rows = [list(row) for row in INTENT]
    index = draw(st.integers(0, len(rows) - 1))
    kind = draw(st.sampled_from(["label", "start", "end"] + (["missing"] if format_name in MISSING else [])
                                + (["kind"] if format_name in KEEPS_KINDS else [])))
    if kind == "label":
        rows[index][0] = draw(st.sampled_from(LABELS))
    elif kind == "kind":
        rows[index][draw(st.integers(0, 2))] = draw(st.sampled_from(WRONG_KINDS))
    elif kind != "missing":
        rows[index][1 if kind == "start" else 2] = draw(st.sampled_from(TIMES_OF[format_name]))
    return [tuple(row) for row in rows], index, kind == "missing"


@pytest.mark.parametrize("format_name", list(WRITERS))
def test_a_damaged_label_is_refused_naming_where_or_lands_as_meant(format_name, store, tmp_path_factory):
    @settings(max_examples=14, deadline=None, suppress_health_check=list(HealthCheck))
    @given(damaged_rows(format_name))
    def check(case) -> None:
        rows, index, missing = case
        label_set = f"cues {next(_sets)}"
        path, where = WRITERS[format_name](tmp_path_factory.mktemp(format_name), label_set, rows,
                                           index if missing else None)
        meant = None if missing else intended(format_name, rows)
        before = store_rows(store)
        try:
            added = import_annotations(store, format_name, path, "fb", annotator="ana", label_set=label_set)
        except ImportFailed as refused:
            event("refused")
            said = str(refused)
            assert meant is None, f"{rows} refused: {said}"
            assert "\n" not in said, said   # one line: a label's line break is shown escaped
            assert any(place in said for place in where[index]), (where[index], said)
            assert store_rows(store) == before
            return
        event("landed")
        assert meant is not None, f"{rows} (missing a field: {missing}) was stored"
        assert added == len(meant)
        assert _labels(store, label_set) == meant
        assert set(changed_rows(before, store_rows(store))) == {"annotation", "annotation_event"}

    check()


# -- the inputs that were taken as data ------------------------------------------------------------------------
def _refused_by_command(db: Path, capsys, argv: list[str]) -> str:
    """The one line the command line says when it refuses `argv`, the store being unchanged."""
    store = Store.open(db)
    before = store_rows(store)
    store.close()
    capsys.readouterr()
    assert dispatch([*argv, "--db", str(db)]) == 1
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if not re.match(r"\s*\d+% ", line)]
    assert len(said) == 1 and "Traceback" not in err, err
    store = Store.open(db)
    assert store_rows(store) == before
    store.close()
    return said[0]


def _annotations_import(tmp_path: Path, format_name: str, name: str, content: str | bytes) -> list[str]:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return ["annotations", "import", format_name, str(path), "--dataset", "fb", "--annotator", "ana"]


HEADER = "stimulus,annotator,label_set,label,start_s,end_s\n"


@pytest.mark.parametrize("format_name, name, content, said", [
    ("audacity", "fb_001.txt", "0\tinf\tlaugh\n", "fb_001.txt:1: field 'end_s' found inf; expected a finite time"),
    ("audacity", "fb_001.txt", "1\t2\tsigh\n3\n", "fb_001.txt:2: found '3'; expected start<TAB>end<TAB>label"),
    ("audacity", "fb_001.txt", "1\t2\n", "fb_001.txt:1: found '1\\t2'; expected start<TAB>end<TAB>label"),
    ("audacity", "fb_001.txt", "0\t1\tlaugh\n\\\tnan\tinf\n", "fb_001.txt:2: field 'frequency range' found"
                                                                 " '\\\\\\tnan\\tinf'; expected \\<TAB>low<TAB>high in Hz,"
                                                                 " finite"),
    ("audacity", "fb_001.txt", "0\t1\ta\x01b\n", "fb_001.txt:1: field 'label' found 'a\\x01b'; expected text without"
                                               " control characters"),
    ("csv", "x.csv", HEADER + "fb_001,rel\n", "x.csv:2: found <2 fields>; expected 6 fields as in the header"),
    ("csv", "x.csv", HEADER + "fb_001,ana,s,laugh,1,2,3\n", "x.csv:2: found <7 fields>; expected 6 fields"),
    ("csv", "x.csv", HEADER + "fb_001,ana,s,a\x01b,1,2\n", "x.csv:2: field 'label' found 'a\\x01b'"),
    ("csv", "x.csv", HEADER + "fb_001,ana,s,a\x00b,1,2\n", "x.csv:2: field 'label' found 'a\\x00b'"),
    ("jsonl", "x.jsonl", json.dumps({"stimulus": STIMULUS, "annotator": "ana", "label_set": "s", "label": "a\x00b",
                                     "start_s": 1, "end_s": 2}) + "\n", "x.jsonl:1: field 'label' found 'a\\x00b'"),
    ("jsonl", "x.jsonl", json.dumps({"stimulus": STIMULUS, "annotator": "a\x01", "label_set": "s", "label": "b",
                                     "start_s": 1, "end_s": 2}) + "\n", "x.jsonl:1: field 'annotator' found 'a\\x01'"),
    ("jsonl", "x.jsonl", json.dumps({"stimulus": STIMULUS, "label_set": "s", "label": "b", "start_s": 1}) + "\n",
     "x.jsonl:1: field 'start_s/end_s' found 1.0..none; expected both a start and an end, or neither"),
    ("textgrid", "fb_001.TextGrid", 'File type = "ooTextFile"\nObject class = "TextGrid"\nxmin = 0\nxmax = 5\n'
     'tiers? <exists>\nsize = 1\nitem []:\n item [1]:\n  class = "IntervalTier"\n  name = "s"\n  xmin = 0\n'
     '  xmax = 5\n  intervals: size = 1\n  intervals [1]:\n   xmin = 0\n   xmax = 5\n   text = "a\x01b"\n',
     "fb_001.TextGrid:17, tier 's', item 1: field 'label' found 'a\\x01b'"),
    ("echomind", "e.json", json.dumps([{"case_id": STIMULUS, "annotations": "text"}]),
     "e.json:1: field 'annotations' found \"text\"; expected a list of annotation objects"),
    ("echomind", "e.json", json.dumps([{"case_id": STIMULUS, "annotations": ["text"]}]),
     "e.json:1: field 'annotations' found [\"text\"]; expected a list of annotation objects"),
    ("friendbench", "f.csv", 'clip_id,annotator,ranges\nfb_001,ana,"[{""label_set"": ""s"", ""label"": ""x"",'
     ' ""start_s"": 5, ""end_s"": 2}]"\n', "f.csv:2: field 'start_s/end_s' found 5.0..2.0; expected 0 <= start <= end, in seconds"),
    ("friendbench", "f.csv", 'clip_id,annotator,ranges\nfb_001,ana,"[{""label_set"": ""s"", ""label"": ""x"",'
     ' ""start_s"": 1, ""end_s"": 2, ""meta"": 5}]"\n', "f.csv:2: field 'meta' found <int>; expected a JSON object"),
    ("echomind", "e.json", json.dumps([{"case_id": STIMULUS, "annotations": [
        {"label_set": "s", "label": "x", "start_s": 1, "end_s": 2, "meta": [1]}]}]),
     "e.json:1: field 'meta' found <list>; expected a JSON object"),
])
def test_each_input_once_taken_as_data_is_refused_in_one_line(db, tmp_path, capsys, format_name, name, content,
                                                              said):
    line = _refused_by_command(db, capsys, _annotations_import(tmp_path, format_name, name, content))
    assert line.startswith("thinslice: Import failed, nothing was written: ") and said in line, line
    assert "polars" not in line.lower() and "Error" not in line


def test_a_label_audacity_reads_lands(db, tmp_path, capsys):
    """The one-time form Audacity reads (a time and the label's text) is a point label; two times and an empty
    label field are a label with no text, as Audacity writes an unnamed one."""
    store = Store.open(db)
    before = store_rows(store)
    assert import_annotations(store, "audacity", _write(tmp_path / "fb_002.txt", "1.5\tsigh\n2\t3\t\n"), "fb",
                              annotator="ana", label_set="audacity forms") == 2
    assert sorted((a.label, a.start_s, a.end_s) for a in AnnotationStore(store).for_stimuli(
        AnnotationStore(store).stimulus_ids(AnnotationStore(store).dataset("fb").id))
        if a.label_set == "audacity forms") == [("", 2.0, 3.0), ("sigh", 1.5, 1.5)]
    assert set(changed_rows(before, store_rows(store))) == {"annotation", "annotation_event"}
    store.close()


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_store_write_of_labels_holds_the_same_rule(store):
    """However a label reaches the store's one write (an edit, a sync), a control character or an impossible time
    is refused there too, and nothing is written."""
    notes = AnnotationStore(store)
    sid = notes.stimulus_ids(notes.dataset("fb").id, external_id=STIMULUS)
    stimulus = next(iter(sid))
    before = store_rows(store)
    for fields in ({"label": "a\x00b", "start_s": 1.0, "end_s": 2.0}, {"label": "x", "start_s": 2.0, "end_s": 1.0},
                   {"label": "x", "start_s": 1.0, "end_s": math.inf}, {"label": "x", "start_s": 1.0, "end_s": None}):
        with pytest.raises(AnnotationError):
            notes.create(stimulus, "ana", "edits", fields["label"], fields["start_s"], fields["end_s"])
    with pytest.raises(AnnotationError, match="control characters"):
        notes.create(stimulus, "ana\x01", "edits", "x", 1.0, 2.0)
    assert store_rows(store) == before


# -- the release importers: a clip's span, a results table's names, and where each is named -------------------
def test_a_friendbench_clip_ending_before_it_starts_is_refused_naming_its_line(db, tmp_path, capsys):
    from test_validation_damaged_rows import _friendbench
    _friendbench(tmp_path / "release")
    (tmp_path / "release" / "validation" / "data" / "metadata.csv").write_text(
        "clip_id,label,transcript,start,end\nc1,familiar,t1.json,0,10\nc2,stranger,t2.json,20,5\n", encoding="utf-8")
    line = _refused_by_command(db, capsys, ["import", "friendbench", str(tmp_path / "release"), "--dataset", "spans"])
    assert "validation/data/metadata.csv:3: field 'start/end' found '20..5'; expected 0 <= start <= end, in" \
           " seconds" in line, line


RESULTS = ["--map", "stimulus=clip", "--map", "model=model", "--map", "answer=answer"]


@pytest.mark.parametrize("name", ["answers.jsonl", "answers.json", "answers.parquet"])
def test_a_list_as_a_model_name_is_refused_naming_its_record(db, tmp_path, capsys, name):
    records = [{"clip": "c1", "model": "m", "answer": "x"}, {"clip": "c2", "model": ["m"], "answer": "y"}]
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    elif name.endswith(".json"):
        path.write_text(json.dumps(records), encoding="utf-8")
    else:
        pl.DataFrame({"clip": ["c1", "c2"], "model": [["m"], ["m"]], "answer": ["x", "y"]}).write_parquet(path)
    line = _refused_by_command(db, capsys, ["import", "generic", str(path), "--dataset", "lists", *RESULTS])
    where = f"{name}:1" if name.endswith(".parquet") else f"{name}:2"
    assert f"{where}: field 'model' found '[\"m\"]'; expected a model name, not a list or object" in line, line


def test_the_generic_value_check_names_the_line(db, tmp_path, capsys):
    path = _write(tmp_path / "answers.csv", "clip,system,answer\nc1,m,x\nc2,m2,y\nc2,m\x01,y\n")
    line = _refused_by_command(db, capsys, ["import", "generic", str(path), "--dataset", "names", "--map",
                                            "stimulus=clip", "--map", "model=system", "--map", "answer=answer"])
    assert "answers.csv:4: field 'system' found 'm\\x01'; expected text without control characters" in line, line


def test_a_list_where_a_parquet_annotation_table_needs_a_label_is_refused(db, tmp_path, capsys):
    """Parquet keeps a list column's kind; the label is refused rather than stored as the list's JSON text."""
    path = tmp_path / "labels.parquet"
    pl.DataFrame({"stimulus": [STIMULUS] * 2, "annotator": ["ana"] * 2, "label_set": ["s"] * 2,
                  "label": [["laugh"], ["sigh"]], "start_s": [1.0, 2.0], "end_s": [1.5, 2.5]}).write_parquet(path)
    line = _refused_by_command(db, capsys, ["annotations", "import", "parquet", str(path), "--dataset", "fb"])
    assert "labels.parquet:1: field 'label' found '[\"laugh\"]'; expected text, or a number for a time; not a" \
           " list or an object" in line, line


def test_a_parquet_table_damaged_inside_is_refused_in_the_users_words(db, tmp_path, capsys):
    """Two bytes of compressed data overwritten: the file still ends as Parquet does, and the refusal says it is
    damaged inside, not what the decompressor said."""
    path = tmp_path / "labels.parquet"
    pl.DataFrame({"stimulus": [STIMULUS], "annotator": ["ana"], "label_set": ["s"], "label": ["laugh"],
                  "start_s": [1.0], "end_s": [1.5]}).write_parquet(path)
    raw = path.read_bytes()
    path.write_bytes(raw[:20] + b"\xff\xff" + raw[22:])
    line = _refused_by_command(db, capsys, ["annotations", "import", "parquet", str(path), "--dataset", "fb"])
    assert line == ("thinslice: Import failed, nothing was written: labels.parquet: found <Parquet data that cannot be"
                    " read: the file is damaged inside>; expected a Parquet file"), line


def test_an_edit_or_rename_to_a_name_with_a_control_character_is_refused_and_changes_nothing(tmp_path):
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data", {"friendbench": [("fb-001", 20.0)]})
    try:
        labels = AnnotationStore(store)
        stimulus = store.cursor().execute("SELECT id FROM stimulus").fetchone()[0]
        [made] = labels.create_many(stimulus, "ana", [{"label_set": "cues", "label": "laugh",
                                                       "start_s": 1.0, "end_s": 2.0}])
        before = store_rows(store)
        for attempt in (lambda: labels.update(made.id, "ana", label="la\x01ugh"),
                        lambda: labels.update(made.id, "ana", media_role="audio:\x00A"),
                        lambda: labels.rename_label("cues", "laugh", "two\tparts", "ana"),
                        lambda: labels.rename_label_set("cues", "cu\nes", "ana")):
            with pytest.raises(AnnotationError, match="without control characters"):
                attempt()
        assert changed_rows(before, store_rows(store)) == {}
    finally:
        store.close()
