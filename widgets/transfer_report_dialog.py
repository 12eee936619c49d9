"""An annotation-file import or export in the window: run on the worker, ask in place when something could
be lifted (labels outside their stimulus, labels the format cannot hold), then show what was read, written
and left out, per file and tier, as the command line prints it.

The rules stay in the app layer: the reader (`app.annotation_files.read_annotation_file`) and the exporter
(`app.export_service.export_annotations`) refuse with `ImportNeedsChoice` or `ExportRefused`, and the
user's answer re-runs them with `clip`, `skip_outside` or `skip_unrepresentable`, exactly the command line's
options: Skip (leave the labels in question out), Clip (cut those past the stimulus to it) or Cancel.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QFrame, QHBoxLayout, QHeaderView,
                               QLabel, QListWidget, QPushButton, QVBoxLayout, QWidget)

from app.annotation_files import ImportNeedsChoice
from storage.errors import ThinsliceError
from storage.exporters.common import ExportRefused
from storage.exporters.report import TransferReport
from widgets.frame_table import FrameTableView
from widgets.palette import colour
from widgets.tasks import TaskRunner

COLUMNS = ("File", "Tier", "Read", "Written", "Left out", "Left out why, or changed how")
FITTED_ROWS = 12  # a report of up to this many tiers is shown whole, with no scroll bar


@dataclass(frozen=True)
class TransferChoice:
    """The options a transfer runs with: the command line's --clip, --skip-outside and --skip-unrepresentable."""

    clip: bool = False
    skip_unrepresentable: bool = False
    skip_outside: bool = False


# work(choice) runs on the worker; finish(result) on the GUI thread writes what needs the GUI thread's
# model and returns the headline and the report to show.
Work = Callable[[TransferChoice], Any]
Finish = Callable[[Any], tuple[str, TransferReport]]


