"""The centre page for an NCP task: the belief stepper over the task's traces, two side by side when
models are compared; a story that comes without an action trace is shown as its text."""
from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from storage.records import StimulusDetail
from widgets.belief_stepper import BeliefStepperView

TraceList = list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]]


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
        layout.addWidget(self.scroll, 1)
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
        if detail is not None:
            goal = "; ".join(a.text or f"{a.entity} {a.property} {a.value}" for a in detail.goal_atoms)
            kind = {True: "false-belief goal", False: "true-belief goal"}.get(detail.meta.get("false_belief"), "goal")
            verdicts = ", ".join(f"{p.model}: {'reached' if p.correct else 'missed'}"
                                 for p in detail.predictions if p.correct is not None)
            self.summary.setText(f"<b>{kind}</b>: {goal or '(none)'}" + (f" — {verdicts}" if verdicts else ""))
            self.summary.setVisible(bool(self._traces or goal))
        for combo in (self.first, self.second):
            combo.setEnabled(bool(self._traces))
        self._show()

    def _show(self, *_args: object) -> None:
        self.scroll.setVisible(bool(self._traces))
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
        self.stepper.set_traces(chosen)
        # the end of a trace is where the goal is judged
        self.stepper.go_last()
