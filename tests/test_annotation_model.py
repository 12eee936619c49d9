"""The annotation model: the one write path, undo per stimulus, renames with history, imports without
duplicates, loud failed writes, edges that swap instead of collapsing. Qt-free, on real DuckDB stores."""
from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from app.annotation_model import AnnotationModel
from app.annotations import LABEL_SETS_SCOPE, move_edge, ordered_span
from app.changes import Topic
from app.cli import dispatch as cli_main
from app.export_service import export_annotations
from storage.annotations import EDITABLE_FIELDS, AnnotationError, AnnotationStore
from storage.errors import StoreWriteError
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.store import Store

LABEL_SETS = Path(__file__).resolve().parents[1] / "resources" / "label_sets"
STATE_KEYS = {*EDITABLE_FIELDS, "revision", "deleted"}


def _release(root: Path, annotations: list[dict] | None = None) -> ImportPlan:
    plan = ImportPlan(DatasetInfo("Dyads", "friendbench", root, "test"), "test")
    plan.add("stimuli", [{"external_id": name, "kind": "dyad"} for name in ("a", "b")])
    if annotations:
        plan.add("annotations", annotations)
    return plan


@pytest.fixture
def env(tmp_path):
    """A store with two stimuli, a, b, and the vocal cues set; a model on it for annotator ana."""
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, _release(tmp_path))
    notes = AnnotationStore(store)
    notes.load_label_set_file(LABEL_SETS / "vocal_cues.json")
    ids = {ext: sid for sid, ext in notes.stimulus_ids(notes.dataset(None).id).items()}
    model = AnnotationModel(notes, annotator="ana")
    yield model, ids["a"], ids["b"]
    store.close()


def stored(model: AnnotationModel, stimulus_id: int) -> list[tuple]:
    return [(a.label, a.start_s, a.end_s) for a in model.store.for_stimulus(stimulus_id)]


def test_undo_after_switching_stimulus_changes_nothing_off_screen(env):
    model, a, b = env
    model.load(a)
    model.add_label("vocal cues", "laugh", 1.0, 2.0)
    model.load(b)
    assert not model.can_undo()
    assert model.undo() is False
    assert stored(model, a) == [("laugh", 1.0, 2.0)]  # stimulus a, off screen, is untouched
    model.add_label("vocal cues", "sigh", 3.0, 4.0)
    assert model.undo() is True
    assert stored(model, b) == [] and stored(model, a) == [("laugh", 1.0, 2.0)]
    model.load(a)
    assert model.undo_text() == "Add laugh"
    model.undo()
    assert stored(model, a) == []


def test_undo_history_is_bounded_per_stimulus(env):
    model, a, _ = env
    model = AnnotationModel(model.store, annotator="ana", undo_limit=3)
    model.load(a)
    for i in range(5):
        model.add_label("vocal cues", "laugh", float(i), i + 0.5)
    undone = 0
    while model.undo():
        undone += 1
    assert undone == 3
    assert len(stored(model, a)) == 2


def test_the_model_updates_itself_from_what_the_write_returned(env):
    model, a, _ = env
    model.load(a)
    item = model.add_label("vocal cues", "laugh", 1.0, 2.0)
    model.move(item.id, (5.0, 6.0))
    model.relabel([item.id], "sigh")
    shown = model.annotations()
    assert [(x.label, x.start_s, x.end_s) for x in shown] == [("sigh", 5.0, 6.0)]
    assert shown == [x for x in model.read(a)]  # exactly what a fresh read would give
    model.undo()
    model.undo()
    assert [(x.label, x.start_s, x.end_s) for x in model.annotations()] == [("laugh", 1.0, 2.0)]


def test_renaming_a_label_writes_history_and_can_be_undone(env):
    model, a, b = env
    model.load(a)
    mine = model.add_label("vocal cues", "laugh", 1.0, 2.0)
    theirs = model.store.create(b, "bo", "vocal cues", "laugh", 0.5, 1.5)
    model.rename_label("vocal cues", "laugh", "giggle")
    assert [x.label for x in model.annotations()] == ["giggle"]  # the stimulus on screen follows at once
    assert stored(model, b) == [("giggle", 0.5, 1.5)]
    assert "giggle" in [label.name for label in model.labels("vocal cues")]
    event = model.store.history(annotation_id=theirs.id)[0]
    assert (event.action, event.annotator, event.before["label"], event.after["label"]) == \
        ("update", "ana", "laugh", "giggle")
    assert model.undo(LABEL_SETS_SCOPE)
    assert stored(model, a) == [("laugh", 1.0, 2.0)] and stored(model, b) == [("laugh", 0.5, 1.5)]
    assert "laugh" in [label.name for label in model.labels("vocal cues")]
    assert [e.action for e in model.store.history(annotation_id=mine.id)] == ["update", "update", "create"]
    assert model.redo(LABEL_SETS_SCOPE)
    assert stored(model, b) == [("giggle", 0.5, 1.5)]


