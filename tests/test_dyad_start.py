"""Both participants of a dyad start together when Play comes after the page has sat paused a while."""
from __future__ import annotations

import pytest

from playback_media import write_numbered_mp4
from storage.records import MediaRef
from widgets.player_panel import PlayerPanel

vlc = pytest.importorskip("vlc")
VLC_ARGS = ["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"]


@pytest.fixture
def panel(qtbot, tmp_path):
    if vlc.Instance(*VLC_ARGS) is None:
        pytest.skip("libVLC plugins are not installed")
    widget = PlayerPanel(vlc_args=VLC_ARGS)
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    video = write_numbered_mp4(tmp_path / "numbered.mp4", seconds=4.0, fps=25, audio_rate=None)
    with qtbot.waitSignal(widget.waveformReady, timeout=10000):
        widget.set_stimulus([MediaRef("video:A", video, True), MediaRef("video:B", video, True)], [], "dyad")
    qtbot.waitUntil(lambda: len(widget.video.surfaces) == 2 and all(s.ready for s in widget.video.surfaces),
                    timeout=10000)
    yield widget
    widget.shutdown()


def test_after_a_pause_both_players_start_together(qtbot, panel):
    qtbot.wait(1200)   # the user reads the page before pressing Play
    a, b = panel.video.surfaces
    panel.clock.play()
    offsets = []

    def sample() -> bool:
        ta, tb = a.estimated_time(), b.estimated_time()
        if ta is not None and tb is not None:
            offsets.append(abs(ta - tb))
        return panel.clock.position > 1.5

    qtbot.waitUntil(sample, timeout=8000)
    assert offsets
    assert max(offsets) < 0.04, f"participants apart by up to {max(offsets) * 1000:.0f} ms"
