"""The annotation area of a stimulus: label tiers on the time axis, the label palette, whole-stimulus labels.

Keys: a label's shortcut picks it; while playing (`set_clock(t, playing=True)`) the same key marks the
start of that label at the clock time minus the reaction-time offset, and pressing it again marks the end.
Every edit goes through `undo_stack` and is written to the store at once.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QUndoStack
from PySide6.QtWidgets import QCheckBox, QComboBox, QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from app.annotations import (AddLabel, BulkRelabel, LiveLabeler, Relabel, SetWholeLabel, set_stimulus_note,
                             stimulus_note)
from storage.annotations import AnnotationStore
from storage.errors import ThinsliceError
from widgets.annotation_tiers import AnnotationTiersView
from widgets.label_palette import LabelPaletteView
from widgets.undo import push_command
from widgets.whole_labels_panel import WholeLabelsPanel


class AnnotationPanel(QWidget):
    """Tiers + palette + whole labels for one stimulus and one annotator."""

    seekRequested = Signal(float)
    playRangeRequested = Signal(float, float)
    message = Signal(str)            # edits refused, live-labelling state
    annotationsChanged = Signal(int)  # stimulus id, after any edit, undo or redo

    def __init__(self, store: AnnotationStore, parent: QWidget | None = None,
                 undo_stack: QUndoStack | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.undo_stack = undo_stack or QUndoStack(self)
        self.annotator = ""
        self.stimulus_id: int | None = None
        self.live = LiveLabeler()
        self._playing = False
        self._time = 0.0
        self.tiers = AnnotationTiersView(store, self.undo_stack)
        self.palette = LabelPaletteView()
        self.whole_labels = WholeLabelsPanel()
        self.label_set = QComboBox()
        self.label_set.setToolTip("Label set the palette and new time-range labels use")
        self.show_others = QCheckBox("Show others' tiers")
        self.show_others.setChecked(True)
        self.status = QLabel()
        self.status.setStyleSheet("color: gray")

        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.label_set)
        # a taxonomy of dozens of labels scrolls instead of pushing the timeline off the screen
        palette_scroll = QScrollArea()
        palette_scroll.setWidgetResizable(True)
        palette_scroll.setFrameShape(QFrame.Shape.NoFrame)
        palette_scroll.setWidget(self.palette)
        palette_scroll.setMinimumHeight(60)
        side.addWidget(palette_scroll, 2)
        side.addWidget(self.show_others)
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
        self.undo_stack.indexChanged.connect(self._stack_changed)
        self.reload_label_sets()

    # -- state from outside ---------------------------------------------------------------------
    def set_stimulus(self, stimulus_id: int | None, duration_s: float) -> None:
        self.stimulus_id = stimulus_id
        self.live.cancel()
        self.tiers.set_stimulus(stimulus_id, duration_s)
        self._refresh_whole()

    def set_annotator(self, name: str) -> None:
        self.annotator = name
        self.live.cancel()
        self.tiers.set_annotator(name)
        self._refresh_whole()

    def set_clock(self, t: float, playing: bool) -> None:
        """Follow the playback clock: the playhead moves, and label keys mark ranges while playing."""
        self._time, self._playing = float(t), bool(playing)
        self.tiers.set_playhead(t)
        if not playing and self.live.pending():
            self.live.cancel()
            self.message.emit("Stopped: unfinished live labels were dropped.")

    def reload_label_sets(self) -> None:
        """Read the label sets again (after one is imported or edited)."""
        sets = self.store.label_sets()
        colours = {(s.name, l.name): l.colour for s in sets for l in self.store.labels(s.name) if l.colour}
        self.tiers.set_label_colours(colours)
        interval_sets = [s.name for s in sets if s.scope in ("interval", "both")]
        current = self.label_set.currentText()
        self.label_set.blockSignals(True)
        self.label_set.clear()
        self.label_set.addItems(interval_sets)
        self.label_set.blockSignals(False)
        if interval_sets:
            self.set_active_label_set(current if current in interval_sets else interval_sets[0])
        self.whole_labels.set_label_sets([(s.name, self.store.labels(s.name)) for s in sets if s.scope == "whole"])
        self._refresh_whole()

    def set_active_label_set(self, name: str) -> None:
        if not name:
            return
        if self.label_set.currentText() != name:
            self.label_set.setCurrentText(name)
        self.palette.set_labels(name, self.store.labels(name))

    # -- edits -----------------------------------------------------------------------------------
    def _push(self, command_factory) -> None:
        if self.stimulus_id is None or not self.annotator:
            self.message.emit("Choose an annotator name before labelling.")
            return
        try:
            push_command(self.undo_stack, command_factory())
        except ThinsliceError as exc:
            self.message.emit(str(exc))

    def _relabel_selection(self, label_set: str, label: str) -> None:
        own = [a.id for a in self.tiers.labels() if a.id in set(self.tiers.selected_ids())
               and a.annotator == self.annotator]
        if not own:
            self.message.emit("Select one of your labels to relabel it.")
            return
        if len(own) == 1:
            self._push(lambda: Relabel(self.store, self.annotator, own[0], label, label_set))
        else:
            self._push(lambda: BulkRelabel(self.store, self.annotator, own, label, label_set))

    def _set_whole(self, label_set: str, label: str) -> None:
        self._push(lambda: SetWholeLabel(self.store, self.annotator, self.stimulus_id, label_set, label or None))

    def _set_note(self, text: str) -> None:
        self._push(lambda: set_stimulus_note(self.store, self.annotator, self.stimulus_id, text))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        plain = not (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
        name = self.palette.label_for_shortcut(event.text()) if plain and event.text() else None
        if name is None:
            super().keyPressEvent(event)
            return
        event.accept()
        self.palette.pick(name)
        if self._playing:
            mark = self.live.press(name, self._time)
            if mark is None:
                self.status.setText(f"{name}: started at {self.live.pending()[name]:.2f} s; press again to end")
                return
            if mark.end_s > mark.start_s:
                self._push(lambda: AddLabel(self.store, self.annotator, self.stimulus_id, self.palette.label_set,
                                            mark.label, mark.start_s, mark.end_s))
            self.status.setText(f"{name}: {mark.start_s:.2f}-{mark.end_s:.2f} s")

    # -- following the store ---------------------------------------------------------------------
    def _stack_changed(self, _index: int) -> None:
        self._refresh_whole()
        if self.stimulus_id is not None:
            self.annotationsChanged.emit(self.stimulus_id)

    def _refresh_whole(self) -> None:
        if self.stimulus_id is None:
            self.whole_labels.set_state([], self.annotator, "")
            return
        whole = [a for a in self.store.for_stimulus(self.stimulus_id) if a.is_whole]
        self.whole_labels.set_state(whole, self.annotator, stimulus_note(whole, self.annotator))

    def close(self) -> bool:
        self.undo_stack.indexChanged.disconnect(self._stack_changed)
        self.stimulus_id = None
        self.tiers.close()
        return super().close()