def _set_as_seen(model: AnnotationModel, name: str) -> tuple:
    """A set as a user sees it: its fields and its labels' fields in order (store ids aside)."""
    found = model.store.snapshot_label_set(name)
    return found.scope, found.description, found.source, [
        (l.name, l.parent, l.colour, l.shortcut, l.description, l.ord, l.depth, l.aliases) for l in found.labels]


def test_label_set_edits_undo_to_the_set_as_it_was(env):
    model, _, _ = env
    before = model.store.snapshot_label_set("vocal cues")
    seen = _set_as_seen(model, "vocal cues")
    model.save_label("vocal cues", "laugh", colour="#123456", shortcut="l")
    model.add_label_after("vocal cues", "cough", None, None)
    model.reorder_labels("vocal cues", ["cough", *[label.name for label in before.labels]])
    model.delete_label("vocal cues", "sigh")
    assert "sigh" not in [label.name for label in model.labels("vocal cues")]
    while model.undo(LABEL_SETS_SCOPE):
        pass
    assert _set_as_seen(model, "vocal cues") == seen
    model.delete_label_set("vocal cues")
    assert model.label_set("vocal cues") is None
    model.undo(LABEL_SETS_SCOPE)
    assert _set_as_seen(model, "vocal cues") == seen


def test_every_history_event_has_the_same_shape(env, tmp_path):
    model, a, b = env
    model.load(a)
    item = model.add_label("vocal cues", "laugh", 1.0, 2.0)                       # an edit
    model.resize(item.id, (1.0, 3.0))
    model.rename_label("vocal cues", "laugh", "giggle")                           # a rename
    model.delete([item.id])
    model.import_rows([{"stimulus_id": b, "annotator": "cy", "label_set": "vocal cues", "label": "sigh",
                        "start_s": 0.0, "end_s": 1.0}], "file.jsonl")             # an annotation file
    write_plan(model.store.store, _release(tmp_path, [{"stimulus": "b", "annotator": "dee", "label_set": "vocal cues",
                                                       "label": "overlap", "start_s": 2.0, "end_s": 2.5}]))
    events = [e for s in (a, b) for e in model.store.history(stimulus_id=s)]   # and a release import
    assert {e.action for e in events} == {"create", "update", "delete"}
    for event in events:
        assert event.after is not None and set(event.after) == STATE_KEYS
        assert event.before is None if event.action == "create" else set(event.before) == STATE_KEYS


def test_release_import_twice_adds_no_label_twice(env, tmp_path):
    model, _, b = env
    plan = lambda: _release(tmp_path, [{"stimulus": "b", "annotator": "dee", "label_set": "vocal cues",  # noqa: E731
                                        "label": "overlap", "start_s": 2.0, "end_s": 2.5}] * 2)
    write_plan(model.store.store, plan())
    write_plan(model.store.store, plan())
    assert stored(model, b) == [("overlap", 2.0, 2.5)]


def test_importing_one_file_twice_through_the_cli_adds_nothing(env, tmp_path, capsys):
    model, a, b = env
    model.load(a)
    model.add_label("vocal cues", "laugh", 1.0, 2.0, note="soft")
    model.add_label("vocal cues", "laugh", 1.0, 2.0)  # the same key twice in the file: one label
    model.load(b)
    model.add_label("vocal cues", "sigh", 0.25, 0.75)
    out = export_annotations(model.store.store, "jsonl", tmp_path / "labels.jsonl").path
    fresh = tmp_path / "fresh.duckdb"
    other = Store.open(fresh)
    write_plan(other, _release(tmp_path))
    other.close()
    argv = ["annotations", "import", "jsonl", str(out), "--db", str(fresh), "--dataset", "Dyads"]
    assert cli_main(argv) == 0
    assert "added 2 labels" in capsys.readouterr().out
    assert cli_main(argv) == 0
    assert "added 0 labels" in capsys.readouterr().out
    again = Store.open(fresh)
    try:
        rows = again.cursor().execute("SELECT label, start_s, end_s FROM annotation ORDER BY start_s").fetchall()
        events = again.cursor().execute("SELECT count(*) FROM annotation_event").fetchall()[0][0]
    finally:
        again.close()
    assert rows == [("sigh", 0.25, 0.75), ("laugh", 1.0, 2.0)]
    assert events == 2


