"""The centre page for an NCP task or an ExploreToM story: the belief stepper over its traces, two side by side
when models are compared.

A story also lists its questions beside the stepper (the dataset's expected answer, the engine's answer and
each model's), with its structure and the dataset's prose; clicking a question steps to where the belief it
asks about was last set. A story that comes without an action trace is shown as its text.
"""
from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFrame, QHBoxLayout, QHeaderView, QLabel, QScrollArea,
                               QSplitter, QVBoxLayout, QWidget)

from storage.records import StimulusDetail
from widgets.belief_stepper import BeliefStepperView
from widgets.frame_table import Cell, Column, FrameTableView, as_written
from widgets.palette import qcolour

if TYPE_CHECKING:  # the story importer's stack (polars) loads with the first story shown
    from app.beliefs.stories import QuestionRow

TraceList = list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]]


class StoryQuestions(QWidget):
    """A story's structure and prose, and its questions; a click on a question calls `on_pick` with its row."""

    def __init__(self, on_pick: Callable[[QuestionRow], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._on_pick = on_pick
        self.rows: list[QuestionRow] = []
        self.texts = QLabel()
        self.texts.setWordWrap(True)
        self.texts.setTextFormat(Qt.TextFormat.RichText)
        self.texts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.texts.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.table = FrameTableView()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # a click gives the list focus, so Ctrl+C copies the picked question; the stepper's keys still step
        # (the window's keymap takes them wherever focus is), and Tab passes the list by
        self.table.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.table.setWordWrap(True)
        self.table.rowClicked.connect(self._clicked)
        # a question wraps to the width its column has once laid out, and again whenever that changes
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.hint = QLabel("Click a question to step to where the belief it asks about was last set.")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color:#555")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        texts = QScrollArea()
        texts.setWidgetResizable(True)
        texts.setFrameShape(QFrame.Shape.NoFrame)
        texts.setWidget(self.texts)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(texts)
        questions = QWidget()
        questions_layout = QVBoxLayout(questions)
        questions_layout.setContentsMargins(0, 0, 0, 0)
        questions_layout.addWidget(self.hint)
        questions_layout.addWidget(self.table, 1)
        split.addWidget(questions)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)
        layout.addWidget(split, 1)

    def set_story(self, structure: str, prose: str, rows: list[QuestionRow], current: int) -> None:
        parts = [f"<p><b>Story structure</b> (the tracker's sentences)<br>{escape(structure)}</p>"]
        if prose and prose != structure:
            parts.append(f"<p><b>As the dataset tells it</b><br>{escape(prose)}</p>")
        self.texts.setText("".join(parts))
        self.rows = rows
        models = list(dict.fromkeys(model for row in rows for model, _a, _c in row.model_answers))
        headers = ["Question", "Expected", "Engine", *models]
        shown = []
        for row in rows:
            tip = "\n".join(t for t in (
                row.belief, f"order {row.order}" if row.order else "",
                {True: "false belief", False: "true belief"}.get(row.false_belief, ""),
                f"last set at step {row.belief_step}" if row.belief_step is not None else "never set by any step",
            ) if t)
            answers = {model: (answer, correct) for model, answer, correct in row.model_answers}
            cells = [(row.question, None), (row.expected or "", None), (row.engine or "—", row.engine_matches)]
            cells += [(answers[m][0] or "—", answers[m][1]) if m in answers else ("", None) for m in models]
            shown.append([Cell(text, tooltip=tip, bold=row.stimulus_id == current, background=None if verdict is None
                                else qcolour("match_bg" if verdict else "mismatch_bg")) for text, verdict in cells])
        self.table.set_rows(shown, [Column(h, as_written) for h in headers])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(headers)):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        index = next((i for i, row in enumerate(rows) if row.stimulus_id == current), -1)
        if index >= 0:
            self.table.select_source_row(index)

    def pick(self, row: int) -> None:
        """As a click on question `row` (of the story's, however sorted) does."""
        self.table.select_source_row(row)
        self._clicked(row)

    def _clicked(self, row: int) -> None:
        if 0 <= row < len(self.rows):
            self._on_pick(self.rows[row])


