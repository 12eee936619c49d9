"""In the real window: with Shift held, a dragged label edge lands on the voicing offset of a generated
vowel (or the end of the hiss after it) and a marker shows it while dragging; a new label's edges and a
moved label's nearer edge land likewise; a plain drag, or a Shift drag while no pitch or intensity track
is on show, keeps the edge where the mouse let go."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.annotations import snap
from app.cues.boundaries import silence_boundaries, voicing_boundaries
from app.sample import import_label_sets
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.store import Store
from tests.test_label_snap import RATE, clip
from widgets.analysis_tracks import PITCH
from widgets.annotation_tiers import SNAP_MARK_COLOUR, SNAP_REACH_PX

SET, LABEL = "vocal cues", "laugh"
# pyqtgraph drops mouse moves closer together than 1 / mouseRateLimit (10 ms); a hand's moves are further apart
MOVE_GAP_MS = 25


@pytest.fixture
def vowel_store(tmp_path):
    """One audio-only dyad whose participant A says a 150 Hz vowel (0.5-1.2 s), a hiss (1.2-1.5 s), and
    another vowel (1.9-2.5 s)."""
    root = tmp_path / "media"
    root.mkdir()
    sf.write(root / "v_A.wav", clip().astype(np.float32), RATE, subtype="PCM_16")
    plan = ImportPlan(DatasetInfo("Vowels", "friendbench", root, "generated in a test", synthetic=True), "test")
    plan.add("stimuli", [{"external_id": "v", "kind": "dyad"}])
    plan.add("media", [{"stimulus": "v", "role": "audio:A", "path": "v_A.wav", "present": True,
                        "duration_s": 3.0, "sample_rate": RATE}])
    store = Store.open(tmp_path / "snap.duckdb")
    import_label_sets(store)
    write_plan(store, plan)
    yield store
    store.close()


@pytest.fixture
def shown(qtbot, vowel_store, window_for):
    """The window with the vowel on screen, its tracks computed, the vowel, hiss and silence in view."""
    win = window_for(vowel_store, annotator="ana")
    win.select_stimulus_id(1)
    page = win.media_page
    tracks = page.player.tracks
    qtbot.waitUntil(lambda: page.annotation.model.stimulus_id == 1 and page.annotation.model.ready
                    and not page.busy() and tracks.loaded() and len(tracks.boundaries()) > 0, timeout=30000)
    tiers = page.annotation.tiers
    tiers.set_current_label(SET, LABEL)
    # the vowel, the hiss and the silence after it fill the view: a drag of a fraction of the snap reach
    # still moves the mouse further than pyqtgraph's least drag distance, on any window size
    tiers.setXRange(0.4, 2.2, padding=0)
    qtbot.wait(20)
    return win, page, tiers


def reach_s(tiers) -> float:
    return SNAP_REACH_PX * tiers.view_box().viewPixelSize()[0]


def marked_columns(tiers, row: float) -> list[int]:
    """The x of every pixel column in the tier's row painted in the snap marker's colour."""
    image = tiers.viewport().grab().toImage()
    y = tiers.map_to_widget(0.0, row).toPoint().y()
    mark = QColor(SNAP_MARK_COLOUR).rgb()
    return [x for x in range(image.width()) if image.pixel(x, y) == mark]


def drag(qtbot, tiers, t0: float, t1: float, row: float, shift: bool) -> list[int]:
    """Drag from t0 to t1 on `row`, holding Shift if asked (pressed where focus is, as a user does);
    returns the marked columns seen just before letting go."""
    held = Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier.NoModifier
    viewport = tiers.viewport()
    a, b = tiers.map_to_widget(t0, row).toPoint(), tiers.map_to_widget(t1, row).toPoint()
    if shift:
        qtbot.keyPress(QApplication.focusWidget(), Qt.Key.Key_Shift)
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, held, pos=a)
    # a mouse moved while Shift is down says so, as the window system's own events do
    for point in (QPoint((a.x() + b.x()) // 2, a.y()), b):
        qtbot.wait(MOVE_GAP_MS)
        QTest.mouseEvent(QTest.MouseAction.MouseMove, viewport, Qt.MouseButton.NoButton, held, point)
    marks = marked_columns(tiers, row)
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, held, pos=b)
    if shift:
        qtbot.keyRelease(QApplication.focusWidget(), Qt.Key.Key_Shift)
    qtbot.wait(QApplication.doubleClickInterval() + 50)  # the next press starts a drag, not a double click
    return marks


def stored(page) -> list[tuple[float, float]]:
    """The label's times as the store holds them (a fresh read)."""
    return [(a.start_s, a.end_s) for a in page.annotation.model.store.for_stimulus(1) if not a.is_whole]


