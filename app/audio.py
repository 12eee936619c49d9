"""Audio-only playback through sounddevice, following the PlaybackClock.

Qt-free. The output stream's callback reads the source at the clock's position and rate, so the clock
stays the single truth: seeks, rate changes, loop wraps and voice switches are heard at once. Without an
output device (no PortAudio, no device, or the device refuses to open) the output says
"no audio output" once through `on_status` and does nothing else: the clock keeps running silently.
ALSA's own complaints about devices it cannot open (a machine without a sound card has many) are kept
off the terminal: that status line already says what the user needs to know.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from types import ModuleType

import numpy as np

from app.clock import ClockEvent, PlaybackClock
from storage.media import SampleSource

NO_OUTPUT = "no audio output"
# The cursor jumps to the clock only when they disagree by more than this: a little disagreement is
# normal (device clock against monotonic time) and jumping would click.
RESYNC_S = 0.08


# ALSA's error handler is variadic; the fixed arguments are all a handler that ignores them needs
_ALSA_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p)
_alsa_quiet: list = []  # the installed handler, kept alive for as long as ALSA may call it


def quiet_alsa() -> bool:
    """Route ALSA's error messages nowhere (once per process); False where there is no ALSA."""
    if _alsa_quiet:
        return True
    name = ctypes.util.find_library("asound")
    if name is None:
        return False
    try:
        library = ctypes.CDLL(name)
    except OSError:
        return False
    handler = _ALSA_HANDLER(lambda *_args: None)
    library.snd_lib_error_set_handler(handler)
    _alsa_quiet.append(handler)
    return True


def _sounddevice() -> ModuleType:
    """sounddevice, imported with ALSA quiet (PortAudio asks ALSA about every device on import).
    Raises OSError when the PortAudio library is missing."""
    quiet_alsa()
    import sounddevice
    return sounddevice


class AudioOutput:
    """Plays `source` (mono) while the clock plays; `available` is False once no device was found."""

    def __init__(self, clock: PlaybackClock, on_status: Callable[[str], None] | None = None) -> None:
        self._clock = clock
        self._on_status = on_status or (lambda message: None)
        self._source: SampleSource | None = None
        self._stream = None
        self._stream_rate = 0
        self._cursor: float | None = None
        self.available: bool | None = None  # None: not tried yet
        self.status = ""
        self.frames_played = 0
        self._unsubscribe = clock.subscribe(self._on_clock)

    # ----- public --------------------------------------------------------------------------------------
    def set_source(self, source: SampleSource | None) -> None:
        """Play `source` from now on, at the clock's position (used to switch voices mid-play)."""
        self._source = source
        self._cursor = None
        if source is None:
            self._stop()
            return
        if self._stream is not None and self._stream_rate != source.sample_rate:
            self._close_stream()
        if self._clock.playing:
            self._start()

    def check_device(self) -> bool:
        """Look for an output device now (without opening it), so that a missing one is reported
        before the first play. Returns False when there is none."""
        if self.available is not None:
            return self.available
        try:
            sounddevice = _sounddevice()
        except OSError as exc:
            self._unavailable(str(exc))
            return False
        try:
            if any(d["max_output_channels"] > 0 for d in sounddevice.query_devices()):
                return True
        except sounddevice.PortAudioError as exc:
            self._unavailable(str(exc))
            return False
        self._unavailable("no output device")
        return False

    def close(self) -> None:
        """Stop and release the device; the output no longer follows the clock."""
        self._unsubscribe()
        self._close_stream()
        self._source = None

    # ----- clock ---------------------------------------------------------------------------------------
    def _on_clock(self, event: ClockEvent) -> None:
        if event.kind == "play_state":
            if self._clock.playing:
                self._start()
            else:
                self._stop()
        elif event.kind in ("seek", "rate"):
            self._cursor = None

    # ----- device --------------------------------------------------------------------------------------
    def _report(self, message: str) -> None:
        if message != self.status:
            self.status = message
            self._on_status(message)

    def _unavailable(self, detail: str) -> None:
        self.available = False
        self._report(f"{NO_OUTPUT} ({detail}): the clock runs silently" if detail else NO_OUTPUT)

    def _open_stream(self) -> bool:
        if self._stream is not None:
            return True
        if self.available is False or self._source is None:
            return False
        try:
            sounddevice = _sounddevice()
        except OSError as exc:  # PortAudio library missing
            self._unavailable(str(exc))
            return False
        try:
            devices = sounddevice.query_devices()
            if not any(d["max_output_channels"] > 0 for d in devices):
                self._unavailable("no output device")
                return False
            stream = sounddevice.OutputStream(
                samplerate=self._source.sample_rate, channels=1, dtype="float32", callback=self._callback
            )
        except (sounddevice.PortAudioError, ValueError) as exc:
            self._unavailable(str(exc))
            return False
        self._stream = stream
        self._stream_rate = int(stream.samplerate)
        self.available = True
        self._report("audio output: " + str(sounddevice.query_devices(stream.device)["name"]))
        return True

    def _start(self) -> None:
        if not self._open_stream() or self._stream.active:
            return
        self._cursor = None
        try:
            self._stream.start()
        except Exception as exc:  # PortAudioError and friends: the device went away
            self._close_stream()
            self._unavailable(str(exc))

    def _stop(self) -> None:
        if self._stream is not None and self._stream.active:
            # abort, not stop: stop() waits for queued buffers and would hold the GUI thread.
            self._stream.abort()

    def _close_stream(self) -> None:
        if self._stream is not None:
            self._stream.abort()
            self._stream.close()
            self._stream = None

    # ----- audio thread --------------------------------------------------------------------------------
    def _callback(self, outdata: np.ndarray, frames: int, time_info, status) -> None:
        source = self._source
        if source is None or not self._clock.playing:
            outdata.fill(0)
            return
        step = self._clock.rate * source.sample_rate / self._stream_rate
        target = self._clock.position * source.sample_rate
        if self._cursor is None or abs(self._cursor - target) > RESYNC_S * source.sample_rate:
            self._cursor = target
        cursor = self._cursor
        if step == 1.0 and cursor == int(cursor):
            outdata[:, 0] = source.read(int(cursor), frames)
        else:
            wanted = cursor + np.arange(frames) * step
            base = int(np.floor(wanted[0]))
            chunk = source.read(base, int(np.ceil(wanted[-1])) - base + 2)
            outdata[:, 0] = np.interp(wanted - base, np.arange(len(chunk)), chunk)
        self._cursor = cursor + frames * step
        self.frames_played += frames
