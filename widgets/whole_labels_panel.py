"""Whole-stimulus labels (one choice per label set) and a free-text note, beside the timeline."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from storage.annotations import Annotation, Label

NO_LABEL = "\u2014"


class WholeLabelsPanel(QWidget):
    """One combo per whole-stimulus label set for the annotator; others' choices shown beside it."""

    wholeLabelChosen = Signal(str, str)  # label set, label ('' clears)
    noteEdited = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._form = QFormLayout()
        self._combos: dict[str, QComboBox] = {}
        self._others: dict[str, QLabel] = {}
        self._updating = False
        self.note = QPlainTextEdit()
        self.note.setPlaceholderText("Note on this stimulus")
        self.note.setMaximumHeight(70)
        self.save_note = QPushButton("Save note")
        self.save_note.clicked.connect(lambda: self.noteEdited.emit(self.note.toPlainText()))
        self.note_state = QLabel()
        self.note_state.setWordWrap(True)
        self.note_state.setStyleSheet("color: #c62828")
        self.note_state.hide()
        self._note_unsaved = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(self._form)
        layout.addWidget(self.note)
        layout.addWidget(self.save_note)
        layout.addWidget(self.note_state)
        layout.addStretch(1)

    def set_label_sets(self, sets: Sequence[tuple[str, Sequence[Label]]]) -> None:
        """The whole-stimulus label sets and their labels, in display order."""
        while self._form.rowCount():
            self._form.removeRow(0)
        self._combos.clear()
        self._others.clear()
        for name, labels in sets:
            combo = QComboBox()
            combo.addItem(NO_LABEL, "")
            for label in labels:
                combo.addItem(f"{'  ' * label.depth}{label.name}", label.name)
            combo.currentIndexChanged.connect(lambda _i, set_name=name: self._chosen(set_name))
            others = QLabel()
            others.setStyleSheet("color: gray")
            box = QVBoxLayout()
            box.setSpacing(0)
            box.addWidget(combo)
            box.addWidget(others)
            self._form.addRow(name, box)
            self._combos[name], self._others[name] = combo, others

    def set_state(self, annotations: Sequence[Annotation], annotator: str, note: str) -> None:
        """Show the annotator's whole labels and note, and what the others chose."""
        self._updating = True
        try:
            for name, combo in self._combos.items():
                mine = [a.label for a in annotations if a.is_whole and a.label_set == name and a.annotator == annotator]
                index = combo.findData(mine[-1] if mine else "")
                combo.setCurrentIndex(max(index, 0))
                theirs = sorted(f"{a.annotator}: {a.label}" for a in annotations
                                if a.is_whole and a.label_set == name and a.annotator != annotator and a.label)
                self._others[name].setText(", ".join(theirs))
                self._others[name].setVisible(bool(theirs))
            if self.note.toPlainText() != note and not self._note_unsaved:
                self.note.setPlainText(note)
        finally:
            self._updating = False

    def note_unsaved(self) -> None:
        """The note typed could not be saved: keep its text and say so until it is saved."""
        self._note_unsaved = True
        self.note_state.setText("Not saved: the note is kept here; press Save note to try again.")
        self.note_state.show()

    def note_saved(self) -> None:
        """The note shown is the stored one again."""
        self._note_unsaved = False
        self.note_state.hide()

    def note_is_unsaved(self) -> bool:
        return self._note_unsaved

    def choice(self, label_set: str) -> str:
        return self._combos[label_set].currentData() or ""

    def choose(self, label_set: str, label: str) -> None:
        combo = self._combos[label_set]
        combo.setCurrentIndex(max(combo.findData(label), 0))

    def _chosen(self, label_set: str) -> None:
        if not self._updating:
            self.wholeLabelChosen.emit(label_set, self.choice(label_set))
