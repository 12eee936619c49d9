"""Name the live models a race asks at once: one row per contender (name on stage, base URL, model, modality
and the *name* of the environment variable holding its key), kept in the window's typed settings."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from app.contenders import MODALITIES, Contender, lineup_problem
from app.live.settings import LiveSettings, resolve_api_key
from widgets.palette import colour

COLUMNS = ("Name on stage", "Base URL", "Model", "Modality", "API key variable")
MAX_CONTENDERS = 6


class ContendersDialog(QDialog):
    """Edit the race's contenders; `contenders()` is what was accepted."""

    def __init__(self, contenders: Sequence[Contender], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Race contenders")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemChanged.connect(lambda _item: self._show_keys())
        add = QPushButton("Add")
        add.clicked.connect(lambda: self.add_row(Contender("", "http://127.0.0.1:8000/v1", "", "text",
                                                           "OPENAI_API_KEY")))
        remove = QPushButton("Remove")
        remove.clicked.connect(self._remove_selected)
        self.keys = QLabel()
        self.keys.setWordWrap(True)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color: {colour('error')}")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Up to {MAX_CONTENDERS} live models, asked at once with R in presentation mode. "
                                "Keys are read from the environment variables named here, never stored."))
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.keys)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        for contender in contenders:
            self.add_row(contender)
        self.resize(980, 380)
        self._show_keys()

    def add_row(self, contender: Contender) -> None:
        if self.table.rowCount() >= MAX_CONTENDERS:
            self.message.setText(f"A race has at most {MAX_CONTENDERS} contenders.")
            return
        row = self.table.rowCount()
        self.table.blockSignals(True)   # the row is read only once it is whole
        self.table.insertRow(row)
        for column, value in enumerate((contender.name, contender.base_url, contender.model)):
            self.table.setItem(row, column, QTableWidgetItem(value))
        modality = QComboBox()
        modality.addItems(MODALITIES)
        modality.setCurrentText(contender.modality if contender.modality in MODALITIES else "text")
        self.table.setCellWidget(row, 3, modality)
        self.table.setItem(row, 4, QTableWidgetItem(contender.api_key_env))
        self.table.blockSignals(False)
        self.table.resizeColumnsToContents()
        self._show_keys()

    def _remove_selected(self) -> None:
        for row in sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)
        self._show_keys()

    def contenders(self) -> tuple[Contender, ...]:
        def text(row: int, column: int) -> str:
            item = self.table.item(row, column)
            return item.text().strip() if item is not None else ""

        return tuple(Contender(text(r, 0), text(r, 1), text(r, 2), self.table.cellWidget(r, 3).currentText(),
                               text(r, 4)) for r in range(self.table.rowCount()))

    def _show_keys(self) -> None:
        """Where each contender's key would come from (never the key)."""
        lines = []
        for c in self.contenders():
            if c.api_key_env:
                key, where = resolve_api_key(LiveSettings(c.base_url, c.model, c.api_key_env))
                lines.append(f"{c.name or '(no name)'}: key from {where}" if key
                             else f"{c.name or '(no name)'}: no key in {c.api_key_env} (asked without one)")
        self.keys.setText("\n".join(lines))

    def accept(self) -> None:
        problem = lineup_problem(self.contenders())
        if problem:
            self.message.setText(problem)
            return
        super().accept()
