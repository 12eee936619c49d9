"""How far apart a dyad's two players are in the first 2 s after Play (target: under 40 ms).

Two generated videos are opened as participants A and B, left paused for a while (as a user reads the page
before pressing Play), then played. Every poll compares the time each player reports, as the clock and the
follower logic see it (`estimated_time`). The baseline, measured in the same run, is the same figure in a
later 2 s window, once both players have long been running.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

Row = tuple[str, float, str]
FPS = 25
PAUSED_BEFORE_PLAY_S = 1.5
WINDOW_S = 2.0
RUNS = 3


def _video(path: Path, seconds: float) -> Path:
    import av

    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for n in range(int(seconds * FPS)):
            frame = av.VideoFrame.from_ndarray(np.full((120, 160, 3), n % 256, dtype=np.uint8), format="rgb24")
            frame.pts, frame.time_base = n, Fraction(1, FPS)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def _offsets(app, surfaces, seconds: float) -> list[float]:
    """|A - B| in ms at each poll over `seconds` of playing."""
    found = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        a, b = surfaces[0].estimated_time(), surfaces[1].estimated_time()
        if a is not None and b is not None:
            found.append(abs(a - b) * 1000)
        time.sleep(0.005)
    return found


def _one_run(app, videos: list[Path]) -> tuple[float, float]:
    from storage.records import MediaRef
    from widgets.player_panel import PlayerPanel

    panel = PlayerPanel(vlc_args=["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"])
    panel.show()
    panel.set_stimulus([MediaRef("video:A", videos[0], True), MediaRef("video:B", videos[1], True)], [], "dyad")
    surfaces = panel.video.surfaces
    deadline = time.monotonic() + 10
    while not (len(surfaces) == 2 and all(s.ready for s in surfaces)) and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.005)
    paused_until = time.monotonic() + PAUSED_BEFORE_PLAY_S
    while time.monotonic() < paused_until:
        app.processEvents()
        time.sleep(0.005)
    panel.clock.play()
    start = _offsets(app, surfaces, WINDOW_S)
    _offsets(app, surfaces, 1.0)
    steady = _offsets(app, surfaces, WINDOW_S)
    panel.shutdown()
    panel.close()
    return max(start or [float("nan")]), max(steady or [float("nan")])


def run() -> list[Row]:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        videos = [_video(Path(tmp) / f"{p}.mp4", 8.0) for p in "AB"]
        results = [_one_run(app, videos) for _ in range(RUNS)]
    return [("dyad_start_offset_first_2s_max", statistics.median(r[0] for r in results), "ms"),
            ("dyad_steady_offset_2s_max_baseline", statistics.median(r[1] for r in results), "ms")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
