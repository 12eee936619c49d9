"""Damaged rows of every importer and annotation format: each import either succeeds or fails with one
`ThinsliceError` naming the file, and a failed one leaves every table of a real DuckDB store as it was.

A release of each kind is built once in code; every example copies it, damages one row of one of its files
(a value replaced by NaN, infinity, a negative or reversed time, a NUL, a list, true, a lone surrogate's
bytes, JSON nested past the parser; or the file cut short mid-row) and imports it through the command line.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import dispatch
from resources.sample_build import agentviss as agentviss_sample
from resources.sample_build import ncp as ncp_sample
from storage.store import Store
from test_import_echomind import make_release
from test_import_exploretom import write_csv as exploretom_csv
from test_import_seamless import COWORKERS, SEAMLESS, build_corpus
from tests.conftest import REFERENCE_DATA

TABLES = ("dataset", "stimulus", "media", "segment", "model", "run", "prediction", "judgment", "human_rating",
          "annotation", "label", "trace_step", "goal_atom")
NESTED = "[" * 3000 + "]" * 3000   # past the JSON parser's depth
# what a damaged value may become: each is something a real file has held
BAD_TEXT = ["NaN", "Infinity", "-Infinity", "-1", "-1e309", "1e309", "true", "false", "null", "[1, 2]",
            '["a", "b"]', '{"a": 1}', '"\\u0000"', '"a\\u0000b"', '"\\ud800"', '""', NESTED,
            '"', "'", ",", "\t", "\x00", "\x07"]
BAD_BYTES = [b"\xff\xfe", b"\xed\xa0\x80", b"\x00"]   # not UTF-8, a surrogate's UTF-8 form, NUL


def counts(db: Path) -> dict[str, int]:
    store = Store.open(db)
    try:
        cur = store.cursor()
        return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        store.close()


def _generic(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "segs.csv").write_text("clip,who,t0,t1,said\nc1,A,0,1.5,hello there\nc1,B,1.5,2,hi\n"
                                   "c2,A,0,0.5,yes\n", encoding="utf-8")
    _sidecar(root, ["c1", "c2"])


def _exploretom(root: Path) -> None:
    root.mkdir(parents=True)
    shutil.copy(exploretom_csv(root / "q.csv", [
        ["Anne put the ball in the box. Anne left.", "Where does Anne think the ball is?", "box", "1", "True",
         "0"],
        ["Bob put the key in the drawer.", "Where is the key?", "drawer", "0", "False", "1"]]),
        root / "questions.csv")
    (root / "q.csv").unlink()


def _friendbench(root: Path) -> None:
    (root / "validation" / "data").mkdir(parents=True)
    (root / "validation" / "ratings").mkdir()
    (root / "validation" / "data" / "metadata.csv").write_text(
        "clip_id,label,transcript\nc1,familiar,t1.json\nc2,stranger,t2.json\n", encoding="utf-8")
    for n in (1, 2):
        (root / "validation" / "data" / f"t{n}.json").write_text(json.dumps({"segments": [
            {"speaker": "A", "start": 0.1, "end": 0.5, "transcript": "Cats or dogs?",
             "words": [{"word": "Cats", "start": 0.1, "end": 0.2}, {"word": "or", "start": 0.2, "end": 0.3}]},
            {"speaker": "B", "start": 0.6, "end": 0.9, "transcript": "Dogs.",
             "words": [{"word": "Dogs.", "start": 0.6, "end": 0.9}]}]}, indent=1), encoding="utf-8")
    (root / "validation" / "ratings" / "model_predictions.csv").write_text(
        "model,provider,clip_id,modality,raw_output,parsed_answer,latency_ms\n"
        "m1,Org,c1,text,Answer: familiar.,,800\nm1,Org,c2,text,They are strangers,,900\n", encoding="utf-8")
    (root / "validation" / "ratings" / "human_ratings.csv").write_text(
        "rater_id,clip_id,condition,response,rt_s\nr1,c1,text,friend,2.5\nr1,c2,text,stranger,1.5\n",
        encoding="utf-8")
    _sidecar(root, ["c1", "c2"])


def _sidecar(root: Path, stimuli: list[str]) -> None:
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "annotations" / "thinslice_annotations.jsonl").write_text("".join(
        json.dumps({"stimulus": s, "annotator": "ann", "label_set": "cues", "label": label, "start_s": a,
                    "end_s": b, "note": "n"}) + "\n"
        for s in stimuli for label, a, b in [("laugh", 0.1, 0.4), ("sigh", 0.5, 0.6)]), encoding="utf-8")


GENERIC_MAP = ["--map", "stimulus=clip", "--map", "speaker=who", "--map", "start=t0", "--map", "end=t1",
               "--map", "text=said"]
# kind -> (builder, the path given to the importer relative to the built folder, files that may be damaged,
#          extra arguments)
RELEASES = {
    "friendbench": (_friendbench, ".", ["validation/data/metadata.csv", "validation/data/t1.json",
                                        "validation/ratings/model_predictions.csv",
                                        "validation/ratings/human_ratings.csv",
                                        "annotations/thinslice_annotations.jsonl"], []),
    "generic": (_generic, "segs.csv", ["segs.csv", "annotations/thinslice_annotations.jsonl"], GENERIC_MAP),
    "agentviss": (agentviss_sample.build, ".", ["data.json", "annotations/thinslice_annotations.jsonl"], []),
    "ncp": (ncp_sample.build, ".", ["tasks/ncp-01.json", "traces/quire-2.jsonl",
                                    "traces/lantern-9b/ncp-02.json"], []),
    "exploretom": (_exploretom, "questions.csv", ["questions.csv"], []),
    "echomind": (lambda root: make_release(root, cases=2, audio=False), ".",
                 ["data_synthesis/MCQ/understanding.json", "data_synthesis/script_info_synthesis.json"], []),
}


if REFERENCE_DATA.exists():   # the Seamless reader needs the corpus's real metadata tables to pair people
    RELEASES["seamless"] = (lambda root: build_corpus(REFERENCE_DATA / SEAMLESS, root), ".",
                            ["assets/participants.csv", "assets/interactions.csv", "assets/relationships.csv",
                             f"improvised/{COWORKERS[0].split('_I')[0]}/{COWORKERS[0]}.json"], [])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("releases")
    for kind, (build, _path, _files, _args) in RELEASES.items():
        build(base / kind)
    return {kind: base / kind for kind in RELEASES}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "damaged.duckdb"
    Store.open(path).close()
    return path


@st.composite
def damage(draw, lines: int, bad_text: list[str] = BAD_TEXT):
    """(line index, how): a value replaced by a bad one, bad bytes put in, or the file cut at that line."""
    line = draw(st.integers(0, max(lines - 1, 0)))
    how = draw(st.one_of(st.tuples(st.just("value"), st.sampled_from(bad_text), st.integers(0, 7)),
                         st.tuples(st.just("bytes"), st.sampled_from(BAD_BYTES), st.integers(0, 40)),
                         st.tuples(st.just("cut"), st.integers(1, 30))))
    return line, how


def damaged(data: bytes, line: int, how: tuple) -> bytes:
    rows = data.split(b"\n")
    row = rows[line]
    if how[0] == "cut":
        return b"\n".join(rows[:line] + [row[: how[1]]])
    if how[0] == "bytes":
        at = min(how[2], len(row))
        rows[line] = row[:at] + how[1] + row[at:]
        return b"\n".join(rows)
    # replace the n-th value: after a JSON key's colon, or the n-th field of a delimited row
    text = row.decode("utf-8")
    values = list(re.finditer(r'(?<=: )("(?:[^"\\]|\\.)*"|[-\w.]+)', text)) or \
        list(re.finditer(r"(?<=^)[^,]*|(?<=,)[^,]*", text))
    if values:
        value = values[how[2] % len(values)]
        text = text[: value.start()] + how[1] + text[value.end():]
    rows[line] = text.encode("utf-8")
    return b"\n".join(rows)


def _attempt(db: Path, argv: list[str], capsys, damaged_file: Path) -> None:
    before = counts(db)
    code = dispatch([*argv, "--db", str(db)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code in (0, None):
        return
    said = [line for line in err.splitlines() if not re.match(r"\s*\d+% ", line)]
    assert len(said) == 1, err
    assert damaged_file.name in said[0] or damaged_file.parent.name in said[0], said[0]
    assert counts(db) == before


@pytest.mark.parametrize("kind", list(RELEASES))
def test_a_damaged_row_imports_or_fails_naming_its_file(kind, built, db, tmp_path_factory, capsys):
    _build, given_path, files, extra = RELEASES[kind]
    sizes = {name: (built[kind] / name).read_bytes().count(b"\n") + 1 for name in files}

    @settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(files).flatmap(lambda name: st.tuples(st.just(name), damage(sizes[name]))))
    def check(case) -> None:
        name, (line, how) = case
        root = tmp_path_factory.mktemp(kind) / "release"
        shutil.copytree(built[kind], root, symlinks=True)
        target = root / name
        target.write_bytes(damaged(target.read_bytes(), line, how))
        _attempt(db, ["import", kind, str(root / given_path), "--dataset", f"damaged {kind}", *extra], capsys,
                 target)

    check()


@pytest.fixture(scope="module")
def exported(built, db, tmp_path_factory) -> dict[str, Path]:
    """The generic release's labels, imported and exported as each annotation format."""
    assert dispatch(["import", "generic", str(built["generic"] / "segs.csv"), "--dataset", "labelled",
                     *GENERIC_MAP, "--db", str(db)]) == 0
    out = tmp_path_factory.mktemp("exported")
    files = {}
    for format_name in ("jsonl", "csv"):
        files[format_name] = out / f"labels.{format_name}"
        assert dispatch(["export", format_name, str(files[format_name]), "--dataset", "labelled",
                         "--db", str(db)]) == 0
    return files


@pytest.mark.parametrize("format_name", ["jsonl", "csv"])
def test_a_damaged_annotation_row_imports_or_fails_naming_its_file(format_name, exported, db, tmp_path_factory,
                                                                 capsys):
    capsys.readouterr()
    source = exported[format_name]
    lines = source.read_bytes().count(b"\n") + 1

    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
    @given(damage(lines, [text for text in BAD_TEXT if text != NESTED]))   # nesting: the test below
    def check(case) -> None:
        line, how = case
        target = tmp_path_factory.mktemp(format_name) / source.name
        target.write_bytes(damaged(source.read_bytes(), line, how))
        _attempt(db, ["annotations", "import", format_name, str(target), "--dataset", "labelled"], capsys, target)

    check()


def test_annotation_json_nested_past_the_parser_fails_naming_its_file(exported, db, tmp_path, capsys):
    capsys.readouterr()
    target = tmp_path / "labels.jsonl"
    target.write_bytes(damaged(exported["jsonl"].read_bytes(), 0, ("value", NESTED, 2)))
    _attempt(db, ["annotations", "import", "jsonl", str(target), "--dataset", "labelled"], capsys, target)
