"""Playback figures: peak building, waveform redraw against pyqtgraph's own downsampling, stimulus
switch latency and clock drift against libVLC. `run()` returns (name, median, unit) rows.

All media are generated into a temporary folder (the 60-minute WAV once per run); the peak cache goes
to a temporary THINSLICE_HOME so that the user's cache is untouched. Takes about two minutes on 2 cores.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HOUR_S = 3600
WAV_RATE = 48000
MP4_MINUTES = 10  # generating an hour of AAC on 2 cores takes minutes; we extrapolate and say so
WIDTH_PX = 1280

Row = tuple[str, float, str]


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _signal(start: int, count: int, rate: int) -> np.ndarray:
    t = (np.arange(start, start + count, dtype=np.float64)) / rate
    envelope = 0.3 + 0.7 * np.abs(np.sin(2 * np.pi * 0.05 * t))
    return (0.6 * envelope * np.sin(2 * np.pi * 180.0 * t)).astype(np.float32)


def make_hour_wav(folder: Path) -> Path:
    import soundfile

    path = folder / "hour_48k.wav"
    block = WAV_RATE * 60
    with soundfile.SoundFile(str(path), "w", WAV_RATE, 1, subtype="PCM_16") as out:
        for start in range(0, HOUR_S * WAV_RATE, block):
            out.write(_signal(start, block, WAV_RATE))
    return path


def make_aac_mp4(folder: Path, minutes: int) -> Path:
    import av

    path = folder / f"speech_{minutes}min.mp4"
    rate = 48000
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=rate, layout="mono")
        stream.bit_rate = 48000
        frame_size = 1024
        chunk = rate * 10
        for start in range(0, minutes * 60 * rate, chunk):
            samples = _signal(start, chunk, rate)
            for offset in range(0, chunk, frame_size):
                frame = av.AudioFrame.from_ndarray(samples[offset : offset + frame_size].reshape(1, -1),
                                                   format="fltp", layout="mono")
                frame.sample_rate = rate
                frame.pts = start + offset
                frame.time_base = Fraction(1, rate)
                for packet in stream.encode(frame):
                    container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


_MEMORY_CHILD = """
import json, sys
def high_water_kb():
    # VmHWM belongs to this process image; ru_maxrss would carry the parent's peak across exec.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
