"""The centre page for stimuli with sound or video (FriendBench and Seamless dyads, EchoMind scripts and
questions): the player on top and the annotation tiers below, on one time axis and one clock."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QSplitter, QWidget

from app.keymap import ADD_POINT, ANNOTATION_BINDINGS, FIND_LABEL
from app.annotation_model import AnnotationModel
from app.benchmarks import kind_profile
from app.page_labels import default_label_set
from storage.records import StimulusDetail
from widgets.annotation_panel import AnnotationPanel
from widgets.player_panel import PlayerPanel
from widgets.settings_store import SettingsStore



def stimulus_duration(detail: StimulusDetail) -> float:
    """Best guess before the media are decoded: media durations, then transcript ends, then 20 s clips."""
    known = [m.duration_s for m in detail.media if m.duration_s]
    known += [s.end_s for s in detail.segments if s.end_s is not None]
    meta_duration = detail.meta.get("duration_s")
    if isinstance(meta_duration, (int, float)):
        known.append(float(meta_duration))
    return max(known) if known else 20.0


class MediaStimulusPage(QWidget):
    """Player and annotation panel for one stimulus; `actions()` says what its keys do."""

    statusMessage = Signal(str)
    annotationsChanged = Signal(int)

    def __init__(self, annotations: AnnotationModel, parent: QWidget | None = None, *,
                 settings: SettingsStore | None = None) -> None:
        super().__init__(parent)
        self.player = PlayerPanel(settings=settings)   # the window's settings keep the tracks' choices
        self.annotation = AnnotationPanel(annotations)
        self.detail: StimulusDetail | None = None
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.player)
        split.addWidget(self.annotation)
        # the tiers need a few rows' height; the rest goes to video, waveform and the analysis tracks
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setSizes([640, 180])
        self.annotation.setMinimumHeight(120)
        # the ruler outlives every stimulus's lanes: linking to it keeps tiers and waveform on one time axis
        self.annotation.tiers.link_x(self.player.waveform.ruler.vb)
        # Shift-dragged label edges snap to the voicing and silence boundaries of the tracks on show
        self.annotation.tiers.set_boundary_source(self.player.tracks.boundaries)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split, 1)
        # palette and whole-stimulus labels beside both, so the tiers sit under the waveform at the same scale
        layout.addWidget(self.annotation.side)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        # a long audio-status message is elided by width (its tooltip has it all) instead of widening the window
        self.player.audio_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.player.statusMessage.connect(self.statusMessage)
        self.annotation.message.connect(self.statusMessage)
        self.annotation.annotationsChanged.connect(self.annotationsChanged)
        self.player.positionChanged.connect(lambda t: self.annotation.set_clock(t, self.player.clock.playing))
        self.player.waveformReady.connect(self._media_ready)
        self.annotation.seekRequested.connect(self.player.clock.seek)
        self.annotation.playRangeRequested.connect(self.play_range)

    def set_detail(self, detail: StimulusDetail | None) -> None:
        # the same stimulus read again after a new answer was stored (a live model, a race on stage) keeps
        # its clip as it is, playing or not
        same_clip = (detail is not None and self.detail is not None and detail.id == self.detail.id
                     and (detail.media, detail.segments, detail.text) == (self.detail.media, self.detail.segments,
                                                                          self.detail.text))
        self.detail = detail
        if detail is None:
            self.player.set_stimulus([], [], None)
            self.annotation.set_stimulus(None, 0.0)
            return
        # a question's text is shown whole above the page (StimulusView's MCQ block), not as a script
        kind = kind_profile(detail.kind, detail.benchmark)
        script = None if kind.question else detail.text
        if not same_clip:
            self.player.set_stimulus(detail.media, detail.segments, kind.player, text=script)
        self.annotation.set_benchmark(detail.benchmark)
        preferred = default_label_set(detail.benchmark)
        if preferred and preferred in [self.annotation.label_set.itemText(i)
                                       for i in range(self.annotation.label_set.count())]:
            self.annotation.set_active_label_set(preferred)
        self.annotation.set_stimulus(detail.id, stimulus_duration(detail))

    def set_annotator(self, name: str) -> None:
        self.annotation.set_annotator(name)

    def play_range(self, start: float, end: float) -> None:
        self.player.clock.set_loop(start, end, repeat=False)
        self.player.clock.seek(start)
        self.player.clock.play()

    def _media_ready(self) -> None:
        duration = self.player.clock.duration
        if self.detail is not None and duration is not None and duration > stimulus_duration(self.detail):
            self.annotation.set_stimulus(self.detail.id, self.player.clock.duration)

    def actions(self) -> dict[str, Callable[[], object]]:
        """The media context's actions of the keymap: playback, and edits of the selected labels."""
        actions: dict[str, Callable[[], object]] = dict(self.player.actions())
        for binding in ANNOTATION_BINDINGS:
            actions[binding.action] = lambda a=binding.action: self.annotation.tiers.run_action(a)
        actions[ADD_POINT] = lambda: self.annotation.add_point()
        actions[FIND_LABEL] = self.annotation.find_label
        return actions

    def press_label(self, name: str) -> None:
        """A label's own key: picks it, or marks a range while playing."""
        self.annotation.press_label(name)

    def point_label(self, name: str) -> None:
        """Ctrl with a label's own key: that label as a point at the playhead."""
        self.annotation.add_point(name)

    def release_label(self, name: str, held: bool) -> None:
        """A label's own key let go (`held`: after the keyboard began repeating it)."""
        self.annotation.release_label(name, held)

    def label_shortcuts(self) -> tuple[str, list[tuple[str, str]]]:
        """The active label set and its (key, label) pairs."""
        return self.annotation.palette.label_set, self.annotation.palette.shortcuts()

    def busy(self) -> bool:
        """Media still being decoded or labels still being read (for screenshots and tests that wait)."""
        return self.player.loading() or self.annotation.busy()

    def shutdown(self) -> None:
        self.annotation.close()
        self.player.shutdown()
