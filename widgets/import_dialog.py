"""File > Import: pick a release or a table, see the detected kind, mapping and a preview, then run it with
progress and Cancel. The dialog reads nothing itself: it calls the backend the main window gives it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QProgressBar, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget, QCheckBox)

from widgets.frame_table import Column, FrameTableView, as_written
from widgets.palette import colour
from widgets.tasks import CancelToken, TaskRunner


@dataclass
class ImportBackend:
    """What the dialog may ask for; every call runs on a worker."""

    kinds: list[tuple[str, str]]                                   # (kind, title)
    detect: Callable[[Path], str]                                  # path -> kind
    dry_run: Callable[[str, Path, dict[str, Any]], dict[str, Any]]  # counts, mapping, notes, skipped, columns, rows
    run: Callable[[str, Path, dict[str, Any], CancelToken, Callable[[float, str], None]], Any]  # -> ImportSummary
    map_fields: dict[str, str]
    # a table file's own columns and first rows (and the guessed mapping), readable even when the plan fails
    preview: Callable[[Path, dict[str, Any]], dict[str, Any]] | None = None
    # results whose stimuli another dataset holds: {"dataset", "matched", "total"} or None
    attach_offer: Callable[[str, Path, dict[str, Any]], dict[str, Any] | None] | None = None
    # a Parquet file or folder attached as a new dataset whose predictions stay in the files -> the dataset's name
    attach_in_place: Callable[[Path, dict[str, Any], CancelToken, Callable[[float, str], None]], str] | None = None


class ImportDialog(QDialog):
    imported = Signal(str, str)   # dataset name, what the import did ("2 predictions added to …")

    def __init__(self, backend: ImportBackend, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import a release or a results table")
        self.resize(900, 640)
        self.backend = backend
        self.runner = runner
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText("a release folder or a CSV / TSV / JSONL / JSON / Parquet file")
        self.path_edit.textChanged.connect(self._path_changed)
        folder = QPushButton("Folder…")
        file = QPushButton("File…")
        folder.clicked.connect(self._pick_folder)
        file.clicked.connect(self._pick_file)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(folder)
        path_row.addWidget(file)
        self.kind = QComboBox()
        self.kind.addItem("detect automatically", "auto")
        for kind, title in backend.kinds:
            self.kind.addItem(f"{kind} — {title}", kind)
        self.dataset = QLineEdit()
        self.dataset.setPlaceholderText("default: from the release")
        self.skip_bad = QCheckBox("skip malformed rows (each is listed)")
        self.attach = QCheckBox()
        self.attach.setVisible(False)
        self.attach.setToolTip("Add these results to the dataset that already holds their stimuli")
        self._attach_to: str | None = None
        self.in_place = QCheckBox("Read Parquet in place (a new dataset; its predictions stay in the files)")
        self.in_place.setVisible(backend.attach_in_place is not None)
        self.in_place.setToolTip("For a large release kept as Parquet (a file or a folder of parts): every row is "
                                 "checked, nothing is copied, and a move or change of the files is reported")
        self.replace = QCheckBox("replace the stored values listed below (otherwise the import is refused)")
        self.replace.setVisible(False)
        self.replace.setToolTip("The file states values of stored stimuli that differ from the store's; "
                                "values it does not state are kept either way")
        self.mapping = QTableWidget(len(backend.map_fields), 2)
        self.mapping.setHorizontalHeaderLabels(["Field", "Source column"])
        self.mapping.verticalHeader().setVisible(False)
        self.mapping.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.mapping.horizontalHeader().setStretchLastSection(True)
        for row, (name, help_) in enumerate(backend.map_fields.items()):
            item = QTableWidgetItem(name)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            item.setToolTip(help_)
            self.mapping.setItem(row, 0, item)
            self.mapping.setItem(row, 1, QTableWidgetItem(""))
        self.preview = FrameTableView()
        self.preview.setToolTip("The file's own columns and first rows: type a column's name in the mapping")
        self.report = QLabel("Choose a folder or a file, then Check.")
        self.report.setWordWrap(True)
        self.report.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setVisible(False)
        self.check_button = QPushButton("Check (dry run)")
        self.check_button.clicked.connect(self.check)
        self.buttons = QDialogButtonBox()
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.import_button.clicked.connect(self.start_import)
        self.cancel_button.clicked.connect(self._cancel)
        form = QFormLayout()
        form.addRow("Path", path_row)
        form.addRow("Kind", self.kind)
        form.addRow("Dataset", self.dataset)
        form.addRow("", self.skip_bad)
        form.addRow("", self.in_place)
        form.addRow("", self.attach)
        form.addRow("", self.replace)
        tables = QHBoxLayout()
        tables.addWidget(self.mapping, 1)
        tables.addWidget(self.preview, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Column mapping (one set for every file of a release; empty = detected) and preview:"))
        layout.addLayout(tables, 1)
        layout.addWidget(self.report)
        bottom = QHBoxLayout()
        bottom.addWidget(self.check_button)
        bottom.addWidget(self.progress, 1)
        bottom.addWidget(self.buttons)
        layout.addLayout(bottom)
        self._token: CancelToken | None = None
        self._done = False   # imported, the report (skipped rows) left open for reading

    # -- inputs ---------------------------------------------------------------------------------
    def _pick_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Release folder")
        if path:
            self.path_edit.setText(path)
            self.check()

    def _pick_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Results table", "",
                                              "Tables (*.csv *.tsv *.jsonl *.json *.parquet);;All files (*)")
        if path:
            self.path_edit.setText(path)
            self.check()

    def options(self) -> dict[str, Any]:
        mapping = {}
        for row in range(self.mapping.rowCount()):
            column = self.mapping.item(row, 1).text().strip()
            if column:
                mapping[self.mapping.item(row, 0).text()] = column
        values = {"dataset_name": self.dataset.text().strip() or None, "mapping": mapping,
                  "skip_bad": self.skip_bad.isChecked(), "extra": {},
                  "replace_stimuli": self.replace.isVisible() and self.replace.isChecked()}
        if self.attach.isVisible() and self.attach.isChecked() and self._attach_to:
            # answers added to the stimuli the dataset holds; those stimuli stay as they are
            values["dataset_name"] = self._attach_to
        return values

    def path(self) -> Path:
        return Path(self.path_edit.text().strip()).expanduser()

    def _path_changed(self) -> None:
        """A new file starts from its own columns: the previous file's mapping, preview and report go."""
        for row in range(self.mapping.rowCount()):
            self.mapping.item(row, 1).setText("")
        self._show_preview([], [])
        self.attach.setVisible(False)
        self._attach_to = None
        self.replace.setVisible(False)
        self.replace.setChecked(False)
        self.report.setText("Check the new file (dry run) to see its columns, mapping and counts.")
        self.import_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self._done = False

    # -- dry run --------------------------------------------------------------------------------
    def check(self) -> None:
        path, kind, options = self.path(), self.kind.currentData(), self.options()
        if not str(path) or not path.exists():
            self.report.setText(f"<span style='color:{colour('error')}'>{path} does not exist.</span>")
            return
        self.report.setText("Checking…")

        def work() -> dict[str, Any]:
            preview: dict[str, Any] = {}
            if self.backend.preview is not None:
                try:
                    preview = self.backend.preview(path, options)
                except Exception:  # noqa: BLE001 (not a table: the dry run below says what the file is)
                    preview = {}
            try:
                chosen = self.backend.detect(path) if kind == "auto" else kind
                report = {"kind": chosen, **preview, **self.backend.dry_run(chosen, path, options)}
                if self.backend.attach_offer is not None and not self._attach_to:
                    report["attach"] = self.backend.attach_offer(chosen, path, options)
                return report
            except Exception as exc:  # noqa: BLE001 (shown beside the columns the user can map)
                return {**preview, "error": exc}

        self.runner.submit("import-check", work, self._show_check, self._show_error)

    def _show_preview(self, columns: list[str], rows: list) -> None:
        self.preview.set_rows(rows, [Column(c, as_written) for c in columns])

    def _show_check(self, result: dict[str, Any]) -> None:
        self._show_preview(result.get("columns") or [], result.get("rows") or [])
        offer = result.get("attach")
        if offer:
            self._attach_to = offer["dataset"]
            self.attach.setText(f"Attach to \u201c{offer['dataset']}\u201d, which holds {offer['matched']} of these "
                                f"{offer['total']} stimuli (instead of a new dataset)")
            self.attach.setChecked(True)
            self.attach.setVisible(True)
            self.check()   # say what the import would do to that dataset
            return
        if "error" in result:
            self._show_error(result["error"])
            return
        counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in result["counts"].items() if v)
        notes = "".join(f"<br/>{n}" for n in result.get("notes", []))
        skipped = "".join(f"<br/><span style='color:{colour('error')}'>skipped {_escape(s)}</span>"
                          for s in result.get("skipped", []))
        effect = result.get("effect") or {}
        changes = effect.get("changes") or []
        self.replace.setVisible(bool(changes))
        said = f"<br/><b>{_escape(effect['summary'])}</b>" if effect else ""
        if changes:
            more = effect["changed_stimuli"] - len({c.split(" ")[0] for c in changes})
            said += "".join(f"<br/><span style='color:{colour('error')}'>would change {_escape(c)}</span>"
                            for c in changes)
            said += f"<br/>… and {more} more stimuli" if more > 0 else ""
        self.report.setText(f"<b>{result['kind']}</b> → dataset <b>{result['dataset']}</b>: {counts or 'nothing'}"
                            f"{said}{notes}{skipped}")
        for row in range(self.mapping.rowCount()):
            field = self.mapping.item(row, 0).text()
            if not self.mapping.item(row, 1).text() and field in result.get("mapping", {}):
                self.mapping.item(row, 1).setText(str(result["mapping"][field]))

    def _show_error(self, exc: BaseException) -> None:
        self.progress.setVisible(False)
        self.import_button.setEnabled(True)
        changes = getattr(exc, "changes", None)
        if changes:   # stored stimuli would change: the way on is the box here, not a command-line option
            self.replace.setVisible(True)
            lines = "".join(f"<br/>would change {_escape(str(c))}" for c in changes[:10])
            more = f"<br/>… and {len(changes) - 10} more values" if len(changes) > 10 else ""
            self.report.setText(f"<span style='color:{colour('error')}'>Import refused, nothing was written: "
                                f"{len({c.stimulus for c in changes})} stored stimuli would change.{lines}{more}"
                                f"<br/>Tick \u201creplace the stored values\u201d to replace them.</span>")
            return
        self.report.setText(f"<span style='color:{colour('error')}'>{_escape(str(exc))}</span>")

    # -- import ---------------------------------------------------------------------------------
    def start_import(self) -> None:
        path, kind, options = self.path(), self.kind.currentData(), self.options()
        if not str(path) or not path.exists():
            self.report.setText(f"<span style='color:{colour('error')}'>{path} does not exist.</span>")
            return
        self.import_button.setEnabled(False)
        self.progress.setVisible(True)
        self.progress.setValue(0)

        in_place = self.backend.attach_in_place if self.in_place.isChecked() else None

        def work(token: CancelToken, progress: Callable[[float, str], None]) -> str:
            if in_place is not None:
                return in_place(path, options, token, progress)
            chosen = self.backend.detect(path) if kind == "auto" else kind
            return self.backend.run(chosen, path, options, token, progress)

        self._token = self.runner.submit("import-run", work, self._finished, self._show_error,
                                         on_progress=self._progress, with_progress=True)

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 100))
        self.progress.setFormat(f"%p% {message}")

    def _finished(self, summary: Any) -> None:
        """Closes on a clean import; with skipped rows it stays open and lists them until the user closes it."""
        self._token = None
        self.progress.setValue(100)
        dataset = summary if isinstance(summary, str) else summary.dataset
        skipped = [] if isinstance(summary, str) else list(summary.skipped)
        said = "" if isinstance(summary, str) else summary.effect.sentence()
        self.imported.emit(dataset, said)
        if not skipped:
            self.accept()
            return
        self._done = True
        lines = "".join(f"<br/><span style='color:{colour('error')}'>skipped {_escape(s)}</span>" for s in skipped)
        self.report.setText(f"Imported <b>{_escape(dataset)}</b>; {len(skipped)} row(s) were skipped:{lines}")
        self.cancel_button.setText("Close")

    def _cancel(self) -> None:
        if self._done:
            self.accept()
            return
        if self._token is not None:
            self._token.cancel()
            self.report.setText("Cancelling: the store stays as it was.")
            return
        self.reject()

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt name)
        # Enter must not start an import by accident while typing a column name
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            return
        super().keyPressEvent(event)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