from storage.media import build_peaks
before = high_water_kb()
pyramid = build_peaks(sys.argv[1])
after = high_water_kb()
print(json.dumps({"before_kb": before, "after_kb": after, "pyramid_bytes": pyramid.nbytes}))
"""


def _peak_memory_mb(path: Path) -> tuple[float, float]:
    """(peak RSS of a process that builds the pyramid, growth over its start-up RSS), in MB."""
    done = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(path)], cwd=str(ROOT), capture_output=True,
                          text=True, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["after_kb"] / 1024, (figures["after_kb"] - figures["before_kb"]) / 1024


def bench_peaks(folder: Path) -> tuple[list[Row], Path]:
    from storage.media import build_peaks, load_peaks

    rows: list[Row] = []
    wav = make_hour_wav(folder)
    rows.append(("peaks_wav_60min_48k_build", _median_time(lambda: build_peaks(wav), 3), "s"))
    load_peaks(wav)  # fills the cache
    rows.append(("peaks_wav_60min_48k_cached_open", _median_time(lambda: load_peaks(wav), 5) * 1000, "ms"))
    peak, growth = _peak_memory_mb(wav)
    rows.append(("peaks_wav_60min_48k_peak_rss", peak, "MB"))
    rows.append(("peaks_wav_60min_48k_rss_growth", growth, "MB"))
    rows.append(("peaks_wav_60min_pyramid_size", build_peaks(wav).nbytes / 1e6, "MB"))

    start = time.perf_counter()
    mp4 = make_aac_mp4(folder, MP4_MINUTES)
    rows.append((f"mp4_aac_{MP4_MINUTES}min_generation", time.perf_counter() - start, "s"))
    build = _median_time(lambda: build_peaks(mp4), 3)
    rows.append((f"peaks_mp4_aac_{MP4_MINUTES}min_build", build, "s"))
    rows.append(("peaks_mp4_aac_60min_build_EXTRAPOLATED_x6", build * 60 / MP4_MINUTES, "s"))
    peak, growth = _peak_memory_mb(mp4)
    rows.append((f"peaks_mp4_aac_{MP4_MINUTES}min_peak_rss", peak, "MB"))
    rows.append((f"peaks_mp4_aac_{MP4_MINUTES}min_rss_growth", growth, "MB"))
    return rows, wav


def _view_ranges(duration: float) -> list[tuple[float, float]]:
    """A zoom from the whole hour down to 2 s around 25 min, then pans at 10 s width."""
    ranges = []
    centre = 1500.0
    for width in np.geomspace(duration, 2.0, 24):
        t0 = max(0.0, min(centre - width / 2, duration - width))
        ranges.append((t0, t0 + width))
    for step in range(16):
        t0 = 1200.0 + step * 37.3
        ranges.append((t0, t0 + 10.0))
    return ranges


def bench_redraw(wav: Path) -> list[Row]:
    import pyqtgraph as pg
    import soundfile
    from PySide6.QtWidgets import QApplication

    from storage.media import load_peaks
    from widgets.waveform_view import WaveformView

    app = QApplication.instance() or QApplication([])
    pyramid = load_peaks(wav)
    view = WaveformView()
    view.resize(WIDTH_PX + 80, 300)
    view.show()
    view.set_lanes(["A"])
    view.set_lane_peaks(0, pyramid)
    view.set_duration(pyramid.duration_s)
    app.processEvents()
    ranges = _view_ranges(pyramid.duration_s)

    def show(widget, set_range, t0: float, t1: float) -> float:
        # Range change, the event loop (where pyqtgraph and our view recompute), then one paint.
        start = time.perf_counter()
        set_range(t0, t1)
        app.processEvents()
        widget.viewport().repaint()
        return (time.perf_counter() - start) * 1000

    ours_ms = [show(view.canvas, view.set_view_range, t0, t1) for t0, t1 in ranges]
    data_ms = []
    for t0, t1 in ranges:
        view.ruler.setXRange(t0, t1, padding=0)
        start = time.perf_counter()
        view.redraw()  # pyramid query + curve data only
        data_ms.append((time.perf_counter() - start) * 1000)
    width = int(view.ruler.vb.width())
    view.close()

    # pyqtgraph's own peak downsampling over the raw samples, same size, same ranges.
    samples = soundfile.read(str(wav), dtype="float32")[0]
    plot_widget = pg.PlotWidget()
    plot_widget.resize(WIDTH_PX + 80, 300)
    plot_widget.show()
    curve = plot_widget.plot()
    curve.setDownsampling(auto=True, method="peak")
    curve.setClipToView(True)
    start = time.perf_counter()
    curve.setData(np.arange(len(samples), dtype=np.float64) / WAV_RATE, samples)
    plot_widget.setXRange(0, pyramid.duration_s, padding=0)
    app.processEvents()
    plot_widget.viewport().repaint()
    load_s = time.perf_counter() - start
    baseline_ms = [show(plot_widget, lambda a, b: plot_widget.setXRange(a, b, padding=0), t0, t1)
                   for t0, t1 in ranges]
    plot_widget.close()
    del curve, samples
    ours_median = statistics.median(ours_ms)
    baseline_median = statistics.median(baseline_ms)
    return [
        (f"waveform_redraw_60min_{WIDTH_PX}px_median", ours_median, "ms"),
        (f"waveform_redraw_60min_{WIDTH_PX}px_max", max(ours_ms), "ms"),
        (f"waveform_peak_query_and_curve_60min_{WIDTH_PX}px_median", statistics.median(data_ms), "ms"),
        ("waveform_plot_width_px", float(width), "px"),
        ("pyqtgraph_peak_downsampling_redraw_60min_median", baseline_median, "ms"),
        ("pyqtgraph_peak_downsampling_redraw_60min_max", max(baseline_ms), "ms"),
        ("pyqtgraph_peak_downsampling_first_load", load_s, "s"),
        ("waveform_redraw_speedup_vs_pyqtgraph_downsampling", baseline_median / ours_median, "x"),
    ]


def bench_switch(folder: Path) -> list[Row]:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from storage.media import peak_cache_dir
    from storage.records import MediaRef
    from widgets.player_panel import PlayerPanel

    import soundfile

    app = QApplication.instance() or QApplication([])
    clips = []
    for name in ("A", "B"):
        path = folder / f"clip_{name}.wav"
        soundfile.write(str(path), _signal(0, 20 * 48000, 48000), 48000)
        clips.append([MediaRef(f"audio:{r}", path, True) for r in ("target", "alternative", "neutral")])
    panel = PlayerPanel(vlc_args=["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"])
    panel.resize(1200, 700)
    panel.show()
    app.processEvents()

    def switch(media, clear_cache: bool) -> float:
        if clear_cache:
            for cached in peak_cache_dir().glob("*.npz"):
                cached.unlink()
        loop = QEventLoop()
        panel.waveformReady.connect(loop.quit)
        QTimer.singleShot(10000, loop.quit)
        start = time.perf_counter()
        panel.set_stimulus(media, [], "echomind_script")
        loop.exec()
        panel.waveform.canvas.viewport().repaint()  # the first paint with the waveform in it
        elapsed = time.perf_counter() - start
        panel.waveformReady.disconnect(loop.quit)
        return elapsed * 1000

    cold = [switch(clips[i % 2], clear_cache=True) for i in range(6)]
    warm = [switch(clips[i % 2], clear_cache=False) for i in range(6)]
    panel.shutdown()
    panel.close()
    return [
        ("switch_to_first_waveform_paint_20s_3voices_uncached", statistics.median(cold), "ms"),
        ("switch_to_first_waveform_paint_20s_3voices_cached", statistics.median(warm), "ms"),
    ]


def bench_drift(folder: Path, seconds: float = 10.0) -> list[Row]:
    from PySide6.QtWidgets import QApplication

    from storage.records import MediaRef
    from widgets.player_panel import PlayerPanel

    import av

    app = QApplication.instance() or QApplication([])
    path = folder / "drift.mp4"
    fps = 25
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for n in range(int((seconds + 2) * fps)):
            image = np.full((120, 160, 3), n % 256, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts, frame.time_base = n, Fraction(1, fps)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    panel = PlayerPanel(vlc_args=["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"])
    panel.show()
    panel.set_stimulus([MediaRef("video", path, True)], [], "video")
    deadline = time.monotonic() + 5
    while not (panel.video.surfaces and panel.video.surfaces[0].ready) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.005)
    panel.clock.play()
    gaps, playhead_gaps, last = [], [], panel.video.master_time()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        media = panel.video.master_time()
        if media is not None and media != last:
            last = media
            gaps.append(abs(panel.clock.position - media) * 1000)
            playhead_gaps.append(abs(panel.waveform.playhead - media) * 1000)
        time.sleep(0.002)
    panel.shutdown()
    panel.close()
    steady = gaps[2:] or gaps  # the first reports include libVLC's start-up
    return [
        (f"clock_drift_vs_libvlc_{int(seconds)}s_play_median", statistics.median(steady), "ms"),
        (f"clock_drift_vs_libvlc_{int(seconds)}s_play_max", max(steady), "ms"),
        (f"playhead_vs_libvlc_{int(seconds)}s_play_median", statistics.median(playhead_gaps[2:] or playhead_gaps),
         "ms"),
        (f"libvlc_time_reports_in_{int(seconds)}s", float(len(gaps)), "count"),
    ]


def run() -> list[Row]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    rows: list[Row] = []
    previous_home = os.environ.get("THINSLICE_HOME")
    with tempfile.TemporaryDirectory(prefix="bench_playback_") as tmp:
        folder = Path(tmp)
        os.environ["THINSLICE_HOME"] = str(folder / "home")
        try:
            peak_rows, wav = bench_peaks(folder)
            rows += peak_rows
            rows += bench_redraw(wav)
            rows += bench_switch(folder)
            rows += bench_drift(folder)
        finally:
            if previous_home is None:
                os.environ.pop("THINSLICE_HOME", None)
            else:
                os.environ["THINSLICE_HOME"] = previous_home
    return rows


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.3f} {unit}")
