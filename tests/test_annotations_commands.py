"""Qt-free edit commands: each writes through to the store and returns what it wrote; undo returns exactly to
the state before. Commands are made from rows as shown (here: as the store hands them back)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.annotations import (AddLabel, BulkRelabel, DeleteLabels, LiveLabeler, MoveLabel, Relabel, ResizeLabel,
                             SetNote, SetWholeLabel, next_label, nudge, previous_label, set_stimulus_note, snap,
                             stimulus_note)
from storage.annotations import AnnotationError, AnnotationStore
from storage.store import Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'friendbench', '/tmp/d')"
                          " RETURNING id").fetchone()[0]
    stim = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'fb-001', 'dyad')"
                       " RETURNING id", [dataset]).fetchone()[0]
    yield AnnotationStore(store), int(stim)
    store.close()


def labels(store, stim, annotator=None):
    return [(a.label, a.start_s, a.end_s) for a in store.for_stimulus(stim, annotator=annotator)]


def test_add_undo_redo_keeps_one_row(env):
    store, stim = env
    add = AddLabel(store, "ana", stim, "vocal cues", "laugh", 8.0, 9.0)
    [made] = add.redo()
    assert made.deleted is False and (made.label, made.start_s) == ("laugh", 8.0)
    [gone] = add.undo()
    assert gone.deleted and labels(store, stim) == []
    add.redo()
    assert labels(store, stim) == [("laugh", 8.0, 9.0)]
    assert [e.action for e in store.history(annotation_id=add.annotation_id)] == ["restore", "delete", "create"]


def test_move_resize_relabel_note_delete_undo(env):
    store, stim = env
    add = AddLabel(store, "ana", stim, "vocal cues", "laugh", 8.0, 9.0)
    add.redo()
    ident = add.annotation_id
    makers = [lambda item: MoveLabel(store, "ana", item, (10.0, 11.0)),
              lambda item: ResizeLabel(store, "ana", item, (10.0, 12.5)),
              lambda item: Relabel(store, "ana", item, "sigh"), lambda item: SetNote(store, "ana", item, "quiet"),
              lambda item: DeleteLabels(store, "ana", [item])]
    states, steps = [], []
    for make in makers:  # each command reads the state it starts from when it is made, as in the GUI
        states.append(store.get(ident))
        steps.append(make(states[-1]))
        assert steps[-1].redo() == [store.get(ident)]  # what the command returns is what is stored
    for step, state in zip(reversed(steps), reversed(states)):
        step.undo()
        now = store.get(ident)
        assert (now.label, now.start_s, now.end_s, now.note, now.deleted) == (
            state.label, state.start_s, state.end_s, state.note, state.deleted)


def test_nudges_merge_into_one_step(env):
    store, stim = env
    ident = store.create(stim, "ana", "vocal cues", "laugh", 1.0, 2.0).id
    first = nudge(store, "ana", store.get(ident), "end", 0.01)
    first.redo()
    for _ in range(4):
        more = nudge(store, "ana", store.get(ident), "end", 0.01)
        more.redo()
        assert first.merge_with(more)
    other_edge = nudge(store, "ana", store.get(ident), "start", -0.01)
    assert not first.merge_with(other_edge)
    assert store.get(ident).end_s == pytest.approx(2.05)
    first.undo()
    assert store.get(ident).end_s == 2.0
    # an edge landing on the other stops a grid step short; one pushed past it swaps with it
    assert nudge(store, "ana", store.get(ident), "start", 1.0).after == (1.99, 2.0)
    assert nudge(store, "ana", store.get(ident), "start", 5.0).after == (2.0, 6.0)


def test_bulk_commands_are_one_step(env):
    store, stim = env
    items = [store.create(stim, "ana", "vocal cues", "laugh", i, i + 0.5) for i in range(4)]
    relabel = BulkRelabel(store, "ana", items[:3], "sigh")
    relabel.redo()
    assert [l[0] for l in labels(store, stim)] == ["sigh", "sigh", "sigh", "laugh"]
    delete = DeleteLabels(store, "ana", [store.get(a.id) for a in items])
    delete.redo()
    assert labels(store, stim) == []
    delete.undo()
    relabel.undo()
    assert [l[0] for l in labels(store, stim)] == ["laugh"] * 4


def test_others_labels_cannot_be_edited(env):
    store, stim = env
    theirs = store.create(stim, "bo", "vocal cues", "laugh", 1.0, 2.0)
    with pytest.raises(AnnotationError):
        DeleteLabels(store, "ana", [theirs])
    with pytest.raises(AnnotationError):
        MoveLabel(store, "ana", theirs, (3.0, 4.0))


def test_whole_label_set_change_clear_and_note(env):
    store, stim = env
    first = SetWholeLabel(store, "ana", stim, "familiarity", "familiar", store.for_stimulus(stim))
    first.redo()
    change = SetWholeLabel(store, "ana", stim, "familiarity", "stranger", store.for_stimulus(stim))
    change.redo()
    assert [a.label for a in store.for_stimulus(stim, label_set="familiarity")] == ["stranger"]
    clear = SetWholeLabel(store, "ana", stim, "familiarity", None, store.for_stimulus(stim))
    clear.redo()
    assert store.for_stimulus(stim, label_set="familiarity") == []
    clear.undo()
    change.undo()
    assert [a.label for a in store.for_stimulus(stim, label_set="familiarity")] == ["familiar"]
    first.undo()
    assert store.for_stimulus(stim) == []
    note = set_stimulus_note(store, "ana", stim, "both laugh a lot", store.for_stimulus(stim))
    note.redo()
    assert stimulus_note(store.for_stimulus(stim), "ana") == "both laugh a lot"
    note.undo()
    assert stimulus_note(store.for_stimulus(stim), "ana") == ""


def test_live_labelling_subtracts_reaction_time():
    live = LiveLabeler(reaction_offset_s=0.25)
    assert live.press("laugh", 10.0) is None
    assert live.press("sigh", 10.5) is None
    assert live.pending() == {"laugh": 9.75, "sigh": 10.25}
    mark = live.press("laugh", 12.0)
    assert (mark.label, mark.start_s, mark.end_s) == ("laugh", 9.75, 11.75)
    assert live.pending() == {"sigh": 10.25}
    assert live.press("x", 0.1) is None and live.pending()["x"] == 0.0  # never before the start


def test_navigation_and_snap(env):
    store, stim = env
    for start in (5.0, 1.0, 3.0):
        store.create(stim, "ana", "vocal cues", "laugh", start, start + 0.5)
    items = store.for_stimulus(stim)
    assert next_label(items, 1.0).start_s == 3.0
    assert previous_label(items, 3.0).start_s == 1.0
    assert next_label(items, 5.0) is None
    assert snap(8.004) == 8.0 and snap(8.006) == 8.01 and snap(-1) == 0.0


def test_qt_free_modules_do_not_import_qt():
    code = ("import sys; import app.annotations, app.annotation_model, app.agreement, app.export_service, "
            "app.cli_annotations, "
            "storage.annotations, storage.exporters.registry as r; [e.name for e in r.exporters()]; "
            "assert 'PySide6' not in sys.modules, 'Qt imported'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
