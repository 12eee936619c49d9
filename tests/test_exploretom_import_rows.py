"""An ExploreToM or NCP import writes exactly the rows the row-by-row importer wrote: every table, every row,
the notes and the skipped rows, for generated stories, every kind of question, refused rows, several files,
the bundled sample and ExploreToM's golden traces (see `tests.exploretom_import_cases`)."""
from __future__ import annotations

import json

import pytest

from tests.exploretom_import_cases import load_snapshot, run_case
from tests.store_rows import changed_rows

CASES = load_snapshot()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_an_import_writes_the_rows_it_always_wrote(case, tmp_path):
    found = json.loads(json.dumps(run_case(case, tmp_path), ensure_ascii=False, sort_keys=True))
    expected = case["expected"]
    assert found["said"] == expected["said"]
    assert changed_rows(expected["rows"], found["rows"]) == {}


def test_the_cases_hold_what_they_are_for():
    """Stories the engine answers, questions it cannot, unreadable stories and refused rows are all there."""
    by_name = {c["name"]: c["expected"] for c in CASES}
    metas = [json.loads(row[-1]) for row in by_name["awkward"]["rows"]["stimulus"]]
    assert {m.get("engine_answer") is None for m in metas} == {True, False}
    assert any("engine_answer" not in m for m in metas)   # the unreadable story's questions
    assert by_name["awkward"]["said"]["notes"] and by_name["awkward"]["said"]["skipped"]
    assert len(by_name["refused"]["said"]["skipped"]) == 8 and "refused" in by_name["refused_whole"]["said"]
    assert len(by_name["generated"]["rows"]["trace_step"]) > 5000
