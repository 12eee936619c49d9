"""Video through libVLC: one player, or two side by side for a dyad, following the PlaybackClock.

libVLC draws into a native child window only on X11 (`platformName() == "xcb"`): with any other Qt
platform the window id is not real and libVLC can crash, so the panel shows a note instead while the
player still runs on a dummy video output, keeping its sound and its clock. The first player is the
master: its time is what the clock locks to (`poll`); the second is pulled back to it when they drift.
"""
from __future__ import annotations

from collections.abc import Sequence
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QStackedLayout, QVBoxLayout, QWidget

from app.clock import ClockEvent, PlaybackClock
from widgets.palette import colour

NOT_WINDOWED = (
    "Video is shown only in a windowed (X11) session.\n"
    "Playback, waveform and transcript still follow the clock."
)
# A slave player further than this from the master is moved back to it (libVLC seeks are not free).
SLAVE_TOLERANCE_S = 0.08
# After moving a slave, wait for fresh time reports before judging it again.
SLAVE_SETTLE_S = 1.0
# libVLC 3 applies but does not display a seek issued within a few tens of ms after set_pause(1)
# (measured: lost at 0 ms, shown at 50 ms), so seeks that soon after a pause wait for `poll`.
PAUSE_SETTLE_S = 0.08
# Under load a paused seek can still go undisplayed; repeating it once after this delay costs one
# decode of the same frame and makes the frame on screen match the clock.
CONFIRM_SEEK_S = 0.15

# Without it libVLC 3 reads ahead 300 ms and a paused seek that lands inside what it already read is
# applied but never displayed (measured: about 1 in 5 short seeks). Local files do not need the cache.
REQUIRED_VLC_ARGS = ("--file-caching=0",)

_instances: dict[tuple[str, ...], object] = {}


def embeds_video() -> bool:
    """True when libVLC can draw into our widgets (a real X11 session)."""
    return QGuiApplication.platformName() == "xcb"


def default_vlc_args() -> list[str]:
    # --no-xlib: Qt owns Xlib; libVLC's xcb output does not need it.
    args = ["--no-xlib", "--quiet"]
    if not embeds_video():
        args.insert(0, "--vout=dummy")
    return args


def vlc_instance(args: Sequence[str]):
    """One libVLC instance per argument list for the whole process; None if libVLC is unusable."""
    key = (*REQUIRED_VLC_ARGS, *(a for a in args if a not in REQUIRED_VLC_ARGS))
    if key not in _instances:
        try:
            import vlc

            _instances[key] = vlc.Instance(*key)  # None when the plugins are missing
        except (ImportError, OSError, NameError):
            _instances[key] = None
    return _instances[key]


@dataclass(frozen=True)
class VideoSource:
    """A video to show: caption ("participant A"), file, and the stimulus window inside it."""

    caption: str
    path: Path
    offset_s: float = 0.0


