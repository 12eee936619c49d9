"""Analysis tracks under the waveform, on its time axis: spectrogram (with formants), pitch, intensity (and
any other line track registered in `widgets.lane_lines`) per voice, and the conversation's floors, gaps,
overlaps and backchannels.

Each track is toggled per lane (voice) from the Tracks menu and remembered. As in Praat's sound editor, a
voice's pitch (on its own floor-to-ceiling scale), intensity and formants are drawn over its spectrogram when
that is shown, so one row per voice says what Praat's editor says; a pitch or intensity without a
spectrogram gets a row of its own. Rows share the height they are given (the player's splitter sets it) in
proportion to their kind and scroll only below their least legible heights; each row's name is written
across in the column left of the time axis, with the scales of what is drawn over it. The spectrogram's band, top
frequency, dynamic range and pre-emphasis and Praat's pitch floor and ceiling are set in the strip above the
rows. The spectrogram is Praat's `To Spectrogram...` painted as Praat's `Paint...` does, autoscaled to the
view's loudest frame (see storage/spectrogram.py).
Rows are x-linked to the waveform's view box (`link_x`), so zoom and pan move them together; clicking a
row asks to seek there (`seekRequested`), as the waveform does.

Nothing heavy runs on the GUI thread: the spectrogram tiles, Praat's analyses and the turn-taking run on
the tracks' TaskRunner, keyed per lane, and a new stimulus cancels the old one's work. Praat's analyses run
in a worker process (`app.cues.workers`), since Praat holds the interpreter lock while it computes. A switch only sets
up: the rows of the same tracks are reused (cleared, not rebuilt), the menu is rebuilt only when the lanes
change, and a caller that shows something more urgent first (the player, whose waveform decodes at the
same time) may hold the work back with `set_stimulus(..., start=False)` and release it with
`start_work()`; tracks that are off cost nothing. While zooming, a
view is drawn at once from the tiles in memory (a coarser level if the fine one is not there yet) and the
missing tiles are computed on the worker, latest view winning. The voicing and silence boundaries of each
voice are found on the worker with its pitch and intensity; `boundaries()` hands those of the rows on show
to the label tiers, where a Shift-dragged edge snaps to them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSettings, QSize, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (QComboBox, QFrame, QHBoxLayout, QLabel, QMenu, QScrollArea, QSizePolicy, QSpinBox,
                               QToolButton, QVBoxLayout, QWidget, QWidgetAction)

from app.settings import ANALYSIS_NUMBERS
from storage.records import MediaRef
from storage.spectrogram import PaintSettings, SpectrogramParams, SpectrogramTiles, open_spectrogram, paint
from widgets.lane_lines import INTENSITY_LINE, LANE_LINES, PITCH_LINE, LaneLine, Scales, lane_line
from widgets.settings_store import SettingsStore
from widgets.tasks import TaskRunner
from widgets.waveform_view import LANE_COLOURS, LEFT_AXIS_WIDTH, PLAYHEAD_COLOUR, LaneViewBox, NamedAxis

if TYPE_CHECKING:  # the analysis stack (Praat) is imported on the first analysis, not before the window shows
    from app.cues.acoustics import PraatSettings
    from app.cues.conversation import Conversation, TimedWord
    from app.cues.track_kinds import LineKind
    from app.cues.tracks import VoiceTracks

# the line tracks (pitch, intensity and any registered) are described in widgets.lane_lines; these have code
# of their own: the spectrogram is an image of tiles with formants and the lines over it, the turn-taking is
# the conversation's and not a voice's
SPECTROGRAM, FORMANTS, CONVERSATION = "spectrogram", "formants", "conversation"
PITCH, INTENSITY = PITCH_LINE.name, INTENSITY_LINE.name  # the built-in line tracks
TRACK_TITLES = {SPECTROGRAM: "spectrogram", FORMANTS: "formants", CONVERSATION: "turn-taking"}
ROW_HEIGHTS = {SPECTROGRAM: 120, CONVERSATION: 76}  # shares of the height given
ROW_MIN_HEIGHTS = {SPECTROGRAM: 54, CONVERSATION: 40}  # the least that stays legible
TICK_VALUES_PX = 16  # the part of the name column the kHz values take
# on by default: the first voice's spectrogram (and its lines `shown_by_default`), and the turn-taking
DEFAULT_ON = {SPECTROGRAM, CONVERSATION}
FORMANT_COLOUR = "#d62728"  # Praat's red dots on its grey spectrogram
FORMANT_COLOUR_DARK = "#35e0ff"  # red would vanish in inferno's reds and yellows
GAP_BRUSH = QColor(128, 128, 128, 90)
OVERLAP_BRUSH = QColor(214, 39, 40, 150)
MAX_TURN_LABELS = 200
FORMANT_RANGE_DB = 30.0
# The rows ask for up to PREFERRED_HEIGHT, so the waveform lanes above keep their room; given more (a taller
# window, the splitter dragged) every row grows, and given less than their least heights they scroll.
PREFERRED_HEIGHT = 220
UNSCROLLED_HEIGHT = 160


def lane_tracks() -> tuple[str, ...]:
    """The tracks of a voice, in the Tracks menu's order: its spectrogram, its lines, its formants."""
    return (SPECTROGRAM, *(line.name for line in LANE_LINES), FORMANTS)


