"""The filter bar over the stimulus table. It only emits the filter the user built."""
from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QGridLayout, QLabel, QLineEdit, QToolButton, QWidget)

from storage.records import StimulusFilter

ANY = "any"


class FilterBarView(QWidget):
    """Kind, ground truth, modality, free text, one model's outcome and 'models disagree'."""

    filterChanged = Signal(object)  # StimulusFilter
    countText = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = self._combo("Stimulus kind")
        self.truth = self._combo("Ground truth")
        self.modality = self._combo("Modality or condition of the predictions considered")
        self.text = QLineEdit()
        self.text.setPlaceholderText("search id, text, metadata…")
        self.text.setClearButtonEnabled(True)
        self.model = self._combo("Model whose outcome to filter on")
        self.outcome = QComboBox()
        self.outcome.addItems([ANY, "correct", "incorrect"])
        self.outcome.setToolTip("Show stimuli this model got right or wrong")
        self.disagree = QCheckBox("models disagree")
        self.disagree.setToolTip("Compared models gave different answers")
        self.clear = QToolButton()
        self.clear.setText("Clear")
        self.count = QLabel("")
        self.drill = QLabel("")
        self.drill.setStyleSheet("QLabel { color: #1565c0; }")
        self.drill.setWordWrap(True)
        self.drill.hide()
        layout = QGridLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setHorizontalSpacing(4)
        layout.setVerticalSpacing(3)
        layout.addWidget(self.kind, 0, 0)
        layout.addWidget(self.truth, 0, 1)
        layout.addWidget(self.modality, 0, 2)
        layout.addWidget(self.text, 1, 0, 1, 3)
        layout.addWidget(self.model, 2, 0)
        layout.addWidget(self.outcome, 2, 1)
        layout.addWidget(self.disagree, 2, 2)
        layout.addWidget(self.count, 3, 0, 1, 2)
        layout.addWidget(self.clear, 3, 2)
        layout.addWidget(self.drill, 4, 0, 1, 3)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self._emit)
        for combo in (self.kind, self.truth, self.modality, self.model, self.outcome):
            combo.currentIndexChanged.connect(self._emit)
        self.disagree.toggled.connect(self._emit)
        self.text.textChanged.connect(lambda _t: self._debounce.start())
        self.clear.clicked.connect(self.reset)
        self._quiet = False

    @staticmethod
    def _combo(tip: str) -> QComboBox:
        combo = QComboBox()
        combo.setToolTip(tip)
        combo.setMinimumContentsLength(6)
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        return combo

    def set_facets(self, facets: dict[str, list[str]]) -> None:
        """Offer this dataset's values; resets the filter without emitting for each combo."""
        self._quiet = True
        for combo, key, label in self._facet_combos():
            combo.clear()
            combo.addItem(f"{label}: {ANY}", None)
            for value in facets.get(key, []):
                combo.addItem(value, value)
        self.outcome.setCurrentIndex(0)
        self.text.clear()
        self.disagree.setChecked(False)
        self._quiet = False

    def update_facets(self, facets: dict[str, list[str]]) -> None:
        """New choices for the same dataset (a model was added, say); what is chosen stays chosen."""
        self._quiet = True
        lost = False
        for combo, key, label in self._facet_combos():
            chosen = combo.currentData()
            combo.clear()
            combo.addItem(f"{label}: {ANY}", None)
            for value in facets.get(key, []):
                combo.addItem(value, value)
            index = combo.findData(chosen) if chosen is not None else 0
            lost = lost or index < 0
            combo.setCurrentIndex(max(0, index))
        self._quiet = False
        if lost:  # a chosen value is gone: the table must stop filtering on it
            self._emit()

    def _facet_combos(self) -> tuple[tuple[QComboBox, str, str], ...]:
        return ((self.kind, "kind", "kind"), (self.truth, "ground_truth", "truth"),
                (self.modality, "modality", "modality"), (self.model, "model", "model"))

    def set_drill_down(self, description: str) -> None:
        """Say that the table shows a chosen set of stimuli; any filter change or Clear leaves it."""
        self.drill.setText(f"only: {description}")
        self.drill.setVisible(bool(description))

    def reset(self) -> None:
        self.drill.hide()
        self._quiet = True
        for combo in (self.kind, self.truth, self.modality, self.model, self.outcome):
            combo.setCurrentIndex(0)
        self.text.clear()
        self.disagree.setChecked(False)
        self._quiet = False
        self._emit()

    def current_filter(self) -> StimulusFilter:
        model, outcome = self.model.currentData(), self.outcome.currentText()
        outcomes = ((model, outcome),) if model and outcome != ANY else ()
        return StimulusFilter(kind=self.kind.currentData(), ground_truth=self.truth.currentData(),
                              modality=self.modality.currentData(), text=self.text.text().strip() or None,
                              model_outcomes=outcomes, models_disagree=self.disagree.isChecked())

    def set_count(self, shown: int, total: int | None = None) -> None:
        self.count.setText(f"{shown:,} stimuli" if total is None else f"{shown:,} of {total:,} stimuli")

    def _emit(self, *_args: object) -> None:
        if not self._quiet:
            self.drill.hide()
            self.filterChanged.emit(self.current_filter())
