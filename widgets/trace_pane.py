"""One trace's pane of the stepper: title, step header, quirk notes, rooms picture, belief tables, goal
checklist and the list of steps."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QHBoxLayout, QHeaderView, QLabel, QListWidget,
                               QListWidgetItem, QScrollArea, QSizePolicy, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget)

from app.beliefs.replay import BeliefState, StepRecord
from app.beliefs.trace_view import TraceData, audience, false_beliefs
from widgets.belief_table import BeliefTableModel
from widgets.cached_text_delegate import CachedTextDelegate
from widgets.goal_checklist import GoalChecklist
from widgets.rich_text_block import RichTextBlock
from widgets.rooms_canvas import RoomsCanvas
from widgets.stepper_style import FALSE_BG, FALSE_FG
from widgets.palette import colour

ROW_HEIGHT = 38          # a belief cell holds two lines (place, and container)
TABLE_ROWS_SHOWN = 3     # rows of the belief table always in view
CANVAS_MIN_HEIGHT = 76   # the rooms picture shrinks to this and scrolls


class TracePane(QWidget):
    """Everything the stepper shows of one trace at one step; `stepPicked(int)` when a step is clicked."""

    stepPicked = Signal(int)

    def __init__(self, compact: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: TraceData | None = None
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold; font-size: 14px;")
        # Both change on every step: blocks that lay their text out once, not labels that relayout the window.
        self.header = RichTextBlock()
        self.quirk_badge = RichTextBlock(background="#e7f0fd", border="#8fb3e8", color="#1c3d6e", padding=4)
        self.canvas = RoomsCanvas()
        self.first_model = BeliefTableModel(second_order=False)
        self.second_model = BeliefTableModel(second_order=True)
        self.first_table = self._table(self.first_model)
        self.second_table = self._table(self.second_model)
        self.goal = GoalChecklist()
        self.step_list = QListWidget()
        # One line per step: with every row the same height, scrolling to a step needs no layout of the others.
        self.step_list.setUniformItemSizes(True)
        self.step_list.setItemDelegate(CachedTextDelegate(self.step_list))
        self.step_list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.step_list.currentRowChanged.connect(self._row_picked)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.first_table, "First-order beliefs")
        self.tabs.addTab(self.second_table, "Second-order beliefs")
        table = self.first_table   # the world and two people (a story's usual cast) in view without scrolling
        self.tabs.setMinimumHeight(self.tabs.tabBar().sizeHint().height() + table.horizontalHeader().sizeHint().height()
                                   + TABLE_ROWS_SHOWN * ROW_HEIGHT + table.horizontalScrollBar().sizeHint().height() + 30)
        legend = QLabel(f"<span style='background:{colour('changed_bg')}'>&nbsp;yellow&nbsp;</span> changed at this "
                        f"step &nbsp; <span style='background:{colour('false_bg')};color:{colour('false_fg')}'>"
                        "&nbsp;⚠ red&nbsp;</span> false belief "
                        "(differs from the world) &nbsp; ? = no longer knows where")
        legend.setWordWrap(True)  # else its one long line sets the pane's minimum width
        centre = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        self._top = top
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        self.title.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        for label in (self.title, self.header, self.quirk_badge):
            top_layout.addWidget(label)
        # the rooms scroll within their area rather than squeezing the belief table to one row on a laptop
        self.canvas_area = QScrollArea()
        self.canvas_area.setWidget(self.canvas)
        self.canvas_area.setWidgetResizable(True)
        self.canvas_area.setFrameShape(QFrame.Shape.NoFrame)
        self.canvas_area.setMinimumHeight(CANVAS_MIN_HEIGHT)
        top_layout.addWidget(self.canvas_area, 1)
        top_layout.addStretch(0)
        centre.addWidget(top)
        centre.addWidget(self.tabs)
        centre.setStretchFactor(0, 3)
        centre.setStretchFactor(1, 2)
        column = QWidget()
        column_layout = QVBoxLayout(column)
        column_layout.setContentsMargins(0, 0, 0, 0)
        column_layout.addWidget(centre, 1)
        column_layout.addWidget(legend)
        column_layout.addWidget(self.goal)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        if compact:
            self.tabs.addTab(self.step_list, "Steps")
            layout.addWidget(column)
        else:
            outer = QSplitter(Qt.Orientation.Horizontal)
            outer.addWidget(self.step_list)
            outer.addWidget(column)
            outer.setSizes([260, 900])
            layout.addWidget(outer)

    @staticmethod
    def _table(model: BeliefTableModel) -> QTableView:
        table = QTableView()
        table.setModel(model)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        table.setWordWrap(False)  # cells break lines themselves; wrapping layout is slow
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        table.horizontalHeader().setDefaultSectionSize(118)
        table.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        table.setMouseTracking(True)
        return table

    def set_data(self, data: TraceData) -> None:
        self.data = data
        self.title.setText(data.label)
        room_rows = math.ceil(max(1, len(data.rooms)) / min(max(1, len(data.rooms)), 3 if len(data.rooms) <= 6 else 4))
        self.canvas.setMaximumHeight(room_rows * 165 + 24)
        self.canvas_area.setMaximumHeight(room_rows * 165 + 24)
        self._top.setMaximumHeight(room_rows * 165 + 24 + 150)
        self.first_model.set_trace(data)
        self.second_model.set_trace(data)
        self.goal.set_timeline(data.timeline)
        self.step_list.blockSignals(True)
        self.step_list.clear()
        if data.replay is not None:
            for record in data.replay.records:
                self.step_list.addItem(self._step_item(record))
        self.step_list.blockSignals(False)
        if data.error:
            self.header.setText(f"<span style='color:#9b1c10'>Cannot replay this trace: {_esc(data.error)}</span>")

    @staticmethod
    def _step_item(record: StepRecord) -> QListWidgetItem:
        marks = ""
        if not record.returned:
            marks += " ✗"
        if record.quirks:
            marks += " ℹ"
        item = QListWidgetItem(f"{record.index:>3}  {record.label()}{marks}")
        tips = []
        if not record.returned:
            item.setForeground(QBrush(FALSE_FG))
            item.setBackground(QBrush(FALSE_BG))
            tips.append("failed, nothing changed: " + "; ".join(record.failed_preconditions))
        tips += [f"quirk — {n.quirk.title}: {n.detail}" for n in record.quirks]
        tips += list(record.outcome.story_sentences)
        item.setToolTip("\n".join(tips))
        return item

    def _row_picked(self, row: int) -> None:
        if row >= 0:
            self.stepPicked.emit(row)

    def show_step(self, step: int) -> None:
        data = self.data
        if data is None or data.replay is None or data.count == 0:
            return
        index = min(step, data.count - 1)
        record = data.replay.records[index]
        state = data.replay.state_at(index, shared=True)
        beyond = step >= data.count
        self.header.setText(self._header_html(record, data.count, beyond) + _false_beliefs_html(data, state))
        notes = record.quirks
        self.quirk_badge.setVisible(bool(notes))
        if notes:
            self.quirk_badge.setText("<br>".join(
                f"ℹ <b>Reference quirk — {_esc(n.quirk.title)}.</b> {_esc(n.detail)}" for n in notes))
            self.quirk_badge.setToolTip("\n\n".join(f"{n.quirk.title}: {n.quirk.explanation}" for n in notes))
        self.canvas.set_step(data, state, record)
        self.first_model.set_step(state, record)
        self.second_model.set_step(state, record)
        if data.timeline is not None:
            self.goal.set_step(index)
        self.step_list.blockSignals(True)
        self.step_list.setCurrentRow(index)
        self.step_list.blockSignals(False)

    @staticmethod
    def _header_html(record: StepRecord, count: int, beyond: bool) -> str:
        outcome = record.outcome
        if outcome.returned:
            status = "<span style='color:#2f9e44'>✔ done</span>"
        else:
            reasons = _esc("; ".join(outcome.failed_preconditions))
            # a failed talk can still have taught a peeker (its quirk note says so)
            status = ("<span style='color:#9b1c10'><b>✗ failed</b> — "
                      + ("nothing changed: " if not outcome.changes_flat else "") + reasons + "</span>")
        lines = [f"<b>Step {record.index}</b> (of 0–{count - 1}) · <code>{_esc(record.label())}</code> {status}"
                 + (" <i>(this trace ended here)</i>" if beyond else "")]
        if outcome.logged_action != outcome.action:
            lines[0] += f" <i>(logged by the reference as {outcome.logged_action})</i>"
        if outcome.story_sentences:
            lines.append("<i>“" + _esc(" ".join(outcome.story_sentences)) + "”</i>")
        if outcome.returned:
            who = audience(outcome)
            parts = [f"<b>{who.verb}:</b> {_esc(', '.join(who.attentive)) or 'nobody'}"]
            if who.peeking:
                parts.append(f"<b>peeking:</b> {_esc(', '.join(who.peeking))}")
            if who.distracted:
                parts.append(f"<b>distracted (missed it):</b> {_esc(', '.join(who.distracted))}")
            lines.append(" · ".join(parts))
        return "<br>".join(lines)


def _false_beliefs_html(data: TraceData, state: BeliefState) -> str:
    """A line naming the first-order beliefs the world contradicts right now."""
    shown, count = false_beliefs(data, state)
    if not shown:
        return ""
    more = f" and {count - len(shown)} more" if count > len(shown) else ""
    # the palette's false-belief ink: dark red on a light window, light red on a dark one
    return (f"<br><span style='color:{colour('false_fg')}'><b>⚠ False belief:</b> " + _esc("; ".join(shown)) + more
            + "</span>")


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
