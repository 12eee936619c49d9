"""A FriendBench-style dyad in the window: player and annotation tiers for the selected stimulus, playback
keys from the table, and an edit made in the window landing in the store."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt


def test_selected_dyad_plays_from_the_table_and_its_labels_are_saved(qtbot, dyad_store, window_for):
    win = window_for(dyad_store, annotator="ana")
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None, timeout=10000)
    page = win.media_page
    assert win.stimulus_view.current_page() is page
    qtbot.waitUntil(lambda: page.player.waveform.lane_count == 2 and not page.busy(), timeout=30000)
    clock = page.player.clock
    win.table.setFocus()
    qtbot.keyClick(win.table, Qt.Key.Key_Space)
    assert clock.playing
    qtbot.keyClick(win.table, Qt.Key.Key_Space)
    assert not clock.playing
    qtbot.keyClick(win.table, Qt.Key.Key_Right)
    assert clock.position == pytest.approx(1.0, abs=0.05)
    # a drag on the annotator's tier under the waveform is in the store at once, stamped with the annotator
    assert page.annotation.label_set.currentText() == "vocal cues"  # the FriendBench default
    tiers = page.annotation.tiers
    tiers.set_current_label("vocal cues", "laugh")
    row = tiers.tier_row("vocal cues", "ana")
    start, end = tiers.map_to_widget(2.0, row).toPoint(), tiers.map_to_widget(3.0, row).toPoint()
    qtbot.mousePress(tiers.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(tiers.viewport(), pos=QPoint((start.x() + end.x()) // 2, start.y()))
    qtbot.mouseMove(tiers.viewport(), pos=end)
    qtbot.mouseRelease(tiers.viewport(), Qt.MouseButton.LeftButton, pos=end)
    rows = dyad_store.cursor().execute("SELECT annotator, label_set, label, start_s, end_s FROM annotation").fetchall()
    assert len(rows) == 1
    annotator, label_set, label, t0, t1 = rows[0]
    assert (annotator, label_set, label) == ("ana", "vocal cues", "laugh")
    assert t0 == pytest.approx(2.0, abs=0.06) and t1 == pytest.approx(3.0, abs=0.06)
    win.undo_action.trigger()
    assert dyad_store.cursor().execute("SELECT count(*) FROM annotation WHERE deleted_at IS NULL").fetchall() == [(0,)]
    win.close()
