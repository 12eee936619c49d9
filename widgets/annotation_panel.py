"""The annotation area of a stimulus: label tiers on the time axis, the label palette, whole-stimulus labels.

Keys: a label's shortcut picks it; while playing (`set_clock(t, playing=True)`) the same key marks the
start of that label at the clock time minus the reaction-time offset, and pressing it again marks the end.
A key held down (its repeats seen) ends the label when let go, and in the palette's hold mode every press
lasts until its release, as in ELAN. `.` adds a point label; `/` finds any label of a large set by typing.
Every edit goes through the `AnnotationModel`, which writes it to the store at once and keeps its undo
history per stimulus; a stimulus's labels are read once, on a worker, when it is shown.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFrame, QHBoxLayout, QLabel, QScrollArea, QSpinBox, QVBoxLayout,
                               QWidget)

from app.annotation_model import AnnotationModel
from app.page_labels import label_sets_for
from app.annotations import REACTION_OFFSET_S, LiveLabeler, snap, stimulus_note
from storage.errors import ThinsliceError
from widgets.annotation_tiers import AnnotationTiersView
from widgets.label_palette import LabelPaletteView
from widgets.tasks import TaskRunner
from widgets.whole_labels_panel import WholeLabelsPanel


class AnnotationPanel(QWidget):
    """Tiers + palette + whole labels for one stimulus and one annotator."""

    seekRequested = Signal(float)
    playRangeRequested = Signal(float, float)
    message = Signal(str)            # edits refused, live-labelling state
    annotationsChanged = Signal(int)  # stimulus id, after any edit, undo or redo

    def __init__(self, model: AnnotationModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.runner = TaskRunner(self)  # reads a shown stimulus's labels off the GUI thread
        self.annotator = ""
        self.benchmark: str | None = None   # the label sets offered are the ones made for this benchmark
        self.stimulus_id: int | None = None
        self.live = LiveLabeler()
        self._playing = False
        self._time = 0.0
        self.tiers = AnnotationTiersView(model)
        self.palette = LabelPaletteView()
        self.whole_labels = WholeLabelsPanel()
        self.label_set = QComboBox()
        self.label_set.setToolTip("Label set the palette and new time-range labels use")
        self.show_others = QCheckBox("Show others' tiers")
        self.show_others.setChecked(True)
        self.status = QLabel()
        self.status.setStyleSheet("color: gray")
        # labelling while playing marks each key press this much earlier: the annotator's reaction time
        self.reaction = QSpinBox()
        self.reaction.setRange(0, 1500)
        self.reaction.setSingleStep(50)
        self.reaction.setSuffix(" ms")
        self.reaction.setValue(round(REACTION_OFFSET_S * 1000))
        self.reaction.setToolTip("Reaction time: a label key pressed while playing marks this long before the clock")
        self.reaction.valueChanged.connect(lambda ms: setattr(self.live, "reaction_offset_s", ms / 1000.0))

        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.label_set)
        # a taxonomy of dozens of labels scrolls instead of pushing the timeline off the screen
        palette_scroll = QScrollArea()
        palette_scroll.setWidgetResizable(True)
        palette_scroll.setFrameShape(QFrame.Shape.NoFrame)
        palette_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # names elide instead
        palette_scroll.setWidget(self.palette)
        palette_scroll.setMinimumHeight(60)
        side.addWidget(palette_scroll, 2)
        options = QHBoxLayout()
        options.addWidget(self.show_others)
        options.addStretch(1)
        options.addWidget(QLabel("reaction"))
        options.addWidget(self.reaction)
        side.addLayout(options)
        whole_scroll = QScrollArea()
        whole_scroll.setWidgetResizable(True)
        whole_scroll.setFrameShape(QFrame.Shape.NoFrame)
        whole_scroll.setWidget(self.whole_labels)
        side.addWidget(whole_scroll, 1)
        side_widget = QWidget()
        side_widget.setLayout(side)
        side_widget.setFixedWidth(300)
        self.side = side_widget  # the host may place it elsewhere (beside player and tiers together)
        left = QVBoxLayout()
        left.setContentsMargins(0, 0, 0, 0)
        left.addWidget(self.tiers, 1)
        left.addWidget(self.status)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(left, 1)
        layout.addWidget(side_widget)

        self.tiers.seekRequested.connect(self.seekRequested)
        self.tiers.playRangeRequested.connect(self.playRangeRequested)
        self.tiers.editFailed.connect(self.message)
        self.palette.currentLabelChanged.connect(self.tiers.set_current_label)
        self.palette.relabelRequested.connect(self._relabel_selection)
        self.label_set.currentTextChanged.connect(self.set_active_label_set)
        self.show_others.toggled.connect(self.tiers.set_show_others)
        self.whole_labels.wholeLabelChosen.connect(self._set_whole)
        self.whole_labels.noteEdited.connect(self._set_note)
        self.model.subscribe(self._model_changed)
        self.reload_label_sets()

    # -- state from outside ---------------------------------------------------------------------
    def set_stimulus(self, stimulus_id: int | None, duration_s: float) -> None:
        """Show a stimulus (duration in seconds): its labels are read on a worker unless the model has them."""
        if stimulus_id != self.stimulus_id:
            self.status.clear()  # "overlap: 2.84-3.73 s" or a refusal was about the last stimulus's labels
        self.stimulus_id = stimulus_id
        self.live.cancel()
        self.tiers.set_open_marks({})
        self.whole_labels.note_saved()  # another stimulus: its own note is shown
        if stimulus_id is None:
            self.runner.cancel("annotations")
            self.model.show(None, [])
        elif stimulus_id != self.model.stimulus_id:
            self.model.expect(stimulus_id)
            self.runner.submit("annotations", lambda: self.model.read(stimulus_id),
                               lambda rows: self.model.show(stimulus_id, rows),
                               lambda exc: self.message.emit(f"The labels of this stimulus could not be read: {exc}"))
        self.tiers.set_stimulus(stimulus_id, duration_s)
        self._refresh_whole()

    def busy(self) -> bool:
        """A stimulus's labels are still being read."""
        return self.runner.busy()

    def set_annotator(self, name: str) -> None:
        self.annotator = name
        self.model.annotator = name
        self.live.cancel()
        self.tiers.set_open_marks({})
        self.tiers.set_annotator(name)
        self._refresh_whole()

    def set_clock(self, t: float, playing: bool) -> None:
        """Follow the playback clock: the playhead moves, and label keys mark ranges while playing."""
        self._time, self._playing = float(t), bool(playing)
        if not playing and self.live.pending():
            self.live.cancel()
            self.message.emit("Stopped: unfinished live labels were dropped.")
        self.tiers.set_open_marks(self.live.pending())
        self.tiers.set_playhead(t)

    def set_benchmark(self, benchmark: str | None) -> None:
        """Offer the label sets that apply to a stimulus of `benchmark` (see `app.page_labels`)."""
        if benchmark != self.benchmark:
            self.benchmark = benchmark
            self.reload_label_sets()

    def reload_label_sets(self) -> None:
        """Read the label sets again (after one is imported or edited)."""
        sets = label_sets_for(self.model.label_sets(), self.benchmark)
        colours = {(s.name, l.name): l.colour for s in sets for l in self.model.labels(s.name) if l.colour}
        self.tiers.set_label_colours(colours)
        interval_sets = [s.name for s in sets if s.scope in ("interval", "both")]
        current = self.label_set.currentText()
        self.label_set.blockSignals(True)
        self.label_set.clear()
        self.label_set.addItems(interval_sets)
        self.label_set.blockSignals(False)
        if interval_sets:
            self.set_active_label_set(current if current in interval_sets else interval_sets[0])
        self.whole_labels.set_label_sets([(s.name, self.model.labels(s.name)) for s in sets if s.scope == "whole"])
        self._refresh_whole()

    def set_active_label_set(self, name: str) -> None:
        if not name:
            return
        if self.label_set.currentText() != name:
            self.label_set.setCurrentText(name)
        labels = self.model.labels(name)
        if name == self.palette.label_set and labels == self.palette.labels():
            return  # the same set again (another stimulus): its keys stay where the fingers learnt them
        parents = {label.parent for label in labels if label.parent}
        # the labels without a key of their own get the free digits, most used first
        usage = {label.name: self.model.label_set_usage(name, label.name) for label in labels
                 if not label.shortcut and label.name not in parents}
        self.palette.set_labels(name, labels, usage)

    # -- edits -----------------------------------------------------------------------------------
    def _edit(self, change, *, revert: bool = True) -> bool:
        """Make an edit through the model. One it refuses, or the store fails to write, is said in place
        (the message line and the window's status bar) and, with `revert`, the whole-stimulus choices on
        show go back to what is stored."""
        try:
            change()
        except ThinsliceError as exc:
            self.status.setText(str(exc))
            self.message.emit(str(exc))
            if revert:
                self._refresh_whole()
            return False
        return True

    def undo(self) -> bool:
        """Undo the last edit of the stimulus shown (never another's); False when nothing was undone
        (a failed write is said, and the history stays as it was, or this panel is not on screen)."""
        if not self.isVisible():  # another page is shown: its stimulus is not this panel's
            return False
        done: list[bool] = []
        self._edit(lambda: done.append(self.model.undo()))
        return bool(done and done[0])

    def redo(self) -> bool:
        if not self.isVisible():
            return False
        done: list[bool] = []
        self._edit(lambda: done.append(self.model.redo()))
        return bool(done and done[0])

    def undo_actions(self, parent: QWidget) -> tuple[QAction, QAction]:
        """Undo and Redo actions for a menu: they drive the model's history of the stimulus shown, and name
        the step they would take."""
        undo, redo = QAction("&Undo", parent), QAction("&Redo", parent)
        undo.triggered.connect(self.undo)
        redo.triggered.connect(self.redo)

        def follow() -> None:
            undo.setEnabled(self.model.can_undo())
            redo.setEnabled(self.model.can_redo())
            undo.setText(f"&Undo {self.model.undo_text()}".rstrip())
            redo.setText(f"&Redo {self.model.redo_text()}".rstrip())

        self.model.subscribe(follow)
        follow()
        return undo, redo

    def _relabel_selection(self, label_set: str, label: str) -> None:
        own = [a.id for a in self.tiers.labels() if a.id in set(self.tiers.selected_ids())
               and a.annotator == self.annotator]
        if not own:
            self.message.emit("Select one of your labels to relabel it.")
            return
        self._edit(lambda: self.model.relabel(own, label, label_set))

    def _set_whole(self, label_set: str, label: str) -> None:
        self._edit(lambda: self.model.set_whole(label_set, label or None))

    def _set_note(self, text: str) -> None:
        # a note that could not be saved keeps its text, marked unsaved, so the user can save it again
        if self._edit(lambda: self.model.set_note(text), revert=False):
            self.whole_labels.note_saved()
        else:
            self.whole_labels.note_unsaved()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        plain = not (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
        name = self.palette.label_for_shortcut(event.text()) if plain and event.text() else None
        if name is None:
            super().keyPressEvent(event)
            return
        event.accept()
        if not event.isAutoRepeat():  # a held key is one press
            self.press_label(name)

    def press_label(self, name: str, at_s: float | None = None) -> None:
        """A label's key: pick it; while playing, the first press marks its start and the second its end
        (at `at_s` when given: the moment the annotator asked, before typing the label's name)."""
        self.palette.pick(name)
        if not self._playing:
            return
        hold = self.palette.hold_keys() and at_s is None
        mark = self.live.press(name, self._time if at_s is None else at_s)
        self.tiers.set_open_marks(self.live.pending())
        if mark is None:
            then = "let go at its end" if hold else "press again at its end, or hold the key"
            self.status.setText(f"{name}: started at {self.live.pending()[name]:.2f} s; {then}")
            return
        self._finish(mark)

    def release_label(self, name: str, held: bool) -> None:
        """A label's key let go: ends the label it started when it was `held` past the keyboard's repeat
        delay, or always in the palette's hold mode; a quick tap otherwise waits for the next press."""
        if not self._playing or name not in self.live.pending():
            return
        if held or self.palette.hold_keys():
            mark = self.live.press(name, self._time)
            if mark is not None:
                self._finish(mark)

    def _finish(self, mark) -> None:
        self.tiers.set_open_marks(self.live.pending())
        if mark.end_s > mark.start_s:
            self._edit(lambda: self.model.add_label(self.palette.label_set, mark.label, mark.start_s, mark.end_s))
            self.status.setText(f"{mark.label}: {mark.start_s:.2f}-{mark.end_s:.2f} s")
        else:
            self.status.setText(f"{mark.label}: shorter than 10 ms, not added (\".\" adds a point label)")

    def add_point(self, label: str | None = None) -> None:
        """The `.` key (the current label) or Ctrl with a label's key (`label`, which becomes current): a
        point label at the playhead (while playing, the reaction time earlier, as a label key marks)."""
        if label is not None:
            self.palette.pick(label)
        current = self.palette.current()
        if self.stimulus_id is None or current is None:
            self.message.emit("Choose a label in the palette first, then press . to add it as a point.")
            return
        t = self.live.moment(self._time) if self._playing else snap(self._time)
        if self._edit(lambda: self.model.add_point(self.palette.label_set, current, t)):
            self.status.setText(f"{current}: point at {t:.2f} s")

    def find_label(self) -> None:
        """The `/` key: type a label's name in the palette; Enter marks it as its key would, from now."""
        moment = self._time if self._playing else None
        self.palette.begin_find(lambda name: self.press_label(name, moment))

    # -- following the model ---------------------------------------------------------------------
    def _model_changed(self) -> None:
        self._refresh_whole()
        # once the stimulus's labels are in (not while they are still being read), and after every edit
        if self.stimulus_id is not None and self.model.stimulus_id == self.stimulus_id and self.model.ready:
            self.annotationsChanged.emit(self.stimulus_id)

    def _refresh_whole(self) -> None:
        if self.stimulus_id is None or self.model.stimulus_id != self.stimulus_id:
            self.whole_labels.set_state([], self.annotator, "")
            return
        whole = [a for a in self.model.annotations() if a.is_whole]
        self.whole_labels.set_state(whole, self.annotator, stimulus_note(whole, self.annotator))

    def close(self) -> bool:
        self.model.unsubscribe(self._model_changed)
        self.runner.close()
        self.stimulus_id = None
        self.tiers.close()
        return super().close()
