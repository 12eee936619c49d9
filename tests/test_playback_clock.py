"""The playback clock and the keymap, without Qt: a fake monotonic time source drives them."""
from __future__ import annotations

import subprocess
import sys

import pytest

from app.clock import PlaybackClock
from app.keymap import KeyBinding, default_keymap, normalize_sequence


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def clock(fake_time) -> PlaybackClock:
    c = PlaybackClock(fake_time)
    c.set_duration(20.0)
    return c


def test_position_advances_with_rate_and_stops_at_the_end(clock, fake_time):
    clock.play()
    fake_time.advance(2.0)
    assert clock.position == pytest.approx(2.0)
    clock.set_rate(2.0)
    fake_time.advance(1.0)
    assert clock.position == pytest.approx(4.0)
    clock.set_rate(5.0)
    assert clock.rate == 2.0  # clamped
    clock.set_rate(0.1)
    assert clock.rate == 0.5
    fake_time.advance(100.0)
    assert clock.tick() == pytest.approx(20.0)
    assert not clock.playing


def test_pause_freezes_and_seek_keeps_play_state(clock, fake_time):
    clock.play()
    fake_time.advance(3.0)
    clock.pause()
    fake_time.advance(5.0)
    assert clock.position == pytest.approx(3.0)
    clock.seek(12.5)
    assert clock.position == 12.5 and not clock.playing
    clock.seek(-4)
    assert clock.position == 0.0
    clock.seek(99)
    assert clock.position == 20.0


def test_listeners_hear_changes_only(clock, fake_time):
    events = []
    unsubscribe = clock.subscribe(events.append)
    clock.tick()  # nothing moved: nothing to say
    assert events == []
    clock.play()
    fake_time.advance(0.5)
    clock.tick()
    assert [e.kind for e in events][-2:] == ["play_state", "position"]
    assert events[-1].position == pytest.approx(0.5)
    unsubscribe()
    clock.seek(3.0)
    assert events[-1].kind == "position"


def test_small_drift_is_absorbed_smoothly_and_monotonically(clock, fake_time):
    clock.play()
    fake_time.advance(1.0)
    clock.sync_media(1.1)  # media is 100 ms ahead
    positions = []
    for _ in range(40):
        fake_time.advance(0.05)
        positions.append(clock.position)
    assert all(b > a for a, b in zip(positions, positions[1:]))
    # fully corrected after 1 s of play at a 10 % slew, and now running at the rate again
    assert clock.position == pytest.approx(1.1 + 2.0)
    assert positions[0] < 1.1 + 0.05  # no jump


def test_stale_repeats_are_ignored_and_big_jumps_snap(clock, fake_time):
    clock.play()
    clock.sync_media(0.0)
    fake_time.advance(0.2)
    clock.sync_media(0.0)  # the same coarse value again: no information
    assert clock.position == pytest.approx(0.2)
    events = []
    clock.subscribe(events.append)
    clock.sync_media(5.0)
    assert clock.position == pytest.approx(5.0)
    assert events[-1].kind == "seek"


def test_loop_wraps_and_once_range_pauses_at_its_end(clock, fake_time):
    clock.set_loop(2.0, 3.0, repeat=True)
    assert clock.position == 2.0
    clock.play()
    fake_time.advance(1.25)
    assert clock.tick() == pytest.approx(2.25)
    assert clock.playing
    clock.set_loop(4.0, 4.5, repeat=False)
    fake_time.advance(1.0)
    assert clock.tick() == pytest.approx(4.5)
    assert not clock.playing
    clock.play()  # a finished once-range plays again from its start
    assert clock.position == pytest.approx(4.0)
    clock.clear_loop()
    assert clock.loop is None


def test_shuttle_keys_behave_like_an_editor_without_reverse(clock, fake_time):
    clock.seek(10.0)
    clock.shuttle_forward()
    assert clock.playing and clock.rate == 1.0
    clock.shuttle_forward()
    assert clock.rate == 1.25
    clock.shuttle_backward()
    assert clock.rate == 1.0
    clock.shuttle_backward()
    assert clock.position == pytest.approx(5.0)
    for _ in range(10):
        clock.step_rate(-1)
    assert clock.rate == 0.5


def test_keymap_is_one_table_for_keys_help_and_tests():
    keymap = default_keymap()
    assert keymap.action_for("Space") == "playback.toggle"
    assert keymap.action_for("shift+left") == "playback.seek_back_large"
    assert keymap.action_for("v") == "playback.next_voice"
    assert keymap.action_for("?") == keymap.action_for("F1") == "view.help"
    assert normalize_sequence("Shift+Ctrl+a") == "Ctrl+Shift+A"
    keymap.add(KeyBinding("1", "annotate.label_1", "First label", group="Annotate"))
    assert keymap.action_for("1") == "annotate.label_1"
    with pytest.raises(ValueError, match="already bound"):
        keymap.add(KeyBinding("Space", "something.else", "clash"))
    assert all(b.description for b in keymap)



def test_keymap_contexts_and_a_label_sets_keys():
    from app.keymap import MEDIA, STEPPER, WINDOW, label_action, label_of_action

    keymap = default_keymap()
    assert keymap.action_for("Space", STEPPER) == "stepper.play"
    assert keymap.action_for("Space", MEDIA) == "playback.toggle"
    assert keymap.action_for("Ctrl+I", MEDIA) is None and keymap.action_for("Ctrl+I", WINDOW) == "file.import"
    with pytest.raises(ValueError, match="already bound"):  # a page key may not hide a window key
        keymap.add(KeyBinding("F5", "something.else", "clash", context=STEPPER))
    skipped = keymap.set_labels("vocal cues", [("1", "laugh"), ("2", "sigh"), ("v", "voice crack")])
    assert skipped == ["voice crack"]  # V already switches voices: the fixed key wins
    assert keymap.action_for("1", MEDIA) == label_action("laugh") and label_of_action(label_action("laugh")) == "laugh"
    keymap.set_labels("other", [("1", "yes")])  # the next active set replaces the last one's keys
    assert keymap.action_for("1", MEDIA) == label_action("yes") and keymap.action_for("2", MEDIA) is None
    assert {b.group for b in keymap if b.action.startswith("annotate.label:")} == {"Labels (other)"}
