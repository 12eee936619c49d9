"""A line track added by one description and one registration: a root-mean-square track, computed from a
voice's samples on the analysis workers, shows in the Tracks menu of the real window, draws its values in a
row of its own and over a voice's spectrogram, and is remembered per voice like pitch and intensity."""
from __future__ import annotations

import numpy as np
import parselmouth
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSettings

from app.cues.acoustics import PraatSettings
from app.cues.track_kinds import Line, LineKind
from tests.cues_dyads import dyad_store
from widgets.analysis_tracks import SPECTROGRAM, AnalysisTracksView
from widgets.lane_lines import LaneLine, register, unregister
from widgets.palette import COLOURS
from widgets.settings_store import SettingsStore

FRAME_S = 0.01
TOP = 0.25  # the dyads' tones peak at 0.2


def rms_line(samples: np.ndarray, rate: int, settings: PraatSettings) -> Line:
    """Root mean square of the channels' mean over frames of FRAME_S, at each frame's centre."""
    mono = samples if samples.ndim == 1 else samples.mean(axis=0)
    size = int(round(FRAME_S * rate))
    frames = np.asarray(mono[: len(mono) // size * size], dtype=np.float64).reshape(-1, size)
    return Line((np.arange(len(frames)) + 0.5) * size / rate, np.sqrt((frames ** 2).mean(axis=1)))


RMS = LaneLine(LineKind("rms", rms_line), "loudness (RMS)", "RMS", COLOURS["right"][0], 60, 30,
               lambda _values, _scales: (0.0, TOP), lambda _scales: "RMS 0-0.25")


def expected_rms(path) -> tuple[np.ndarray, np.ndarray]:
    """The file's RMS per frame, read by Praat and summed frame by frame here."""
    sound = parselmouth.Sound(str(path))
    samples, rate = sound.values[0], int(sound.sampling_frequency)
    size = int(round(FRAME_S * rate))
    values = [np.sqrt(np.dot(samples[k:k + size], samples[k:k + size]) / size)
              for k in range(0, len(samples) - size + 1, size)]
    return (np.arange(len(values)) + 0.5) * size / rate, np.array(values)


@pytest.fixture
def rms_registered():
    register(RMS)
    yield RMS
    unregister(RMS.name)


@pytest.fixture
def dyads(tmp_path):
    store, root = dyad_store(tmp_path, n=1)
    yield store, root
    store.close()


def curves(plot: pg.PlotItem, colour: str) -> list[tuple[np.ndarray, np.ndarray]]:
    return [item.getData() for item in plot.items
            if isinstance(item, pg.PlotCurveItem) and item.opts["pen"].color().name() == colour]


def test_a_registered_line_track_is_offered_drawn_and_remembered(qtbot, dyads, window_for, rms_registered):
    store, root = dyads
    win = window_for(store)
    win.select_stimulus_id(1)
    tracks = win.media_page.player.tracks
    qtbot.waitUntil(lambda: tracks.lane_names() == ["A", "B"] and tracks.loaded(), timeout=30000)
    # in each voice's menu, after pitch and intensity, off until asked for
    voice_b = next(a.menu() for a in tracks.tracks_menu.actions() if a.text() == "voice B")
    assert [a.text() for a in voice_b.actions()] == ["spectrogram", "pitch (F0)", "intensity", "loudness (RMS)",
                                                     "formants"]
    action = next(a for a in voice_b.actions() if a.objectName() == "track:B:rms")
    assert not action.isChecked() and tracks.row_plot("rms", 1) is None
    action.trigger()
    tracks.set_track("A", "rms", True)
    qtbot.waitUntil(lambda: all(tracks.voice(k) is not None and "rms" in tracks.voice(k).lines for k in (0, 1))
                    and tracks.loaded(), timeout=30000)
    # voice B has no spectrogram: a row of its own, on the track's range, with the file's RMS per frame
    assert ("rms", 1) in tracks.wanted_rows()
    own = tracks.row_plot("rms", 1)
    (times, values), = curves(own, RMS.colour)
    want_t, want_v = expected_rms(root / "d0_B.wav")
    assert np.allclose(times, want_t) and np.allclose(values, want_v, atol=1e-6)
    assert values.max() > 0.05 and values.min() == 0.0  # the tone and the silences between its turns
    assert own.vb.viewRange()[1][0] <= 0.0 and own.vb.viewRange()[1][1] >= TOP
    # voice A's spectrogram is on: the line is drawn over it, its range spread over the row's height
    over = tracks.row_plot("rms", 0)
    assert over is tracks.row_plot(SPECTROGRAM, 0)
    (times, y), = curves(over, RMS.colour)
    want_t, want_v = expected_rms(root / "d0_A.wav")
    assert np.allclose(times, want_t) and np.allclose(y, want_v / TOP * tracks.max_frequency.value(), atol=1e-3)
    # remembered per voice, as pitch and intensity are
    assert SettingsStore(QSettings()).load().tracks_shown == {"B/rms": True, "A/rms": True}
    tracks.set_track("A", "rms", False)
    other = AnalysisTracksView()
    qtbot.addWidget(other)
    assert other.is_on("B", "rms") and not other.is_on("A", "rms")
    other.shutdown()


def test_a_line_track_not_registered_is_not_offered(qtbot, dyads, window_for):
    store, _ = dyads
    win = window_for(store)
    win.select_stimulus_id(1)
    tracks = win.media_page.player.tracks
    qtbot.waitUntil(lambda: tracks.lane_names() == ["A", "B"], timeout=30000)
    assert not any(a.objectName() == "track:B:rms" for m in tracks.tracks_menu.actions() if m.menu()
                   for a in m.menu().actions())