class NcpTaskPage(QWidget):
    """Choose one or two traces of the task (reference, model attempts) and step through them."""

    BOTH = "side by side"

    def __init__(self, traces_of: Callable[[StimulusDetail], TraceList], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.traces_of = traces_of
        self.first = QComboBox()
        self.second = QComboBox()
        self.first.setToolTip("Trace to step through")
        self.second.setToolTip("A second trace, stepped together with the first")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.stepper = BeliefStepperView()
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Trace:"))
        bar.addWidget(self.first, 1)
        bar.addWidget(QLabel("beside:"))
        bar.addWidget(self.second, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        # two panes side by side need more room than a narrow centre has: scroll rather than squeeze the docks
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.stepper)
        self.questions = StoryQuestions(self._question_picked)
        self.questions.hide()
        self.body = QSplitter(Qt.Orientation.Horizontal)
        self.body.addWidget(self.scroll)
        self.body.addWidget(self.questions)
        self.body.setStretchFactor(0, 3)
        self.body.setStretchFactor(1, 2)
        layout.addWidget(self.body, 1)
        # Stories imported from a CSV of texts have no action trace: there is nothing to step, so show the story.
        self.story = QLabel()
        self.story.setWordWrap(True)
        self.story.setTextFormat(Qt.TextFormat.RichText)
        self.story.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.story.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.story.setContentsMargins(8, 8, 8, 8)
        self.story.hide()
        layout.addWidget(self.story, 1)
        self.first.currentIndexChanged.connect(self._show)
        self.second.currentIndexChanged.connect(self._show)
        self._traces: TraceList = []
        self._story_text = ""

    def set_detail(self, detail: StimulusDetail | None) -> None:
        self._traces = self.traces_of(detail) if detail is not None else []
        self._story_text = (detail.text or "") if detail is not None else ""
        for combo in (self.first, self.second):
            combo.blockSignals(True)
            combo.clear()
        for label, steps, _goal in self._traces:
            self.first.addItem(f"{label} ({len(steps)} steps)")
        self.second.addItem("—")
        for label, steps, _goal in self._traces:
            self.second.addItem(f"{label} ({len(steps)} steps)")
        # a model's attempt is what a researcher usually opens a task for; a second one is a choice away
        attempts = [i for i, t in enumerate(self._traces) if t[0] != "reference"]
        self.first.setCurrentIndex(attempts[0] if attempts else 0)
        self.second.setCurrentIndex(0)
        for combo in (self.first, self.second):
            combo.blockSignals(False)
        rows = self._story_rows(detail)
        if detail is not None and rows is not None:   # a story question: the engine's answers to its story
            current = next((r for r in rows if r.stimulus_id == detail.id), None)
            self.summary.setText(_question_summary(detail, current))
            self.summary.setVisible(True)
        elif detail is not None:
            goal = "; ".join(a.text or f"{a.entity} {a.property} {a.value}" for a in detail.goal_atoms)
            kind = {True: "false-belief goal", False: "true-belief goal"}.get(detail.meta.get("false_belief"), "goal")
            verdicts = ", ".join(f"{p.model}: {'reached' if p.correct else 'missed'}"
                                 for p in detail.predictions if p.correct is not None)
            self.summary.setText(f"<b>{kind}</b>: {goal or '(none)'}" + (f" — {verdicts}" if verdicts else ""))
            self.summary.setVisible(bool(self._traces or goal))
        for combo in (self.first, self.second):
            combo.setEnabled(bool(self._traces))
        shown = self.questions.isVisibleTo(self)
        self.questions.setVisible(rows is not None)
        self._show()
        if rows is not None and not shown:   # the questions get room to read in two or three lines each
            width = max(self.body.width(), 600)
            self.body.setSizes([width * 11 // 20, width * 9 // 20])
        if rows is not None and detail is not None:
            structure = detail.meta.get("story_structure") or detail.text or ""
            self.questions.set_story(structure, detail.text or "", rows, detail.id)

    def _story_rows(self, detail: StimulusDetail | None) -> list[QuestionRow] | None:
        """A story's questions with the engine's answers from its reference trace; None for anything else."""
        if detail is None or not self._traces or "story_questions" not in detail.extra:
            return None
        reference = next((steps for label, steps, _goal in self._traces if label == "reference"), self._traces[0][1])
        from app.beliefs.stories import story_question_rows

        return story_question_rows(detail.extra["story_questions"], reference)

    def _question_picked(self, row: QuestionRow) -> None:
        # the summary above says which question is being looked at: the one clicked, not the one opened
        self.summary.setText(_row_summary(row))
        reference = next((i for i, t in enumerate(self._traces) if t[0] == "reference"), None)
        if reference is not None and self.first.currentIndex() != reference:
            self.first.setCurrentIndex(reference)
        if row.belief_step is not None:
            self.stepper.set_step(row.belief_step)

    def _show(self, *_args: object) -> None:
        self.body.setVisible(bool(self._traces))
        self.story.setVisible(not self._traces)
        if not self._traces:
            self.stepper.set_traces([])
            story = escape(self._story_text).replace("\n", "<br>") if self._story_text else "<i>(no text)</i>"
            self.story.setText("<p style='color:#555'>No action trace comes with this story, so there are no "
                               "steps to replay: the story as the dataset tells it.</p>"
                               f"<p style='font-size:15px; line-height:140%'>{story}</p>")
            return
        chosen = [self._traces[self.first.currentIndex()]] if self.first.currentIndex() >= 0 else []
        second = self.second.currentIndex() - 1
        if second >= 0 and second != self.first.currentIndex():
            chosen.append(self._traces[second])
        # beside a story's questions the steps go into a tab, leaving the questions room
        self.stepper.set_traces(chosen, compact=self.questions.isVisibleTo(self))
        # the end of a trace is where the goal is judged
        self.stepper.go_last()


def _question_summary(detail: StimulusDetail, row: QuestionRow | None) -> str:
    """The opened story question: its row in the list when there is one, else what the stimulus says."""
    if row is not None:
        return _row_summary(row)
    return f"<b>Question</b>: {escape(detail.title or '')} — expected <b>{escape(detail.ground_truth or '—')}</b>"


def _row_summary(row: QuestionRow) -> str:
    """One question of the story: its text, the expected and the engine's answers, its order and belief."""
    text = f"<b>Question</b>: {escape(row.question)} — expected <b>{escape(row.expected or '—')}</b>"
    verdict = {True: " ✔", False: " ✘"}.get(row.engine_matches, "")
    text += f", engine <b>{escape(row.engine or '—')}</b>{verdict}"
    kind = {True: "false belief", False: "true belief"}.get(row.false_belief)
    details = [d for d in (f"order {row.order}" if row.order else "", kind or "", row.belief) if d]
    return text + (f" ({escape('; '.join(details))})" if details else "")