def _break_history(store: Store) -> None:
    """Make every write of the store fail inside DuckDB itself (its history table is gone)."""
    store.cursor().execute("ALTER TABLE annotation_event RENAME TO annotation_event_away")


def _mend_history(store: Store) -> None:
    store.cursor().execute("ALTER TABLE annotation_event_away RENAME TO annotation_event")


def test_a_read_only_store_makes_an_edit_fail_loudly_and_changes_nothing(env, tmp_path):
    model, a, _ = env
    model.load(a)
    model.add_label("vocal cues", "laugh", 1.0, 2.0)
    path = model.store.store.path
    model.store.store.close()
    read_only = Store(path, duckdb.connect(str(path), read_only=True))
    try:
        viewer = AnnotationModel(AnnotationStore(read_only), annotator="ana")
        viewer.load(a)
        shown = viewer.annotations()
        with pytest.raises(StoreWriteError, match="was not saved.*t.duckdb"):
            viewer.add_label("vocal cues", "sigh", 3.0, 4.0)
        with pytest.raises(StoreWriteError):
            viewer.move(shown[0].id, (5.0, 6.0))
        assert viewer.annotations() == shown and not viewer.can_undo()
        assert viewer.read(a) == shown
    finally:
        read_only.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="a read-only folder does not stop root")
def test_a_read_only_store_folder_makes_an_edit_fail_loudly(env):
    model, a, _ = env
    path = model.store.store.path
    model.store.store.close()
    path.parent.chmod(0o555)
    try:
        store = Store.open(path)
        try:
            viewer = AnnotationModel(AnnotationStore(store), annotator="ana")
            viewer.load(a)
            with pytest.raises(StoreWriteError):
                viewer.add_label("vocal cues", "sigh", 3.0, 4.0)
            assert viewer.annotations() == [] and not viewer.can_undo()
        finally:
            store.close()
    finally:
        path.parent.chmod(0o755)


def test_an_undo_whose_write_fails_does_not_move_the_stack(env):
    model, a, _ = env
    model.load(a)
    item = model.add_label("vocal cues", "laugh", 1.0, 2.0)
    model.move(item.id, (4.0, 5.0))
    _break_history(model.store.store)
    with pytest.raises(StoreWriteError):
        model.undo()
    assert model.undo_text() == "Move label" and model.stack.count(a) == 2
    assert model.get(item.id).start_s == 4.0
    _mend_history(model.store.store)
    assert stored(model, a) == [("laugh", 4.0, 5.0)]  # the failed undo left the store as it was
    assert model.undo()
    assert stored(model, a) == [("laugh", 1.0, 2.0)] and model.get(item.id).start_s == 1.0


def test_the_cli_import_into_a_store_that_refuses_writes_exits_1_with_one_line(env, tmp_path, capsys):
    model, a, _ = env
    model.load(a)
    model.add_label("vocal cues", "laugh", 1.0, 2.0)
    out = export_annotations(model.store.store, "jsonl", tmp_path / "labels.jsonl").path
    fresh = Store.open(tmp_path / "fresh.duckdb")
    write_plan(fresh, _release(tmp_path))
    _break_history(fresh)
    fresh.close()
    code = cli_main(["annotations", "import", "jsonl", str(out), "--db", str(tmp_path / "fresh.duckdb"),
                     "--dataset", "Dyads"])
    err = capsys.readouterr().err
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "was not saved" in err


def test_an_edge_dragged_past_the_other_swaps_and_never_leaves_zero_length(env):
    assert move_edge(1.0, 2.0, "start", 2.5) == (2.0, 2.5)
    assert move_edge(1.0, 2.0, "end", 0.4) == (0.4, 1.0)
    assert move_edge(1.0, 2.0, "start", 2.0) == (1.99, 2.0)   # landing on the other edge stops short
    assert move_edge(0.0, 1.0, "end", 0.0) == (0.0, 0.01)
    with pytest.raises(AnnotationError, match="longer than zero"):
        ordered_span(3.0, 3.0)
    model, a, _ = env
    model.load(a)
    item = model.add_label("vocal cues", "laugh", 1.0, 2.0)
    model.resize(item.id, (3.0, 2.0))              # the command rule, whatever view asked
    assert stored(model, a) == [("laugh", 2.0, 3.0)]
    with pytest.raises(AnnotationError):
        model.resize(item.id, (2.0, 2.0))
    assert stored(model, a) == [("laugh", 2.0, 3.0)]
    assert model.nudge(item.id, "start", 5.0) and stored(model, a) == [("laugh", 3.0, 7.0)]
    assert not model.nudge(item.id, "end", -4.0, grid_s=0.01) or stored(model, a)[0][2] > stored(model, a)[0][1]


