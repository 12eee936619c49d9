"""The replay command as a user runs it: a subprocess, JSON in, JSON out, exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

GOLDEN_NAME = Path("exploretom") / "exploretom_golden_traces.json"
RUN = "from app.beliefs.cli import ncp_replay_main; import sys; sys.exit(ncp_replay_main(sys.argv[1:]))"


def _run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def _golden(reference_data: Path) -> dict:
    data = json.loads((reference_data / GOLDEN_NAME).read_text())
    return {f"{g}.{n}": s for g in ("upstream", "helper_authored") for n, s in data[g].items()}


def test_replay_prints_the_reference_states(reference_data, tmp_path):
    # One subprocess per scenario would be slow; the command runs on four very different ones (the
    # in-process replay of all twelve is checked in test_beliefs_golden.py).
    scenarios = _golden(reference_data)
    for name in ("upstream.test_tomi_story", "upstream.test_asymmetric", "upstream.test_fantom",
                 "helper_authored.edge_preconditions"):
        scenario = scenarios[name]
        trace = tmp_path / f"{name}.json"
        trace.write_text(json.dumps(scenario))  # extra keys (story, questions...) are ignored
        result = _run(trace)
        assert result.returncode == 0, result.stderr
        output = json.loads(result.stdout)
        assert [e["index"] for e in output] == list(range(len(scenario["steps"])))
        for element, expected in zip(output, scenario["steps"]):
            assert set(element) == {"index", "action", "args", "kwargs", "returned", "story_sentences_added",
                                    "state_after"}
            for key in ("action", "args", "kwargs", "returned", "story_sentences_added", "state_after"):
                assert element[key] == expected[key], (name, element["index"], key)


def test_goal_status_is_added_to_every_step(reference_data, tmp_path):
    scenario = _golden(reference_data)["upstream.test_tomi_story"]
    trace = {"steps": [{k: s[k] for k in ("action", "args", "kwargs")} for s in scenario["steps"]],
             "goal": {"atoms": ["Beth believes that ball is in the box",
                                {"holders": ["Anne", "Beth"], "entity": "ball", "property": "container",
                                 "value": "box"}],
                      "false_belief": True}}
    path = tmp_path / "tomi.json"
    path.write_text(json.dumps(trace))
    result = _run(path)
    assert result.returncode == 0, result.stderr
    goals = [e["goal"] for e in json.loads(result.stdout)]
    assert goals[1] == {"atoms": [{"text": "Beth believes that ball is in the box", "holds": False},
                                  {"text": "Anne believes that Beth believes that ball is in the box", "holds": False}],
                        "satisfied": False}
    assert [g["satisfied"] for g in goals] == [False, False, False, False, True, True]


@pytest.mark.parametrize("content,needle", [
    ('{"steps": [{"action": "enter_room", "args": ["A", "k"]}, {"action": "fly", "args": []}]}',
     "step 1 (0-based): unknown action 'fly'"),
    ('{"steps": [{"action": "enter_room", "args": ["A", "k"]}, {"action": "leave_room", "args": ["A"]}]}',
     "step 1 (0-based): leave_room: missing a required argument: 'room'"),
    ('{"steps": [{"action": "enter_room", "args": ["A", "k"], "kwargs": {"speed": 3}}]}',
     "step 0 (0-based): enter_room: got an unexpected keyword argument 'speed'"),
    ('{"steps": [', "not JSON"),
    ('{"moves": []}', "'steps' list"),
])
def test_malformed_trace_exits_2_with_a_step_numbered_message(tmp_path, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = _run(path)
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_failed_precondition_is_not_an_error(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"steps": [{"action": "leave_room", "args": ["Bob", "kitchen"]}]}))
    result = _run(path)
    assert result.returncode == 0
    assert json.loads(result.stdout)[0]["returned"] is False
