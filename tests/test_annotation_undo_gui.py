"""In the real window: Ctrl+Z only ever changes the stimulus on screen, the history dock shows the selected
stimulus's history at once, and a write the store refuses is said in place and shows nothing as saved."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from app.sample import import_label_sets
from storage.annotations import AnnotationStore
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.store import Store


@pytest.fixture
def two_dyads(tmp_path):
    """Two dyads, d1 and d2 (6 s each, media not on disk), the bundled label sets, and bo's earlier label on d2."""
    plan = ImportPlan(DatasetInfo("Dyads", "friendbench", tmp_path, "test"), "test")
    plan.add("stimuli", [{"external_id": name, "kind": "dyad", "meta": json.dumps({"duration_s": 6.0})}
                         for name in ("d1", "d2")])
    plan.add("annotations", [{"stimulus": "d2", "annotator": "bo", "label_set": "vocal cues", "label": "sigh",
                              "start_s": 4.0, "end_s": 5.0}])
    store = Store.open(tmp_path / "s.duckdb")
    import_label_sets(store)
    write_plan(store, plan)
    yield store
    store.close()


def _live(store: Store) -> list[tuple]:
    return store.cursor().execute("SELECT s.external_id, a.label, a.start_s, a.end_s FROM annotation a"
                                  " JOIN stimulus s ON s.id = a.stimulus_id WHERE a.deleted_at IS NULL"
                                  " ORDER BY 1, 3").fetchall()


def _shown(qtbot, win, external_id: str) -> None:
    """Wait until `external_id` is on screen with its labels read."""
    page = win.media_page
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.external_id == external_id
                    and page.annotation.model.stimulus_id == win.stimulus_view.detail.id
                    and page.annotation.model.ready and not page.busy(), timeout=10000)


def _drag_label(qtbot, win, t0: float, t1: float) -> None:
    tiers = win.media_page.annotation.tiers
    tiers.setXRange(0.0, 6.0, padding=0)  # the whole clip in view (no media on disk sets the ruler's range)
    tiers.set_current_label("vocal cues", "laugh")
    row = tiers.tier_row("vocal cues", "ana")
    start, end = tiers.map_to_widget(t0, row).toPoint(), tiers.map_to_widget(t1, row).toPoint()
    qtbot.mousePress(tiers.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(tiers.viewport(), pos=QPoint((start.x() + end.x()) // 2, start.y()))
    qtbot.mouseMove(tiers.viewport(), pos=end)
    qtbot.mouseRelease(tiers.viewport(), Qt.MouseButton.LeftButton, pos=end)
    qtbot.wait(QApplication.doubleClickInterval() + 50)


def _ctrl_z_from_the_table(qtbot, win) -> None:
    win.table.setFocus()
    qtbot.keyClick(win.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def test_ctrl_z_after_switching_stimulus_changes_nothing_off_screen(qtbot, two_dyads, window_for):
    win = window_for(two_dyads, annotator="ana")
    _shown(qtbot, win, "d1")
    _drag_label(qtbot, win, 2.0, 3.0)
    assert [r[:2] for r in _live(two_dyads)] == [("d1", "laugh"), ("d2", "sigh")]
    win.table.setFocus()
    qtbot.keyClick(win.table, Qt.Key.Key_Down)
    _shown(qtbot, win, "d2")
    assert not win.undo_action.isEnabled()
    _ctrl_z_from_the_table(qtbot, win)
    assert [r[:2] for r in _live(two_dyads)] == [("d1", "laugh"), ("d2", "sigh")]  # d1 is off screen
    qtbot.keyClick(win.table, Qt.Key.Key_Up)
    _shown(qtbot, win, "d1")
    assert win.undo_action.isEnabled() and "Add laugh" in win.undo_action.text()
    _ctrl_z_from_the_table(qtbot, win)
    assert _live(two_dyads) == [("d2", "sigh", 4.0, 5.0)]
    assert win.media_page.annotation.tiers.labels() == []


def test_the_history_dock_shows_the_selected_stimulus_at_once_and_follows_edits(qtbot, two_dyads, window_for):
    win = window_for(two_dyads, annotator="ana")
    _shown(qtbot, win, "d1")
    win.show_dock(win.history_dock)
    win.table.setFocus()
    qtbot.keyClick(win.table, Qt.Key.Key_Down)
    _shown(qtbot, win, "d2")
    qtbot.waitUntil(lambda: [r[1:4] for r in win.history.row_texts()] == [["bo", "create", "-"]], timeout=5000)
    assert win.history.row_texts()[0][4] == "sigh 4.00-5.00 s"
    _drag_label(qtbot, win, 1.0, 2.0)
    qtbot.waitUntil(lambda: len(win.history.row_texts()) == 2, timeout=5000)
    assert win.history.row_texts()[0][1:3] == ["ana", "create"]


def test_a_write_the_store_refuses_is_said_and_nothing_shows_as_saved(qtbot, two_dyads, window_for):
    win = window_for(two_dyads, annotator="ana")
    _shown(qtbot, win, "d1")
    qtbot.waitUntil(lambda: not win.runner.busy(), timeout=5000)  # the history of d1 has been read
    # the database itself refuses every annotation write from here on (its history table is gone)
    two_dyads.cursor().execute("ALTER TABLE annotation_event RENAME TO annotation_event_away")
    _drag_label(qtbot, win, 2.0, 3.0)
    assert "was not saved" in win.status_message.text()
    assert win.media_page.annotation.tiers.labels() == []
    assert not win.undo_action.isEnabled()
    two_dyads.cursor().execute("ALTER TABLE annotation_event_away RENAME TO annotation_event")
    assert _live(two_dyads) == [("d2", "sigh", 4.0, 5.0)]
    assert AnnotationStore(two_dyads).history(stimulus_id=win.stimulus_view.detail.id) == []


def test_an_annotation_file_imported_twice_adds_nothing_and_undo_takes_back_the_shown_stimulus_share(
        qtbot, two_dyads, window_for, tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"stimulus": s, "annotator": "cy", "label_set": "vocal cues",
                                          "label": "laugh", "start_s": 1.0, "end_s": 1.5}) + "\n"
                              for s in ("d1", "d2")))
    win = window_for(two_dyads, annotator="ana")
    _shown(qtbot, win, "d1")
    first = win.import_annotation_file(labels)
    qtbot.waitUntil(lambda: "Imported 2 labels" in win.status_message.text(), timeout=5000)
    assert [(a.label, a.start_s) for a in win.media_page.annotation.tiers.labels()] == [("laugh", 1.0)]
    reports = [first, win.import_annotation_file(labels)]
    qtbot.waitUntil(lambda: "nothing was added" in win.status_message.text(), timeout=5000)
    assert len(_live(two_dyads)) == 3
    for report in reports:  # the import reports are read and closed, back to the window
        report.close()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=5000)
    _ctrl_z_from_the_table(qtbot, win)
    assert _live(two_dyads) == [("d2", "laugh", 1.0, 1.5), ("d2", "sigh", 4.0, 5.0)]
