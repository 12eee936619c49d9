"""The reference tracker's communication scenarios, step by step: result, story and all three states.

Two files: the nine scenarios written to pin down talk itself, and two taken from random sequences where an
object's location is declared after talk (a person's second-order belief about themself changes there).
"""
from __future__ import annotations

import json

import pytest

from app.beliefs.replay import replay_steps
from tests.conftest import REFERENCE_DATA

GOLDEN_FILES = {
    "exploretom_golden_comm_traces.json": 9,
    "exploretom_golden_declare_after_talk.json": 2,
}


def _scenarios() -> list[tuple[str, str, dict]]:
    found = []
    for file_name in GOLDEN_FILES:
        path = REFERENCE_DATA / "exploretom" / file_name
        if path.exists():
            found += [(file_name, name, scenario)
                      for name, scenario in json.loads(path.read_text())["communication"].items()]
    return found


SCENARIOS = _scenarios()


@pytest.mark.parametrize("file_name,count", GOLDEN_FILES.items())
def test_reference_file_has_all_its_scenarios(reference_data, file_name, count):
    assert sum(1 for found_in, _, _ in SCENARIOS if found_in == file_name) == count


@pytest.mark.parametrize("file_name,name,scenario", SCENARIOS, ids=[name for _, name, _ in SCENARIOS])
def test_communication_matches_reference_after_every_step(reference_data, file_name, name, scenario):
    replay = replay_steps(scenario)
    for index, expected in enumerate(scenario["steps"]):
        record = replay.records[index]
        assert record.returned == expected["returned"], f"{name} step {index}: returned"
        assert list(record.outcome.story_sentences) == expected["story_sentences_added"], f"{name} step {index}"
        assert replay.state_at(index).to_nested() == expected["state_after"], f"{name} step {index}: state"
    assert replay.state_at(len(replay) - 1).to_nested() == scenario["final"]
    story = [s for record in replay.records for s in record.outcome.story_sentences]
    assert story == scenario["story"]
