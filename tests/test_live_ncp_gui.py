"""An NCP task run from the live panel against a scripted server: the calls appear one by one, the attempt is
stored with its trace and verdict, and opens in the stepper beside the imported attempts."""
from __future__ import annotations

import json

import pytest

from app.import_service import run_import
from app.live import LiveSettings
from app.live.service import LiveService
from app.ncp import detail_traces
from live_server import Reply, ScriptedServer, tool_call, unreachable_url
from storage import queries
from storage.importers.common import ImportOptions
from storage.store import Store
from widgets.live_panel import LivePanel

SETUP = [{"action": "location_declaration", "args": ["Anne", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["Beth", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["ball", "kitchen"], "kwargs": {"is_thinking_entity": False}}]
IMPORTED = [{"action": "move_object_container", "args": ["Anne", "ball", "basket"], "kwargs": {}}]
SOLVING = [
    Reply(tool_calls=[tool_call("move_object_container", "c1", person="Anne", obj="ball", container="basket")]),
    Reply(tool_calls=[tool_call("leave_room", "c2", person="Beth", room="kitchen")]),
    Reply(tool_calls=[tool_call("move_object_container", "c3", person="Anne", obj="ball", container="box")],
          usage=(90, 11)),
    Reply(text="Beth saw the ball go into the basket, then left; it is now in the box."),
]
LIVE_ROWS = ("SELECT p.id, p.correct, r.is_live, r.context, p.tokens_in FROM prediction p"
             " JOIN run r ON r.id = p.run_id WHERE r.is_live")
LIVE_STEPS = ("SELECT t.prediction_id, t.step_index, t.action, t.args FROM trace_step t"
              " JOIN prediction p ON p.id = t.prediction_id JOIN run r ON r.id = p.run_id WHERE r.is_live"
              " ORDER BY t.prediction_id, t.step_index")


@pytest.fixture
def env(qtbot, tmp_path):
    root = tmp_path / "ncp"
    (root / "tasks").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "tasks" / "sally.json").write_text(json.dumps({
        "task_id": "sally", "goal": ["Beth believes that ball is in the basket"], "false_belief": True,
        "context": "Anne and Beth are in the kitchen with a ball.", "initial_steps": SETUP}))
    (root / "traces" / "runs.jsonl").write_text(json.dumps({"model": "imported", "task_id": "sally",
                                                            "steps": IMPORTED}) + "\n")
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "ncp", root, ImportOptions(dataset_name="NCP live"))
    sid = store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'sally'").fetchall()[0][0]
    panel = LivePanel(LiveService(store))
    qtbot.addWidget(panel)
    panel.set_detail(queries.stimulus_detail(store.cursor(), sid))
    yield panel, store, sid
    panel.runner.wait()
    store.close()


def _point(panel, url, timeout=5.0):
    panel.set_live_settings(LiveSettings(base_url=url, model="scripted-model", api_key_env="THINSLICE_NO_KEY"))
    panel.timeout.setValue(timeout)


def _run(qtbot, panel):
    with qtbot.waitSignal(panel.answerFinished, timeout=15000) as caught:
        panel.send_button.click()
    return caught.args[0]


def _rows(panel):
    return [[panel.steps.topLevelItem(i).text(c) for c in range(4)] for i in range(panel.steps.topLevelItemCount())]


def test_the_panel_offers_the_ncp_choices(env):
    panel, _store, _sid = env
    assert panel.template_name.text().startswith("ncp.task")
    assert panel.form.isRowVisible(panel.max_steps) and not panel.form.isRowVisible(panel.role)
    assert not panel.steps.isHidden()


def test_a_solving_script_is_stored_correct_with_its_trace_beside_the_imported_attempt(qtbot, env):
    panel, store, sid = env
    shown = []
    panel.steps.model().rowsInserted.connect(
        lambda *_: shown.append(panel.steps.topLevelItemCount()) if panel.busy() else None)
    with ScriptedServer(SOLVING) as server:
        _point(panel, server.base_url)
        result = _run(qtbot, panel)
    assert result.correct is True
    assert shown == [1, 2, 3]   # each call was listed as it happened, not all at the end
    assert _rows(panel) == [
        ["1", "move_object_container(Anne, ball, basket)", "ok",
         "Anne moved the ball to the basket, which is also located in the kitchen."],
        ["2", "leave_room(Beth, kitchen)", "ok", "Beth left the kitchen."],
        ["3", "move_object_container(Anne, ball, box)", "ok",
         "Anne moved the ball to the box, which is also located in the kitchen."]]
    assert panel.message.text().startswith("Goal reached after 3 tool calls")
    assert panel.answer.toPlainText().startswith("Beth saw the ball")
    cur = store.cursor()
    [(pid, correct, is_live, context, tokens_in)] = cur.execute(LIVE_ROWS).fetchall()
    assert correct is True and is_live and context == "" and tokens_in == 12 + 12 + 90 + 12
    assert pid == result.prediction_id
    steps = cur.execute(LIVE_STEPS).fetchall()
    assert [(p, i, a, json.loads(args)) for p, i, a, args in steps] == [
        (pid, 0, "move_object_container", ["Anne", "ball", "basket"]),
        (pid, 1, "leave_room", ["Beth", "kitchen"]),
        (pid, 2, "move_object_container", ["Anne", "ball", "box"])]
    # the stepper gets the live attempt (after the set-up) beside the imported one
    traces = {label: steps for label, steps, _goal in detail_traces(queries.stimulus_detail(cur, sid))}
    assert len(traces["scripted-model"]) == len(SETUP) + 3 and len(traces["imported"]) == len(SETUP) + 1
    assert "Beth believes that ball is in the basket" in server.requests[0]["messages"][-1]["content"]


