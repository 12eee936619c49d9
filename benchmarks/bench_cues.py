"""Voice-analysis figures, each against praat-parselmouth's own computation on the same file in the same run:

- a 20 s clip's spectrogram on screen after switching to it (tiles computed, image set), against Praat's
  "To Spectrogram..." of the clip; and the same switch when the tiles are in the disk cache;
- a 60-minute 48 kHz file's spectrogram: first paint of the whole file never opened before (no tiles on
  disk), against Praat reading the file and computing the same view (`spectrogram_60min_first_paint_vs_
  praat_ratio`: what a person waits for in each) and against Praat's computation alone with the hour
  already in memory (the in-memory ratio); then the GUI thread's redraw per step while zooming in
  (median), the worker's fill of each step's missing tiles, and the memory of the tiles held after;
- a 20 s clip's pitch and intensity as the tracks compute them (decode + Praat), against Praat reading
  the file and running "To Pitch (ac)..." itself;
- cue measures for the whole bundled sample (FriendBench and EchoMind, eGeMAPS when opensmile is
  installed);
- a stimulus switch in the analysis tracks while Praat analyses a 4-minute 48 kHz voice (the switch made
  once Praat is computing), against the same switch with nothing running, in the same run.
`run()` returns (name, median, unit) rows. Takes about a minute on 2 cores.
"""
from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WIDTH_PX = 1280
CLIP_S = 20.0
CLIP_RATE = 16000
ZOOM_STEPS = 24
REPEATS = 5
LONG_S = 240.0
LONG_RATE = 48000
SWITCHES = 20
SPREAD = (0.1, 0.9)  # the switches during an analysis are asked for over this part of its length

Row = tuple[str, float, str]