def test_edits_wait_for_the_stimulus_to_be_read(env):
    model, a, _ = env
    model.expect(a)
    with pytest.raises(AnnotationError, match="still being read"):
        model.add_label("vocal cues", "laugh", 1.0, 2.0)
    assert model.undo() is False
    model.show(a, model.read(a))
    model.add_label("vocal cues", "laugh", 1.0, 2.0)
    assert json.loads(json.dumps(stored(model, a))) == [["laugh", 1.0, 2.0]]


def test_an_import_is_one_undo_step_per_stimulus_and_one_notice(env):
    model, a, b = env
    heard = []
    model.changes.subscribe([Topic.ANNOTATIONS], heard.append)
    model.load(a)
    rows = [{"stimulus_id": s, "annotator": "cy", "label_set": "vocal cues", "label": "laugh", "start_s": t,
             "end_s": t + 0.5} for s in (a, b) for t in (1.0, 2.0)]
    assert len(model.import_rows(rows, "file.csv")) == 4
    assert len(heard) == 1 and heard[0].stimulus_ids == {a, b}
    assert [x.start_s for x in model.annotations()] == [1.0, 2.0]  # the stimulus shown has its share at once
    assert model.undo_text() == "Import 2 labels from file.csv"
    model.undo()
    assert stored(model, a) == [] and len(stored(model, b)) == 2  # stimulus b keeps its share
    again = model.import_rows(rows, "file.csv")  # b's are still there; a's were taken back, so they return
    assert sorted((x.stimulus_id, x.start_s) for x in again) == [(a, 1.0), (a, 2.0)]


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB filesystem of its own (tmpfs), to fill up; the test is skipped where one cannot be mounted."""
    import subprocess

    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
                             capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("cannot mount a small filesystem here")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=True)  # lazily: a store a failed test left open is no bar


def _fill(folder: Path) -> Path:
    stats = os.statvfs(folder)
    filler = folder / "filler"
    with open(filler, "wb") as out:
        out.write(b"\0" * (stats.f_bavail * stats.f_frsize - 1024))
    return filler


def test_a_full_disk_makes_edits_and_the_cli_import_fail_loudly(small_disk, tmp_path, capsys):
    store = Store.open(small_disk / "s.duckdb")
    write_plan(store, _release(small_disk))
    store.checkpoint()
    model = AnnotationModel(AnnotationStore(store), annotator="ana")
    a = next(i for i, ext in model.store.stimulus_ids(model.store.dataset(None).id).items() if ext == "a")
    model.load(a)
    model.add_label("vocal cues", "laugh", 1.0, 2.0)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"stimulus": "a", "annotator": "cy", "label_set": "vocal cues", "label": "sigh",
                                  "start_s": 5.0, "end_s": 6.0, "note": "y" * 20_000}) + "\n")
    filler = _fill(small_disk)
    with pytest.raises(StoreWriteError, match="No space left"):
        model.add_label("vocal cues", "sigh", 3.0, 4.0, note="x" * 20_000)
    assert [x.label for x in model.annotations()] == ["laugh"] and model.stack.count(a) == 1
    store.close()
    filler.unlink()
    filler = _fill(small_disk)  # what closing the store gave back is taken again
    code = cli_main(["annotations", "import", "jsonl", str(labels), "--db", str(small_disk / "s.duckdb"),
                     "--dataset", "Dyads"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    filler.unlink()
    store = Store.open(small_disk / "s.duckdb")
    try:
        rows = store.cursor().execute("SELECT label FROM annotation WHERE deleted_at IS NULL").fetchall()
    finally:
        store.close()
    assert rows == [("laugh",)]  # what was acknowledged is there; nothing refused was half kept


def test_a_point_label_moves_as_a_point(env):
    model, a, _ = env
    model.import_rows([{"stimulus_id": a, "annotator": "ana", "label_set": "vocal cues", "label": "laugh",
                        "start_s": 2.0, "end_s": 2.0}], "points.TextGrid")
    model.load(a)
    [point] = model.annotations()
    model.move(point.id, (3.0, 3.0))
    assert stored(model, a) == [("laugh", 3.0, 3.0)]