def track_title(track: str) -> str:
    line = lane_line(track)
    return TRACK_TITLES[track] if line is None else line.title


def row_height(track: str) -> int:
    """A row's share of the height given."""
    line = lane_line(track)
    return ROW_HEIGHTS[track] if line is None else line.row_height


def row_min_height(track: str) -> int:
    """The least height at which a row stays legible."""
    line = lane_line(track)
    return ROW_MIN_HEIGHTS[track] if line is None else line.row_min_height


def _track_key(lane_name: str | None, track: str) -> str:
    """How the settings name a lane's track ("LANE/TRACK") or the conversation row."""
    return CONVERSATION if lane_name is None else f"{lane_name}/{track}"


class _Row:
    """One plot row: its track, lane and the items drawn in it."""

    def __init__(self, plot: pg.PlotItem, track: str, lane: int | None) -> None:
        self.plot = plot
        self.track = track
        self.lane = lane
        self.items: list[pg.GraphicsObject] = []
        self.image: pg.ImageItem | None = None


def _lut(dark: bool) -> np.ndarray:
    """Praat's grey (white silence, black energy) on a light palette; inferno (dark silence) on a dark one,
    so the image stands apart from the window's background either way."""
    if dark:
        return pg.colormap.get("inferno").getLookupTable(nPts=256)
    grey = np.linspace(255, 0, 256).astype(np.uint8)
    return np.stack([grey, grey, grey], axis=1)


