"""Every reference scenario, step by step: result, story and all three states equal the reference."""
from __future__ import annotations

import json

import pytest

from app.beliefs.replay import replay_steps
from tests.conftest import REFERENCE_DATA

GOLDEN = REFERENCE_DATA / "exploretom" / "exploretom_golden_traces.json"


def _scenarios() -> list[tuple[str, dict]]:
    if not GOLDEN.exists():
        return []
    data = json.loads(GOLDEN.read_text())
    return [(f"{group}.{name}", scenario)
            for group in ("upstream", "helper_authored") for name, scenario in data[group].items()]


SCENARIOS = _scenarios()


def test_reference_file_has_all_twelve_scenarios(reference_data):
    assert len(SCENARIOS) == 12


@pytest.mark.parametrize("name,scenario", SCENARIOS, ids=[name for name, _ in SCENARIOS])
def test_replay_matches_reference_after_every_step(reference_data, name, scenario):
    replay = replay_steps(scenario)
    assert len(replay) == len(scenario["steps"])
    for index, expected in enumerate(scenario["steps"]):
        record = replay.records[index]
        assert record.returned == expected["returned"], f"{name} step {index}: returned"
        assert list(record.outcome.story_sentences) == expected["story_sentences_added"], f"{name} step {index}"
        assert replay.state_at(index).to_nested() == expected["state_after"], f"{name} step {index}: state"
    assert replay.state_at(len(replay) - 1).to_nested() == scenario["final"]


@pytest.mark.parametrize("name,scenario", SCENARIOS, ids=[name for name, _ in SCENARIOS])
def test_random_access_to_states_matches_sequential(reference_data, name, scenario):
    replay = replay_steps(scenario)
    order = list(range(len(replay)))[::-1] + [0, len(replay) - 1, -1]
    for index in order:
        expected = scenario["steps"][index]["state_after"] if index >= 0 else {
            "world_state": {}, "first_order": {}, "second_order": {}}
        assert replay.state_at(index).to_nested() == expected
