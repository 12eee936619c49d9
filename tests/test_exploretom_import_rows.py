"""An ExploreToM or NCP import writes exactly the rows the row-by-row importer wrote: every table, every row,
the notes and the skipped rows, for generated stories, every kind of question, refused rows, several files,
the bundled ExploreToM and NCP samples (see `tests.exploretom_import_cases`)."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from app.beliefs.stories import interpret_stories
from storage.importers.common import ImportOptions, dumps, json_objects, json_values
from storage.importers.exploretom import ExploreToMImporter
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.schema import MIGRATIONS
from tests.exploretom_import_cases import load_snapshot, run_case
from tests.store_rows import changed_rows

CASES = load_snapshot()
META = 8   # the stimulus table's meta column, of version 1 (later versions add columns after it)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_an_import_writes_the_rows_it_always_wrote(case, tmp_path):
    found = json.loads(json.dumps(run_case(case, tmp_path), ensure_ascii=False, sort_keys=True))
    expected = case["expected"]
    assert found["said"] == expected["said"]
    # the store's own version rows follow the migrations, not the import: every version up to the latest
    versions = found["rows"].pop("schema_version")
    assert sorted(int(row[0]) for row in versions) == list(range(1, len(MIGRATIONS) + 1))
    assert changed_rows({t: r for t, r in expected["rows"].items() if t != "schema_version"}, found["rows"]) == {}


def test_the_cases_hold_what_they_are_for():
    """Stories the engine answers, questions it cannot, unreadable stories and refused rows are all there."""
    by_name = {c["name"]: c["expected"] for c in CASES}
    metas = [json.loads(row[META]) for row in by_name["awkward"]["rows"]["stimulus"]]
    assert {m.get("engine_answer") is None for m in metas} == {True, False}
    assert any("engine_answer" not in m for m in metas)   # the unreadable story's questions
    assert by_name["awkward"]["said"]["notes"] and by_name["awkward"]["said"]["skipped"]
    assert len(by_name["refused"]["said"]["skipped"]) == 8 and "refused" in by_name["refused_whole"]["said"]
    assert len(by_name["generated"]["rows"]["trace_step"]) > 5000


@pytest.mark.parametrize("importer, metas", [
    ("exploretom", [dumps({"engine_answer": "drawer", "nth_order": 2}), None, "{}",
                    dumps({"false_belief": None, "nth_order": 1, "params": "x", "story_structure": "s"})]),
    ("generic", ['{"nth_order":1}', json.dumps({"nth_order": 2, "belief_step": 7}), None, '{ }']),
])
def test_the_engine_answer_is_merged_into_any_meta_as_dumps_writes_it(importer, metas):
    """The reader's metas, one already holding an engine answer, and metas written some other way (without
    spaces, keys unsorted, none at all) all get the engine's answer merged in as `dumps` writes the object."""
    story = "Anne entered the kitchen. Anne moved the ball to the box, which is also located in the kitchen."
    question = "In which container will Anne search for the ball?"
    plan = ImportPlan(DatasetInfo(name="x", benchmark="exploretom", root=Path("."), source="x"), importer=importer,
                      mapping={"text": "story_structure"})
    plan.add("stimuli", pl.DataFrame({"external_id": [f"q{i}" for i in range(len(metas))], "kind": "story",
                                      "ground_truth": "box", "title": question, "text": story, "meta": metas}))
    interpret_stories(plan)
    answer = {"belief_step": 1, "engine_answer": "box", "engine_false_belief": False, "engine_matches": True}
    assert plan.frame("stimuli").get_column("meta").to_list() == [
        dumps({**(json.loads(m) if m else {}), **answer}) for m in metas]


def test_a_meta_made_by_polars_is_the_text_dumps_writes():
    """Every character a text may hold (controls, quotes, backslashes, line separators, beyond the BMP) is
    written into a meta exactly as `dumps` writes it, so metas built by columns equal the row-by-row ones."""
    texts = [chr(c) for c in [*range(0x800), 0x2028, 0x2029, 0xFEFF, 0xFFFF, 0x1F600, 0x10FFFF]]
    texts += ['a "quoted" \\ back\tslash\n', ""]
    flags = [None, True, False] * len(texts)
    frame = pl.DataFrame({"text": texts, "number": range(len(texts)), "flag": flags[:len(texts)]})
    made = frame.select(json_objects({"text": json_values(pl.col("text")), "number": json_values(pl.col("number")),
                                      "flag": json_values(pl.col("flag"))})).to_series().to_list()
    assert made == [dumps(row) for row in frame.to_dicts()]


def test_an_order_too_large_for_a_number_is_refused_like_any_other(tmp_path):
    """"inf" and "nan" are not whole numbers: their rows are listed as skipped, the others imported."""
    path = tmp_path / "orders.csv"
    story = "Anne entered the kitchen."
    path.write_text("raw_story,question,expected_answer,qprop=nth_order\n"
                    f"{story},In which room will Anne search for the cat?,kitchen,inf\n"
                    f"{story},In which room will Anne search for the dog?,kitchen,nan\n"
                    f"{story},In which room will Anne search for the hat?,kitchen,1\n", encoding="utf-8")
    plan = ExploreToMImporter().plan(path, ImportOptions(skip_bad=True))
    assert [str(p) for p in plan.problems] == [
        "orders.csv:2: field 'qprop=nth_order' found 'inf'; expected a whole number (-1, 1 or 2)",
        "orders.csv:3: field 'qprop=nth_order' found 'nan'; expected a whole number (-1, 1 or 2)"]
    assert plan.frame("stimuli").get_column("external_id").to_list() == ["000003"]