def test_a_failed_precondition_then_stopping_is_stored_wrong_and_replaces_the_earlier_attempt(qtbot, env):
    panel, store, _sid = env
    failing = [Reply(tool_calls=[tool_call("leave_room", "c1", person="Beth", room="garden")]),
               Reply(text="Beth cannot leave, so I stop.")]
    with ScriptedServer(SOLVING + failing) as server:
        _point(panel, server.base_url)
        assert _run(qtbot, panel).correct is True
        result = _run(qtbot, panel)
    assert result.correct is False
    assert _rows(panel) == [["1", "leave_room(Beth, garden)", "failed", "Not done: Beth is not in the garden."]]
    assert panel.message.text().startswith("Goal not reached (Beth believes that ball is in the basket does not hold)")
    cur = store.cursor()
    [(pid, correct, _live, _context, _tokens)] = cur.execute(LIVE_ROWS).fetchall()
    assert correct is False and pid == result.prediction_id
    assert [(p, a) for p, _i, a, _args in cur.execute(LIVE_STEPS).fetchall()] == [(pid, "leave_room")]
    orphans = cur.execute("SELECT count(*) FROM trace_step t WHERE t.prediction_id IS NOT NULL"
                          " AND t.prediction_id NOT IN (SELECT id FROM prediction)").fetchall()[0][0]
    assert orphans == 0


def test_cancel_mid_episode_stores_nothing(qtbot, env):
    panel, store, _sid = env
    panel.stream.setChecked(True)
    # the second answer starts streaming, then the server falls silent with the connection open
    script = [SOLVING[0], Reply(text="Now Beth should leave", tool_calls=SOLVING[1].tool_calls, stall_after=1),
              *SOLVING[2:]]
    with ScriptedServer(script) as server:
        _point(panel, server.base_url)
        panel.send_button.click()
        qtbot.waitUntil(lambda: panel.steps.topLevelItemCount() == 1, timeout=10000)
        panel.cancel_button.click()
        assert panel.message.text() == "Cancelled." and panel.send_button.isEnabled()
        assert panel.runner.wait(5000)   # the worker ends at once, not when the silent server answers
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM run WHERE is_live").fetchall()[0][0] == 0
    assert cur.execute("SELECT count(*) FROM trace_step WHERE prediction_id IS NOT NULL"
                       " AND prediction_id NOT IN (SELECT p.id FROM prediction p JOIN run r ON r.id = p.run_id"
                       " WHERE NOT r.is_live)").fetchall()[0][0] == 0
    assert panel.steps.topLevelItemCount() == 1 and panel.message.text() == "Cancelled."


def test_endpoint_down_is_a_clear_message(qtbot, env):
    panel, store, _sid = env
    url = unreachable_url()
    _point(panel, url)
    assert _run(qtbot, panel) is None
    assert panel.message.text() == f"Cannot reach {url}: connection refused"
    assert panel.send_button.isEnabled() and panel.steps.topLevelItemCount() == 0
    assert store.cursor().execute("SELECT count(*) FROM run WHERE is_live").fetchall()[0][0] == 0


def test_a_batch_over_ncp_tasks_runs_each_as_an_attempt_with_its_trace(qtbot, env):
    panel, store, sid = env
    with ScriptedServer(SOLVING) as server:
        _point(panel, server.base_url)
        panel.set_batch_ids([sid])
        with qtbot.waitSignal(panel.batchFinished, timeout=15000) as caught:
            panel.batch_button.click()
    assert list(caught.args[0].results) == [sid] and not caught.args[0].errors
    cur = store.cursor()
    [(pid, correct, _live, _context, _tokens)] = cur.execute(LIVE_ROWS).fetchall()
    assert correct is True and len(cur.execute(LIVE_STEPS).fetchall()) == 3