class AnalysisTracksView(QWidget):
    """Rows of analysis tracks for the lanes of one stimulus; see the module docstring."""

    seekRequested = Signal(float)
    tracksChanged = Signal()

    def __init__(self, parent: QWidget | None = None, runner: TaskRunner | None = None,
                 settings: SettingsStore | None = None) -> None:
        super().__init__(parent)
        if runner is None:
            pool = QThreadPool(self)
            pool.setMaxThreadCount(1)
            runner = TaskRunner(self, pool=pool)
        self._tasks = runner
        self._lanes: list[tuple[str, MediaRef]] = []
        self._words: list[TimedWord] = []
        self._rows: list[_Row] = []
        self._plots: dict[tuple[str, int | None], pg.PlotItem] = {}  # made once per row kind, reused
        self._menu_key: tuple | None = None  # what the Tracks menu was last built for
        self._held = False  # set_stimulus(start=False): the work waits for start_work()
        self._x_link: pg.ViewBox | None = None
        self._playhead = 0.0
        self._generation = 0
        self._spectrograms: dict[int, SpectrogramTiles] = {}
        self._voices: dict[int, VoiceTracks] = {}
        self._boundaries: dict[int, np.ndarray] = {}  # per lane: where a label edge may snap (Shift)
        self._conversation: Conversation | None = None
        self._errors: dict[str, str] = {}
        self.redraw_count = 0
        self._settings = settings or SettingsStore(QSettings())
        self._tracks_shown = dict(self._settings.load().tracks_shown)  # read often while laying out: kept here

        self.tracks_button = QToolButton(self)
        self.tracks_button.setText("Tracks")
        self.tracks_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.tracks_menu = QMenu(self)
        self.tracks_button.setMenu(self.tracks_menu)
        self.band = QComboBox(self)
        self.band.addItem("wide-band (5 ms)", "wide")
        self.band.addItem("narrow-band (30 ms)", "narrow")
        self.band.setToolTip("spectrogram window: wide-band shows formants and pulses, narrow-band harmonics")
        self.max_frequency = self._spin("spectrogram_max_hz", 500, " Hz", "spectrogram's top frequency")
        self.dynamic_range = self._spin("spectrogram_range_db", 5, " dB",
                                        "dynamic range: how far under the loudest is white")
        self.pre_emphasis = self._spin("pre_emphasis_db", 1, " dB/oct", "pre-emphasis as Praat paints it: "
                                       "band i gains (dB/octave)·log2(i·step / 1 kHz), so bands under 1 kHz lose")
        self.pitch_floor = self._spin("pitch_floor_hz", 5, " Hz", "Praat's pitch floor")
        self.pitch_ceiling = self._spin("pitch_ceiling_hz", 25, " Hz", "Praat's pitch ceiling")
        self._restore_parameters()
        self.status = QLabel("", self)
        self.status.setStyleSheet("color: #777")
        # in a narrow bar a long note is cut, not allowed to widen the window; its tooltip has it whole
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.band.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.band.setMinimumContentsLength(9)
        # the strip is a widget of its own, so a host short of height may put it in a bar of its own
        self.strip = QWidget(self)
        strip = QHBoxLayout(self.strip)
        strip.setContentsMargins(4, 0, 4, 0)
        strip.addWidget(self.tracks_button)
        strip.addWidget(self.band)
        # the analysis parameters open from one button, so the strip never makes the window wider than a laptop
        parameters = QWidget(self)
        row = QHBoxLayout(parameters)
        row.setContentsMargins(6, 4, 6, 4)
        for label, spin in (("max", self.max_frequency), ("range", self.dynamic_range),
                            ("pre-emphasis", self.pre_emphasis),
                            ("pitch floor", self.pitch_floor), ("ceiling", self.pitch_ceiling)):
            row.addWidget(QLabel(label, parameters))
            row.addWidget(spin)
        self.parameters_button = QToolButton(self)
        self.parameters_button.setText("Parameters")
        self.parameters_button.setToolTip("Spectrogram range and Praat's pitch floor and ceiling")
        self.parameters_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        parameters_menu = QMenu(self)
        holder = QWidgetAction(parameters_menu)
        holder.setDefaultWidget(parameters)
        parameters_menu.addAction(holder)
        self.parameters_button.setMenu(parameters_menu)
        strip.addWidget(self.parameters_button)
        strip.addWidget(self.status, 1)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground(None)
        self.canvas.ci.setSpacing(2)
        self.canvas.ci.setContentsMargins(0, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.strip)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.canvas)
        layout.addWidget(self.scroll)

        # grows with the waveform above it (by the stretch the player gives each) instead of keeping its hint
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self._view_timer = QTimer(self)
        self._view_timer.setSingleShot(True)
        self._view_timer.setInterval(0)
        self._view_timer.timeout.connect(self.redraw_spectrograms)
        self.band.currentIndexChanged.connect(self._spectrogram_parameters_changed)
        self.max_frequency.valueChanged.connect(self._spectrogram_parameters_changed)
        self.dynamic_range.valueChanged.connect(self._levels_changed)
        self.pre_emphasis.valueChanged.connect(self._levels_changed)
        self.pitch_floor.valueChanged.connect(self._pitch_parameters_changed)
        self.pitch_ceiling.valueChanged.connect(self._pitch_parameters_changed)
        self._rebuild()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        hint = super().sizeHint()
        strip = self.strip.sizeHint().height() + 4 if self.strip.parent() is self else 0
        rows = sum(row_height(row.track) + 2 for row in self._rows)
        return QSize(hint.width(), strip + min(rows, PREFERRED_HEIGHT))

    def _spin(self, setting: str, step: int, suffix: str, tip: str) -> QSpinBox:
        value, low, high = ANALYSIS_NUMBERS[setting]   # the default and the range the settings keep it in
        spin = QSpinBox(self)
        spin.setRange(low, high)
        spin.setSingleStep(step)
        spin.setValue(value)
        spin.setSuffix(suffix)
        spin.setToolTip(tip)
        spin.setKeyboardTracking(False)  # typing "5000" is one change, not four
        return spin

    # ----- remembered choices -------------------------------------------------------------------------
    def _parameter_spins(self) -> dict[str, QSpinBox]:
        return {"spectrogram_max_hz": self.max_frequency, "spectrogram_range_db": self.dynamic_range,
                "pre_emphasis_db": self.pre_emphasis, "pitch_floor_hz": self.pitch_floor,
                "pitch_ceiling_hz": self.pitch_ceiling}

    def _restore_parameters(self) -> None:
        stored = self._settings.load()
        self.band.setCurrentIndex(max(0, self.band.findData(stored.spectrogram_band)))
        for name, spin in self._parameter_spins().items():
            spin.setValue(getattr(stored, name))

    def _save_parameters(self) -> None:
        self._settings.update(spectrogram_band=self.band.currentData(),
                              **{name: spin.value() for name, spin in self._parameter_spins().items()})

    def is_on(self, lane_name: str | None, track: str) -> bool:
        """Whether `track` is shown for the lane (None: the conversation row); remembered per lane name."""
        first = bool(self._lanes) and lane_name == self._lanes[0][0]
        line = lane_line(track)
        on_by_default = track in DEFAULT_ON if line is None else line.shown_by_default
        default = on_by_default and (lane_name is None or first)
        return self._tracks_shown.get(_track_key(lane_name, track), default)

    def set_track(self, lane_name: str | None, track: str, on: bool) -> None:
        """Show or hide a track of a lane (None: the conversation row), remember it and fetch what it needs."""
        self._tracks_shown[_track_key(lane_name, track)] = bool(on)
        self._settings.update(tracks_shown=dict(self._tracks_shown))
        action = self._menu_action(f"track:{CONVERSATION}" if lane_name is None else f"track:{lane_name}:{track}")
        if action is not None and action.isChecked() != bool(on):  # set from code, not from the menu
            action.blockSignals(True)
            action.setChecked(bool(on))
            action.blockSignals(False)
        self._rebuild()
        self._request_missing()
        self.tracksChanged.emit()

    # ----- stimulus -----------------------------------------------------------------------------------
    def link_x(self, viewbox: pg.ViewBox) -> None:
        """Share the time axis of `viewbox` (the waveform's ruler): same seconds, zoom and pan."""
        self._x_link = viewbox
        viewbox.sigXRangeChanged.connect(lambda *_: self._view_timer.start())
        for plot in self._plots.values():
            plot.setXLink(viewbox)

    def set_stimulus(self, lanes: Sequence[tuple[str, MediaRef]], words: Sequence[TimedWord] = (),
                     start: bool = True) -> None:
        """Show the tracks of a new stimulus: every job of the old one is cancelled, its results dropped.
        With `start=False` the rows are laid out but their work waits for `start_work()`."""
        self._generation += 1
        self._held = not start
        self._tasks.cancel_prefix("tracks:")
        self._lanes = [(name, ref) for name, ref in lanes if ref is not None]
        self._words = list(words)
        self._spectrograms, self._voices, self._boundaries = {}, {}, {}
        self._conversation = None
        self._errors = {}
        self._rebuild()
        self._request_missing()

    def start_work(self) -> None:
        """Begin the work held back by `set_stimulus(..., start=False)`; nothing if none is held."""
        if self._held:
            self._held = False
            self._request_missing()

    def clear(self) -> None:
        self.set_stimulus([], [])

    def shutdown(self) -> None:
        """Cancel the tracks' work and wait for what is mid-way (it checks its token between steps)."""
        self._tasks.close()
        self._tasks.wait(5000)

    def busy(self) -> bool:
        return self._tasks.busy()

    # ----- rows ---------------------------------------------------------------------------------------
    def _rebuild_menu(self) -> None:
        key = (tuple(name for name, _ in self._lanes), self._has_conversation())
        if key == self._menu_key:
            return  # same lanes: the checked states are already what is_on says (set_track keeps them so)
        self._menu_key = key
        self.tracks_menu.clear()
        for name, _ in self._lanes:
            section = self.tracks_menu.addMenu(f"voice {name}")
            for track in lane_tracks():
                action = section.addAction(track_title(track))
                action.setCheckable(True)
                action.setChecked(self.is_on(name, track))
                action.setObjectName(f"track:{name}:{track}")
                action.toggled.connect(lambda on, n=name, t=track: self.set_track(n, t, on))
        if self._has_conversation():
            action = self.tracks_menu.addAction(TRACK_TITLES[CONVERSATION])
            action.setCheckable(True)
            action.setChecked(self.is_on(None, CONVERSATION))
            action.setObjectName(f"track:{CONVERSATION}")
            action.toggled.connect(lambda on: self.set_track(None, CONVERSATION, on))
        self.tracks_button.setEnabled(bool(self._lanes))

    def _menu_action(self, name: str) -> QAction | None:
        """The Tracks menu's toggle of that object name, in the menu as it is now."""
        for action in self.tracks_menu.actions():
            for candidate in [action] + (action.menu().actions() if action.menu() else []):
                if candidate.objectName() == name:
                    return candidate
        return None

    def _has_conversation(self) -> bool:
        return len({w.speaker for w in self._words}) >= 2

    def wanted_rows(self) -> list[tuple[str, int | None]]:
        """(track, lane index) of every row to show, top to bottom: pitch and intensity have a row of their
        own only when their voice has no spectrogram row to be drawn over."""
        rows: list[tuple[str, int | None]] = []
        for index, (name, _) in enumerate(self._lanes):
            if self._has_spectrogram_row(name):
                rows.append((SPECTROGRAM, index))
                continue
            for line in LANE_LINES:
                if self.is_on(name, line.name):
                    rows.append((line.name, index))
        if self._has_conversation() and self.is_on(None, CONVERSATION):
            rows.append((CONVERSATION, None))
        return rows

    def _has_spectrogram_row(self, name: str) -> bool:
        return self.is_on(name, SPECTROGRAM) or self.is_on(name, FORMANTS)

    def _needs_voice(self, name: str) -> bool:
        """Whether any of the voice's lines is on show (in a row of its own or over its spectrogram)."""
        return any(self.is_on(name, line.name) for line in LANE_LINES)

    def _rebuild(self) -> None:
        """Lay out the wanted rows, reusing each kind's plot; an unchanged set of rows keeps its layout."""
        self._rebuild_menu()
        wanted = self.wanted_rows()
        if wanted == [(row.track, row.lane) for row in self._rows]:
            for row in self._rows:
                self._reset_row(row)
        else:
            for row in self._rows:
                self.canvas.ci.removeItem(row.plot)
            self._rows = []
            least = 0
            grid = self.canvas.ci.layout
            for position in range(grid.rowCount()):
                grid.setRowStretchFactor(position, 0)
            for position, (track, lane) in enumerate(wanted):
                plot = self._plots.get((track, lane))
                if plot is None:
                    plot = self._plots[(track, lane)] = self._make_plot(track, lane)
                self.canvas.ci.addItem(plot, row=position, col=0)
                grid.setRowStretchFactor(position, row_height(track))  # the height given, shared by kind
                row = _Row(plot, track, lane)
                self._rows.append(row)
                self._reset_row(row)
                least += row_min_height(track) + 2
            # the rows fill the height given; the player's splitter gives them their least legible heights
            # up to UNSCROLLED_HEIGHT, and only more rows than that scroll
            self.canvas.setMinimumHeight(least + 4)
            self.scroll.setMinimumHeight(min(least + 4, UNSCROLLED_HEIGHT))
            self.scroll.setVisible(bool(self._rows))
            self.updateGeometry()
        for row in self._rows:
            self._draw_row(row)

    def _reset_row(self, row: _Row) -> None:
        """Empty a reused row of the last stimulus's drawing and name it for this stimulus's lane."""
        self._clear_row(row)
        row.image = getattr(row.plot, "image", None)
        if row.image is not None and row.image.image is not None:
            row.image.clear()
        row.plot.playhead.setValue(self._playhead)
        self._name_row(row)

    def _name_row(self, row: _Row) -> None:
        """The row's name across its name column: the voice, the unit of its values, and the scales of
        the lines drawn over a spectrogram (in their colours)."""
        name = self._lanes[row.lane][0] if row.lane is not None else "turns"
        line = lane_line(row.track)
        unit = line.unit if line is not None else {SPECTROGRAM: "kHz", CONVERSATION: ""}[row.track]
        extra: list[tuple[str, str]] = []
        if row.track == SPECTROGRAM:
            scales = self.scales()
            extra = [(over.scale_label(scales), over.colour) for over in LANE_LINES if self.is_on(name, over.name)]
        values = 0 if row.track == CONVERSATION else TICK_VALUES_PX
        row.plot.getAxis("left").set_name(name, _row_colour(row.lane), unit, values, extra)

    def _make_plot(self, track: str, lane: int | None) -> pg.PlotItem:
        plot = pg.PlotItem(viewBox=LaneViewBox(), axisItems={"left": NamedAxis()})
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.hideAxis("bottom")
        axis = plot.getAxis("left")
        axis.setWidth(LEFT_AXIS_WIDTH)
        axis.enableAutoSIPrefix(False)
        if track == CONVERSATION:
            axis.setStyle(showValues=False)  # the speakers are named by their bars' colours and the row's name
        plot.setMinimumHeight(row_min_height(track))
        plot.image = None  # the spectrogram's image, made on its first draw and kept with the plot
        if self._x_link is not None:
            plot.setXLink(self._x_link)
        plot.vb.clicked.connect(self._on_clicked)
        line = pg.InfiniteLine(self._playhead, angle=90, movable=False, pen=pg.mkPen(PLAYHEAD_COLOUR, width=1))
        line.setZValue(20)
        plot.addItem(line, ignoreBounds=True)
        plot.playhead = line
        return plot

    def row_plot(self, track: str, lane: int | None = None) -> pg.PlotItem | None:
        """The row `track` of `lane` is drawn in: its own, or its voice's spectrogram row it is drawn over."""
        for row in self._rows:
            if row.track == track and row.lane == lane:
                return row.plot
        over = track == FORMANTS or lane_line(track) is not None
        if over and lane is not None and self.is_on(self._lanes[lane][0], track):
            return self.row_plot(SPECTROGRAM, lane)
        return None

    def _on_clicked(self, seconds: float) -> None:
        self.seekRequested.emit(max(0.0, float(seconds)))

    def set_playhead(self, seconds: float) -> None:
        self._playhead = seconds
        for row in self._rows:
            row.plot.playhead.setValue(seconds)

    # ----- work ---------------------------------------------------------------------------------------
    def _spectrogram_params(self) -> SpectrogramParams:
        return SpectrogramParams(band=self.band.currentData(), max_frequency_hz=float(self.max_frequency.value()))

    def paint_settings(self) -> PaintSettings:
        """Praat's paint with autoscaling over the view (as Praat's sound editor does)."""
        return PaintSettings(dynamic_range_db=float(self.dynamic_range.value()),
                             pre_emphasis_db_per_octave=float(self.pre_emphasis.value()))

    def praat_settings(self) -> PraatSettings:
        from app.cues.acoustics import PraatSettings

        return PraatSettings(pitch_floor_hz=float(self.pitch_floor.value()),
                             pitch_ceiling_hz=float(self.pitch_ceiling.value()))

    def scales(self) -> Scales:
        """The parameters the lines' scales follow, as the strip's spin boxes have them."""
        return Scales(float(self.pitch_floor.value()), float(self.pitch_ceiling.value()),
                      float(self.dynamic_range.value()))

    def _view(self) -> tuple[float, float, int]:
        if self._x_link is not None:
            t0, t1 = self._x_link.viewRange()[0]
            width = int(self._x_link.width()) or 1000
        else:
            t0, t1, width = 0.0, max((r.duration_s or 0.0 for _, r in self._lanes), default=1.0) or 1.0, 1000
        return float(t0), float(t1), width

    def _request_missing(self) -> None:
        if self._held:
            return  # start_work() asks again
        generation = self._generation
        wanted = self.wanted_rows()
        for index, (name, ref) in enumerate(self._lanes):
            if not ref.present:
                continue
            if (SPECTROGRAM, index) in wanted and index not in self._spectrograms:
                params = self._spectrogram_params()
                t0, t1, width = self._view()

                def open_and_draw(token, _progress, r=ref, p=params, v=(t0, t1, width)):
                    tiles = open_spectrogram(r.path, r.offset_s, r.duration_s, p, should_cancel=token)
                    tiles.query(v[0], v[1], v[2], should_cancel=token)
                    return tiles

                self._status(f"{name}: spectrogram...")
                self._tasks.submit(f"tracks:spec:{index}", open_and_draw,
                                   lambda result, i=index, g=generation: self._spectrogram_ready(g, i, result),
                                   on_error=lambda exc, i=index: self._failed(f"{self._lanes[i][0]} spectrogram", exc),
                                   with_progress=True)
            needs_voice = self._needs_voice(name) or self.is_on(name, FORMANTS)
            formants_missing = (self.is_on(name, FORMANTS) and index in self._voices
                                and self._voices[index].formants is None)
            if needs_voice and (index not in self._voices or formants_missing):
                settings, formants = self.praat_settings(), self.is_on(name, FORMANTS)
                kinds = tuple(line.kind for line in LANE_LINES)
                self._status(f"{name}: pitch and intensity...")
                self._tasks.submit(f"tracks:voice:{index}",
                                   lambda token, _p, r=ref, s=settings, f=formants, k=kinds: _voice(r, s, f, k, token),
                                   lambda result, i=index, g=generation: self._voice_ready(g, i, result),
                                   on_error=lambda exc, i=index: self._failed(f"{self._lanes[i][0]} pitch", exc),
                                   with_progress=True)
        if (CONVERSATION, None) in wanted and self._conversation is None:
            words = list(self._words)
            self._tasks.submit("tracks:conversation", lambda: _conversation(words),
                               lambda result, g=generation: self._conversation_ready(g, result),
                               on_error=lambda exc: self._failed("turn-taking", exc))

    def _status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)

    def _failed(self, what: str, exc: BaseException) -> None:
        self._errors[what] = str(exc)
        self._status(f"{what}: {exc}")

    def _spectrogram_ready(self, generation: int, lane: int, result: SpectrogramTiles) -> None:
        if generation != self._generation:
            return
        self._spectrograms[lane] = result
        self._status("" if result.frames_at(0) else
                     f"{self._lanes[lane][0]}: shorter than two window lengths "
                     f"({result.physical_window_s * 1000:g} ms), too short for Praat's spectrogram")
        self._redraw_track(SPECTROGRAM, lane)

    def _voice_ready(self, generation: int, lane: int, result: tuple[VoiceTracks, np.ndarray]) -> None:
        if generation != self._generation:
            return
        self._voices[lane], self._boundaries[lane] = result
        self._status("")
        for track in (SPECTROGRAM, *(line.name for line in LANE_LINES)):
            self._redraw_track(track, lane)

    def _conversation_ready(self, generation: int, result: Conversation | None) -> None:
        if generation != self._generation:
            return
        self._conversation = result
        self._redraw_track(CONVERSATION, None)

    def _redraw_track(self, track: str, lane: int | None) -> None:
        for row in self._rows:
            if row.track == track and row.lane == lane:
                self._draw_row(row)

    # ----- parameters ---------------------------------------------------------------------------------
    def _spectrogram_parameters_changed(self) -> None:
        self._save_parameters()
        self._tasks.cancel_prefix("tracks:spec:")
        self._spectrograms = {}
        for row in self._rows:
            if row.track == SPECTROGRAM:
                self._draw_row(row)
        self._request_missing()

    def _levels_changed(self) -> None:
        self._save_parameters()
        self.redraw_spectrograms()

    def _pitch_parameters_changed(self) -> None:
        self._save_parameters()
        self._tasks.cancel_prefix("tracks:voice:")
        self._voices, self._boundaries = {}, {}
        for row in self._rows:
            if row.track == SPECTROGRAM or lane_line(row.track) is not None:
                self._name_row(row)
                self._draw_row(row)
        self._request_missing()

    # ----- drawing ------------------------------------------------------------------------------------
    def _clear_row(self, row: _Row) -> None:
        if not row.items:
            return  # nothing drawn: touching the plot would only repaint it
        for item in row.items:
            row.plot.removeItem(item)
        row.items = []

    def _add(self, row: _Row, item: pg.GraphicsObject) -> None:
        row.plot.addItem(item)
        row.items.append(item)

    def _draw_row(self, row: _Row) -> None:
        line = lane_line(row.track)
        if row.track == SPECTROGRAM:
            self._draw_spectrogram(row)
        elif row.track == CONVERSATION:
            self._draw_conversation(row)
        elif line is not None:
            self._draw_line(row, line)

    def redraw_spectrograms(self) -> None:
        """Draw every spectrogram row for the current view from the tiles at hand; fetch what is missing."""
        for row in self._rows:
            if row.track == SPECTROGRAM:
                self._draw_spectrogram(row, fetch=True)

    def _draw_spectrogram(self, row: _Row, fetch: bool = False) -> None:
        lane = row.lane
        top_hz = float(self.max_frequency.value())
        _set_y_range(row.plot, 0.0, top_hz, padding=0)
        if getattr(row.plot, "ticks_top", None) != top_hz:  # new ticks repaint the axis: only when they change
            row.plot.getAxis("left").setTicks([[(f, f"{f / 1000:g}") for f in range(0, int(top_hz) + 1, 1000)]])
            row.plot.ticks_top = top_hz
        tiles = self._spectrograms.get(lane)
        show_image = self.is_on(self._lanes[lane][0], SPECTROGRAM)
        if row.image is None:
            row.image = row.plot.image = pg.ImageItem()
            row.image.setZValue(-10)
            row.plot.addItem(row.image)
        if tiles is None or not show_image:
            if row.image.image is not None:  # clearing an empty image would still repaint the row
                row.image.clear()
        else:
            t0, t1, width = self._view()
            found = tiles.query(t0, t1, width, compute=False)
            if len(found.image) == 0:
                row.image.clear()
            else:
                settings = self.paint_settings()
                painted = paint(found, settings, t0, t1)
                row.plot.setToolTip(tiles.describe(painted, settings))
                dark = self.palette().window().color().lightness() < 128
                row.image.setImage(painted.image, levels=(painted.low_db, painted.high_db), lut=_lut(dark),
                                   autoLevels=False)
                row.image.setRect(QRectF(found.t0, found.frequency_low, found.t1 - found.t0,
                                         found.frequency_step * found.image.shape[1]))
            self.redraw_count += 1
            if fetch and (not found.complete or found.level != tiles.level_for(t0, t1, width)):
                generation = self._generation
                self._tasks.submit(f"tracks:spec:{lane}:view",
                                   lambda token, _p: tiles.query(t0, t1, width, should_cancel=token),
                                   lambda _r, g=generation, r=row: self._view_computed(g, r), with_progress=True)
        self._clear_row(row)
        voice = self._voices.get(lane)
        if voice is not None and voice.formants is not None and self.is_on(self._lanes[lane][0], FORMANTS):
            times = np.tile(voice.formants.times, voice.formants.hz.shape[0])
            values = voice.formants.hz.reshape(-1)
            # as Praat's editor: formants only where the sound is within FORMANT_RANGE_DB of its loudest,
            # so silence shows none (Burg's method finds "formants" in any noise)
            db = np.interp(times, voice.intensity.times, voice.intensity.db)
            loud = db >= np.nanmax(voice.intensity.db) - FORMANT_RANGE_DB
            keep = np.isfinite(values) & (values <= top_hz) & loud
            dark = self.palette().window().color().lightness() < 128
            self._add(row, pg.ScatterPlotItem(times[keep], values[keep], size=2, pen=None,
                                              brush=pg.mkBrush(FORMANT_COLOUR_DARK if dark else FORMANT_COLOUR)))

        if voice is not None:
            self._draw_over_spectrogram(row, voice, top_hz)

    def _draw_over_spectrogram(self, row: _Row, voice: VoiceTracks, top_hz: float) -> None:
        """The voice's lines on show over the spectrogram as Praat's editor draws pitch and intensity: each
        on its own scale spread over the row's whole height, the scales named in the row's name column; the
        first of the list is drawn last, on top."""
        name = self._lanes[row.lane][0]
        scales = self.scales()
        for line in reversed(LANE_LINES):
            if not self.is_on(name, line.name) or line.name not in voice.lines:
                continue
            values = line.kind.line(voice.lines[line.name])
            span = line.value_range(values.values, scales)
            if span is None:
                continue
            low, high = span
            share = (values.values - low) / (high - low)
            y = (np.clip(share, 0.0, 1.0) if line.clip else share) * top_hz
            if line.casing:  # a light casing keeps the line legible on Praat's black energy and on inferno
                self._add(row, pg.PlotCurveItem(values.times, y, connect="finite",
                                                pen=pg.mkPen(QColor(255, 255, 255, 170), width=4)))
            self._add(row, pg.PlotCurveItem(values.times, y, connect="finite", pen=pg.mkPen(line.colour, width=2)))

    def _view_computed(self, generation: int, row: _Row) -> None:
        if generation == self._generation and row in self._rows:
            self._draw_spectrogram(row)

    def _draw_line(self, row: _Row, line: LaneLine) -> None:
        """A line track in a row of its own, on its range (NaN breaks the curve, so a voiced stretch of
        pitch reads at a glance)."""
        self._clear_row(row)
        voice = self._voices.get(row.lane)
        values = None if voice is None or line.name not in voice.lines else line.kind.line(voice.lines[line.name])
        span = line.value_range(np.empty(0) if values is None else values.values, self.scales())
        if span is not None:
            _set_y_range(row.plot, span[0], span[1], padding=line.padding)
        if values is None:
            return
        self._add(row, pg.PlotCurveItem(values.times, values.values, connect="finite",
                                        pen=pg.mkPen(line.colour, width=2)))
        if line.dots:
            self._add(row, pg.ScatterPlotItem(values.times, values.values, size=2, pen=None,
                                              brush=pg.mkBrush(line.colour)))

    def _draw_conversation(self, row: _Row) -> None:
        self._clear_row(row)
        talk = self._conversation
        if talk is None:
            return
        speakers = list(talk.speakers)
        lane_names = [name for name, _ in self._lanes]
        ink = self.palette().windowText().color()  # the speech rates read on a light or a dark palette
        _set_y_range(row.plot, 0.0, float(len(speakers)), padding=0.02)
        row.plot.getAxis("left").setTicks([[(k + 0.5, s) for k, s in enumerate(speakers)]])

        def colour(speaker: str) -> QColor:
            index = lane_names.index(speaker) if speaker in lane_names else speakers.index(speaker)
            c = QColor(LANE_COLOURS[index % len(LANE_COLOURS)])
            c.setAlpha(150)
            return c

        for k, speaker in enumerate(speakers):
            turns = [t for t in talk.turns if t.speaker == speaker]
            if turns:
                self._add(row, pg.BarGraphItem(x0=[t.start for t in turns], x1=[t.end for t in turns],
                                               y0=k + 0.15, height=0.7, brush=colour(speaker), pen=None))
            pauses = [p for t in turns for p in t.pauses]
            if pauses:
                self._add(row, pg.BarGraphItem(x0=[a for a, _ in pauses], x1=[b for _, b in pauses], y0=k + 0.3,
                                               height=0.4, brush=QColor(255, 255, 255, 200), pen=None))
            backchannels = [u for u in talk.backchannels if u.speaker == speaker]
            if backchannels:
                self._add(row, pg.BarGraphItem(x0=[u.start for u in backchannels], x1=[u.end for u in backchannels],
                                               y0=k + 0.35, height=0.3, brush=QColor(40, 40, 40, 220), pen=None))
        gaps = [t.interval for t in talk.gaps]
        if gaps:
            self._add(row, pg.BarGraphItem(x0=[a for a, _ in gaps], x1=[b for _, b in gaps], y0=0.0,
                                           height=len(speakers), brush=GAP_BRUSH, pen=None))
        if talk.overlaps:
            self._add(row, pg.BarGraphItem(x0=[a for a, _ in talk.overlaps], x1=[b for _, b in talk.overlaps],
                                           y0=0.0, height=len(speakers), brush=OVERLAP_BRUSH, pen=None))
        if len(talk.turns) <= MAX_TURN_LABELS:
            for turn in talk.turns:
                k = speakers.index(turn.speaker)
                text = pg.TextItem(f"{turn.speech_rate:.1f} w/s", color=ink, anchor=(0, 0.5))
                text.setPos(turn.start, k + 0.5)
                self._add(row, text)

    # ----- label snapping ------------------------------------------------------------------------------
    def boundaries(self) -> np.ndarray:
        """Where a label edge may snap while Shift is held, ascending: the voicing and silence boundaries
        (`app.cues.boundaries`) of every voice whose pitch or intensity row is shown, from the tracks
        already computed; none while they are still being computed."""
        shown = self.wanted_rows()
        del shown  # pitch or intensity on show, in a row of its own or over the spectrogram
        parts = [found for lane, found in self._boundaries.items() if self._needs_voice(self._lanes[lane][0])]
        return np.unique(np.concatenate(parts)) if parts else np.empty(0)

    # ----- for tests and screenshots --------------------------------------------------------------------
    def loaded(self) -> bool:
        """Everything the visible rows need has arrived (or failed)."""
        wanted = self.wanted_rows()
        for track, lane in wanted:
            if lane is not None and not self._lanes[lane][1].present:
                continue
            name = self._lanes[lane][0] if lane is not None else ""
            if track == SPECTROGRAM and lane not in self._spectrograms and f"{name} spectrogram" not in self._errors:
                return False
            voice_wanted = lane_line(track) is not None or (track == SPECTROGRAM and self._needs_voice(name))
            if voice_wanted and lane not in self._voices and f"{name} pitch" not in self._errors:
                return False
            if track == CONVERSATION and self._conversation is None and "turn-taking" not in self._errors:
                return False
        return not self._tasks.busy()

    def lane_names(self) -> list[str]:
        return [name for name, _ in self._lanes]

    def voice(self, lane: int) -> VoiceTracks | None:
        return self._voices.get(lane)

    def conversation(self) -> Conversation | None:
        return self._conversation

    def spectrogram(self, lane: int) -> SpectrogramTiles | None:
        return self._spectrograms.get(lane)