class VideoSurface(QFrame):
    """One libVLC player with its drawing area, caption and message line."""

    def __init__(self, instance, caption: str, embed: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._instance = instance
        self._embed = embed
        self.player = None
        self.offset_s = 0.0
        self.failed = False
        self._priming = False
        self._want_playing = False
        self._pending_s = 0.0
        self._rate = 1.0
        self._last_ms: int | None = None
        self._last_change = 0.0
        self.settle_until = 0.0
        self._seek_after = 0.0
        self._seek_due = False
        self._confirm_at: float | None = None

        self.caption = QLabel(caption)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.drawable = QWidget()
        self.drawable.setMinimumSize(160, 120)
        palette = self.drawable.palette()
        palette.setColor(QPalette.ColorRole.Window, QColor("black"))
        self.drawable.setPalette(palette)
        self.drawable.setAutoFillBackground(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setMinimumSize(160, 120)
        self.message.setStyleSheet(f"color: {colour('placeholder_fg')}; background: {colour('placeholder_bg')};"
                                   " padding: 12px;")
        self._stack = QStackedLayout()
        self._stack.addWidget(self.drawable)
        self._stack.addWidget(self.message)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addLayout(self._stack, 1)
        if embed:
            # A real native window for libVLC to draw into.
            self.drawable.setAttribute(Qt.WidgetAttribute.WA_NativeWindow)
            self.drawable.setAttribute(Qt.WidgetAttribute.WA_DontCreateNativeAncestors)
        else:
            self.show_message(NOT_WINDOWED)

    # ----- state -----------------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self._stack.setCurrentWidget(self.message)

    def message_text(self) -> str:
        return self.message.text() if self._stack.currentWidget() is self.message else ""

    def fail(self, reason: str) -> None:
        """Stop trying to play this file and say why in the media area."""
        self.failed = True
        self.show_message(reason)
        self.release()

    def load(self, source: VideoSource) -> None:
        """Open `source` paused at the stimulus start; problems are shown, never raised."""
        self.offset_s = source.offset_s
        self.caption.setText(source.caption)
        if not source.path.exists():
            self.fail(f"{source.path.name}: file not found")
            return
        if self._instance is None:
            self.fail("Video playback is unavailable: libVLC could not be started.")
            return
        self.player = self._instance.media_player_new()
        self.player.set_media(self._instance.media_new(str(source.path)))
        if self._embed:
            self._stack.setCurrentWidget(self.drawable)
            self.player.set_xwindow(int(self.drawable.winId()))
        self._prime(0.0)

    def _prime(self, position_s: float) -> None:
        # libVLC shows no frame until the input runs: start it muted and pause it on the first
        # Playing state (see `poll`), then seek to where the clock is.
        self._priming = True
        self._pending_s = position_s
        self.player.audio_set_mute(True)
        self.player.play()

    def release(self) -> None:
        if self.player is not None:
            self.player.stop()
            self.player.release()
            self.player = None

    @property
    def ready(self) -> bool:
        return self.player is not None and not self._priming and not self.failed

    def media_time(self) -> float | None:
        """Stimulus time libVLC reports (s; coarse while playing), None while opening or after a failure."""
        if not self.ready:
            return None
        ms = self.player.get_time()
        if ms != self._last_ms:
            self._last_ms, self._last_change = ms, time.monotonic()
        return None if ms < 0 else ms / 1000.0 - self.offset_s

    def estimated_time(self) -> float | None:
        """The reported time advanced by the wall time since it last changed (while playing)."""
        reported = self.media_time()
        if reported is None or not self._want_playing:
            return reported
        return reported + (time.monotonic() - self._last_change) * self._rate

    # ----- commands from the clock -----------------------------------------------------------------
    def play(self) -> None:
        self._want_playing = True
        self._confirm_at = None
        # the estimate runs from now: the time reported while paused has not changed for as long as the
        # pause lasted, and extrapolating over the pause put one participant seconds ahead at the first poll
        self._last_change = time.monotonic()
        if self.player is None or self.failed:
            return
        import vlc

        if self._priming:
            return
        if self.player.get_state() in (vlc.State.Ended, vlc.State.Stopped):
            self.player.stop()
            self._prime(self._pending_s)
            return
        self.player.set_pause(0)

    def pause(self, position_s: float | None = None) -> None:
        """Pause and then show the frame at `position_s` (where the clock stopped), if given."""
        self._want_playing = False
        if position_s is not None:
            self._pending_s = position_s
        if self.ready:
            self._pause_now()

    def _pause_now(self) -> None:
        self.player.set_pause(1)
        self._seek_after = time.monotonic() + PAUSE_SETTLE_S
        # Land exactly where the clock stopped once the pause has settled.
        self._seek_due = True

    def seek(self, position_s: float) -> None:
        self._pending_s = position_s
        self._last_ms = None
        if not self.ready:
            return
        if time.monotonic() < self._seek_after:
            self._seek_due = True
        else:
            self._apply_seek()

    def _apply_seek(self) -> None:
        self._seek_due = False
        self.player.set_time(int(round((self._pending_s + self.offset_s) * 1000)))
        self._confirm_at = None if self._want_playing else time.monotonic() + CONFIRM_SEEK_S

    def set_rate(self, rate: float) -> None:
        self._rate = rate
        if self.player is not None:
            self.player.set_rate(rate)

    def poll(self) -> None:
        """Advance the opening sequence and notice errors; call it from the GUI timer."""
        if self.player is None or self.failed:
            return
        import vlc

        state = self.player.get_state()
        if state == vlc.State.Error:
            self.fail("This video cannot be played (libVLC reported an error).")
        elif self._priming and state in (vlc.State.Playing, vlc.State.Paused):
            self._priming = False
            self.player.set_rate(self._rate)
            if self._want_playing:
                self._apply_seek()
            else:
                self._pause_now()
            self.player.audio_set_mute(False)
        elif self._priming and state == vlc.State.Ended:
            self.fail("This video cannot be played (no decodable stream).")
        elif self._seek_due and time.monotonic() >= self._seek_after:
            self._apply_seek()
        elif self._confirm_at is not None and time.monotonic() >= self._confirm_at:
            self._confirm_at = None
            if not self._want_playing:
                self.player.set_time(int(round((self._pending_s + self.offset_s) * 1000)))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        # a paused frame drawn before the surface had its final size stays unscaled (a crop of its corner):
        # show it again once the layout settles
        if self.ready and not self._want_playing:
            self._seek_after = time.monotonic() + PAUSE_SETTLE_S
            self._seek_due = True

    def snapshot(self, png_path: Path) -> bool:
        """Write the current frame to PNG (works with the dummy output too)."""
        return self.ready and self.player.video_take_snapshot(0, str(png_path), 0, 0) == 0


class VideoView(QWidget):
    """One or two VideoSurfaces in a row, following a PlaybackClock."""

    def __init__(self, parent: QWidget | None = None, vlc_args: Sequence[str] | None = None) -> None:
        super().__init__(parent)
        self._args = list(vlc_args) if vlc_args is not None else default_vlc_args()
        self._embed = embeds_video()
        self.surfaces: list[VideoSurface] = []
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._clock: PlaybackClock | None = None
        self._unsubscribe = None

    def set_sources(self, sources: Sequence[VideoSource]) -> None:
        """Replace the players; each opens paused at the stimulus start."""
        self.clear()
        instance = vlc_instance(self._args)
        for source in sources:
            surface = VideoSurface(instance, source.caption, self._embed, self)
            self._row.addWidget(surface, 1)
            self.surfaces.append(surface)
            surface.load(source)
            if self._clock is not None:
                surface.set_rate(self._clock.rate)
                surface.seek(self._clock.position)

    def clear(self) -> None:
        for surface in self.surfaces:
            surface.release()
            self._row.removeWidget(surface)
            surface.deleteLater()
        self.surfaces = []

    def follow(self, clock: PlaybackClock | None) -> None:
        """Play, pause, seek and change rate with `clock` (None: stop following)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._clock = clock
        if clock is not None:
            self._unsubscribe = clock.subscribe(self._on_clock)

    def _on_clock(self, event: ClockEvent) -> None:
        clock = self._clock
        if event.kind == "play_state":
            for surface in self.surfaces:
                surface.play() if clock.playing else surface.pause(event.position)
        elif event.kind == "seek":
            master = self.master_time()
            for surface in self.surfaces:
                # While playing, a seek the master itself caused (the clock snapped to it) needs no new
                # seek; a paused seek always applies, since it decides the frame on screen.
                if (clock.playing and surface is self.master and master is not None
                        and abs(master - event.position) < 0.05):
                    continue
                surface.seek(event.position)
        elif event.kind == "rate":
            for surface in self.surfaces:
                surface.set_rate(clock.rate)

    @property
    def master(self) -> VideoSurface | None:
        healthy = [s for s in self.surfaces if not s.failed]
        return healthy[0] if healthy else None

    def master_time(self) -> float | None:
        master = self.master
        return master.media_time() if master is not None else None

    def poll(self) -> float | None:
        """Advance the players, keep the others on the master, and return the master's time."""
        for surface in self.surfaces:
            surface.poll()
        master = self.master
        master_time = self.master_time()
        if master_time is not None and self._clock is not None and self._clock.playing:
            now = time.monotonic()
            reference = master.estimated_time()
            for surface in self.surfaces:
                if surface is master or surface.failed or now < surface.settle_until:
                    continue
                other = surface.estimated_time()
                if other is not None and abs(other - reference) > SLAVE_TOLERANCE_S:
                    surface.seek(reference)
                    surface.settle_until = now + SLAVE_SETTLE_S
        return master_time

    @property
    def has_video(self) -> bool:
        return any(not s.failed for s in self.surfaces)

    def messages(self) -> list[str]:
        return [s.message_text() for s in self.surfaces]