class TransferPanel(QWidget):
    """Runs one transfer, asks when the app layer says the user may lift a refusal, then shows the report."""

    reported = Signal(object)   # the TransferReport, once the transfer is done
    failed = Signal(str)        # a refusal the user cannot lift, or a failed write, in one line
    cancelled = Signal()        # the user answered the question with Cancel: nothing was written

    def __init__(self, verb: str, runner: TaskRunner, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.verb = verb  # "import" or "export", as the question's buttons say it
        self.runner = runner
        self.key = key
        self.choice = TransferChoice()
        self._asked = (0, 0)  # the labels in question: outside their stimulus, not representable
        self.report: TransferReport | None = None
        self._work: Work | None = None
        self._finish: Finish | None = None
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        self.question = QFrame()
        self.question.setFrameShape(QFrame.Shape.StyledPanel)
        self.question_text = QLabel()
        self.question_text.setWordWrap(True)
        self.question_text.setTextFormat(Qt.TextFormat.PlainText)
        self.skip_button = QPushButton()
        self.clip_button = QPushButton()
        self.cancel_button = QPushButton("Cancel")
        self.skip_button.clicked.connect(self._skip)
        self.clip_button.clicked.connect(lambda: self._rerun(replace(self.choice, clip=True)))
        self.cancel_button.clicked.connect(self._cancel)
        answers = QHBoxLayout()
        for button in (self.skip_button, self.clip_button, self.cancel_button):
            answers.addWidget(button)
        answers.addStretch(1)
        asking = QVBoxLayout(self.question)
        asking.addWidget(self.question_text)
        asking.addLayout(answers)
        self.question.hide()
        self.table = FrameTableView(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)  # one line a tier; a reason cut off shows whole on hover
        header = self.table.horizontalHeader()
        for column in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.left_out_title = QLabel("Left out")
        self.left_out = QListWidget()
        self.left_out.setWordWrap(True)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.headline)
        layout.addWidget(self.question)
        layout.addWidget(self.table)
        layout.addWidget(self.left_out_title)
        layout.addWidget(self.left_out, 1)
        layout.addWidget(self.notes)
        layout.addStretch(0)  # packs a short report at the top; the list of items takes the room when shown
        self._show_report_parts(False)

    # -- the flow ---------------------------------------------------------------------------------
    def start(self, work: Work, finish: Finish) -> None:
        """Run `work` with no options; the rest follows from what it says."""
        self._work, self._finish = work, finish
        self._rerun(TransferChoice())

    def _rerun(self, choice: TransferChoice) -> None:
        assert self._work is not None
        self.choice = choice
        self.question.hide()
        self._show_report_parts(False)  # the labels in question go while the re-run works
        self._say(f"Working on the {self.verb}…")
        work = self._work
        self.runner.submit(self.key, lambda: work(choice), self._finished, self._refused)

    def _finished(self, result: Any) -> None:
        assert self._finish is not None
        try:
            headline, report = self._finish(result)
        except ThinsliceError as exc:  # the store refused the write: nothing was added
            self._refused(exc)
            return
        self.report = report
        self._say(headline)
        self._fill(report)
        self.reported.emit(report)

    def _refused(self, exc: BaseException) -> None:
        outside, unrepresentable = _liftable(exc, self.choice)
        if not outside and not unrepresentable:
            self._show_report_parts(False)
            self._say(str(exc), error=True)
            self.failed.emit(str(exc))
            return
        self._ask(str(exc), getattr(exc, "items", []), outside, unrepresentable)

    def _skip(self) -> None:
        """Leave out every label in question (as --skip-outside and --skip-unrepresentable) and run again."""
        outside, unrepresentable = self._asked
        self._rerun(replace(self.choice, skip_outside=self.choice.skip_outside or outside > 0,
                            skip_unrepresentable=self.choice.skip_unrepresentable or unrepresentable > 0))

    def _ask(self, message: str, items: list[str], outside: int, unrepresentable: int) -> None:
        """The question in place: what was found, the labels in question, and a button per way on."""
        self._asked = (outside, unrepresentable)
        self._say(f"Nothing was {'imported' if self.verb == 'import' else 'written'} yet.")
        self.question_text.setToolTip(message)
        self.left_out.clear()
        self.left_out.addItems(items)
        if outside + unrepresentable > len(items):
            self.left_out.addItem(f"… {outside + unrepresentable - len(items)} more")
        self.left_out_title.setText("Labels in question")
        self.table.hide()
        self.notes.hide()
        self.left_out_title.show()
        self.left_out.show()
        rest = "import the rest" if self.verb == "import" else "export the rest"
        self.skip_button.setText(f"Skip {_these(outside + unrepresentable)} and {rest}")
        self.clip_button.setText(f"Clip {'it' if outside == 1 else 'them'} to the stimulus")
        self.skip_button.setVisible(outside + unrepresentable > 0)
        self.clip_button.setVisible(outside > 0)
        cannot = (f"{_these(unrepresentable)} cannot be represented" if self.verb == "import" else
                  f"the format cannot hold {_these(unrepresentable)}")
        found = ([f"{_these(outside)} {'lies' if outside == 1 else 'lie'} outside the stimulus"] if outside else []) \
            + ([cannot] if unrepresentable else [])
        said = " and ".join(found)
        self.question_text.setText(f"{said[:1].upper()}{said[1:]}. What should happen?")
        self.question.show()
        (self.clip_button if outside else self.skip_button).setFocus()

    def _cancel(self) -> None:
        self.question.hide()
        self._say(f"Cancelled: nothing was {'imported; the store is unchanged' if self.verb == 'import' else 'written'}.")
        self.cancelled.emit()

    # -- showing --------------------------------------------------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        self.headline.setText(text)
        self.headline.setStyleSheet(f"color: {colour('error')};" if error else "")

    def _show_report_parts(self, shown: bool, items: bool = False) -> None:
        self.table.setVisible(shown)
        self.left_out_title.setVisible(items)
        self.left_out.setVisible(items)
        self.notes.setVisible(shown and bool(self.notes.text()))

    def _fill(self, report: TransferReport) -> None:
        rows = []
        for (file, tier), tally in sorted(report.tallies.items()):
            why = "; ".join(f"{n} {reason}" for reason, n in sorted(tally.left_out.items()))
            extra = [f"{n} {how}" for how, n in sorted(tally.changed.items())]
            if tally.fields_dropped:
                extra.append("written without " + ", ".join(f"{name} ({n})"
                                                            for name, n in sorted(tally.fields_dropped.items())))
            rows.append((file, tier or "—", tally.read, tally.written, sum(tally.left_out.values()),
                         "; ".join(filter(None, [why, *extra]))))
        self.table.set_rows(rows)
        self.table.setColumnHidden(COLUMNS.index("Read"), self.verb == "export")  # an export reads no file
        fitted = (self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
                  + sum(self.table.rowHeight(r) for r in range(self.table.row_count())) + 2)
        self.table.setMaximumHeight(fitted if self.table.row_count() <= FITTED_ROWS else 16777215)
        self.left_out.clear()
        self.left_out.addItems(report.left_out_items)
        if report.left_out > len(report.left_out_items):
            self.left_out.addItem(f"… {report.left_out - len(report.left_out_items)} more, counted above")
        self.left_out_title.setText(f"Left out ({report.left_out})")
        self.notes.setText("\n".join(f"Note: {text}" for text in report.notes))
        self._show_report_parts(True, items=report.left_out > 0)

    # -- what a user sees, for tests and the status bar ---------------------------------------------
    def table_rows(self) -> list[list[str]]:
        return self.table.shown_rows()

    def left_out_texts(self) -> list[str]:
        return [self.left_out.item(i).text() for i in range(self.left_out.count())]


class TransferDialog(QDialog):
    """A window of its own for one transfer (the Annotate menu's import): the panel and a Close button."""

    def __init__(self, title: str, verb: str, runner: TaskRunner, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.panel = TransferPanel(verb, runner, key, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.panel, 1)
        layout.addWidget(buttons)
        self.resize(760, 420)


def labels(n: int) -> str:
    """'1 label', '2 labels'."""
    return "1 label" if n == 1 else f"{n} labels"


def _these(n: int) -> str:
    return "this label" if n == 1 else f"these {labels(n)}"


def _liftable(exc: BaseException, choice: TransferChoice) -> tuple[int, int]:
    """How many labels in question a refusal names that an option of the user's would let through: outside
    their stimulus (--clip or --skip-outside) and not representable (--skip-unrepresentable); (0, 0) when no
    option would lift it."""
    if isinstance(exc, ImportNeedsChoice):
        return ((0 if choice.clip or choice.skip_outside else exc.outside),
                (0 if choice.skip_unrepresentable else exc.unrepresentable))
    if isinstance(exc, ExportRefused) and not choice.skip_unrepresentable:
        return 0, exc.unrepresentable
    return 0, 0

