"""An ExploreToM story's steps are stored once for all its questions, and every question still reads them as its
reference trace: in a store the importer of version 9 wrote (one copy per question), after a second import of
the same release, and in the counts `thinslice info` prints."""
from __future__ import annotations

import datetime
import json

import polars as pl
import pytest

from app.import_service import run_import
from storage.importers.common import ImportOptions
from storage.importers.effect import StimuliWouldChange
from storage.queries import info_summary, trace_steps
from storage.store import Store
from tests.exploretom_import_cases import SAMPLE_CSV, load_snapshot
from tests.store_rows import changed_rows, store_rows

_CLOCK = datetime.datetime(2026, 1, 1)


def _version_9_store(path, rows: dict[str, list[list]]) -> Store:
    """A store at version 9 holding `rows` (a golden case's rows: what the importer of that version wrote)."""
    store = Store.open(path, migrate_to=9)
    cur = store.cursor()
    for table, table_rows in rows.items():
        if table == "schema_version" or not table_rows:
            continue
        columns = [c for (c,) in cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' AND table_name = ?"
            " ORDER BY ordinal_position", [table]).fetchall()]
        if table == "trace_step":
            columns = columns[1:]   # the case lists a step without its own id
        # columns later versions add come last in a case's rows
        values = [[_CLOCK if v == "<time>" else v for v in row[:len(columns)]] for row in table_rows]
        frame = pl.DataFrame(values, schema=columns, orient="row", infer_schema_length=None)
        cur.register("incoming", frame)
        cur.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM incoming")
        cur.unregister("incoming")
    return store


def test_a_store_of_version_9_with_stories_opens_with_every_question_steps(tmp_path):
    case = next(c for c in load_snapshot() if c["name"] == "awkward")   # stories, unreadable ones, refusals
    rows = case["expected"]["rows"]
    questions = sorted({row[0] for row in rows["trace_step"]})
    old = _version_9_store(tmp_path / "old.duckdb", rows)
    cur = old.cursor()
    # a model's attempt on a task, which stays where it is
    cur.execute("INSERT INTO trace_step (stimulus_id, prediction_id, step_index, action, args, kwargs)"
                " VALUES (?, 7, 0, 'enter_room', '[\"Anne\", \"hall\"]', '{}')", [questions[0]])
    before = store_rows(old)
    old.close()

    # version 10 moves the copies and changes nothing else
    moved = Store.open(tmp_path / "old.duckdb", migrate_to=10)
    after = store_rows(moved)
    moved.close()
    changed = changed_rows(before, after)
    assert set(changed) == {"schema_version", "trace_step", "story_step", "story_question"}
    gone, came = changed["trace_step"]
    assert not came and {row[1:] for row in gone} == {tuple(row) for row in rows["trace_step"]}
    assert len(after["story_question"]) == len(questions)
    # each story once: as many steps as the distinct stories of its questions have
    stories = {tuple(map(tuple, [r[2:] for r in rows["trace_step"] if r[0] == sid])) for sid in questions}
    assert len(after["story_step"]) == sum(len(steps) for steps in stories) < len(gone)

    store = Store.open(tmp_path / "old.duckdb")
    cur = store.cursor()
    read = {sid: trace_steps(cur, sid) for sid in questions}
    for sid in questions:
        steps = sorted(row[1:] for row in rows["trace_step"] if row[0] == sid)
        assert [(s.step_index, s.action, s.args, s.kwargs) for s in read[sid].pop(None)] == [
            (index, action, json.loads(args), json.loads(kwargs)) for _p, index, action, args, kwargs in steps]
    assert [(s.action, s.args) for s in read[questions[0]].pop(7)] == [("enter_room", ["Anne", "hall"])]
    assert not any(read.values())
    store.close()


