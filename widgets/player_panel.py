"""One stimulus on one clock: video(s), waveform lanes, transcript and transport bar.

`PlayerPanel.set_stimulus(media, segments, layout)` lays the panel out as the stimulus's kind says
(`app.benchmarks.profile.PlayerLayout`; none: inferred from the media roles):
- `dyad`: two videos side by side (`video:A`, `video:B`), one waveform lane per participant (from
  `audio:A`/`audio:B`, else from the video's own sound);
- `voices`: the script text, three stacked voices (`audio:target`, `audio:alternative`,
  `audio:neutral`); V switches the voice that is heard at the same position, the heard lane is marked;
- `video`: one video and its sound as a lane;
- `audio` (anything else without video): one lane per audio file, played through sounddevice.
Decoding and peak building run on the panel's own `TaskRunner` (two threads, so a decode never waits
behind the window's queries); the analysis tracks start their work once every lane's waveform is in and
the stimulus has stayed on screen for TRACKS_SETTLE_MS; a newer `set_stimulus` cancels older work (latest
request wins) and nothing ever blocks the GUI thread. Keys reach the panel's actions (`actions()`) through
the window's dispatcher.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app import keymap as keys
from app.audio import AudioOutput
from app.benchmarks.profile import PlayerLayout
from app.clock import RATE_STEPS, ClockEvent, PlaybackClock
from storage.media import (
    MediaError,
    PeakPyramid,
    SampleSource,
    load_peaks,
    open_sample_source,
    probe,
    source_from_peaks,
)
from storage.records import MediaRef, Segment
from widgets.analysis_tracks import AnalysisTracksView
from widgets.settings_store import SettingsStore
from widgets.tasks import TaskRunner
from widgets.transcript_view import TranscriptView
from widgets.video_view import VideoSource, VideoView
from widgets.waveform_view import LANE_COLOURS, WaveformView, format_time

VOICE_ORDER = ("target", "alternative", "neutral")
TICK_MS = 30
# Waveforms that are ready this soon after a switch wait for the other lanes and appear together:
# one repaint instead of one per lane, each of which would also slow the decoding still under way.
GATHER_LANES_MS = 200
# the least height of one voice's waveform lane: its trace and its name stay legible under many tracks
WAVE_LANE_MIN_PX = 26
# The analysis tracks start this long after the waveform is in, if the stimulus is still the same: Praat
# holds the interpreter for a whole analysis, so started at once it would stall the next switch of someone
# flipping through stimuli.
TRACKS_SETTLE_MS = 300


def format_rate(rate: float) -> str:
    text = f"{rate:.2f}".rstrip("0")
    return (text + "0" if text.endswith(".") else text) + "x"


@dataclass(frozen=True)
class Layout:
    """What to show for a stimulus: players, lanes (name, media), voices, and the layout used."""

    kind: PlayerLayout
    videos: tuple[tuple[str, MediaRef], ...]
    lanes: tuple[tuple[str, MediaRef], ...]
    plays_audio: bool


def plan_layout(media: Sequence[MediaRef], layout: PlayerLayout | str | None) -> Layout:
    """Decide players and lanes from the media roles in the layout asked for; a layout this does not know (or
    none) is inferred from the roles."""
    by_role = {m.role: m for m in media}
    videos = sorted((m for m in media if m.role == "video" or m.role.startswith("video:")), key=lambda m: m.role)
    audios = sorted((m for m in media if m.role == "audio" or m.role.startswith("audio:")), key=lambda m: m.role)
    if layout not in set(PlayerLayout):
        if len(videos) >= 2:
            layout = PlayerLayout.DYAD
        elif videos:
            layout = PlayerLayout.VIDEO
        elif any(m.role in ("audio:target", "audio:alternative", "audio:neutral") for m in audios):
            layout = PlayerLayout.VOICES
        else:
            layout = PlayerLayout.AUDIO
    layout = PlayerLayout(layout)
    if layout is PlayerLayout.DYAD and not videos:
        # an audio-only dyad (a release without video, or the audio condition): one lane per participant
        return Layout(layout, (), tuple((a.role.split(":", 1)[-1], a) for a in audios), True)
    if layout is PlayerLayout.DYAD:
        people = [v.role.split(":", 1)[1] if ":" in v.role else str(i) for i, v in enumerate(videos)]
        video_pairs = tuple((f"participant {p}", v) for p, v in zip(people, videos))
        lanes = tuple((p, by_role.get(f"audio:{p}", v)) for p, v in zip(people, videos))
        return Layout(layout, video_pairs, lanes, plays_audio=False)
    if layout is PlayerLayout.VIDEO:
        video = videos[0] if videos else None
        sound = by_role.get("audio") or (audios[0] if audios else video)
        return Layout(layout, (("video", video),) if video else (), (("audio", sound),) if sound else (), False)
    if layout is PlayerLayout.VOICES:
        voices = [by_role[f"audio:{v}"] for v in VOICE_ORDER if f"audio:{v}" in by_role]
        others = [a for a in audios if a not in voices]
        ordered = voices + others
        return Layout(layout, (), tuple((a.role.split(":", 1)[-1], a) for a in ordered), True)
    return Layout(PlayerLayout.AUDIO, (), tuple((a.role.split(":", 1)[-1], a) for a in audios), True)


# ----- the panel -----------------------------------------------------------------------------------------
class PlayerPanel(QWidget):
    """Plays one stimulus on one `PlaybackClock`; see the module docstring for kinds and roles.

    Attributes for wiring: `clock` (PlaybackClock), `waveform` (WaveformView, e.g. `rangeSelected`),
    `transcript`, `video`; `actions()` maps the keymap's playback action ids to what they do, and
    `helpRequested` asks the window to show the list of keys.
    """

    statusMessage = Signal(str)
    positionChanged = Signal(float)
    waveformReady = Signal()
    voiceChanged = Signal(str)
    helpRequested = Signal()

    def __init__(self, parent: QWidget | None = None, *, vlc_args: Sequence[str] | None = None,
                 settings: SettingsStore | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.clock = PlaybackClock()
        pool = QThreadPool(self)
        pool.setMaxThreadCount(2)
        self._tasks = TaskRunner(self, pool=pool)
        self._generation = 0
        self._layout = Layout(PlayerLayout.AUDIO, (), (), False)
        self._pending_lanes: set[int] = set()
        self._held_peaks: dict[int, PeakPyramid] = {}
        self._gather_timer = QTimer(self)
        self._gather_timer.setSingleShot(True)
        self._gather_timer.setInterval(GATHER_LANES_MS)
        self._gather_timer.timeout.connect(self._show_held_peaks)
        self._tracks_timer = QTimer(self)
        self._tracks_timer.setSingleShot(True)
        self._tracks_timer.setInterval(TRACKS_SETTLE_MS)
        self._sources: dict[int, object] = {}
        self._voice = 0
        self._audio: AudioOutput | None = None
        self.audio_status = ""

        self.video = VideoView(vlc_args=vlc_args)
        self.video.follow(self.clock)
        self.script = QLabel()
        self.script.setWordWrap(True)
        self.script.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.script.setStyleSheet("font-size: 20px; padding: 10px;")
        self.media_area = QStackedWidget()
        self.media_area.addWidget(self.video)
        self.media_area.addWidget(self.script)
        self.waveform = WaveformView()
        self.transcript = TranscriptView()
        # spectrogram, pitch, intensity, turn-taking under the waveform
        self.tracks = AnalysisTracksView(settings=settings)
        self.tracks.link_x(self.waveform.ruler.vb)
        self._tracks_timer.timeout.connect(self.tracks.start_work)
        for view in (self.transcript, self.waveform.canvas, self.tracks.canvas):
            view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys stay with the panel's keymap

        self.play_button = QPushButton("Play")
        self.time_label = QLabel()
        self.time_label.setStyleSheet("font-family: monospace; font-size: 14px;")
        self.rate_box = QComboBox()
        for rate in RATE_STEPS:
            self.rate_box.addItem(format_rate(rate), rate)
        self.voice_label = QLabel()
        self.audio_label = QLabel()
        self.audio_label.setStyleSheet("color: #a05a00;")
        help_button = QPushButton("?")
        help_button.setFixedWidth(28)
        help_button.setToolTip("Keys (F1)")
        for widget in (self.play_button, self.rate_box, help_button):
            widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bar = QHBoxLayout()
        bar.addWidget(self.play_button)
        bar.addWidget(self.time_label)
        bar.addWidget(self.rate_box)
        bar.addWidget(self.voice_label)
        bar.addStretch(1)
        bar.addWidget(self.audio_label)
        bar.addWidget(help_button)

        # video or script, waveform, analysis tracks and transcript share the height by a splitter the
        # annotator may drag; its shares are set again only when the kind of stimulus changes
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.media_area)
        splitter.addWidget(self.waveform)
        splitter.addWidget(self.tracks)
        splitter.addWidget(self.transcript)
        splitter.setChildrenCollapsible(False)
        # each pane may be dragged small (a video to a strip, the transcript to two lines): on a laptop the
        # window must not grow past the screen to honour their usual sizes
        self.media_area.setMinimumHeight(60)
        self.transcript.setMinimumHeight(40)
        for index, stretch in enumerate((3, 2, 3, 1)):
            splitter.setStretchFactor(index, stretch)
        self.splitter = splitter
        self._shares_for: tuple | None = None  # the shape of stimulus the splitter's shares were set for
        self._shares: list[int] = []  # shares waiting for the splitter to have a height
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(splitter, 1)
        outer.addLayout(bar)

        self._actions: dict[str, Callable[[], None]] = {
            keys.PLAY_PAUSE: self.clock.toggle,
            keys.SHUTTLE_BACK: lambda: self.clock.shuttle_backward(keys.LARGE_SEEK_S),
            keys.PAUSE: self.clock.pause,
            keys.SHUTTLE_FORWARD: self.clock.shuttle_forward,
            keys.SEEK_BACK: lambda: self.clock.seek_by(-keys.SMALL_SEEK_S),
            keys.SEEK_FORWARD: lambda: self.clock.seek_by(keys.SMALL_SEEK_S),
            keys.SEEK_BACK_LARGE: lambda: self.clock.seek_by(-keys.LARGE_SEEK_S),
            keys.SEEK_FORWARD_LARGE: lambda: self.clock.seek_by(keys.LARGE_SEEK_S),
            keys.RATE_DOWN: lambda: self.clock.step_rate(-1),
            keys.RATE_UP: lambda: self.clock.step_rate(+1),
            keys.GO_START: lambda: self.clock.seek(0.0),
            keys.GO_END: lambda: self.clock.seek(self.clock.duration or 0.0),
            keys.NEXT_VOICE: self.next_voice,
        }

        self.play_button.clicked.connect(self.clock.toggle)
        help_button.clicked.connect(self.helpRequested)
        self.rate_box.activated.connect(lambda i: self.clock.set_rate(self.rate_box.itemData(i)))
        self.waveform.seekRequested.connect(self.clock.seek)
        self.tracks.seekRequested.connect(self.clock.seek)
        self.transcript.seekRequested.connect(self.clock.seek)
        self.clock.subscribe(self._on_clock)
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_tick)
        self._timer.start()
        self._render_position(0.0)
        self._render_state()

    # ----- stimulus ----------------------------------------------------------------------------------
    def set_stimulus(self, media: Sequence[MediaRef], segments: Sequence[Segment], layout: PlayerLayout | str | None,
                     text: str | None = None) -> None:
        """Show a stimulus paused at 0 in `layout` (inferred from the roles when none or unknown); older
        decoding is cancelled. `text` is the script (EchoMind)."""
        self._generation += 1
        self._tasks.cancel_prefix("lane")  # every older job's token now says stop; its results are dropped
        generation = self._generation
        layout = plan_layout(media, layout)
        self._layout = layout
        self._sources = {}
        self._voice = 0
        if self._audio is not None:
            self._audio.set_source(None)
        durations = [m.duration_s for _, m in layout.lanes + layout.videos if m.duration_s]
        self.clock.reset(max(durations) if durations else None)
        self.waveform.clear_selection()
        self.waveform.set_lanes([name for name, _ in layout.lanes])
        # however many analysis tracks are on, each voice's waveform keeps a readable lane and its name
        self.waveform.setMinimumHeight(self.waveform.minimum_height_for(len(layout.lanes), WAVE_LANE_MIN_PX))
        self.waveform.set_duration(self.clock.duration or 1.0)
        self.transcript.set_speaker_colours(
            {name: LANE_COLOURS[i % len(LANE_COLOURS)] for i, (name, _) in enumerate(layout.lanes)}
        )
        self.transcript.set_segments(segments)
        self.transcript.setVisible(bool(segments))
        # the tracks' analyses wait for the waveform (on the same cores they would slow its decoding), then
        # for the user to stay on the stimulus (TRACKS_SETTLE_MS)
        self._tracks_timer.stop()
        from app.cues.measures import timed_words  # the analysis stack loads with the first stimulus shown

        self.tracks.set_stimulus(layout.lanes, timed_words(segments), start=not layout.lanes)

        self._share_height(layout, bool(text), bool(segments))
        if layout.videos:
            self.video.set_sources([VideoSource(c, m.path, m.offset_s) for c, m in layout.videos])
            self.media_area.setCurrentWidget(self.video)
            self.media_area.show()
            for index, (_, ref) in enumerate(layout.videos):
                self._submit(generation, index, "probe", lambda cancel, r=ref: probe(r.path))
        else:
            self.video.clear()
            self.script.setText(text or "")
            self.media_area.setCurrentWidget(self.script)
            self.media_area.setVisible(bool(text))

        self._pending_lanes = set(range(len(layout.lanes)))
        self._held_peaks = {}
        if layout.lanes:
            self._gather_timer.start()
        else:
            self._gather_timer.stop()
        for index, (_, ref) in enumerate(layout.lanes):
            self.waveform.set_lane_message(index, "reading audio...")
            # A clip's pyramid keeps its samples, which are also what it plays: the playback source is
            # made from them, and only longer files get a source job of their own (see _on_peaks).
            self._submit(generation, index, "peaks",
                         lambda cancel, r=ref: load_peaks(r.path, r.offset_s, r.duration_s, cancel))
        if layout.plays_audio and layout.lanes:
            self._ensure_audio()
        self._show_voice()
        self._render_state()
        self._render_position(0.0)

    def _share_height(self, layout: Layout, script: bool, transcript: bool) -> None:
        """Give video (or script), waveform, tracks and transcript their shares of the height, when the
        shape of the stimulus differs from the last one's (a drag of the splitter is kept otherwise)."""
        shape = (bool(layout.videos), script, transcript, len(layout.lanes))
        if shape == self._shares_for:
            return
        self._shares_for = shape
        media = 30 if layout.videos else 12 if script else 0
        talk = 13 if transcript else 0
        wave = 12 + 6 * len(layout.lanes)
        self._shares = [media, wave, 100 - media - wave - talk, talk]  # in percent of the splitter's height
        self._apply_shares()

    def _apply_shares(self) -> None:
        """Set the splitter to the shares chosen for this shape of stimulus, once it has a height to share
        (before the panel is first laid out, at its first resize)."""
        height = self.splitter.height()
        if not self._shares or height < 100:
            return
        self.splitter.setSizes([height * share // 100 for share in self._shares])
        self._shares = []

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if self._shares:
            self._apply_shares()

    def clear(self) -> None:
        """Nothing loaded; running work is cancelled."""
        self.set_stimulus([], [], PlayerLayout.AUDIO)

    def _submit(self, generation: int, lane: int, kind: str, work) -> None:
        """Run `work(should_cancel)` for one lane; a newer stimulus cancels it (see `set_stimulus`)."""
        self._tasks.submit(f"lane-{lane}-{kind}", lambda token, _progress: work(token),
                           lambda result: self._on_job_done(generation, lane, kind, result),
                           lambda exc: self._on_job_failed(generation, lane, kind, exc), with_progress=True)

    def _on_job_done(self, generation: int, lane: int, kind: str, result) -> None:
        if generation != self._generation:
            return  # finished after a newer stimulus was chosen: not ours to show
        if kind == "peaks":
            self._on_peaks(generation, lane, result)
        elif kind == "source":
            self._set_source(lane, result)
        elif kind == "probe" and result.duration_s and self.clock.duration is None:
            offset = self._layout.videos[lane][1].offset_s
            self.clock.set_duration(max(0.0, result.duration_s - offset))
            self.waveform.set_duration(self.clock.duration)

    def _on_peaks(self, generation: int, lane: int, pyramid: PeakPyramid) -> None:
        ref = self._layout.lanes[lane][1]
        self._held_peaks[lane] = pyramid
        if self._layout.plays_audio:
            source = source_from_peaks(pyramid)
            if source is not None:
                self._set_source(lane, source)
            else:  # a long file: played from disk, or decoded into memory on its own
                self._submit(generation, lane, "source",
                             lambda cancel, r=ref: open_sample_source(r.path, r.offset_s, r.duration_s, cancel))
        self._lane_finished(lane)

    def _set_source(self, lane: int, source: SampleSource) -> None:
        self._sources[lane] = source
        if lane == self._voice and self._audio is not None:
            self._audio.set_source(source)

    def _on_job_failed(self, generation: int, lane: int, kind: str, exc: BaseException) -> None:
        if generation != self._generation:
            return
        # a decoder bug reaches the user as a message naming it; a media error already says what is wrong
        message = str(exc) if isinstance(exc, MediaError) else f"{type(exc).__name__}: {exc}"
        if kind == "peaks":
            self.waveform.set_lane_message(lane, message)
            self._lane_finished(lane)
        elif kind == "probe" and lane < len(self.video.surfaces):
            self.video.surfaces[lane].fail(message)
        if kind != "source":  # the same file's peaks job already says it
            self.statusMessage.emit(message)

    def _lane_finished(self, lane: int) -> None:
        self._pending_lanes.discard(lane)
        if not self._pending_lanes:
            self._gather_timer.stop()
            self._show_held_peaks()
            self.waveform.redraw()
            self._tracks_timer.start()
            self.waveformReady.emit()
        elif not self._gather_timer.isActive():
            self._show_held_peaks()

    def _show_held_peaks(self) -> None:
        """Draw the lanes whose peaks arrived; a lane of unknown length may lengthen the clock."""
        for lane, pyramid in self._held_peaks.items():
            self.waveform.set_lane_peaks(lane, pyramid)
            if (self._layout.lanes[lane][1].duration_s is None
                    and pyramid.duration_s > (self.clock.duration or 0.0)):
                self.clock.set_duration(pyramid.duration_s)
                self.waveform.set_duration(pyramid.duration_s)
        self._held_peaks = {}

    # ----- audio -------------------------------------------------------------------------------------
    def _ensure_audio(self) -> None:
        if self._audio is None:
            self._audio = AudioOutput(self.clock, self._on_audio_status)
            self._audio.check_device()

    def _on_audio_status(self, message: str) -> None:
        self.audio_status = message
        self.audio_label.setText(message)
        self.audio_label.setToolTip(message)
        self.statusMessage.emit(message)

    @property
    def voice(self) -> str | None:
        """The lane that is heard (EchoMind: target, alternative or neutral)."""
        if not self._layout.plays_audio or not self._layout.lanes:
            return None
        return self._layout.lanes[self._voice][0]

    def next_voice(self) -> None:
        """Hear the next lane's audio from the same position (EchoMind's V)."""
        lanes = self._layout.lanes
        if not self._layout.plays_audio or len(lanes) < 2:
            return
        self._voice = (self._voice + 1) % len(lanes)
        if self._audio is not None:
            self._audio.set_source(self._sources.get(self._voice))
        self._show_voice()
        self.voiceChanged.emit(self.voice)
        self.statusMessage.emit(f"voice: {self.voice}")

    def _show_voice(self) -> None:
        many = self._layout.plays_audio and len(self._layout.lanes) > 1
        self.waveform.set_active_lane(self._voice if many else None)
        self.voice_label.setText(f"voice: <b>{self.voice}</b> (V)" if many else "")

    # ----- clock ------------------------------------------------------------------------------------
    def _on_tick(self) -> None:
        if self._layout.videos:
            media_time = self.video.poll()
            if media_time is not None:
                self.clock.sync_media(media_time)
        self.clock.tick()

    def _on_clock(self, event: ClockEvent) -> None:
        if event.kind in ("play_state", "rate"):
            self._render_state()
        self._render_position(event.position)

    def _render_position(self, seconds: float) -> None:
        self.waveform.set_playhead(seconds)
        self.tracks.set_playhead(seconds)
        self.transcript.set_position(seconds)
        self.time_label.setText(f"{format_time(seconds)} / {format_time(self.clock.duration or 0.0)}")
        self.positionChanged.emit(seconds)

    def _render_state(self) -> None:
        self.play_button.setText("Pause" if self.clock.playing else "Play")
        self.waveform.set_follow(self.clock.playing)
        index = self.rate_box.findData(self.clock.rate)
        if index >= 0:
            self.rate_box.setCurrentIndex(index)

    # ----- keys ------------------------------------------------------------------------------------
    def actions(self) -> dict[str, Callable[[], None]]:
        """What each playback action of the keymap does on this panel (the window's dispatcher runs them)."""
        return dict(self._actions)

    def perform(self, action: str) -> bool:
        """Run a playback action by id; False if it is not one."""
        handler = self._actions.get(action)
        if handler is None:
            return False
        handler()
        return True

    # ----- lifetime ---------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel background work, wait for it, release players and the audio device."""
        self._generation += 1
        self._tasks.close()
        self.tracks.shutdown()
        self._timer.stop()
        self._gather_timer.stop()
        self._tracks_timer.stop()
        self._tasks.wait(5000)
        self.video.follow(None)
        self.video.clear()
        if self._audio is not None:
            self._audio.close()
            self._audio = None

    def loading(self) -> bool:
        """Waveforms still being decoded or waiting to be shown."""
        return bool(self._pending_lanes) or self.pending_jobs() > 0

    def pending_jobs(self) -> int:
        return self._tasks.running()

    @property
    def cancelled_jobs(self) -> int:
        """Background jobs that stopped early (or never started) because a newer stimulus was chosen."""
        return self._tasks.cancelled
