"""Agreement figures (each with its formula and grid) and the places where annotators disagree."""
from __future__ import annotations

import math
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from app.agreement import AgreementReport, scopes_for
from widgets.palette import colour

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
        self.label_set.currentIndexChanged.connect(self._offer_scopes)
        self.scope = QComboBox()
        self.scope.setToolTip("Interval: frame by frame on the grid; whole: one unit per stimulus")
        self.grid = QDoubleSpinBox()
        self.grid.setDecimals(0)
        self.grid.setRange(1, 1000)
        self.grid.setValue(10)
        self.grid.setSuffix(" ms grid")
        self.compute = QPushButton("Compute")
        self.compute.clicked.connect(self.request)
        self.scope.currentTextChanged.connect(lambda scope: self.grid.setVisible(scope == "interval"))
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

    def set_label_sets(self, sets: list[tuple[str, str]], counts: dict[str, int] | None = None,
                       in_use: str | None = None) -> None:
        """Offer these (name, scope) label sets, each saying how many labels the dataset has in it (`counts`);
        chosen is the set in use when the dataset has labels in it, else the one with most, else the one in
        use. The scope list follows the chosen set."""
        counts = counts or {}
        names = [name for name, _ in sets]
        labelled = sorted((n for n in names if counts.get(n)), key=lambda n: -counts[n])
        chosen = in_use if in_use in labelled else labelled[0] if labelled else in_use
        self.label_set.blockSignals(True)
        self.label_set.clear()
        for name, scope in sets:
            self.label_set.addItem(name, scope)
            n = counts.get(name, 0)
            self.label_set.setItemData(self.label_set.count() - 1,
                                       f"{n} label{'s' * (n != 1)} in this dataset" if n else "no labels in this dataset",
                                       Qt.ItemDataRole.ToolTipRole)
        self.label_set.setCurrentIndex(max(0, self.label_set.findText(chosen or "")))
        self.label_set.blockSignals(False)
        self._offer_scopes()

    def _offer_scopes(self) -> None:
        chosen = self.scope.currentText()
        scopes = scopes_for(self.label_set.currentData() or "both")
        self.scope.blockSignals(True)
        self.scope.clear()
        self.scope.addItems(list(scopes))
        self.scope.setCurrentIndex(max(0, self.scope.findText(chosen)))
        self.scope.blockSignals(False)
        self.scope.setEnabled(len(scopes) > 1)
        self.grid.setVisible(self.scope.currentText() == "interval")

    def request(self) -> None:
        """Ask for figures; the old ones are cleared at once so they are never taken for the new ones."""
        self._clear()
        self.summary.setText(f"Computing agreement on <b>{self.label_set.currentText()}</b>…")
        self.computeRequested.emit(self.label_set.currentText(), self.scope.currentText(), self.grid.value() / 1000.0)

    def show_error(self, message: str) -> None:
        """The computation failed: no figures, and the reason in one line."""
        self._clear()
        self.summary.setText(f"<span style='color:{colour('error')}'>{escape(message.splitlines()[0])}</span>"
                             if message else "")

    def _clear(self) -> None:
        self.figures.clear()
        self.disagreements.clear()

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
