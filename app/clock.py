"""The one playback clock that video, audio, waveform, transcript and label tiers follow.

Qt-free. The clock extrapolates its position from a monotonic time source between the coarse updates a
media backend gives (libVLC reports its time in ~250 ms steps), and stays locked to that media time:
a small disagreement is absorbed gradually without the position ever running backwards during play,
a large one (a stall, a seek inside the backend) is taken over at once.

Nothing here owns a timer: the GUI calls `tick()` on its own timer, which advances the state (loop
wrap, stop at the end) and notifies listeners only when the position really changed.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

EventKind = Literal["position", "seek", "play_state", "rate", "duration", "loop"]

MIN_RATE = 0.5
MAX_RATE = 2.0
RATE_STEPS: tuple[float, ...] = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)


@dataclass(frozen=True)
class ClockEvent:
    """What changed (`kind`) and the clock's position at that moment, in seconds."""

    kind: EventKind
    position: float


@dataclass(frozen=True)
class LoopRange:
    """A range [start_s, end_s) to play; `repeat` plays it in a loop, otherwise once and pause at its end."""

    start_s: float
    end_s: float
    repeat: bool = True


Listener = Callable[[ClockEvent], None]


class PlaybackClock:
    """Position (s), duration, rate, play state and an optional loop range, with listeners.

    `time_source` returns seconds from a monotonic clock; tests inject a fake one. Thread-safe for
    reading `position` from an audio callback while the GUI thread changes state.
    """

    def __init__(
        self,
        time_source: Callable[[], float] = time.monotonic,
        *,
        snap_threshold_s: float = 0.3,
        slew_fraction: float = 0.1,
    ) -> None:
        self._now = time_source
        self._snap_threshold = snap_threshold_s
        # Up to this fraction of elapsed media time is added or removed to absorb drift; below 1 the
        # position keeps moving forward while it is corrected.
        self._slew_fraction = slew_fraction
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._anchor_pos = 0.0
        self._anchor_time = self._now()
        self._correction = 0.0
        self._duration: float | None = None
        self._rate = 1.0
        self._playing = False
        self._loop: LoopRange | None = None
        self._last_notified: float | None = None
        self._last_media_time: float | None = None

    # ----- observers -------------------------------------------------------------------------------
    def subscribe(self, callback: Listener) -> Callable[[], None]:
        """Call `callback(event)` on every change; returns a function that unsubscribes it."""
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def _emit(self, kind: EventKind) -> None:
        event = ClockEvent(kind, self.position)
        self._last_notified = event.position
        for listener in list(self._listeners):
            listener(event)

    # ----- state -----------------------------------------------------------------------------------
    @property
    def position(self) -> float:
        """The current position in seconds, clamped to [0, duration]."""
        with self._lock:
            return self._position_at(self._now())

    @property
    def duration(self) -> float | None:
        return self._duration

    @property
    def rate(self) -> float:
        return self._rate

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def loop(self) -> LoopRange | None:
        return self._loop

    def _position_at(self, now: float) -> float:
        pos = self._anchor_pos
        if self._playing:
            advanced = (now - self._anchor_time) * self._rate
            limit = abs(advanced) * self._slew_fraction
            pos += advanced + max(-limit, min(limit, self._correction))
        return self._clamp(pos)

    def _clamp(self, pos: float) -> float:
        pos = max(0.0, pos)
        if self._duration is not None:
            pos = min(pos, self._duration)
        return pos

    def _rebase(self, pos: float | None = None) -> None:
        """Restart extrapolation from now, at `pos` or at the current position; drops pending drift."""
        now = self._now()
        current = self._position_at(now)
        if pos is None and self._playing:
            # Keep whatever part of the drift correction has not been applied yet.
            advanced = abs(now - self._anchor_time) * self._rate * self._slew_fraction
            remaining = self._correction - max(-advanced, min(advanced, self._correction))
        else:
            remaining = 0.0
        self._anchor_pos = current if pos is None else self._clamp(pos)
        self._anchor_time = now
        self._correction = remaining

    # ----- commands --------------------------------------------------------------------------------
    def play(self) -> None:
        """Start playing; from the end (or a finished once-range) it restarts at the beginning."""
        with self._lock:
            if self._playing:
                return
            pos = self._position_at(self._now())
            start = None
            if self._loop is not None and not (self._loop.start_s <= pos < self._loop.end_s):
                start = self._loop.start_s
            elif self._duration is not None and pos >= self._duration:
                start = 0.0
            self._rebase(start)
            self._playing = True
        if start is not None:
            self._emit("seek")
        self._emit("play_state")

    def pause(self) -> None:
        with self._lock:
            if not self._playing:
                return
            self._rebase()
            self._correction = 0.0
            self._playing = False
        self._emit("play_state")

    def toggle(self) -> None:
        """Play if paused, pause if playing."""
        if self._playing:
            self.pause()
        else:
            self.play()

    def seek(self, position_s: float) -> None:
        """Jump to `position_s` (clamped to the stimulus); keeps the play state."""
        with self._lock:
            self._rebase(position_s)
            self._last_media_time = None
        self._emit("seek")

    def seek_by(self, delta_s: float) -> None:
        self.seek(self.position + delta_s)

    def set_rate(self, rate: float) -> None:
        """Set the playback rate, clamped to [0.5, 2.0]."""
        rate = max(MIN_RATE, min(MAX_RATE, float(rate)))
        with self._lock:
            if rate == self._rate:
                return
            self._rebase()
            self._rate = rate
        self._emit("rate")

    def step_rate(self, direction: int) -> None:
        """Move to the next (direction > 0) or previous rate in `RATE_STEPS`."""
        if direction > 0:
            faster = [r for r in RATE_STEPS if r > self._rate + 1e-9]
            if faster:
                self.set_rate(faster[0])
        else:
            slower = [r for r in RATE_STEPS if r < self._rate - 1e-9]
            if slower:
                self.set_rate(slower[-1])

    def shuttle_forward(self) -> None:
        """Video-editor L: start at normal speed if paused, otherwise go one rate step faster."""
        if not self._playing:
            self.set_rate(1.0)
            self.play()
        else:
            self.step_rate(+1)

    def shuttle_backward(self, jump_s: float = 5.0) -> None:
        """Video-editor J without reverse play: slow down a fast forward, otherwise jump back `jump_s`."""
        if self._playing and self._rate > 1.0:
            self.step_rate(-1)
        else:
            self.seek_by(-jump_s)

    def set_duration(self, duration_s: float | None) -> None:
        with self._lock:
            if duration_s == self._duration:
                return
            self._duration = duration_s
            self._rebase()
        self._emit("duration")

    def set_loop(self, start_s: float, end_s: float, repeat: bool = True) -> None:
        """Play [start_s, end_s) in a loop (or once); seeks to `start_s` if outside the range."""
        start_s, end_s = sorted((float(start_s), float(end_s)))
        with self._lock:
            self._loop = LoopRange(self._clamp(start_s), self._clamp(end_s), repeat)
            outside = not (self._loop.start_s <= self._position_at(self._now()) < self._loop.end_s)
        self._emit("loop")
        if outside:
            self.seek(start_s)

    def clear_loop(self) -> None:
        with self._lock:
            if self._loop is None:
                return
            self._loop = None
        self._emit("loop")

    def reset(self, duration_s: float | None = None) -> None:
        """Back to a paused clock at 0 with normal rate, no loop: for a new stimulus."""
        with self._lock:
            self._playing = False
            self._rate = 1.0
            self._loop = None
            self._duration = duration_s
            self._last_media_time = None
            self._rebase(0.0)
        for kind in ("play_state", "rate", "loop", "duration", "seek"):
            self._emit(kind)  # type: ignore[arg-type]

    # ----- following the media ---------------------------------------------------------------------
    def sync_media(self, media_time_s: float) -> None:
        """Lock to a time reported by the media backend.

        Only a *changed* report counts: a backend that updates every 250 ms repeats a stale value in
        between, and that value is freshest at the moment it changes. Drift below the snap threshold is
        absorbed gradually; a larger one moves the clock at once (listeners get a `seek` event).
        """
        with self._lock:
            if media_time_s == self._last_media_time:
                return
            self._last_media_time = media_time_s
            if not self._playing:
                return
            now = self._now()
            error = media_time_s - self._position_at(now)
            snapped = abs(error) > self._snap_threshold
            if snapped:
                self._anchor_pos = self._clamp(media_time_s)
                self._anchor_time = now
                self._correction = 0.0
            else:
                self._rebase()
                self._correction = error
        if snapped:
            self._emit("seek")

    def tick(self) -> float:
        """Advance: wrap or stop at a loop end, stop at the end; notify `position` if it moved.

        Returns the current position.
        """
        events: list[EventKind] = []
        with self._lock:
            now = self._now()
            pos = self._position_at(now)
            loop = self._loop
            if self._playing and loop is not None and pos >= loop.end_s > loop.start_s:
                if loop.repeat:
                    self._rebase(loop.start_s + (pos - loop.end_s) % (loop.end_s - loop.start_s))
                    self._last_media_time = None
                    events.append("seek")
                else:
                    self._rebase(loop.end_s)
                    self._playing = False
                    events += ["seek", "play_state"]
            elif self._playing and self._duration is not None and pos >= self._duration:
                self._rebase(self._duration)
                self._playing = False
                events.append("play_state")
            pos = self._position_at(now)
        for kind in events:
            self._emit(kind)
        if pos != self._last_notified:
            self._emit("position")
        return pos
