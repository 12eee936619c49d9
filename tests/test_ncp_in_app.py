"""NCP tasks in the app: attempts scored by the engine at import, and stepped through from the table."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.import_service import run_import
from app.benchmarks.ncp import score_attempt
from storage.importers.common import ImportOptions
from storage.store import Store

SETUP = [{"action": "location_declaration", "args": ["Anne", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["Beth", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["ball", "kitchen"], "kwargs": {"is_thinking_entity": False}}]
SUCCESS = [{"action": "move_object_container", "args": ["Anne", "ball", "basket"], "kwargs": {}},
           {"action": "leave_room", "args": ["Beth", "kitchen"], "kwargs": {}},
           {"action": "move_object_container", "args": ["Anne", "ball", "box"], "kwargs": {}}]
FAILURE = [{"action": "move_object_container", "args": ["Anne", "ball", "basket"], "kwargs": {}},
           {"action": "move_object_container", "args": ["Anne", "ball", "box"], "kwargs": {}}]


@pytest.fixture
def ncp_store(tmp_path):
    root = tmp_path / "ncp"
    (root / "tasks").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "tasks" / "t1.json").write_text(json.dumps({
        "task_id": "t1", "goal": ["Beth believes that ball is in the basket"], "false_belief": True,
        "initial_steps": SETUP}))
    (root / "traces" / "runs.jsonl").write_text(
        json.dumps({"model": "good", "task_id": "t1", "steps": SUCCESS}) + "\n"
        + json.dumps({"model": "bad", "task_id": "t1", "steps": FAILURE}) + "\n")
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "ncp", root, ImportOptions(dataset_name="NCP test"))
    yield store
    store.close()


def test_false_belief_goal_is_reached_only_by_the_trace_that_creates_it():
    goal = {"atoms": ["Beth believes that ball is in the basket"], "false_belief": True}
    assert score_attempt(SETUP + SUCCESS, goal).reached is True
    assert score_attempt(SETUP + FAILURE, goal).reached is False
    assert score_attempt(SETUP + [{"action": "fly", "args": [], "kwargs": {}}], goal).reached is False


def test_imported_attempts_are_scored_and_shown_in_the_stepper(qtbot, ncp_store, window_for):
    verdicts = dict(ncp_store.cursor().execute(
        "SELECT m.name, p.correct FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
    ).fetchall())
    assert verdicts == {"good": True, "bad": False}
    win = window_for(ncp_store)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None, timeout=10000)
    page = win.ncp_page
    assert win.stimulus_view.current_page() is page
    labels = [page.first.itemText(i) for i in range(page.first.count())]
    assert any(label.startswith("bad") for label in labels) and any(label.startswith("good") for label in labels)
    assert page.stepper.step_count() in (5, 6)
    assert page.stepper.step() == page.stepper.step_count() - 1
    page.stepper.setFocus()
    qtbot.keyClick(page.stepper, Qt.Key.Key_Home)
    assert page.stepper.step() == 0
    page.second.setCurrentIndex(page.second.count() - 1)
    assert page.stepper.pane_count() == 2
    win.close()


def test_a_story_without_an_action_trace_is_shown_as_its_text(qtbot):
    from storage.records import StimulusDetail
    from widgets.ncp_task_page import NcpTaskPage

    story = "Maren slipped the key into the drawer. While Tobias was out, she hid it in the tin."
    detail = StimulusDetail(1, 1, "stories", "exploretom", "000002", "story", "drawer", None,
                            "Where will Tobias look for the key?", story, {"false_belief": True}, (), (), (), ())
    page = NcpTaskPage(lambda _detail: [])
    qtbot.addWidget(page)
    page.resize(900, 600)
    page.show()
    page.set_detail(detail)
    assert page.story.isVisibleTo(page) and not page.scroll.isVisibleTo(page)
    assert "hid it in the tin" in page.story.text() and "No action trace" in page.story.text()
    assert not page.first.isEnabled()
    page.set_detail(None)
    page.traces_of = lambda _detail: [("reference", SETUP + SUCCESS, None)]
    page.set_detail(detail)
    assert page.scroll.isVisibleTo(page) and not page.story.isVisibleTo(page)
    assert page.stepper.step_count() == len(SETUP + SUCCESS)
