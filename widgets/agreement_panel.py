"""Agreement figures (each with its formula and grid) and the places where annotators disagree."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from app.agreement import AgreementReport

MEASURE_NAMES = {"cohen_kappa": "Cohen's \u03ba", "fleiss_kappa": "Fleiss' \u03ba",
                 "krippendorff_alpha": "Krippendorff's \u03b1"}
_ROLE = Qt.ItemDataRole.UserRole


class AgreementPanel(QWidget):
    """Asks for agreement on a label set (`computeRequested`), shows a report, jumps to disagreements."""

    computeRequested = Signal(str, str, float)  # label set, scope (interval|whole), grid seconds
    jumpRequested = Signal(int, float)          # stimulus id, time in seconds

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label_set = QComboBox()
        self.scope = QComboBox()
        self.scope.addItems(["interval", "whole"])
        self.grid = QDoubleSpinBox()
        self.grid.setDecimals(0)
        self.grid.setRange(1, 1000)
        self.grid.setValue(10)
        self.grid.setSuffix(" ms grid")
        self.compute = QPushButton("Compute")
        self.compute.clicked.connect(lambda: self.computeRequested.emit(
            self.label_set.currentText(), self.scope.currentText(), self.grid.value() / 1000.0))
        controls = QHBoxLayout()
        for widget in (self.label_set, self.scope, self.grid, self.compute):
            controls.addWidget(widget)
        self.figures = QTreeWidget()
        self.figures.setHeaderLabels(["Measure", "Value", "Units", "Formula"])
        self.figures.setRootIsDecorated(False)
        self.figures.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.disagreements = QTreeWidget()
        self.disagreements.setHeaderLabels(["Stimulus", "From", "To", "Labels"])
        self.disagreements.setRootIsDecorated(False)
        self.disagreements.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.disagreements.itemDoubleClicked.connect(self._jump)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(controls)
        layout.addWidget(self.summary)
        layout.addWidget(self.figures, 1)
        layout.addWidget(QLabel("Disagreements (double-click to go there)"))
        layout.addWidget(self.disagreements, 2)

    def set_label_sets(self, names: list[str]) -> None:
        self.label_set.clear()
        self.label_set.addItems(names)

    def set_report(self, report: AgreementReport, stimulus_names: dict[int, str] | None = None) -> None:
        """Show a report; `stimulus_names` maps stimulus ids to the dataset's own ids for display."""
        names = stimulus_names or {}
        self.figures.clear()
        grid = next((r.grid_s for r in report.results if r.grid_s), None)
        unit = f"frames of {grid * 1000:g} ms" if grid else "whole stimuli"
        self.summary.setText(f"<b>{report.label_set}</b>: {', '.join(report.annotators) or 'no annotators'}; "
                             f"units: {unit}")
        for result in report.results:
            value = "undefined" if math.isnan(result.value) else f"{result.value:.3f}"
            item = QTreeWidgetItem([MEASURE_NAMES.get(result.measure, result.measure), value,
                                    f"{result.n_units} \u00d7 {result.unit}", result.formula])
            item.setToolTip(1, result.reason or result.formula)
            item.setToolTip(3, result.formula)
            self.figures.addTopLevelItem(item)
        self.disagreements.clear()
        rows = []
        for d in report.disagreements:
            labels = "; ".join(f"{who}: {label}" for who, label in d.labels.items())
            start = "" if d.start_s is None else f"{d.start_s:.2f}"
            end = "" if d.end_s is None else f"{d.end_s:.2f}"
            item = QTreeWidgetItem([names.get(d.stimulus_id, str(d.stimulus_id)), start, end, labels])
            item.setData(0, _ROLE, (d.stimulus_id, d.start_s or 0.0))
            rows.append(item)
        self.disagreements.addTopLevelItems(rows)

    def _jump(self, item: QTreeWidgetItem, _column: int) -> None:
        stimulus_id, t = item.data(0, _ROLE)
        self.jumpRequested.emit(int(stimulus_id), float(t))