def test_shift_drag_of_a_labels_end_lands_on_the_voicing_offset_and_a_plain_drag_does_not(qtbot, shown):
    win, page, tiers = shown
    tracks = page.player.tracks
    offset = min(voicing_boundaries(tracks.voice(0).pitch), key=lambda t: abs(t - 1.2))
    assert abs(offset - 1.2) <= 0.01 and offset in tracks.boundaries()  # the vowel's known end
    label = page.annotation.model.add_label(SET, LABEL, 0.8, 1.0)
    row = tiers.tier_row(SET, "ana")
    drop = offset - 0.5 * reach_s(tiers)  # within reach, nearer the offset than anything else
    assert snap(drop) != snap(offset)

    marks = drag(qtbot, tiers, 1.0, drop, row, shift=True)
    assert stored(page) == [(0.8, snap(offset))]
    x_end = tiers.map_to_widget(snap(offset), row).x()
    assert marks and all(abs(x - x_end) <= 3 for x in marks)  # the marker sat on the landed edge

    page.annotation.model.undo()
    assert stored(page) == [(0.8, 1.0)]
    marks = drag(qtbot, tiers, 1.0, drop, row, shift=False)
    (start, end), = stored(page)
    assert start == 0.8 and end != snap(offset) and end == pytest.approx(drop, abs=0.01)
    assert marks == []
    assert page.annotation.model.store.get(label.id).end_s == end


def test_shift_drag_creating_a_label_spans_the_hiss_from_voicing_offset_to_silence(qtbot, shown):
    win, page, tiers = shown
    tracks = page.player.tracks
    offset = min(voicing_boundaries(tracks.voice(0).pitch), key=lambda t: abs(t - 1.2))
    silence = min(silence_boundaries(tracks.voice(0).intensity), key=lambda t: abs(t - 1.5))
    reach = reach_s(tiers)
    row = tiers.tier_row(SET, "ana")
    # dragged right to left, each end dropped a little off the boundary it should find
    drag(qtbot, tiers, silence + 0.5 * reach, offset - 0.5 * reach, row, shift=True)
    assert stored(page) == [(snap(offset), snap(silence))]


def test_without_a_pitch_or_intensity_track_on_show_shift_does_not_snap(qtbot, shown):
    win, page, tiers = shown
    tracks = page.player.tracks
    offset = min(voicing_boundaries(tracks.voice(0).pitch), key=lambda t: abs(t - 1.2))
    tracks.set_track("A", PITCH, False)
    assert len(tracks.boundaries()) == 0
    page.annotation.model.add_label(SET, LABEL, 0.8, 1.0)
    row = tiers.tier_row(SET, "ana")
    drop = offset - 0.5 * reach_s(tiers)
    marks = drag(qtbot, tiers, 1.0, drop, row, shift=True)
    (start, end), = stored(page)
    assert end == pytest.approx(drop, abs=0.01) and end != snap(offset) and marks == []


def test_shift_drag_moving_a_label_lands_its_nearer_edge_on_the_end_of_the_hiss(qtbot, shown):
    win, page, tiers = shown
    tracks = page.player.tracks
    silence = min(silence_boundaries(tracks.voice(0).intensity), key=lambda t: abs(t - 1.5))
    page.annotation.model.add_label(SET, LABEL, 1.6, 1.75)
    row = tiers.tier_row(SET, "ana")
    grab = 1.68
    step = (silence + 0.4 * reach_s(tiers)) - 1.6  # brings the start a little past the boundary
    drag(qtbot, tiers, grab, grab + step, row, shift=True)
    assert stored(page) == [(snap(silence), pytest.approx(snap(silence) + 0.15))]
    page.annotation.model.undo()
    drag(qtbot, tiers, grab, grab + step, row, shift=False)
    (start, end), = stored(page)
    assert start != snap(silence) and start == pytest.approx(1.6 + step, abs=0.01)
