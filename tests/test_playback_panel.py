"""The player panel as a person uses it: keys from the keymap, clicks in data coordinates, broken files,
fast switching between stimuli. Audio-only stimuli; video has its own test file."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.keymap import MEDIA, default_keymap
from playback_media import tone, write_wav
from storage.media import peak_cache_path
from storage.records import MediaRef, Segment, Word
from widgets.keys import KeyDispatcher, key_press_for
from widgets.player_panel import PlayerPanel
from widgets.waveform_view import format_time

RATE = 16000
VLC_ARGS = ["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"]


@pytest.fixture
def panel(qtbot):
    widget = PlayerPanel(vlc_args=VLC_ARGS)
    qtbot.addWidget(widget)
    # the panel on its own is its window: the same dispatcher as the main window's routes its keys
    widget.keys = KeyDispatcher(widget, default_keymap(), lambda: (MEDIA,))
    widget.keys.register_all(widget.actions())
    widget.resize(1000, 650)
    widget.show()
    yield widget
    widget.shutdown()


@pytest.fixture
def voices(tmp_path) -> list[MediaRef]:
    refs = []
    for name, seconds, freq in (("target", 6.0, 220.0), ("alternative", 5.0, 330.0), ("neutral", 4.0, 440.0)):
        path = write_wav(tmp_path / f"{name}.wav", tone(seconds, RATE, freq), RATE)
        refs.append(MediaRef(f"audio:{name}", path, True))
    return refs


SEGMENTS = [
    Segment(0, "A", 0.5, 2.0, "I got my results",
            (Word("I", 0.5, 0.7), Word("got", 0.7, 1.0), Word("my", 1.0, 1.3), Word("results", 1.3, 2.0))),
    Segment(1, "B", 2.5, 4.0, "oh no", (Word("oh", 2.5, 3.0), Word("no", 3.2, 4.0))),
    Segment(2, "A", 4.2, 5.5, "it is fine"),
]


def load(qtbot, panel, media, segments=(), kind="echomind_script", text=None):
    with qtbot.waitSignal(panel.waveformReady, timeout=10000):
        panel.set_stimulus(media, list(segments), kind, text=text)


def press(qtbot, panel, sequence: str) -> None:
    key, modifiers = key_press_for(sequence)
    qtbot.keyClick(panel, key, modifiers)


def test_echomind_voices_stack_and_v_switches_the_heard_voice(qtbot, panel, voices):
    load(qtbot, panel, voices, text="I got my test results back today.")
    assert panel.waveform.lane_count == 3
    assert [panel.waveform.lane_plot(i).getAxis("left").labelText for i in range(3)] == \
        ["target", "alternative", "neutral"]
    assert panel.clock.duration == pytest.approx(6.0)  # the longest voice
    assert panel.voice == "target" and panel.waveform.active_lane == 0
    panel.clock.seek(2.25)
    with qtbot.waitSignal(panel.voiceChanged) as changed:
        press(qtbot, panel, "V")
    assert changed.args == ["alternative"]
    assert panel.waveform.active_lane == 1
    assert panel.clock.position == pytest.approx(2.25)  # same position, other voice
    press(qtbot, panel, "V")
    press(qtbot, panel, "V")
    assert panel.voice == "target"


def test_transport_keys_come_from_the_keymap(qtbot, panel, voices):
    load(qtbot, panel, voices)
    keymap = default_keymap()
    by_action = {b.action: b.sequence for b in keymap}
    press(qtbot, panel, by_action["playback.seek_forward_large"])
    assert panel.clock.position == pytest.approx(5.0)
    press(qtbot, panel, by_action["playback.seek_back"])
    assert panel.clock.position == pytest.approx(4.0)
    press(qtbot, panel, by_action["playback.rate_up"])
    assert panel.clock.rate == 1.25 and panel.rate_box.currentText() == "1.25x"
    press(qtbot, panel, by_action["playback.start"])
    assert panel.clock.position == 0.0
    press(qtbot, panel, by_action["playback.end"])
    assert panel.time_label.text() == "00:06.00 / 00:06.00"
    press(qtbot, panel, "Space")
    assert panel.clock.playing
    press(qtbot, panel, "K")
    assert not panel.clock.playing


def test_clicking_a_transcript_word_seeks_to_its_start(qtbot, panel, voices):
    load(qtbot, panel, voices, SEGMENTS)
    view = panel.transcript
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.point_for_word(0, 3))
    assert panel.clock.position == pytest.approx(1.3)
    assert view.active == ((0,), (0, 3))  # the word and its segment light up
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.point_for_word(1, 1))
    assert panel.clock.position == pytest.approx(3.2)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.point_for_segment(2))
    assert panel.clock.position == pytest.approx(4.2)  # no words: the segment start
    assert panel.time_label.text().startswith(format_time(4.2))


def test_waveform_click_seeks_and_shift_drag_selects_a_range(qtbot, panel, voices):
    load(qtbot, panel, voices)
    waveform = panel.waveform
    canvas = waveform.canvas.viewport()
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=waveform.point_for_time(3.0, lane=1))
    # one pixel is (6 s / plot width): the seek lands within a pixel of where the person clicked
    pixel_s = waveform.duration / waveform.lane_plot(0).vb.width()
    assert panel.clock.position == pytest.approx(3.0, abs=pixel_s)
    assert waveform.playhead == panel.clock.position

    start, end = waveform.point_for_time(1.0, 2), waveform.point_for_time(2.5, 2)
    with qtbot.waitSignal(waveform.rangeSelected) as selected:
        qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, start)
        for fraction in np.linspace(0.1, 1.0, 8):
            point = start + (end - start) * fraction
            qtbot.mouseMove(canvas, point)
        qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, end)
    t0, t1 = selected.args
    assert t0 == pytest.approx(1.0, abs=2 * pixel_s) and t1 == pytest.approx(2.5, abs=2 * pixel_s)
    assert waveform.selection == (t0, t1)


def test_playhead_and_transcript_follow_the_clock(qtbot, panel, voices):
    load(qtbot, panel, voices, SEGMENTS)
    panel.clock.seek(2.6)
    assert panel.waveform.playhead == pytest.approx(2.6)
    assert panel.transcript.active == ((1,), (1, 0))
    panel.clock.play()
    qtbot.waitUntil(lambda: panel.clock.position > 3.3, timeout=5000)
    assert panel.waveform.playhead == pytest.approx(panel.clock.position, abs=0.1)
    assert panel.transcript.active[0] == (1,)


def test_missing_and_corrupt_audio_say_so_and_the_rest_still_works(qtbot, panel, tmp_path, voices):
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk" * 10)
    media = [voices[0], MediaRef("audio:alternative", tmp_path / "gone.wav", False),
             MediaRef("audio:neutral", broken, True)]
    messages = []
    panel.statusMessage.connect(messages.append)
    load(qtbot, panel, media, SEGMENTS)
    assert "gone.wav: file not found" in panel.waveform.lane_message(1)
    assert "broken.wav" in panel.waveform.lane_message(2)
    assert any("gone.wav: file not found" in m for m in messages)
    assert panel.waveform.lane_message(0) == ""
    # the good voice, transcript and clock carry on
    qtbot.mouseClick(panel.transcript.viewport(), Qt.MouseButton.LeftButton,
                     pos=panel.transcript.point_for_word(1, 0))
    assert panel.clock.position == pytest.approx(2.5)
    panel.clock.play()
    qtbot.waitUntil(lambda: panel.clock.position > 2.7, timeout=5000)


def test_switching_stimuli_during_a_decode_cancels_it(qtbot, panel, tmp_path, voices):
    # Long enough that building its peaks takes a while (30 min at 8 kHz).
    long_wav = write_wav(tmp_path / "long.wav", np.tile(tone(10.0, 8000), 180), 8000)
    panel.set_stimulus([MediaRef("audio", long_wav, True)], [], "audio")
    load(qtbot, panel, voices)  # chosen at once, before the first decode can finish
    assert panel.waveform.lane_count == 3
    assert panel.clock.duration == pytest.approx(6.0)
    qtbot.waitUntil(lambda: panel.pending_jobs() == 0, timeout=10000)
    assert panel.cancelled_jobs >= 1
    assert not peak_cache_path(long_wav).exists()  # stopped part way: nothing half-built is kept
    assert panel.clock.duration == pytest.approx(6.0)  # the stale result never replaced the new one
