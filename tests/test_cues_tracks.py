"""The analysis tracks in the real window: drawn under the waveform on its time axis from Praat's values,
a click on a track seeks, zooming the waveform zooms the tracks, toggles are remembered, and a new
stimulus replaces the old one's tracks."""
from __future__ import annotations

import numpy as np
import parselmouth
import pytest
from PySide6.QtCore import QPointF, QSettings, Qt

from tests.cues_dyads import dyad_store, f0_of
from widgets.analysis_tracks import CONVERSATION, INTENSITY, PITCH, SPECTROGRAM, AnalysisTracksView
from widgets.settings_store import SettingsStore


@pytest.fixture
def dyads(tmp_path):
    store, root = dyad_store(tmp_path, n=3)
    yield store, root
    store.close()


def wait_for_tracks(qtbot, page, tracks: AnalysisTracksView) -> None:
    qtbot.waitUntil(lambda: tracks.lane_names() == ["A", "B"] and not page.busy() and tracks.loaded(), timeout=30000)


def click_at(qtbot, tracks: AnalysisTracksView, track: str, lane: int | None, seconds: float) -> None:
    plot = tracks.row_plot(track, lane)
    y = float(np.mean(plot.vb.viewRange()[1]))
    point = tracks.canvas.mapFromScene(plot.vb.mapViewToScene(QPointF(seconds, y)))
    qtbot.mouseClick(tracks.canvas.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_tracks_draw_praats_values_and_a_click_seeks(qtbot, dyads, window_for):
    store, root = dyads
    win = window_for(store)
    win.select_stimulus_id(1)
    page = win.media_page
    tracks = page.player.tracks
    wait_for_tracks(qtbot, page, tracks)
    # as Praat's editor: the first voice's pitch is drawn over its spectrogram, one row, then the turn-taking
    assert tracks.wanted_rows() == [(SPECTROGRAM, 0), (CONVERSATION, None)]
    assert tracks.row_plot(PITCH, 0) is tracks.row_plot(SPECTROGRAM, 0)
    # the first voice's pitch is Praat's for that file, and its F0 is the generated one
    praat = parselmouth.Sound(str(root / "d0_A.wav")).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    assert np.allclose(np.nan_to_num(tracks.voice(0).pitch.f0_hz), praat.selected_array["frequency"], atol=1e-6)
    assert abs(np.nanmedian(tracks.voice(0).pitch.f0_hz) - f0_of(0)[0]) < 1.5
    image = tracks.row_plot(SPECTROGRAM, 0).items
    assert any(getattr(item, "image", None) is not None and item.image.max() > 0 for item in image)
    # the turn-taking row has the dyad's four turns, gaps and overlap
    talk = tracks.conversation()
    assert [t.speaker for t in talk.turns] == ["A", "B", "A", "B"] and len(talk.gaps) == 2
    clock = page.player.clock
    click_at(qtbot, tracks, PITCH, 0, 3.0)
    assert clock.position == pytest.approx(3.0, abs=0.05)
    click_at(qtbot, tracks, CONVERSATION, None, 4.4)
    assert clock.position == pytest.approx(4.4, abs=0.05)


def test_zooming_the_waveform_zooms_the_tracks_and_draws_finer_tiles(qtbot, dyads, window_for):
    store, root = dyads
    win = window_for(store)
    win.select_stimulus_id(1)
    page = win.media_page
    tracks = page.player.tracks
    wait_for_tracks(qtbot, page, tracks)
    page.player.waveform.set_view_range(1.0, 1.5)
    # the same time sits at the same screen x in the waveform and in every track
    ruler = page.player.waveform.ruler.vb
    for t in (1.1, 1.25, 1.4):
        on_wave = page.player.waveform.canvas.mapToGlobal(
            page.player.waveform.canvas.mapFromScene(ruler.mapViewToScene(QPointF(t, 0.0)))).x()
        for track, lane in ((PITCH, 0), (SPECTROGRAM, 0), (CONVERSATION, None)):
            vb = tracks.row_plot(track, lane).vb
            on_track = tracks.canvas.mapToGlobal(tracks.canvas.mapFromScene(vb.mapViewToScene(QPointF(t, 0.0)))).x()
            assert abs(on_track - on_wave) <= 1, (track, t)
    spectrogram = tracks.spectrogram(0)
    assert spectrogram.level_for(1.0, 1.5, int(ruler.width())) == 0
    drawn = next(i for i in tracks.row_plot(SPECTROGRAM, 0).items if getattr(i, "image", None) is not None)
    # drawn at once from a coarser level, then from level 0 (a frame every 2 ms) once its tiles are computed
    qtbot.waitUntil(lambda: drawn.image.shape[0] >= 0.5 / spectrogram.params.time_step_s, timeout=10000)
    extent = drawn.mapRectToParent(drawn.boundingRect())
    assert extent.left() <= 1.0 and extent.right() >= 1.5
    # what is drawn is Praat's spectrogram of the file painted as Praat paints it, frame for frame
    def level_0_at_hand():
        at_hand = spectrogram.query(1.0, 1.5, int(ruler.width()), compute=False)
        return at_hand.complete and at_hand.level == 0

    qtbot.waitUntil(level_0_at_hand, timeout=10000)
    tracks.redraw_spectrograms()
    found = spectrogram.query(1.0, 1.5, int(ruler.width()), compute=False)
    praat = parselmouth.Sound(str(root / "d0_A.wav")).to_spectrogram(window_length=0.005, maximum_frequency=5000.0)
    first = round((found.t0 + 0.5 * found.time_step - praat.x1) / praat.dx)
    db = 10 * np.log10((praat.values.T[first:first + len(found.image)] + 1e-30) / 4e-10)
    assert np.max(np.abs(found.image - db)) < 1e-3
    drawn = next(i for i in tracks.row_plot(SPECTROGRAM, 0).items if getattr(i, "image", None) is not None)
    pre = 6.0 * np.log2(np.arange(1, db.shape[1] + 1) * praat.dy / 1000.0)
    assert np.max(np.abs(drawn.image - (db + pre))) < 1e-3
    assert drawn.levels[1] == pytest.approx(max(0.0, float(np.max(db + pre))), abs=1e-3)
    assert drawn.levels[1] - drawn.levels[0] == pytest.approx(tracks.dynamic_range.value())
    assert "To Spectrogram" in tracks.row_plot(SPECTROGRAM, 0).toolTip()


def test_a_toggled_track_is_shown_and_remembered(qtbot, dyads, window_for):
    store, _ = dyads
    win = window_for(store)
    win.select_stimulus_id(1)
    tracks = win.media_page.player.tracks
    wait_for_tracks(qtbot, win.media_page, tracks)
    assert tracks.row_plot(INTENSITY, 1) is None
    action = next(a for menu in tracks.tracks_menu.actions() if menu.menu()
                  for a in menu.menu().actions() if a.objectName() == "track:B:intensity")
    action.trigger()
    assert tracks.row_plot(INTENSITY, 1) is not None
    qtbot.waitUntil(tracks.loaded, timeout=30000)
    assert np.nanmax(tracks.voice(1).intensity.db) > 60
    assert SettingsStore(QSettings()).load().tracks_shown == {"B/intensity": True}
    other = AnalysisTracksView()
    qtbot.addWidget(other)
    assert other.is_on("B", INTENSITY)
    other.shutdown()


def test_a_new_stimulus_replaces_the_tracks_and_drops_the_old_work(qtbot, dyads, window_for):
    store, _ = dyads
    win = window_for(store)
    win.select_stimulus_id(1)
    tracks = win.media_page.player.tracks
    qtbot.waitUntil(lambda: tracks.lane_names() == ["A", "B"], timeout=30000)
    win.select_stimulus_id(3)  # at once, before the first one's tracks are in
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == 3, timeout=30000)
    wait_for_tracks(qtbot, win.media_page, tracks)
    assert abs(np.nanmedian(tracks.voice(0).pitch.f0_hz) - f0_of(2)[0]) < 1.5
    assert [t.speaker for t in tracks.conversation().turns] == ["A", "B", "A", "B"]
