"""Video through the real libVLC (dummy outputs) on a generated MP4 whose frames show their number."""
from __future__ import annotations

import statistics
import time

import pytest

from playback_media import decode_frame_number, write_numbered_mp4
from storage.records import MediaRef
from widgets.player_panel import PlayerPanel

vlc = pytest.importorskip("vlc")
VLC_ARGS = ["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"]
FPS = 25


@pytest.fixture(scope="module")
def numbered_mp4(tmp_path_factory):
    return write_numbered_mp4(tmp_path_factory.mktemp("video") / "numbered.mp4", seconds=3.0, fps=FPS)


@pytest.fixture
def panel(qtbot):
    if vlc.Instance(*VLC_ARGS) is None:
        pytest.skip("libVLC plugins are not installed")
    widget = PlayerPanel(vlc_args=VLC_ARGS)
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    yield widget
    widget.shutdown()


def open_video(qtbot, panel, media, kind="video"):
    with qtbot.waitSignal(panel.waveformReady, timeout=10000):
        panel.set_stimulus(media, [], kind)
    qtbot.waitUntil(lambda: all(s.ready or s.failed for s in panel.video.surfaces), timeout=5000)


def shown_frame(qtbot, surface, tmp_path, expected: int) -> int:
    """The frame number on screen, read from a libVLC snapshot once it has settled on `expected`."""
    png = tmp_path / "snapshot.png"
    seen = []

    def settled() -> bool:
        png.unlink(missing_ok=True)
        if surface.snapshot(png) and png.exists():
            seen.append(decode_frame_number(png))
        return bool(seen) and seen[-1] == expected

    try:
        qtbot.waitUntil(settled, timeout=3000)
    except qtbot.TimeoutError:
        pass  # report what was on screen instead
    return seen[-1] if seen else -1


def test_paused_seek_lands_on_the_right_frame(qtbot, panel, numbered_mp4, tmp_path):
    open_video(qtbot, panel, [MediaRef("video", numbered_mp4, True)])
    surface = panel.video.surfaces[0]
    assert panel.clock.duration == pytest.approx(3.0, abs=0.05)
    # mid-frame times: frame n is on screen during [n/25, (n+1)/25)
    for frame in (0, 38, 12, 74, 51):
        panel.clock.seek((frame + 0.5) / FPS)
        assert shown_frame(qtbot, surface, tmp_path, frame) == frame
    # the frame just after a boundary and the one just before it
    panel.clock.seek(1.041)
    assert shown_frame(qtbot, surface, tmp_path, 26) == 26
    panel.clock.seek(1.039)
    assert shown_frame(qtbot, surface, tmp_path, 25) == 25


def test_a_window_inside_the_file_maps_stimulus_time_to_file_time(qtbot, panel, numbered_mp4, tmp_path):
    open_video(qtbot, panel, [MediaRef("video", numbered_mp4, True, offset_s=1.0, duration_s=1.5)])
    assert panel.clock.duration == pytest.approx(1.5)
    assert panel.waveform.duration == pytest.approx(1.5)
    panel.clock.seek(0.3 + 0.5 / FPS)  # stimulus 0.32 s = file 1.32 s = frame 33
    assert shown_frame(qtbot, panel.video.surfaces[0], tmp_path, 33) == 33


def test_clock_and_playhead_follow_libvlc_while_playing(qtbot, panel, numbered_mp4):
    open_video(qtbot, panel, [MediaRef("video", numbered_mp4, True)])
    panel.clock.play()
    qtbot.waitUntil(lambda: panel.clock.position > 0.6, timeout=5000)
    # Compare whenever libVLC reports a new time: that is when its coarse report is fresh.
    gaps = []
    last_seen = [panel.video.master_time()]
    last_look = [time.monotonic()]

    def collect() -> bool:
        now = time.monotonic()
        media_time = panel.video.master_time()
        if media_time is not None and media_time != last_seen[0]:
            last_seen[0] = media_time
            # libVLC's new time came out at some moment since the previous look, and the clock ran on
            # meanwhile; on a loaded machine that look can be long ago. Count only the part of the gap
            # that this delay, measured here, cannot explain.
            gap = panel.clock.position - media_time
            unseen = (now - last_look[0]) * panel.clock.rate
            gaps.append(0.0 if gap - unseen <= 0.0 <= gap else min(abs(gap), abs(gap - unseen)))
            assert panel.waveform.playhead == pytest.approx(panel.clock.position, abs=0.05)
        last_look[0] = now
        return panel.clock.position > 2.2

    qtbot.waitUntil(collect, timeout=6000)
    assert len(gaps) >= 3
    assert statistics.median(abs(g) for g in gaps) < 0.06
    assert max(abs(g) for g in gaps) < 0.15
    qtbot.waitUntil(lambda: not panel.clock.playing, timeout=5000)  # stops at the end by itself
    assert panel.clock.position == pytest.approx(3.0, abs=0.05)


def test_dyad_plays_two_videos_and_a_broken_one_says_why(qtbot, panel, numbered_mp4, tmp_path):
    broken = tmp_path / "B.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x13" * 5000)
    media = [MediaRef("video:A", numbered_mp4, True), MediaRef("video:B", broken, True)]
    messages = []
    panel.statusMessage.connect(messages.append)
    open_video(qtbot, panel, media, kind="dyad")
    assert len(panel.video.surfaces) == 2
    qtbot.waitUntil(lambda: "B.mp4" in panel.video.messages()[1], timeout=5000)
    assert "B.mp4" in panel.waveform.lane_message(1)
    assert any("B.mp4" in m for m in messages)
    assert panel.waveform.lane_message(0) == ""
    panel.clock.seek(1.5 + 0.5 / FPS)
    assert shown_frame(qtbot, panel.video.surfaces[0], tmp_path, 37) == 37


def test_dyad_players_stay_together(qtbot, panel, numbered_mp4, tmp_path):
    media = [MediaRef("video:A", numbered_mp4, True), MediaRef("video:B", numbered_mp4, True)]
    open_video(qtbot, panel, media, kind="dyad")
    assert [name for name in (panel.waveform.lane_plot(i).getAxis("left").labelText for i in range(2))] == ["A", "B"]
    panel.clock.seek(0.5)
    panel.clock.play()
    qtbot.waitUntil(lambda: panel.clock.position > 1.5, timeout=5000)
    panel.clock.pause()
    a, b = panel.video.surfaces
    stopped_at = panel.clock.position

    def both_at_the_clock() -> bool:
        times = [a.media_time(), b.media_time()]
        return None not in times and all(abs(t - stopped_at) < 0.02 for t in times)

    qtbot.waitUntil(both_at_the_clock, timeout=2000)  # a pause shows the clock's frame in both
    panel.clock.seek(2.0 + 0.5 / FPS)
    assert shown_frame(qtbot, b, tmp_path, 50) == 50
