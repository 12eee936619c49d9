"""Annotate > Export annotations: pick a format, an annotator (or everyone) and where to write; the export
runs on the worker, asks before leaving out what the format cannot hold, and shows what it wrote per file
and tier and what it left out."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget)

from app.export_service import ExportResult
from storage.exporters.report import TransferReport
from widgets.palette import colour
from widgets.tasks import TaskRunner
from widgets.transfer_report_dialog import TransferChoice, TransferPanel, labels


@dataclass
class ExportBackend:
    formats: list[tuple[str, str]]               # (name, extension with the dot)
    dataset: str
    annotators: list[str]
    # format, out, annotator ('' = everyone), leave out what the format cannot hold -> what was written
    export: Callable[[str, Path, str, bool], ExportResult]


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
        self.written: Path | None = None
        self.transfer = TransferPanel("export", runner, "export", self)
        self.transfer.reported.connect(self._done)
        self.transfer.failed.connect(lambda _message: self.export_button.setEnabled(True))
        self.transfer.cancelled.connect(lambda: self.export_button.setEnabled(True))
        self.transfer.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
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
        layout.addWidget(self.transfer, 1)
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
            self.report.setText(f"<span style='color:{colour('error')}'>Choose where to write.</span>")
            self.report.show()
            return
        annotator = self.annotator.currentData()
        self.export_button.setEnabled(False)
        self.report.hide()  # the panel says what is happening from here on
        self.transfer.show()
        self.resize(max(self.width(), 760), max(self.height(), 460))

        def work(choice: TransferChoice) -> ExportResult:
            return self.backend.export(name, out, annotator, choice.skip_unrepresentable)

        def finish(result: ExportResult) -> tuple[str, TransferReport]:
            self.written = result.path
            return f"Wrote {labels(result.report.written)} to {result.path}", result.report

        self.transfer.start(work, finish)

    def _done(self, _report: TransferReport) -> None:
        self.export_button.setEnabled(True)
        self.exported.emit(str(self.written))
