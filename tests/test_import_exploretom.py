"""ExploreToM's story-question CSV."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from resources.sample_build import ncp as sample_build
from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.exploretom import ExploreToMImporter, NcpImporter
from storage.importers.writer import write_plan
from storage.store import Store

HEADER = ["story_structure", "infilled_story", "question", "expected_answer", "qprop=params", "qprop=nth_order",
          "is_false_belief", "sprop=global_idx"]


def counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("dataset", "stimulus")}


def write_csv(path: Path, rows: list[list[str]], header: list[str] = HEADER) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


ROWS = [
    ["A entered the kitchen.", "Ann walked into the kitchen.", "Where is Ann?", "kitchen", "([], 'Ann', "
     "'room_location-True')", "-1", "False", "0"],
    ["A moved the ball to the box.", "Ann put the ball in the box, then Bo left.", "Where will Bo look?", "box",
     "(['Bo'], 'ball', 'container_location-False')", "1", "True", "1"],
]


def test_rows_become_story_stimuli_with_orders_and_false_belief(tmp_path):
    path = write_csv(tmp_path / "exploretom.csv", ROWS)
    assert ExploreToMImporter().detect(path) > 0.9 and NcpImporter().detect(path) == 0
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, ExploreToMImporter().plan(path, ImportOptions(dataset_name="x")))
    rows = store.cursor().execute("SELECT external_id, kind, title, text, ground_truth, meta FROM stimulus"
                                  " ORDER BY 1").fetchall()
    assert [r[:5] for r in rows] == [
        ("000001", "story", "Where is Ann?", "Ann walked into the kitchen.", "kitchen"),
        ("000002", "story", "Where will Bo look?", "Ann put the ball in the box, then Bo left.", "box")]
    meta = json.loads(rows[1][5])
    assert meta["nth_order"] == 1 and meta["false_belief"] is True and meta["sprop=global_idx"] == "1"
    assert meta["story_structure"] == "A moved the ball to the box."


def test_raw_story_and_an_id_column_and_idempotency(tmp_path):
    header = ["raw_story", "question", "expected_answer", "qid"]
    path = write_csv(tmp_path / "q.csv", [["s1", "q1", "a1", "x-1"], ["s2", "q2", "a2", "x-2"]], header)
    store = Store.open(tmp_path / "t.duckdb")
    for _ in range(2):
        write_plan(store, ExploreToMImporter().plan(path, ImportOptions(dataset_name="x",
                                                                        mapping={"stimulus": "qid"})))
    assert store.cursor().execute("SELECT external_id, text FROM stimulus ORDER BY 1").fetchall() == [
        ("x-1", "s1"), ("x-2", "s2")]


def test_the_bundled_question_table(tmp_path):
    sample_build.build(tmp_path / "ncp")
    folder = tmp_path / "ncp" / "exploretom"
    assert ExploreToMImporter().detect(folder) > 0.8
    plan = ExploreToMImporter().plan(folder, ImportOptions())
    assert plan.frame("stimuli").height == 10
    orders = sorted(json.loads(m)["nth_order"] for m in plan.frame("stimuli")["meta"])
    assert set(orders) == {-1, 1, 2}


@pytest.mark.parametrize("rows, header, message", [
    (ROWS, ["story", "question", "expected_answer"], "no column infilled_story or story_structure or raw_story"),
    (ROWS, ["infilled_story", "question"], "no column expected_answer"),
    ([ROWS[0], [*ROWS[1][:5], "second", *ROWS[1][6:]]], HEADER, "exploretom.csv:3: field 'qprop=nth_order'"),
    ([ROWS[0], [*ROWS[1][:6], "maybe", *ROWS[1][7:]]], HEADER, "exploretom.csv:3: field 'is_false_belief'"),
    ([ROWS[0], [*ROWS[1][:2], "", *ROWS[1][3:]]], HEADER, "exploretom.csv:3: field 'question'"),
])
def test_bad_tables_fail_with_file_and_line(tmp_path, rows, header, message):
    path = write_csv(tmp_path / "exploretom.csv", [r[: len(header)] for r in rows], header)
    store = Store.open(tmp_path / "t.duckdb")
    with pytest.raises(ImportFailed) as failure:
        write_plan(store, ExploreToMImporter().plan(path, ImportOptions()))
    assert message in str(failure.value)
    assert counts(store) == {"dataset": 0, "stimulus": 0}


def test_non_utf8_bytes_name_the_line(tmp_path):
    path = tmp_path / "exploretom.csv"
    path.write_bytes(",".join(HEADER).encode() + b"\na,b,c,d,e,1,True,0\na,\xe9,c,d,e,1,True,1\n")
    with pytest.raises(ImportFailed, match=r"exploretom.csv:3.*not UTF-8"):
        ExploreToMImporter().plan(path, ImportOptions())


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    """One store for every example of a property test (opening one per example would dominate its time)."""
    store = Store.open(tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb")
    yield store
    store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.text(max_size=5), min_size=8, max_size=8), min_size=1, max_size=4))
def test_any_question_table_imports_or_fails_clearly(tmp_path, shared_store, rows):
    path = write_csv(tmp_path / "exploretom.csv", rows)
    before = counts(shared_store)
    try:
        write_plan(shared_store, ExploreToMImporter().plan(path, ImportOptions(dataset_name="fuzz")))
    except ImportFailed as exc:
        assert "exploretom.csv" in str(exc)
        assert counts(shared_store) == before


def test_a_story_or_question_of_white_space_alone_is_refused_as_python_reads_white_space(tmp_path):
    """Controls Python takes for spaces (\\x1c..\\x1f) and wide spaces are blank; a zero-width space is not."""
    rows = [[story, question, "box"] for story, question in [
        ("\x1c\x1f", "Where is the ball?"), ("Ann walked in.", "\u3000 \u2028"),
        ("\u200b", "Where is the cup?"), ("Ann walked in.", "Where is the key?")]]
    path = write_csv(tmp_path / "exploretom.csv", rows, ["infilled_story", "question", "expected_answer"])
    plan = ExploreToMImporter().plan(path, ImportOptions(skip_bad=True))
    assert [(p.line, p.field) for p in plan.problems] == [(2, "infilled_story"), (3, "question")]
    assert plan.frame("stimuli").get_column("external_id").to_list() == ["000003", "000004"]