def test_a_second_import_of_a_release_adds_no_steps_and_changes_nothing(tmp_path):
    store = Store.open(tmp_path / "s.duckdb")
    first = run_import(store, "exploretom", SAMPLE_CSV, ImportOptions(dataset_name="stories"))
    assert first.written["story_steps"] == store.cursor().execute("SELECT count(*) FROM story_step").fetchone()[0]
    before = store_rows(store)
    again = run_import(store, "exploretom", SAMPLE_CSV, ImportOptions(dataset_name="stories"))
    assert "story_steps" not in again.written
    assert changed_rows(before, store_rows(store)) == {}
    store.close()


def test_more_questions_of_a_stored_story_name_that_story(tmp_path):
    """The release's first question of each story, then the whole release: the later questions name the stories
    already stored, whose steps (and their row order) stay as they were."""
    lines = SAMPLE_CSV.read_text(encoding="utf-8").splitlines(keepends=True)
    first = tmp_path / "questions.csv"
    first.write_text(lines[0] + lines[1] + lines[6], encoding="utf-8")   # ids 000001 and 000002
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "exploretom", first, ImportOptions(dataset_name="stories"))
    cur = store.cursor()
    steps = cur.execute("SELECT * FROM story_step ORDER BY story_id, step_index").fetchall()
    assert len({row[0] for row in steps}) == 2
    first.write_text(lines[0] + lines[1] + lines[6] + "".join(lines[2:6] + lines[7:]), encoding="utf-8")
    summary = run_import(store, "exploretom", first, ImportOptions(dataset_name="stories"))
    assert "story_steps" not in summary.written and summary.written["stimuli"] == 8
    assert cur.execute("SELECT * FROM story_step ORDER BY story_id, step_index").fetchall() == steps
    by_story = cur.execute("SELECT q.story_id, list(s.title ORDER BY s.title) FROM story_question q"
                           " JOIN stimulus s ON s.id = q.stimulus_id GROUP BY 1 ORDER BY 1").fetchall()
    sample = pl.read_csv(SAMPLE_CSV)
    assert sorted(titles for _story, titles in by_story) == sorted(
        sorted(group.get_column("question").to_list()) for group in sample.partition_by("story_structure"))
    store.close()


def test_a_question_whose_story_would_read_otherwise_is_refused_unless_replacing(tmp_path):
    """A release that gains a question naming a state's type changes the steps of its story: the stored
    question of that story keeps its fields, but its reference trace would change, which is refused as a
    changed task's trace is, and written when replacing is asked for."""
    story = "Anne entered the kitchen. Anne peeled the apple."
    header = "story_structure,question,expected_answer,qprop=params\n"
    where = f"{story},In which room will Anne search for the apple?,kitchen,\n"
    typed = (f"{story},Does Anne believe that the apple peeled? Answer yes or no.,yes,"
             "\"(['Anne'], 'apple', '<state_update> <is_skinned>-True')\"\n")
    path = tmp_path / "questions.csv"
    path.write_text(header + where, encoding="utf-8")
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "exploretom", path, ImportOptions(dataset_name="stories"))
    before = store_rows(store)
    path.write_text(header + where + typed, encoding="utf-8")
    with pytest.raises(StimuliWouldChange) as refused:
        run_import(store, "exploretom", path, ImportOptions(dataset_name="stories"))
    assert [(c.stimulus, c.field) for c in refused.value.changes] == [("000001", "reference trace")]
    assert changed_rows(before, store_rows(store)) == {}
    run_import(store, "exploretom", path, ImportOptions(dataset_name="stories", replace_stimuli=True))
    cur = store.cursor()
    for sid, in cur.execute("SELECT id FROM stimulus").fetchall():
        assert trace_steps(cur, sid)[None][1].args[3] == "<is_skinned>"
    assert cur.execute("SELECT count(DISTINCT story_id) FROM story_step").fetchone()[0] == 1
    store.close()


def test_info_counts_a_question_steps_as_its_trace(tmp_path):
    """Ten questions of two stories of five steps: fifty steps, as before the stories were stored once."""
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "exploretom", SAMPLE_CSV, ImportOptions(dataset_name="stories"))
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM story_step").fetchone()[0] == 10
    [dataset] = info_summary(cur)["datasets"]
    assert dataset["counts"]["trace_steps"] == 50
    store.close()