# The analysis stack (Praat) is imported by the first analysis, on the worker: the window shows without it.
def _voice(media: MediaRef, settings: PraatSettings, formants: bool, kinds: tuple[LineKind, ...],
           should_cancel: Callable[[], bool]) -> tuple[VoiceTracks, np.ndarray]:
    from app.cues.workers import voice_analysis

    return voice_analysis(media, settings, formants, should_cancel, kinds)


def _conversation(words: list[TimedWord]) -> Conversation | None:
    from app.cues.tracks import conversation_track

    return conversation_track(words)


def _set_y_range(plot: pg.PlotItem, low: float, high: float, padding: float) -> None:
    """Set a row's value range unless it is already that: a reused row then costs no repaint at a switch."""
    if getattr(plot, "y_range", None) != (low, high, padding):
        plot.setYRange(low, high, padding=padding)
        plot.y_range = (low, high, padding)


def _row_colour(lane: int | None) -> str:
    return LANE_COLOURS[lane % len(LANE_COLOURS)] if lane is not None else "#666666"


def lanes_for(media: Sequence[MediaRef], lane_names: Sequence[str]) -> list[tuple[str, MediaRef]]:
    """(lane name, audio) for each waveform lane whose audio is known, from the stimulus's media."""
    by_subject = {m.role.split(":", 1)[-1]: m for m in media if m.role == "audio" or m.role.startswith("audio:")}
    return [(name, by_subject[name]) for name in lane_names if name in by_subject]
