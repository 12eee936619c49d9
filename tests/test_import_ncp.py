"""NCP-ExploreToM tasks, goal sentences, model traces, and ExploreToM's golden traces."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from app.import_service import plan_import
from resources.sample_build import ncp as sample_build
from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.exploretom import NcpImporter
from storage.importers.writer import write_plan
from storage.store import Store

TABLES = ["dataset", "stimulus", "model", "run", "prediction", "trace_step", "goal_atom"]


def counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ncp")
    sample_build.build(folder)
    return folder


# ----- golden traces ----------------------------------------------------------------------------------
def test_golden_traces_import_as_twelve_tasks_with_their_steps(reference_data, tmp_path):
    path = reference_data / "exploretom" / "exploretom_golden_traces.json"
    golden = json.loads(path.read_text(encoding="utf-8"))
    expected = {f"{group}.{name}": len(s["steps"]) for group, scenarios in golden.items()
                if not group.startswith("_") for name, s in scenarios.items()}
    assert len(expected) == 12
    assert NcpImporter().detect(path) >= 0.9
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, plan_import("ncp", path, ImportOptions(dataset_name="golden")))
    cur = store.cursor()
    found = dict(cur.execute("SELECT s.external_id, count(t.id) FROM stimulus s JOIN trace_step t"
                             " ON t.stimulus_id = s.id AND t.prediction_id IS NULL GROUP BY 1").fetchall())
    assert found == expected
    assert cur.execute("SELECT count(*) FROM goal_atom").fetchone()[0] == 0
    step = cur.execute("SELECT t.action, t.args, t.kwargs FROM trace_step t JOIN stimulus s ON s.id = t.stimulus_id"
                       " WHERE s.external_id = 'upstream.test_tomi_story' AND t.step_index = 2").fetchone()
    assert step[0] == "move_object_container" and json.loads(step[1]) == ["Beth"]
    assert json.loads(step[2]) == {"obj": "ball", "container": "box"}
    meta = json.loads(cur.execute("SELECT meta FROM stimulus WHERE external_id = 'helper_authored.edge_preconditions'"
                                  ).fetchone()[0])
    assert meta["reference_returned"] == [True, False, False, False, True, False, True, False]
    assert meta["setup_steps"] == 0


# ----- the sample --------------------------------------------------------------------------------------
def test_the_sample_tasks_goals_and_traces(sample, tmp_path):
    assert NcpImporter().detect(sample) >= 0.8
    store = Store.open(tmp_path / "t.duckdb")
    plan = plan_import("ncp", sample, ImportOptions(dataset_name="NCP"))
    write_plan(store, plan)
    cur = store.cursor()
    assert counts(store)["stimulus"] == 6 and counts(store)["prediction"] == 12 and counts(store)["goal_atom"] == 10
    metas = [json.loads(m) for (m,) in cur.execute("SELECT meta FROM stimulus ORDER BY external_id").fetchall()]
    assert {m["goal_order"] for m in metas} == {1, 2} and {m["false_belief"] for m in metas} == {True, False}
    assert {m["goal_size"] for m in metas} == {1, 2, 3}
    assert set().union(*(m["goal_types"] for m in metas)) == {
        "object in room", "person in room", "object in container", "object property value"}
    assert cur.execute("SELECT count(*) FROM prediction WHERE correct IS NOT NULL").fetchone()[0] == 0
    steps = cur.execute("SELECT m.name, count(*) FROM trace_step t JOIN prediction p ON p.id = t.prediction_id"
                        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id GROUP BY 1 ORDER BY 1"
                        ).fetchall()
    assert steps == [(sample_build.LANTERN, sum(len(s) for s in sample_build.TRACES[sample_build.LANTERN].values())),
                     (sample_build.QUIRE, sum(len(s) for s in sample_build.TRACES[sample_build.QUIRE].values()))]
    setup = cur.execute("SELECT count(*) FROM trace_step WHERE prediction_id IS NULL").fetchone()[0]
    assert setup == sum(len(t["initial_steps"]) for t in sample_build.TASKS)


def test_sample_traces_reach_the_goals_the_builder_says(sample):
    beliefs = pytest.importorskip("app.beliefs")
    plan = plan_import("ncp", sample, ImportOptions())
    steps, atoms = plan.frame("trace_steps"), plan.frame("goal_atoms")
    metas = {r["external_id"]: json.loads(r["meta"]) for r in plan.frame("stimuli").iter_rows(named=True)}

    def as_steps(frame):
        return [{"action": r["action"], "args": json.loads(r["args"]), "kwargs": json.loads(r["kwargs"])}
                for r in frame.sort("step_index").iter_rows(named=True)]

    for (model, task), (reached, failing) in sample_build.EXPECTED.items():
        setup = as_steps(steps.filter((steps["stimulus"] == task) & steps["model"].is_null()))
        mine = as_steps(steps.filter((steps["stimulus"] == task) & (steps["model"] == model)))
        replay = beliefs.replay_steps(setup + mine)
        goal = beliefs.goal_from_json({"atoms": [
            {"holders": json.loads(r["holders"]), "entity": r["entity"], "property": r["property"],
             "value": r["value"]} for r in atoms.filter(atoms["stimulus"] == task).sort("ord").iter_rows(named=True)],
            "false_belief": metas[task]["false_belief"]})
        timeline = beliefs.evaluate_goal(goal, replay)
        failed = tuple(i - len(setup) for i, r in enumerate(replay.records) if not r.returned)
        assert (timeline.satisfied[-1], failed) == (reached, failing), (model, task)


def test_reimport_is_idempotent_and_a_second_model_adds_alone(sample, tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    tasks_only = tmp_path / "tasks_only"
    (tasks_only / "tasks").mkdir(parents=True)
    for task in (sample / "tasks").glob("*.json"):
        (tasks_only / "tasks" / task.name).write_bytes(task.read_bytes())
    write_plan(store, plan_import("ncp", tasks_only, ImportOptions(dataset_name="NCP")))
    assert counts(store)["prediction"] == 0
    # one model's traces on their own, for the dataset imported above
    write_plan(store, plan_import("ncp", sample / "traces" / "quire-2.jsonl", ImportOptions(dataset_name="NCP")))
    assert counts(store)["prediction"] == 6 and counts(store)["model"] == 1
    write_plan(store, plan_import("ncp", sample, ImportOptions(dataset_name="NCP")))
    once = counts(store)
    write_plan(store, plan_import("ncp", sample, ImportOptions(dataset_name="NCP")))
    assert counts(store) == once and once["prediction"] == 12


def _task_folder(tmp_path: Path, task: dict, trace: dict | None = None) -> Path:
    folder = tmp_path / "rel"
    (folder / "tasks").mkdir(parents=True, exist_ok=True)
    (folder / "tasks" / "t1.json").write_text(json.dumps(task), encoding="utf-8")
    if trace is not None:
        (folder / "traces").mkdir(exist_ok=True)
        (folder / "traces" / "m.jsonl").write_text(json.dumps(trace) + "\n", encoding="utf-8")
    return folder


GOOD_TASK = {"task_id": "t1", "goal": ["Ann believes that ball is in the box"], "false_belief": False,
             "initial_steps": [{"action": "location_declaration", "args": ["Ann", "hall"], "kwargs": {}}]}


@pytest.mark.parametrize("task, trace, message", [
    ({**GOOD_TASK, "initial_steps": [{"action": "teleport", "args": []}]}, None,
     "tasks/t1.json:1: field 'initial_steps[0].action' found 'teleport'"),
    ({**GOOD_TASK, "goal": ["ball"]}, None, "tasks/t1.json:1: field 'goal[0]'"),
    ({**GOOD_TASK, "goal": [{"holders": "Ann Bob Cy".split(), "entity": "x", "property": "room", "value": "y"}]},
     None, "at most two"),
    ({**GOOD_TASK, "false_belief": "sometimes"}, None, "field 'false_belief'"),
    (GOOD_TASK, {"model": "m", "task_id": "t9", "steps": []}, "traces/m.jsonl:1: field 'task_id' found 't9'"),
    (GOOD_TASK, {"model": "m", "task_id": "t1", "steps": [{"action": "enter_room", "args": "Ann"}]},
     "traces/m.jsonl:1: field 'steps[0].args'"),
    (GOOD_TASK, {"task_id": "t1", "steps": []}, "traces/m.jsonl:1: field 'model'"),
])
def test_bad_tasks_and_traces_fail_with_file_and_record(tmp_path, task, trace, message):
    folder = _task_folder(tmp_path, task, trace)
    store = Store.open(tmp_path / "t.duckdb")
    with pytest.raises(ImportFailed) as failure:
        write_plan(store, plan_import("ncp", folder, ImportOptions()))
    assert message in str(failure.value)
    assert counts(store) == {t: 0 for t in TABLES}


def test_a_model_may_call_an_action_that_does_not_exist(tmp_path):
    folder = _task_folder(tmp_path, GOOD_TASK, {"model": "m", "task_id": "t1",
                                                "steps": [["fly_to", "Ann", "moon"]]})
    plan = plan_import("ncp", folder, ImportOptions())
    rows = plan.frame("trace_steps").filter(plan.frame("trace_steps")["model"] == "m")
    assert rows["action"].to_list() == ["fly_to"] and json.loads(rows["args"][0]) == ["Ann", "moon"]


def test_duplicate_task_ids_and_truncated_json(tmp_path):
    folder = tmp_path / "dup"
    folder.mkdir()
    (folder / "tasks.json").write_text(json.dumps({"tasks": [GOOD_TASK, GOOD_TASK]}), encoding="utf-8")
    with pytest.raises(ImportFailed, match=r"tasks.json:2: field 'task_id' found 't1'"):
        plan_import("ncp", folder / "tasks.json", ImportOptions())
    (folder / "tasks.json").write_text(json.dumps({"tasks": [GOOD_TASK]})[:40], encoding="utf-8")
    with pytest.raises(ImportFailed, match=r"tasks.json:1.*invalid JSON"):
        plan_import("ncp", folder / "tasks.json", ImportOptions())


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    """One store for every example of a property test (opening one per example would dominate its time)."""
    store = Store.open(tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb")
    yield store
    store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["goal", "initial_steps", "false_belief", "task_id", "context"]),
                       st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12)),
                                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                            st.dictionaries(st.sampled_from(
                                                                ["action", "args", "kwargs", "holders", "entity",
                                                                 "property", "value"]), inner, max_size=4)),
                                    max_leaves=8),
                       max_size=3))
def test_any_task_imports_or_fails_clearly(tmp_path, shared_store, patch):
    folder = _task_folder(tmp_path, {**GOOD_TASK, **patch})
    before = counts(shared_store)
    try:
        write_plan(shared_store, plan_import("ncp", folder, ImportOptions(dataset_name="fuzz")), replace_stimuli=True)
    except ImportFailed as exc:
        assert "t1.json" in str(exc)
        assert counts(shared_store) == before