def _median_time(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _voice(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    """A voiced signal with a moving F0 and syllable-like bursts (harmonics, so Praat finds pitch)."""
    t = np.arange(int(seconds * rate)) / rate
    f0 = 140.0 + 40.0 * np.sin(2 * np.pi * 0.3 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    wave = sum(np.sin(k * phase) / k for k in range(1, 8))
    bursts = (np.sin(2 * np.pi * 4.0 * t) > -0.2).astype(np.float64)
    noise = np.random.default_rng(seed).normal(0, 0.01, len(t))
    return (0.15 * wave * bursts + noise).astype(np.float32)


def _image_item():
    from PySide6.QtWidgets import QApplication
    import pyqtgraph as pg

    app = QApplication.instance() or QApplication([])
    plot = pg.PlotWidget()
    plot.resize(WIDTH_PX + 80, 200)
    item = pg.ImageItem()
    plot.addItem(item)
    lut = np.stack([np.linspace(255, 0, 256).astype(np.uint8)] * 3, axis=1)
    return app, plot, item, lut


def _paint(app, item, lut, found) -> None:
    from PySide6.QtCore import QRectF

    from storage.spectrogram import PaintSettings, paint

    painted = paint(found, PaintSettings())  # Praat's paint, autoscaled over the view, as the tracks draw it
    item.setImage(painted.image, levels=(painted.low_db, painted.high_db), lut=lut, autoLevels=False)
    item.setRect(QRectF(found.t0, found.frequency_low, found.t1 - found.t0,
                        found.frequency_step * found.image.shape[1]))
    item.render()  # the lookup-table pass Qt would do on the next paint
    app.processEvents()


def _clip_rows(folder: Path, app, item, lut) -> list[Row]:
    import parselmouth
    import soundfile as sf

    from app.cues.tracks import voice_tracks
    from storage.records import MediaRef
    from storage.spectrogram import SpectrogramParams, open_spectrogram
    import storage.spectrogram as spectrogram_module

    path = folder / "clip.wav"
    sf.write(path, _voice(CLIP_S, CLIP_RATE), CLIP_RATE, subtype="PCM_16")
    params = SpectrogramParams()

    def switch_cold() -> None:
        spectrogram_module._OPEN.clear()
        for tile in (folder / "cache").glob("**/*.npy"):
            tile.unlink()
        tiles = open_spectrogram(path, 0.0, CLIP_S, params)
        _paint(app, item, lut, tiles.query(0.0, CLIP_S, WIDTH_PX))

    def switch_cached() -> None:
        spectrogram_module._OPEN.clear()  # a new window or a stimulus long left: tiles come from disk
        tiles = open_spectrogram(path, 0.0, CLIP_S, params)
        _paint(app, item, lut, tiles.query(0.0, CLIP_S, WIDTH_PX, compute=False))

    cold = _median_time(switch_cold)
    switch_cold()
    cached = _median_time(switch_cached)
    praat = _median_time(lambda: parselmouth.Sound(str(path)).to_spectrogram(window_length=0.005,
                                                                              maximum_frequency=5000.0))
    media = MediaRef("audio", path, True, 0.0, CLIP_S, CLIP_RATE)
    ours_pitch = _median_time(lambda: voice_tracks(media))
    praat_pitch = _median_time(lambda: parselmouth.Sound(str(path)).to_pitch_ac(pitch_floor=75.0,
                                                                                pitch_ceiling=600.0))
    praat_both = _median_time(lambda: (lambda s: (s.to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0),
                                                  s.to_intensity(minimum_pitch=100.0)))(parselmouth.Sound(str(path))))
    return [
        ("cues.spectrogram_20s_switch", cold * 1000, "ms"),
        ("cues.spectrogram_20s_switch_cached", cached * 1000, "ms"),
        ("cues.spectrogram_20s_praat_baseline", praat * 1000, "ms"),
        ("cues.pitch_intensity_20s", ours_pitch * 1000, "ms"),
        ("cues.pitch_20s_praat_baseline", praat_pitch * 1000, "ms"),
        ("cues.pitch_intensity_20s_praat_baseline", praat_both * 1000, "ms"),
    ]


def _hour_rows(folder: Path, app, item, lut) -> list[Row]:
    import parselmouth
    import soundfile as sf

    from bench_playback import WAV_RATE, make_hour_wav
    from storage.spectrogram import SpectrogramParams, SpectrogramTiles, open_spectrogram, spectrogram_cache_dir
    import storage.spectrogram as spectrogram_module

    path = make_hour_wav(folder)
    duration = sf.info(str(path)).frames / WAV_RATE
    params = SpectrogramParams()
    opened: list[SpectrogramTiles] = []

    def first_paint() -> None:
        spectrogram_module._OPEN.clear()
        shutil.rmtree(spectrogram_cache_dir(), ignore_errors=True)   # a file never opened: no tiles on disk
        opened[:] = [open_spectrogram(path, 0.0, None, params)]
        _paint(app, item, lut, opened[0].query(0.0, duration, WIDTH_PX))
    first = _median_time(first_paint)
    tiles = opened[0]

    def praat_view(sound) -> None:
        sound.to_spectrogram(window_length=params.window_length_s, maximum_frequency=params.max_frequency_hz,
                             time_step=duration / WIDTH_PX)
    praat_from_file = _median_time(lambda: praat_view(parselmouth.Sound(str(path))), 3)
    hour = parselmouth.Sound(str(path))   # float64, 1.4 GB: Praat holds the whole sound
    praat_in_memory = _median_time(lambda: praat_view(hour))
    del hour

    # zoom in on the middle, from the whole hour to 2 s, as a wheel does; at each step the GUI thread draws
    # what is at hand and the worker fills the missing tiles
    widths = np.geomspace(duration, 2.0, ZOOM_STEPS)
    redraws, fills = [], []
    for width in widths:
        t0 = duration / 2 - width / 2
        begin = time.perf_counter()
        _paint(app, item, lut, tiles.query(t0, t0 + width, WIDTH_PX, compute=False))
        redraws.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        tiles.query(t0, t0 + width, WIDTH_PX)
        fills.append(time.perf_counter() - begin)
    held_mb = tiles.nbytes / 1e6
    return [
        ("cues.spectrogram_60min_first_paint", first * 1000, "ms"),
        ("cues.spectrogram_60min_praat_from_file_baseline", praat_from_file * 1000, "ms"),
        ("cues.spectrogram_60min_praat_in_memory_baseline", praat_in_memory * 1000, "ms"),
        ("spectrogram_60min_first_paint_vs_praat_ratio", first / praat_from_file, "x"),
        ("cues.spectrogram_60min_first_paint_vs_praat_in_memory_ratio", first / praat_in_memory, "x"),
        ("cues.spectrogram_60min_zoom_redraw_median", statistics.median(redraws) * 1000, "ms"),
        ("cues.spectrogram_60min_zoom_fill_median", statistics.median(fills) * 1000, "ms"),
        ("cues.spectrogram_60min_zoom_fill_max", max(fills) * 1000, "ms"),
        ("cues.spectrogram_60min_tiles_memory", held_mb, "MB"),
    ]


def _sample_rows(folder: Path) -> list[Row]:
    from app.cues.measures import CueSettings, egemaps_version
    from app.cues.service import compute_cues
    from app.sample import import_sample
    from storage.resources import SAMPLE_DIR
    from storage.store import Store

    if not SAMPLE_DIR.exists():
        return []
    store = Store.open(folder / "sample.duckdb")
    try:
        import_sample(store)
        begin = time.perf_counter()
        compute_cues(store, settings=CueSettings(egemaps=False))
        without = time.perf_counter() - begin
        begin = time.perf_counter()
        compute_cues(store)  # a new run: the settings differ
        seconds = time.perf_counter() - begin
    finally:
        store.close()
    rows = [("cues.measures_whole_sample_praat_and_turns", without, "s")]
    if egemaps_version() is not None:
        rows.append(("cues.measures_whole_sample_with_egemaps", seconds, "s"))
    return rows


def _switch_rows(folder: Path, app) -> list[Row]:
    """Stimulus switches in the analysis tracks (pitch rows only, so no spectrogram work competes), each a
    new stimulus laid out with its work held back (as the player does) and the view repainted."""
    import soundfile as sf
    from PySide6.QtCore import QSettings

    from app.cues.workers import analysis_pool
    from storage.records import MediaRef
    from widgets.analysis_tracks import AnalysisTracksView
    from widgets.settings_store import SettingsStore

    # the benchmark's track choices live in a file of its own, not the user's settings
    settings = SettingsStore(QSettings(str(folder / "tracks.ini"), QSettings.Format.IniFormat))
    settings.update(tracks_shown={f"{lane}/{track}": track == "pitch"
                                  for lane in ("long", "a", "b") for track in ("spectrogram", "pitch")})
    long_path, short_path = folder / "long.wav", folder / "short.wav"
    sf.write(long_path, _voice(LONG_S, LONG_RATE), LONG_RATE, subtype="PCM_16")
    sf.write(short_path, _voice(2.0, CLIP_RATE, seed=1), CLIP_RATE, subtype="PCM_16")
    long_lanes = [("long", MediaRef("audio", long_path, True, 0.0, LONG_S, LONG_RATE))]
    shorts = [[(name, MediaRef("audio", short_path, True, 0.0, 2.0, CLIP_RATE))] for name in ("a", "b")]
    view = AnalysisTracksView(settings=settings)
    view.resize(WIDTH_PX, 300)
    view.show()

    def settle() -> None:
        while view.busy():
            app.processEvents()
            time.sleep(0.002)

    def switch(k: int, at: float) -> float:
        """From the moment `at` the switch is asked for (a click) to the view repainted: a GUI thread held
        by anything else past `at` shows here."""
        while time.perf_counter() < at:
            app.processEvents()
            if at - time.perf_counter() > 0.003:
                time.sleep(0.001)  # then spin: a sleep's overshoot must not count as the switch's time
        view.set_stimulus(shorts[k % 2], start=False)
        app.processEvents()
        view.repaint()
        return time.perf_counter() - at

    try:
        view.set_stimulus(long_lanes)  # the first analysis starts the worker processes
        settle()
        view.set_stimulus(shorts[0], start=False)
        begin = time.perf_counter()
        view.set_stimulus(long_lanes)
        settle()
        analysis_s = time.perf_counter() - begin
        idle, busy = [], []
        for k in range(SWITCHES):
            idle.append(switch(k, time.perf_counter() + 0.05))
            view.set_stimulus(long_lanes)
            # asked at points spread over the analysis, most of them while Praat computes
            share = SPREAD[0] + (SPREAD[1] - SPREAD[0]) * k / (SWITCHES - 1)
            busy.append(switch(k, time.perf_counter() + share * analysis_s))
            settle()
    finally:
        view.shutdown()
        view.close()
        analysis_pool().shutdown()
    idle_ms, busy_ms = statistics.median(idle) * 1000, statistics.median(busy) * 1000
    return [("cues.stimulus_switch_idle", idle_ms, "ms"),
            ("cues.stimulus_switch_during_analysis", busy_ms, "ms"),
            ("cues.pitch_intensity_240s_48k_analysis", analysis_s * 1000, "ms"),
            ("switch_during_analysis_vs_idle_ratio", busy_ms / idle_ms, "x")]


def run() -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["THINSLICE_HOME"] = str(folder)  # tile and peak caches go here, not to the user's
        app, plot, item, lut = _image_item()
        rows = _switch_rows(folder, app)
        rows += _clip_rows(folder, app, item, lut)
        rows += _hour_rows(folder, app, item, lut)
        rows += _sample_rows(folder)
        plot.close()
        return rows


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
