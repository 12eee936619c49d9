"""Annotate > Export annotations: pick a format, an annotator (or everyone) and where to write."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget)

from widgets.tasks import TaskRunner


@dataclass
class ExportBackend:
    formats: list[tuple[str, str]]               # (name, extension with the dot)
    dataset: str
    annotators: list[str]
    export: Callable[[str, Path, str], Path]      # format, out, annotator ('' = everyone) -> written path


class ExportDialog(QDialog):
    exported = Signal(str)

    def __init__(self, backend: ExportBackend, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Export annotations of {backend.dataset}")
        self.backend = backend
        self.runner = runner
        self.format = QComboBox()
        for name, extension in backend.formats:
            self.format.addItem(f"{name} ({extension})", (name, extension))
        self.annotator = QComboBox()
        self.annotator.addItem("everyone", "")
        for name in backend.annotators:
            self.annotator.addItem(name, name)
        self.out = QLineEdit()
        browse = QPushButton("…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out, 1)
        row.addWidget(browse)
        self.report = QLabel("Writes to a temporary file, then renames it; never overwrites the dataset's own files.")
        self.report.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.clicked.connect(self.start)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Format", self.format)
        form.addRow("Annotator", self.annotator)
        form.addRow("Write to", row)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.report)
        layout.addWidget(buttons)

    def _browse(self) -> None:
        _name, extension = self.format.currentData()
        path, _ = QFileDialog.getSaveFileName(self, "Export to", f"annotations{extension}")
        if path:
            self.out.setText(path)

    def start(self) -> None:
        name, _extension = self.format.currentData()
        out = Path(self.out.text().strip()).expanduser()
        if not self.out.text().strip():
            self.report.setText("<span style='color:#c62828'>Choose where to write.</span>")
            return
        annotator = self.annotator.currentData()
        self.export_button.setEnabled(False)
        self.runner.submit("export", lambda: self.backend.export(name, out, annotator), self._done, self._failed)

    def _done(self, path: Path) -> None:
        self.exported.emit(str(path))
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.export_button.setEnabled(True)
        self.report.setText(f"<span style='color:#c62828'>{exc}</span>")
