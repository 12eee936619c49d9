"""The reference tracker's communication scenarios, step by step: result, story and all three states."""
from __future__ import annotations

import json

import pytest

from app.beliefs.replay import replay_steps
from tests.conftest import REFERENCE_DATA

GOLDEN = REFERENCE_DATA / "exploretom" / "exploretom_golden_comm_traces.json"


def _scenarios() -> list[tuple[str, dict]]:
    if not GOLDEN.exists():
        return []
    return list(json.loads(GOLDEN.read_text())["communication"].items())


SCENARIOS = _scenarios()


def test_reference_file_has_all_nine_scenarios(reference_data):
    assert len(SCENARIOS) == 9


@pytest.mark.parametrize("name,scenario", SCENARIOS, ids=[name for name, _ in SCENARIOS])
def test_communication_matches_reference_after_every_step(reference_data, name, scenario):
    replay = replay_steps(scenario)
    for index, expected in enumerate(scenario["steps"]):
        record = replay.records[index]
        assert record.returned == expected["returned"], f"{name} step {index}: returned"
        assert list(record.outcome.story_sentences) == expected["story_sentences_added"], f"{name} step {index}"
        assert replay.state_at(index).to_nested() == expected["state_after"], f"{name} step {index}: state"
    assert replay.state_at(len(replay) - 1).to_nested() == scenario["final"]
    story = [s for record in replay.records for s in record.outcome.story_sentences]
    assert story == scenario["story"]
