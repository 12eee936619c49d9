"""Dragging on the tiers in data coordinates makes, moves and resizes labels in the store, one undo step each;
an edge dragged past the other swaps with it."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from app.annotation_model import AnnotationModel
from storage.annotations import AnnotationStore
from storage.store import Store
from widgets.annotation_tiers import AnnotationTiersView


@pytest.fixture
def view(qtbot, tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'friendbench', '/tmp/d')"
                          " RETURNING id").fetchone()[0]
    stim = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'fb-001', 'dyad')"
                       " RETURNING id", [dataset]).fetchone()[0]
    notes = AnnotationStore(store)
    model = AnnotationModel(notes, annotator="ana")
    model.load(int(stim))
    widget = AnnotationTiersView(model)
    qtbot.addWidget(widget)
    widget.resize(1000, 220)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_annotator("ana")
    widget.set_current_label("vocal cues", "laugh")
    widget.set_stimulus(int(stim), 20.0)
    widget.setXRange(7.0, 10.0, padding=0)  # about 3.5 ms per pixel: finer than the 10 ms grid
    qtbot.wait(10)
    yield widget, model, int(stim)
    store.close()


def drag(qtbot, widget, t0, t1, row):
    a = widget.map_to_widget(t0, row).toPoint()
    b = widget.map_to_widget(t1, row).toPoint()
    viewport = widget.viewport()
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=a)
    qtbot.mouseMove(viewport, pos=QPoint((a.x() + b.x()) // 2, a.y()))
    qtbot.mouseMove(viewport, pos=b)
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=b)
    qtbot.wait(QApplication.doubleClickInterval() + 50)  # the next press starts a drag, not a double click


def spans(model, stim):
    """What the store holds (a fresh read, not the model's copy)."""
    return [(a.label, a.start_s, a.end_s) for a in model.store.for_stimulus(stim)]


def shown(widget):
    return [(a.label, a.start_s, a.end_s) for a in sorted(widget.labels(), key=lambda a: a.start_s)]


def test_drag_creates_label_then_undo_redo(qtbot, view):
    widget, notes, stim = view
    drag(qtbot, widget, 8.0, 9.0, widget.tier_row("vocal cues", "ana"))
    # times snap to the 10 ms grid, so a drag from 8.0 s to 9.0 s gives exactly 8.00-9.00 s
    assert spans(notes, stim) == [("laugh", 8.0, 9.0)] == shown(widget)
    assert notes.stack.count(stim) == 1
    notes.undo()
    assert spans(notes, stim) == [] == shown(widget)
    notes.redo()
    assert spans(notes, stim) == [("laugh", 8.0, 9.0)] == shown(widget)
    assert notes.store.for_stimulus(stim)[0].annotator == "ana"


def test_resize_and_move_are_one_step_each(qtbot, view):
    widget, notes, stim = view
    notes.add_label("vocal cues", "sigh", 8.0, 9.0)
    row = widget.tier_row("vocal cues", "ana")
    drag(qtbot, widget, 9.0, 9.5, row)            # grab the end edge
    assert spans(notes, stim) == [("sigh", 8.0, 9.5)]
    drag(qtbot, widget, 8.5, 7.5, row)            # grab the body
    assert spans(notes, stim) == [("sigh", 7.0, 8.5)] == shown(widget)
    assert notes.stack.count(stim) == 3
    notes.undo()
    assert spans(notes, stim) == [("sigh", 8.0, 9.5)]
    notes.undo()
    assert spans(notes, stim) == [("sigh", 8.0, 9.0)] == shown(widget)


def test_dragging_the_start_past_the_end_swaps_the_edges(qtbot, view):
    widget, notes, stim = view
    notes.add_label("vocal cues", "sigh", 8.0, 9.0)
    row = widget.tier_row("vocal cues", "ana")
    drag(qtbot, widget, 8.0, 9.5, row)            # the start edge, dragged past the end
    assert spans(notes, stim) == [("sigh", 9.0, 9.5)] == shown(widget)
    drag(qtbot, widget, 9.01, 9.5, row)           # the start edge, dropped on the end: stops short
    assert spans(notes, stim) == [("sigh", 9.49, 9.5)]


def test_overlapping_labels_stack_and_others_are_read_only(qtbot, view):
    widget, notes, stim = view
    notes.add_label("vocal cues", "laugh", 8.0, 9.0)
    notes.add_label("vocal cues", "overlap", 8.5, 9.5)
    theirs = notes.store.create(stim, "bo", "vocal cues", "laugh", 7.5, 8.5)
    notes.load(stim)
    mine = next(t for t in widget.tiers if t.key == ("vocal cues", "ana"))
    assert mine.row_count == 2  # the overlap sits in its own sub-row
    drag(qtbot, widget, 8.0, 9.0, widget.tier_row("vocal cues", "bo"))  # pans, changes nothing
    assert notes.store.get(theirs.id).start_s == 7.5
    widget.set_show_others(False)
    assert [t.key for t in widget.tiers] == [("vocal cues", "ana")]


def test_delete_and_nudge_keys(qtbot, view):
    widget, notes, stim = view
    first = notes.add_label("vocal cues", "laugh", 8.0, 9.0)
    widget.select([first.id])
    widget.setFocus()
    for _ in range(3):
        qtbot.keyClick(widget, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert notes.store.get(first.id).end_s == pytest.approx(9.03)
    assert notes.stack.count(stim) == 2  # the add, and three nudges merged into one step
    qtbot.keyClick(widget, Qt.Key.Key_Delete)
    assert spans(notes, stim) == [] == shown(widget)
    notes.undo()
    notes.undo()
    assert spans(notes, stim) == [("laugh", 8.0, 9.0)] == shown(widget)
