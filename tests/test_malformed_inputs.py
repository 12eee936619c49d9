"""Malformed and impossible inputs end as one line from the command line, a non-zero exit and an unchanged
store: never a traceback, never a value no store should hold.

Each case is a file a user could really point Thinslice at (made here in code): a table in UTF-16, an
unclosed quote, a header with no rows, text or NaN where a time is expected, an infinite judge score, NUL in
an id, JSON nested past the parser, a lone surrogate, wrong-typed annotation fields, a link to /dev/zero.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from app.cli import dispatch
from storage.store import Store

TABLES = ("dataset", "stimulus", "segment", "prediction", "judgment", "human_rating", "annotation", "model")
SEGMENTS = ["--map", "stimulus=clip", "--map", "speaker=who", "--map", "start=t0", "--map", "end=t1",
            "--map", "text=said"]
JUDGMENTS = ["--map", "stimulus=clip", "--map", "model=system", "--map", "judge=judge", "--map",
             "criterion=crit", "--map", "score=score"]


def counts(db: Path) -> dict[str, int]:
    store = Store.open(db)
    try:
        cur = store.cursor()
        return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        store.close()


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "store.duckdb"
    Store.open(path).close()
    return path


def refused(db: Path, capsys, *argv: str) -> str:
    """Run the command line in this process and return its one line of refusal; the store must not change."""
    before = counts(db)
    code = dispatch([*argv, "--db", str(db)])
    err = capsys.readouterr().err
    assert code not in (0, None), err
    said = [line for line in err.splitlines() if not re.match(r"\s*\d+% ", line)]   # progress lines aside
    assert "Traceback" not in err and len(said) == 1, err
    assert counts(db) == before
    return said[0]


def table(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / "data" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_a_table_that_is_not_utf8_is_said_to_be_so(db, tmp_path, capsys):
    path = table(tmp_path, "segs.csv", "clip,who,t0,t1,said\nc1,A,0,1,hi\n".encode("utf-16"))
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "segs.csv" in message and "UTF-8" in message and "UTF-16" in message
    assert "\\x00" not in message and "\\xff" not in message


def test_an_unclosed_quote_names_its_line(db, tmp_path, capsys):
    path = table(tmp_path, "segs.csv", 'clip,who,t0,t1,said\nc1,A,0,1,hi\nc2,B,1,2,"never closed\nc3,A,2,3,x\n')
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "segs.csv:3" in message and "quote" in message


def test_a_header_alone_makes_no_empty_dataset(db, tmp_path, capsys):
    path = table(tmp_path, "segs.csv", "clip,who,t0,t1,said\n")
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "segs.csv" in message and "no rows" in message


@pytest.mark.parametrize("start, end, expected", [
    ("soon", "1", "a number"), ("nan", "1", "finite"), ("0", "inf", "finite"), ("-2", "1", "0 s or more"),
    ("3", "1", "0 <= start <= end")])
def test_impossible_segment_times_are_refused(db, tmp_path, capsys, start, end, expected):
    path = table(tmp_path, "segs.csv", f"clip,who,t0,t1,said\nc1,A,0,1,hi\nc2,B,{start},{end},yes\n")
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "segs.csv" in message and expected in message


def test_skip_bad_leaves_out_an_impossible_time_and_says_so(db, tmp_path, capsys):
    path = table(tmp_path, "segs.csv", "clip,who,t0,t1,said\nc1,A,0,1,hi\nc2,B,nan,1,yes\n")
    assert dispatch(["import", "generic", str(path), *SEGMENTS, "--skip-bad", "--db", str(db)]) == 0
    out = capsys.readouterr()
    assert "segs.csv:3" in out.out and "finite" in out.out
    assert counts(db)["segment"] == 1


def test_an_infinite_judge_score_is_refused(db, tmp_path, capsys):
    path = table(tmp_path, "judged.csv", "clip,system,judge,crit,score\nc1,m,j,C1,3\nc2,m,j,C1,inf\n")
    message = refused(db, capsys, "import", "generic", str(path), *JUDGMENTS)
    assert "judged.csv" in message and "score" in message and "finite" in message


@pytest.mark.parametrize("column", ["clip", "system"])
def test_a_nul_in_an_id_or_model_name_is_refused(db, tmp_path, capsys, column):
    rows = {"clip": "c\x002", "system": "m"} if column == "clip" else {"clip": "c2", "system": "m\x00x"}
    path = table(tmp_path, "judged.csv", f"clip,system,judge,crit,score\nc1,m,j,C1,3\n"
                                         f"{rows['clip']},{rows['system']},j,C1,2\n")
    message = refused(db, capsys, "import", "generic", str(path), *JUDGMENTS)
    assert "judged.csv" in message and "control characters" in message


def _annotated_table(tmp_path: Path, record: dict) -> Path:
    path = table(tmp_path, "segs.csv", "clip,who,t0,t1,said\nc1,A,0,1,hi\n")
    sidecar = path.parent / "annotations" / "thinslice_annotations.jsonl"
    sidecar.parent.mkdir(exist_ok=True)
    sidecar.write_text(json.dumps({"stimulus": "c1", "annotator": "ann", "label_set": "cues", "label": "laugh",
                                   "start_s": 0.1, "end_s": 0.5, **record}) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("record, expected", [
    ({"label": ["a", "b"]}, "text"), ({"start_s": True, "end_s": True}, "a number"), ({"stimulus": 7}, "text"),
    ({"note": {"x": 1}}, "text"), ({"start_s": -1.0}, "a finite time of 0 s or more")])
def test_wrong_typed_annotation_fields_are_refused(db, tmp_path, capsys, record, expected):
    path = _annotated_table(tmp_path, record)
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "thinslice_annotations.jsonl:1" in message and expected in message


def test_a_lone_surrogate_is_refused_with_its_line(db, tmp_path, capsys):
    path = _annotated_table(tmp_path, {})
    sidecar = path.parent / "annotations" / "thinslice_annotations.jsonl"
    sidecar.write_text('{"stimulus": "c1", "annotator": "ann", "label_set": "cues", "label": "a\\ud800b"}\n')
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "thinslice_annotations.jsonl:1" in message and "surrogate" in message


def test_json_nested_past_the_parser_is_refused(db, tmp_path, capsys):
    path = table(tmp_path, "tasks.json", "[" * 200_000 + "]" * 200_000)
    message = refused(db, capsys, "import", "ncp", str(path))
    assert "tasks.json" in message


def test_json_nested_past_the_parser_in_a_release_file(db, tmp_path, capsys):
    release = tmp_path / "agentviss"
    release.mkdir()
    (release / "data.json").write_text('{"scenes": ' + "[" * 200_000 + "]" * 200_000 + "}")
    message = refused(db, capsys, "import", "agentviss", str(release))
    assert "data.json" in message and "nesting" in message


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_dev_zero_is_refused_not_read(db, tmp_path, capsys):
    path = _annotated_table(tmp_path, {})
    sidecar = path.parent / "annotations" / "thinslice_annotations.jsonl"
    sidecar.unlink()
    sidecar.symlink_to("/dev/zero")
    message = refused(db, capsys, "import", "generic", str(path), *SEGMENTS)
    assert "device" in message
    linked = tmp_path / "data" / "zero.csv"
    linked.symlink_to("/dev/zero")
    message = refused(db, capsys, "import", "generic", str(linked), *SEGMENTS)
    assert "zero.csv" in message and "device" in message


@pytest.mark.parametrize("damage", ["[" * 200_000 + "]" * 200_000, '"a\\ud800"'])
def test_a_release_file_nested_too_deep_or_with_a_lone_surrogate_is_refused(db, tmp_path, capsys, damage):
    from test_import_echomind import make_release
    make_release(tmp_path / "echomind", cases=2, audio=False)
    understanding = tmp_path / "echomind" / "data_synthesis" / "MCQ" / "understanding.json"
    understanding.write_text(understanding.read_text().replace('"Which best describes the voice?"', damage, 1))
    message = refused(db, capsys, "import", "echomind", str(tmp_path / "echomind"))
    assert "understanding.json" in message
    release = tmp_path / "friendbench" / "validation"
    (release / "data").mkdir(parents=True)
    (release / "data" / "metadata.csv").write_text("clip_id,label,transcript\nc1,familiar,t1.json\n")
    (release / "data" / "t1.json").write_text('{"segments": [{"speaker": "A", "start": 0.1, "end": 0.5, '
                                              f'"transcript": {damage}}}]}}')
    message = refused(db, capsys, "import", "friendbench", str(tmp_path / "friendbench"))
    assert "t1.json" in message


@pytest.mark.parametrize("line, verdict", [
    ("They are not familiar with each other, I think.\n", "stranger"),
    ("The two speakers overlap and laugh, which strangers rarely do; I say familiar.\n", None),
    ("They chat about the weather; nothing personal.\n", None)])
def test_a_4mb_reply_gets_the_verdict_of_its_short_form(line, verdict):
    from app.benchmarks.friendbench import parse_familiarity
    huge = line * (4 * 1024 * 1024 // len(line))
    assert parse_familiarity(line) == parse_familiarity(huge) == verdict
    # one marked verdict at the very end of a long reply still decides it
    assert parse_familiarity(huge + "Final answer: familiar") == "familiar"
    # and a reply that points one way until its last clause, with no marker, is settled by neither
    if verdict == "stranger":
        assert parse_familiarity(huge + "Or perhaps they are friends.") is None


def test_an_annotation_table_in_utf16_is_said_to_be_so(db, tmp_path, capsys):
    path = table(tmp_path, "segs.csv", "clip,who,t0,t1,said\nc1,A,0,1,hi\n")
    assert dispatch(["import", "generic", str(path), *SEGMENTS, "--dataset", "d", "--db", str(db)]) == 0
    labels = tmp_path / "labels.csv"
    labels.write_bytes("stimulus,annotator,label_set,label,start_s,end_s\nc1,a,cues,laugh,0.1,0.2\n".encode("utf-16"))
    capsys.readouterr()
    message = refused(db, capsys, "annotations", "import", "csv", str(labels), "--dataset", "d")
    assert "labels.csv" in message and "UTF-16" in message and "s\x00t" not in message and "s t i" not in message
