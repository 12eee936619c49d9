"""Ask a live model about the current stimulus (or a batch of stimuli): the panel renders and asks.

Settings (base URL, model, the *name* of the environment variable holding the API key, the answer size
limit, edited prompts) are kept in the window's typed settings (`app.settings`); the key itself never is.
The asking, saving and resuming is `app.live.service.LiveService`'s: the panel gathers the choices into
`AskOptions`, runs the service on the window's worker API (`widgets.tasks.TaskRunner`), and shows what comes
back. A streamed answer is appended at the end of the view in pieces (never re-laid-out as a whole), Cancel
stops at once, and a failure (endpoint down, HTTP error, timeout, a cut-off or oversized answer) is shown as a
message, with credentials scrubbed, while the window stays responsive.

An NCP task is acted out with the six tools on the belief engine, each call listed as it happens; an
AgentViSS scene is role-played as the character chosen (verbalised vision, VV).
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QTextCursor
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QPlainTextEdit, QProgressBar, QPushButton, QSpinBox, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from app.benchmarks import kind_profile
from app.live import LiveCancelled, LiveError, LiveSettings, NcpStep, resolve_api_key
from app.live.batch import BatchProgress, BatchReport
from app.live.errors import IncompleteAnswer, scrub_secrets
from app.live.requests import (ROLE_PLAY_TASK, Asking, condition_for, cost_text, goal_summary, kind_of, roles_of,
                               template_for)
from app.live.requests import templates as prompt_templates
from app.live.service import AskOptions, LiveResult, LiveService
from app.ncp_live import step_label
from app.prompts import FRIENDBENCH_FORCED_CHOICE, PromptTemplate
from storage.records import StimulusDetail
from widgets.settings_store import SettingsStore
from widgets.tasks import CancelToken, TaskRunner

MODALITIES = ("text", "audio", "video")
ERROR_STYLE = "color:#b71c1c;font-weight:bold"
DEFAULT_MAX_STEPS = 30
OK_COLOUR, FAILED_COLOUR = QColor("#1b5e20"), QColor("#b71c1c")
# Answer text laid out per event-loop turn: a few ms of work, so the window never stalls on a long answer.
APPEND_SLICE_CHARS = 16 * 1024
# The view shows the end of an answer, at most this much of it: laying out (and scrolling) a document grows
# with its size, so a 16 MB answer would stall the window; the whole answer is kept and can be saved.
VIEW_TAIL_CHARS = 256 * 1024
# A line longer than this is shown as several (display only): Qt lays out a paragraph as a whole, so text
# without line breaks (a JSON blob) must not become one paragraph of megabytes.
VIEW_LINE_CHARS = 2048


class LivePanel(QWidget):
    """Settings, prompt, Send/Cancel with a streamed answer, and batch runs with progress and resume."""

    statusMessage = Signal(str)
    answerFinished = Signal(object)    # the LiveResult of one finished ask, None when it failed
    batchFinished = Signal(object)     # app.live.BatchReport

    def __init__(self, service: LiveService | None = None, parent: QWidget | None = None,
                 settings: SettingsStore | None = None, runner: TaskRunner | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self.settings = settings or SettingsStore(QSettings())
        self.runner = runner or TaskRunner(self)
        self.detail: StimulusDetail | None = None
        self.batch_ids: list[int] = []
        self._token: CancelToken | None = None
        self._batch_stop: threading.Event | None = None   # set by Cancel batch; the batch then reports back
        self._error_in_status = False  # the window's status bar shows this panel's last error
        self.last_result: LiveResult | None = None
        self._pending: deque[str] = deque()    # answer text waiting for its slice (see `_drain_answer`)
        self._pending_chars = 0
        self._queued_chars = 0                 # characters queued for the view since the answer began
        self._drain = QTimer(self)
        self._drain.setInterval(0)
        self._drain.timeout.connect(self._drain_answer)
        self._received: list[str] = []         # the whole answer as it came, for "Save answer…"
        self._shown_chars = 0                  # characters in the view (its tail of the answer)
        self._line_chars = 0                   # characters in the view's last line
        self.base_url = QLineEdit()
        self.model = QLineEdit()
        self.key_env = QLineEdit()
        self.key_status = QLabel()
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(0.5, 600)
        self.timeout.setValue(60)
        self.timeout.setSuffix(" s")
        self.modality = QComboBox()
        self.modality.addItems(MODALITIES)
        self.prompt_setting = QComboBox()
        self.prompt_setting.addItems(["no", "basic", "enhance"])
        self.stream = QCheckBox("stream")
        self.stream.setChecked(True)
        self.role = QComboBox()
        self.role.setToolTip("The character the model plays")
        self.role_task = QLineEdit(ROLE_PLAY_TASK)
        self.role_task.setToolTip("What the character is asked to do (the template's {task})")
        self.max_steps = QSpinBox()
        self.max_steps.setRange(1, 500)
        self.max_steps.setValue(DEFAULT_MAX_STEPS)
        self.max_steps.setToolTip("Tool calls the model may make before the attempt is stopped")
        self.max_answer_kb = QSpinBox()
        self.max_answer_kb.setRange(1, 64 * 1024)
        self.max_answer_kb.setSuffix(" KB")
        self.max_answer_kb.setToolTip("The longest answer kept; reading stops there and the attempt is kept as failed")
        self.max_answer_kb.valueChanged.connect(
            lambda kb: self.settings.update(live_max_answer_kb=kb))
        for field in (self.base_url, self.model, self.key_env):
            field.editingFinished.connect(self.save_settings)
        self.key_env.textChanged.connect(lambda _t: self._show_key_status())
        form = QFormLayout()
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key variable", self.key_env)
        form.addRow("", self.key_status)
        form.addRow("Timeout", self.timeout)
        form.addRow("Answer limit", self.max_answer_kb)
        conditions = QHBoxLayout()
        conditions.addWidget(self.modality)
        self.prompt_label = QLabel("EchoMind prompt")
        conditions.addWidget(self.prompt_label)
        conditions.addWidget(self.prompt_setting)
        conditions.addWidget(self.stream)
        form.addRow("Condition", conditions)
        form.addRow("Role", self.role)
        form.addRow("Role task", self.role_task)
        form.addRow("Max steps", self.max_steps)
        self.form = form
        self.template_name = QLabel()
        self.template_name.setWordWrap(True)   # a long description wraps rather than widening the dock
        self.system_edit = QPlainTextEdit()
        self.user_edit = QPlainTextEdit()
        self.system_edit.setMaximumHeight(60)
        self.user_edit.setMaximumHeight(110)
        reset = QPushButton("Reset prompt")
        reset.clicked.connect(self._reset_template)
        prompt_box = QGroupBox("Prompt template")
        pl_ = QVBoxLayout(prompt_box)
        head = QHBoxLayout()
        head.addWidget(self.template_name, 1)
        head.addWidget(reset)
        pl_.addLayout(head)
        pl_.addWidget(self.system_edit)
        pl_.addWidget(self.user_edit)
        self.send_button = QPushButton("Send")
        self.send_button.clicked.connect(self.send)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QHBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.cancel_button)
        self.steps = QTreeWidget()
        self.steps.setHeaderLabels(["#", "Action", "Result", "What happened"])
        self.steps.setRootIsDecorated(False)
        self.steps.setMinimumHeight(120)
        # a long story sentence scrolls sideways rather than being cut (an item view cannot wrap it)
        self.steps.header().setStretchLastSection(False)
        for column, width in ((0, 30), (1, 230), (2, 55)):
            self.steps.setColumnWidth(column, width)
        self.goal = QLabel()
        self.goal.setWordWrap(True)
        self.goal.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer = QPlainTextEdit()
        self.answer.setReadOnly(True)
        self.answer.setPlaceholderText("The model's answer appears here.")
        self.answer_note = QLabel()
        self.answer_note.setVisible(False)
        self.save_answer_button = QPushButton("Save answer…")
        self.save_answer_button.setToolTip("Write the whole answer, as it arrived, to a text file")
        self.save_answer_button.setVisible(False)
        self.save_answer_button.clicked.connect(self._save_answer)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 32)
        self.concurrency.setValue(4)
        self.concurrency.setPrefix("parallel ")
        self.batch_button = QPushButton("Run batch")
        self.batch_button.clicked.connect(self.run_batch)
        self.batch_cancel = QPushButton("Cancel batch")
        self.batch_cancel.setEnabled(False)
        self.batch_cancel.clicked.connect(self.cancel_batch)
        self.batch_progress = QProgressBar()
        self.batch_label = QLabel("No batch list.")
        self.batch_label.setWordWrap(True)
        batch_box = QGroupBox("Batch over the listed stimuli")
        batch_box.setToolTip("Asks the model about every stimulus the table lists; already answered ones are "
                             "skipped, so a run resumes")
        bl = QVBoxLayout(batch_box)
        row = QHBoxLayout()   # the button first: a narrow dock cuts the row's right end, not what is pressed
        row.addWidget(self.batch_button)
        row.addWidget(self.batch_cancel)
        row.addWidget(self.concurrency)
        bl.addLayout(row)
        bl.addWidget(self.batch_progress)
        bl.addWidget(self.batch_label)
        # what is pressed (Send, Run batch) and what went wrong sit under the settings, in view without
        # scrolling on a laptop; the prompt and the answer take the room below
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(batch_box)
        layout.addWidget(self.message)
        layout.addWidget(prompt_box)
        layout.addWidget(self.goal)
        layout.addWidget(self.steps, 2)
        layout.addWidget(self.answer, 1)
        tail_row = QHBoxLayout()
        tail_row.addWidget(self.answer_note, 1)
        tail_row.addWidget(self.save_answer_button)
        layout.addLayout(tail_row)
        self._episode = 0
        self.load_settings()
        self._template: PromptTemplate = FRIENDBENCH_FORCED_CHOICE
        self._show_template(self._template)
        self._show_kind_rows(None)

    # ----- settings --------------------------------------------------------------------------------------
    def live_settings(self) -> LiveSettings:
        return LiveSettings(self.base_url.text().strip(), self.model.text().strip(), self.key_env.text().strip())

    def set_live_settings(self, settings: LiveSettings) -> None:
        self.base_url.setText(settings.base_url)
        self.model.setText(settings.model)
        self.key_env.setText(settings.api_key_env)
        self.save_settings()

    def load_settings(self) -> None:
        stored = self.settings.load()
        # a value never set is the live client's default
        chosen = {"base_url": stored.live_base_url, "model": stored.live_model, "api_key_env": stored.live_api_key_env}
        values = LiveSettings.from_dict({k: v for k, v in chosen.items() if v is not None})
        self.base_url.setText(values.base_url)
        self.model.setText(values.model)
        self.key_env.setText(values.api_key_env)
        self.max_answer_kb.setValue(stored.live_max_answer_kb)
        self._show_key_status()

    def save_settings(self) -> None:
        """Store base URL, model and the key's variable name (never the key)."""
        live = self.live_settings()
        self.settings.update(live_base_url=live.base_url, live_model=live.model, live_api_key_env=live.api_key_env)

    def _show_key_status(self) -> None:
        _key, where = resolve_api_key(self.live_settings())
        self.key_status.setText(f"key: {where}")

    # ----- templates -------------------------------------------------------------------------------------
    def _stored_template(self, base: PromptTemplate) -> PromptTemplate:
        stored = self.settings.load().live_templates.get(base.name, {})
        system, user = stored.get("system"), stored.get("user")
        try:
            return base.edited(system, user) if system is not None or user is not None else base
        except ValueError:
            return base

    def _show_template(self, template: PromptTemplate) -> None:
        self._template = template
        shown = self._stored_template(template)
        self.template_name.setText(f"{template.name} — {template.description}")
        self.system_edit.setPlainText(shown.system)
        self.user_edit.setPlainText(shown.user)

    def current_template(self) -> PromptTemplate:
        """The edited template (stored by name); raises ValueError for a broken format string."""
        edited = self._template.edited(self.system_edit.toPlainText(), self.user_edit.toPlainText())
        templates = dict(self.settings.load().live_templates)
        templates[edited.name] = {"system": edited.system, "user": edited.user}
        self.settings.update(live_templates=templates)
        return edited

    def _reset_template(self) -> None:
        templates = dict(self.settings.load().live_templates)
        templates.pop(self._template.name, None)
        self.settings.update(live_templates=templates)
        self._show_template(self._template)

    # ----- one stimulus ----------------------------------------------------------------------------------
    def set_detail(self, detail: StimulusDetail | None) -> None:
        """Ask about `detail` next; what the panel said about the last stimulus's question goes (a batch's
        word stays while it runs: it is about the batch, not the stimulus shown)."""
        if (detail is None or self.detail is None or detail.id != self.detail.id) and not self.busy() \
                and not self.batch_running():
            self._show_info("")
        self.detail = detail
        if detail is not None:
            self._show_template(template_for(detail))
            preferred = kind_of(detail).preferred_modality
            if preferred:
                self.modality.setCurrentText(preferred)
        self._show_kind_rows(detail)

    def _show_kind_rows(self, detail: StimulusDetail | None) -> None:
        """Offer the choices the shown stimulus is asked with: a role to play, a step limit, the step list."""
        kind = kind_of(detail) if detail is not None else None
        asking = kind.asking if kind is not None else None
        role_play, tools = asking is Asking.ROLE_PLAY, asking is Asking.TOOLS
        if role_play:
            chosen = self.role.currentText()
            self.role.clear()
            self.role.addItems(roles_of(detail))  # type: ignore[arg-type]
            if chosen:
                self.role.setCurrentText(chosen)
        for widget, shown in ((self.role, role_play), (self.role_task, role_play), (self.max_steps, tools)):
            self.form.setRowVisible(widget, shown)
        self.steps.setVisible(tools)
        # a prompt setting (no, basic, enhance) is asked with only by the kinds that take one (EchoMind's)
        for widget in (self.prompt_label, self.prompt_setting):
            widget.setVisible(kind is not None and kind.prompt_settings)
        self.goal.setVisible(tools)
        self.goal.setText(goal_summary(detail) if tools else "")  # type: ignore[arg-type]
        self.modality.setEnabled(kind is None or kind.modality)

    def busy(self) -> bool:
        return self._token is not None

    def _show_error(self, text: str) -> None:
        text = scrub_secrets(text)
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setText(text)
        self.statusMessage.emit(text)
        self._error_in_status = True

    def _show_info(self, text: str) -> None:
        """Say how things stand now; an error this panel put in the window's status bar is no longer so."""
        self.message.setStyleSheet("")
        self.message.setText(text)
        if self._error_in_status:
            self._error_in_status = False
            self.statusMessage.emit("")

    def _choices(self) -> dict[str, str]:
        return {"modality": self.modality.currentText(), "prompt_setting": self.prompt_setting.currentText(),
                "role": self.role.currentText()}

    def _options(self, template: PromptTemplate) -> AskOptions:
        """Everything a worker needs to ask, read from the widgets and settings here on the GUI thread.
        Stimuli of another kind than the shown one use their own (possibly edited) template."""
        stored = {t.name: self._stored_template(t) for t in prompt_templates()}
        stored[template.name] = template
        choices = self._choices()
        return AskOptions(settings=self.live_settings(), timeout_s=self.timeout.value(),
                          stream=self.stream.isChecked(), modality=choices["modality"],
                          prompt_setting=choices["prompt_setting"], role=choices["role"],
                          role_task=self.role_task.text().strip() or ROLE_PLAY_TASK,
                          max_steps=self.max_steps.value(), max_answer_bytes=self.max_answer_kb.value() * 1024,
                          templates=stored)

    def _ready_template(self) -> PromptTemplate | None:
        """The prompt template to send once the model is named and the template is valid (settings saved);
        None after saying what is missing."""
        if not self.model.text().strip():
            self._show_error("Name the model to ask (the endpoint's model id).")
            return None
        try:
            template = self.current_template()
        except ValueError as exc:
            self._show_error(str(exc))
            return None
        if self.service is None:
            self._show_error("No store to keep the answers in.")
            return None
        self.save_settings()
        return template

    def send(self) -> None:
        """Ask about the current stimulus on a worker."""
        if self.detail is None:
            self._show_error("Select a stimulus first.")
            return
        template = self._ready_template()
        if template is None:
            return
        detail, options, service = self.detail, self._options(template), self.service
        condition = condition_for(detail, self._choices())
        asking = kind_of(detail).asking
        if asking is Asking.ROLE_PLAY and not condition["context"]:
            self._show_error("This scene names no character to play.")
            return
        self._episode += 1
        self._clear_answer()
        self.steps.clear()
        model = options.settings.model
        if asking is Asking.TOOLS:
            self._show_info(f"{model} is acting on the task (at most {options.max_steps} tool calls)…")
        elif asking is Asking.ROLE_PLAY:
            self._show_info(f"{model} plays {condition['context']}…")
        else:
            self._show_info(f"Asking {model} at {options.settings.base_url}…")
        self.send_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        def work(token: CancelToken, progress: Callable[[float, object], None]) -> LiveResult:
            return service.ask(detail, options, token,  # type: ignore[union-attr]
                               on_delta=lambda piece: progress(0.0, piece), on_step=lambda step: progress(0.0, step))

        episode = self._episode
        self._token = self.runner.submit("live", work, self._finished, self._failed,
                                         on_progress=lambda _f, payload: self._arrived(episode, payload),
                                         with_progress=True)

    def _arrived(self, episode: int, payload: object) -> None:
        """A piece of streamed text (several frames' worth) or an NCP tool call came in: show it."""
        if episode != self._episode or not self.busy():
            return
        if isinstance(payload, NcpStep):
            self._add_step(payload)
        elif isinstance(payload, str) and payload:
            self._append_answer(payload)

    def _append_answer(self, piece: str) -> None:
        """Queue text for the end of the view; it goes in a slice per event-loop turn (`_drain_answer`), so
        a fast or huge answer never holds the window for longer than one slice takes to lay out."""
        self._received.append(piece)
        self._pending.append(piece)
        self._pending_chars += len(piece)
        self._queued_chars += len(piece)
        if not self._drain.isActive():
            self._drain.start()

    def _drain_answer(self) -> None:
        """Put at most `APPEND_SLICE_CHARS` of the queued text at the end of the view, without moving the
        view's own cursor, so only the new text is laid out; text the view's tail would drop at once is never
        laid out, and the view keeps only the answer's last `VIEW_TAIL_CHARS`."""
        if self._pending_chars > VIEW_TAIL_CHARS:   # far behind: only the end of what waits will be shown
            while self._pending and self._pending_chars - len(self._pending[0]) >= VIEW_TAIL_CHARS:
                self._pending_chars -= len(self._pending.popleft())
            first = self._pending[0]
            newline = first.find("\n", 0, VIEW_LINE_CHARS)
            if 0 <= newline < len(first) - 1:   # begin at a line's start, not in the middle of one
                self._pending[0] = first[newline + 1:]
                self._pending_chars -= newline + 1
            self.answer.clear()
            self._shown_chars = self._line_chars = 0
        take, budget = [], APPEND_SLICE_CHARS
        while self._pending and budget > 0:
            piece = self._pending.popleft()
            if len(piece) > budget:
                piece, rest = piece[:budget], piece[budget:]
                self._pending.appendleft(rest)
            take.append(piece)
            budget -= len(piece)
        if take:
            text = "".join(take)
            self._pending_chars -= len(text)
            cursor = QTextCursor(self.answer.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(self._with_short_lines(text))
            self._shown_chars += len(text)
            if self._shown_chars > VIEW_TAIL_CHARS + APPEND_SLICE_CHARS:
                self._trim_view()
        self._show_tail_note()
        if not self._pending:
            self._drain.stop()

    def _with_short_lines(self, text: str) -> str:
        """`text` with a line break after every `VIEW_LINE_CHARS` characters of an unbroken line (the view's
        own wrapping looks the same; the saved answer keeps the text as it came)."""
        out, start = [], 0
        while start < len(text):
            newline = text.find("\n", start)
            end = len(text) if newline < 0 else newline + 1
            room = VIEW_LINE_CHARS - self._line_chars
            if end - start <= room:
                out.append(text[start:end])
                self._line_chars = 0 if newline >= 0 else self._line_chars + end - start
                start = end
            else:
                out.append(text[start:start + room] + "\n")
                self._line_chars = 0
                start += room
        return "".join(out)

    def _trim_view(self) -> None:
        """Drop whole lines from the top of the view until it holds about `VIEW_TAIL_CHARS` characters."""
        document = self.answer.document()
        excess = self._shown_chars - VIEW_TAIL_CHARS
        block = document.findBlock(min(excess, document.characterCount() - 1))
        cut = block.position()
        if cut <= 0:
            return
        cursor = QTextCursor(document)
        cursor.setPosition(cut, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self._shown_chars = document.characterCount() - 1

    def _show_tail_note(self) -> None:
        total = self._queued_chars
        trimmed = total > self._shown_chars + self._pending_chars
        self.answer_note.setVisible(trimmed)
        self.save_answer_button.setVisible(trimmed)
        if trimmed:
            self.answer_note.setText(f"Showing the end of the answer: about its last {self._shown_chars:,} of "
                                     f"{total:,} characters (Save answer… writes all of it).")

    def _save_answer(self) -> None:
        from PySide6.QtWidgets import QFileDialog
        path, _ = QFileDialog.getSaveFileName(self, "Save the whole answer", "answer.txt", "Text (*.txt)")
        if path:
            self.save_answer_to(path)

    def save_answer_to(self, path: str) -> None:
        """Write the whole answer, as it arrived, to `path` (UTF-8)."""
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(self._received)

    def answer_text(self) -> str:
        """The whole answer as it arrived (the view may show only its end)."""
        return "".join(self._received)

    def answer_complete(self) -> bool:
        """True once every piece of the answer that arrived is in the view (or was passed over for its tail)."""
        return not self._pending

    def _clear_answer(self) -> None:
        self._drain.stop()
        self._pending.clear()
        self._received.clear()
        self._pending_chars = self._queued_chars = self._shown_chars = self._line_chars = 0
        self.answer.clear()
        self._show_tail_note()

    def _show_answer(self, text: str) -> None:
        """The final answer in the view. Streamed pieces are the answer's text in order, so when as many
        characters were queued the view already holds it (or soon will); otherwise it is put in afresh,
        through the same slices."""
        if self._queued_chars != len(text):
            self._clear_answer()
            self._append_answer(text)
        if self._pending_chars <= APPEND_SLICE_CHARS:  # a short rest goes in now, before anyone looks
            self._drain_answer()

    def _add_step(self, step: NcpStep) -> None:
        """One tool call in the list: its number, the call, ok or failed, and what the world said."""
        item = QTreeWidgetItem([str(self.steps.topLevelItemCount() + 1), step_label(step),
                                "ok" if step.returned else "failed", step.message])
        item.setForeground(2, QBrush(OK_COLOUR if step.returned else FAILED_COLOUR))
        for column in (1, 3):
            item.setToolTip(column, f"{step_label(step)}\n{step.message}")
        self.steps.addTopLevelItem(item)
        self.steps.resizeColumnToContents(1)
        self.steps.setColumnWidth(1, min(self.steps.columnWidth(1), 320))
        self.steps.resizeColumnToContents(3)
        rest = self.steps.viewport().width() - sum(self.steps.columnWidth(c) for c in range(3))
        self.steps.setColumnWidth(3, max(self.steps.columnWidth(3), rest))
        self.steps.scrollToItem(item)

    def cancel(self) -> None:
        self._episode += 1
        if self._token is not None:
            self._token.cancel()
        self.runner.cancel("live")
        self._idle()
        self._show_info("Cancelled.")

    def _idle(self) -> None:
        self._token = None
        self.send_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def _finished(self, result: LiveResult) -> None:
        self._idle()
        self.last_result = result
        self._show_answer(result.text)
        if kind_profile(result.kind).asking is Asking.TOOLS:
            self._show_attempt(result)
            return
        verdict = "" if result.correct is None else (" — right" if result.correct else " — wrong")
        parsed = result.answer if result.answer not in (None, "") else "unparsed"
        saved = " Saved as a live run." if result.prediction_id is not None else ""
        self._show_info(f"Answer: {parsed if len(parsed) < 60 else parsed[:57] + '…'}{verdict} "
                        f"({cost_text(result.latency_s, result.tokens_in, result.tokens_out)}).{saved}")
        self._announce(result)

    def _show_attempt(self, result: LiveResult) -> None:
        """The finished NCP attempt: every call (the list is rebuilt from the result) and the verdict."""
        self.steps.clear()
        for step in result.steps:
            self._add_step(step)
        missing = [text for text, holds in result.atoms if not holds]
        if result.correct:
            verdict = "Goal reached"
        elif missing:
            verdict = "Goal not reached (" + "; ".join(missing) + " does not hold)"
        else:
            verdict = "Goal not reached (the beliefs hold, but the world does not match the task's true/false belief)"
        stopped = {"model_stopped": "the model stopped", "step_limit": "step limit reached"}.get(
            result.stopped, result.stopped)
        failed = sum(1 for s in result.steps if not s.returned)
        saved = " Saved as a live run with its trace." if result.prediction_id is not None else ""
        self._show_info(f"{verdict} after {len(result.steps)} tool calls ({failed} failed; {stopped}; "
                        f"{cost_text(result.latency_s, result.tokens_in, result.tokens_out)}).{saved}")
        self._announce(result)

    def _announce(self, result: LiveResult) -> None:
        """Say the answer is in (the window hears of what was stored from the change channel)."""
        self.answerFinished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self._idle()
        if isinstance(exc, LiveCancelled):
            self._show_info("Cancelled.")
        elif isinstance(exc, IncompleteAnswer):
            self._show_answer(exc.partial_text)
            self._show_error(str(exc))
        elif isinstance(exc, LiveError):
            self._show_error(str(exc))
        else:
            self._show_error(f"Could not ask: {scrub_secrets(str(exc))}")
        self.answerFinished.emit(None)

    # ----- batches ---------------------------------------------------------------------------------------
    def set_batch_ids(self, ids: Sequence[int]) -> None:
        """The stimuli a batch runs over (e.g. the filtered list)."""
        self.batch_ids = list(ids)
        self.batch_label.setText(f"{len(self.batch_ids)} stimuli listed; a batch skips those the model has "
                                 f"already answered.")

    def batch_running(self) -> bool:
        return self._batch_stop is not None

    def run_batch(self) -> None:
        """Ask about every listed stimulus the model has not answered yet, a few at a time, on a worker."""
        if not self.batch_ids:
            self._show_error("No stimuli to run (the list is empty).")
            return
        template = self._ready_template()
        if template is None:
            return
        ids, options, service, workers = list(self.batch_ids), self._options(template), self.service, \
            self.concurrency.value()
        stop = threading.Event()

        def work(token: CancelToken, progress: Callable[[float, object], None]) -> BatchReport:
            def counted(p: BatchProgress) -> None:
                progress((p.done + p.failed + p.skipped) / max(1, p.total), p)

            def finished_one(sid: int, _result: LiveResult | None, error: str | None) -> None:
                if error:
                    progress(-1.0, (sid, error))

            # Cancel batch stops the batch, which still reports what it did; the runner's token (a closing
            # window) drops the report
            return service.run_batch(ids, options, lambda: stop.is_set() or token(),  # type: ignore[union-attr]
                                     workers, on_progress=counted, on_result=finished_one)

        self.batch_button.setEnabled(False)
        self.batch_cancel.setEnabled(True)
        self.batch_progress.setRange(0, len(ids))
        self.batch_progress.setValue(0)
        self.batch_label.setText(f"0 answered, 0 failed, 0 skipped of {len(ids)}.")  # not the last run's counts
        self._show_info(f"Batch of {len(ids)} started for {options.settings.model}; stimuli it has answered "
                        f"are skipped.")
        self._batch_stop = stop
        self.runner.submit("batch", work, self._batch_finished, self._batch_failed,
                           on_progress=lambda f, payload: self._batch_progress(len(ids), f, payload), with_progress=True)

    def cancel_batch(self) -> None:
        if self._batch_stop is not None:
            self._batch_stop.set()
        self._show_info("Cancelling the batch: running requests stop, the rest are not sent.")

    def _batch_progress(self, total: int, fraction: float, payload: object) -> None:
        """Counts (a `BatchProgress`) or one stimulus's error (stimulus id, message)."""
        if isinstance(payload, BatchProgress):
            self.batch_progress.setValue(round(fraction * total))
            self.batch_label.setText(f"{payload.done} answered, {payload.failed} failed, {payload.skipped} skipped "
                                     f"of {payload.total}.")
        elif isinstance(payload, tuple):
            sid, error = payload
            self.message.setStyleSheet(ERROR_STYLE)
            self.message.setText(f"stimulus {sid}: {error}")

    def _batch_finished(self, report: BatchReport) -> None:
        self._batch_stop = None
        self.batch_button.setEnabled(True)
        self.batch_cancel.setEnabled(False)
        self.batch_progress.setValue(self.batch_progress.maximum() if not report.cancelled
                                     else self.batch_progress.value())
        state = "cancelled" if report.cancelled else "finished"
        self._show_info(f"Batch {state}: {len(report.results)} answered, {len(report.errors)} failed, "
                        f"{report.skipped} skipped. Run again to resume.")
        self.batchFinished.emit(report)

    def _batch_failed(self, exc: BaseException) -> None:
        self._batch_stop = None
        self.batch_button.setEnabled(True)
        self.batch_cancel.setEnabled(False)
        self._show_error(f"Batch stopped: {scrub_secrets(str(exc))}")
