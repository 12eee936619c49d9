"""Importing ExploreToM stories: each structure becomes a trace the stepper opens, each question gets the
engine's answer, and a structure of no known form keeps its questions as text with a note."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from app.import_service import plan_import, run_import
from storage.importers.common import ImportOptions
from storage.queries import trace_steps
from storage.store import Store
from tests.conftest import ROOT

SAMPLE_CSV = ROOT / "resources" / "sample" / "ncp" / "exploretom" / "questions.csv"


def _stories(store: Store) -> list[tuple[int, str, str, dict]]:
    rows = store.cursor().execute("SELECT id, title, ground_truth, meta FROM stimulus WHERE kind = 'story'"
                                  " ORDER BY external_id").fetchall()
    return [(sid, title, truth, json.loads(meta)) for sid, title, truth, meta in rows]


def test_sample_stories_open_as_traces_and_the_engine_answers_every_question(tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    run_import(store, "exploretom", SAMPLE_CSV, ImportOptions(dataset_name="stories"))
    stories = _stories(store)
    assert len(stories) == 10
    for sid, title, truth, meta in stories:
        steps = trace_steps(store.cursor(), sid)[None]
        assert steps and steps[0].action == "enter_room", title
        assert meta["engine_answer"] == truth and meta["engine_matches"] is True, title
    peeled = next(meta for _sid, title, _t, meta in stories if title.startswith("Does Kofi believe"))
    assert peeled["engine_false_belief"] is False and isinstance(peeled["belief_step"], int)
    store.close()


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_raw_story_column_is_read_and_an_unreadable_structure_is_noted(tmp_path):
    story = "Anne entered the kitchen. Beth entered the kitchen. Anne moved the ball to the box, which is also " \
            "located in the kitchen. Beth left the kitchen. Anne moved the ball to the basket, which is also " \
            "located in the kitchen."
    path = _write(tmp_path / "stories.csv", ["raw_story", "infilled_story", "question", "expected_answer"], [
        [story, "Anne and Beth tidy up.", "In which container will Beth search for the ball?", "box"],
        ["Anne entered the kitchen. The kettle sang.", "A song.", "In which room will Anne search for the kettle?",
         "kitchen"],
    ])
    plan = plan_import("exploretom", path, ImportOptions(dataset_name="raw"))
    assert plan.frame("stimuli").height == 2   # the question of the unreadable story is kept, as text
    assert any("The kettle sang." in note and "sentence 2" in note for note in plan.notes)
    asked = plan.frame("story_questions")
    assert asked.get_column("stimulus").to_list() == ["000001"] and not plan.frame("trace_steps").height
    story = plan.frame("story_steps").filter(plan.frame("story_steps")["story"] == asked["story"][0])
    assert story.get_column("action").to_list() == ["enter_room", "enter_room", "move_object_container",
                                                    "leave_room", "move_object_container"]
    meta = json.loads(plan.frame("stimuli").filter(plan.frame("stimuli")["external_id"] == "000001")["meta"][0])
    assert meta["engine_answer"] == "box" and meta["engine_matches"] is True and meta["engine_false_belief"]


def test_metrics_report_how_many_expected_answers_the_engine_reproduces(tmp_path):
    import subprocess
    import sys

    db = tmp_path / "m.duckdb"
    run = [sys.executable, str(ROOT / "main.py")]
    imported = subprocess.run([*run, "import", "exploretom", str(SAMPLE_CSV), "--db", str(db), "--create",
                               "--dataset", "stories"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    metrics = subprocess.run([*run, "metrics", "--db", str(db), "--json"], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert metrics.returncode == 0, metrics.stderr
    dataset = next(d for d in json.loads(metrics.stdout)["datasets"] if d["dataset"] == "stories")
    assert dataset["engine_answers"] == {"questions": 10, "engine_answered": 10, "expected_reproduced": 10}
