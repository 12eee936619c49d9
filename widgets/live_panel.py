"""Ask a live model about the current stimulus (or a batch of stimuli) and keep its answers.

Settings (base URL, model, the *name* of the environment variable holding the API key) are kept in
QSettings; the key itself never is. Calls run on workers: a streamed answer appears piece by piece, Cancel
stops at once, and a failure (endpoint down, HTTP error, timeout, malformed answer) is shown as a message
while the window stays responsive. Each answer is parsed and handed to the injected `save_live(**fields)`
(the main window passes `storage.analysis.store_live_prediction` bound to the store), so the panel never
touches the store itself.

Two benchmarks are asked their own way. An NCP task is run as the benchmark does: the model acts with the
six tools on the belief engine (after the task's set-up) until it stops, each call listed as it happens;
the attempt is saved as a prediction (correct = goal reached) and its actions through the injected
`save_trace(prediction_id=, stimulus_id=, steps=)`, so it replays in the stepper. An AgentViSS scene is
role-played: the model answers as the character chosen, from the scene described in words (verbalised
vision, VV), and the answer is saved with context = that character.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QPlainTextEdit, QProgressBar, QPushButton, QSpinBox, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from app.live import (LiveCancelled, LiveClient, LiveError, LiveSettings, NcpStep, agentviss_messages,
                      echomind_mcq_messages, echomind_open_messages, friendbench_messages, ncp_messages,
                      parse_forced_choice, parse_multiple_choice, parse_open_response, resolve_api_key, run_batch,
                      wav_bytes)
from app.ncp_live import NcpTask, run_live_ncp_task, step_label, transcript
from app.prompts import (AGENTVISS_ROLE_PLAY, ECHOMIND_MCQ, ECHOMIND_OPEN_RESPONSE, FRIENDBENCH_FORCED_CHOICE,
                         NCP_TASK, PromptTemplate)
from storage.records import StimulusDetail
from widgets.tasks import CancelToken, TaskRunner

SETTINGS_GROUP = "live"
MODALITIES = ("text", "audio", "video")
FRAMES_PER_CLIP = 4
ERROR_STYLE = "color:#b71c1c;font-weight:bold"
SaveLive = Callable[..., int]
SaveTrace = Callable[..., Any]
NCP_KIND = "ncp_task"
ROLE_PLAY_KIND = "agentviss_scene"
ROLE_PLAY_TASK = "Say your next line in this conversation, as your character would say it."
DEFAULT_MAX_STEPS = 30
OK_COLOUR, FAILED_COLOUR = QColor("#1b5e20"), QColor("#b71c1c")


# ----- building a request from a stimulus (no Qt) ---------------------------------------------------------
def template_for(detail: StimulusDetail) -> PromptTemplate:
    """The prompt template this stimulus is asked with."""
    if detail.kind == "echomind_mcq":
        return ECHOMIND_MCQ
    if detail.kind == "echomind_script":
        return ECHOMIND_OPEN_RESPONSE
    if detail.kind == NCP_KIND:
        return NCP_TASK
    if detail.kind == ROLE_PLAY_KIND:
        return AGENTVISS_ROLE_PLAY
    return FRIENDBENCH_FORCED_CHOICE


def transcript_of(detail: StimulusDetail) -> str:
    lines = [f"{s.speaker}: {s.text}" if s.speaker else s.text for s in detail.segments if s.text]
    return "\n".join(lines) or (detail.text or "")


def clip_audio_wav(detail: StimulusDetail) -> bytes:
    """The stimulus' audio as WAV: its participants' tracks mixed (dyads), or its one audio file."""
    from storage.media import decode_segment

    roles = ("audio:target", "audio") if detail.kind == "echomind_script" else ("audio",)
    refs = [m for prefix in roles for m in detail.media_by_role(prefix) if m.present]
    if detail.kind == "echomind_script":
        refs = refs[:1]
    if not refs:
        raise ValueError(f"no audio file present for {detail.external_id}")
    tracks, rate = [], None
    for ref in refs:
        end = ref.offset_s + ref.duration_s if ref.duration_s else None
        samples = decode_segment(ref.path, ref.offset_s, end)
        if rate is not None and samples.sample_rate != rate:
            continue  # mixing needs one rate; the first track's wins
        rate = samples.sample_rate
        tracks.append(samples.samples)
    length = max(len(t) for t in tracks)
    mix = np.zeros(length, dtype=np.float32)
    for t in tracks:
        mix[: len(t)] += t
    return wav_bytes(mix / max(1, len(tracks)), int(rate or 16000))


def clip_frames(detail: StimulusDetail, count: int = FRAMES_PER_CLIP) -> list[bytes]:
    from storage.frames import sample_frames_jpeg

    refs = [m for m in detail.media_by_role("video") if m.present]
    if not refs:
        raise ValueError(f"no video file present for {detail.external_id}")
    per_video = max(1, count // len(refs))
    frames: list[bytes] = []
    for ref in refs:
        end = ref.offset_s + ref.duration_s if ref.duration_s else None
        frames += sample_frames_jpeg(ref.path, per_video, ref.offset_s, end)
    return frames


def options_of(detail: StimulusDetail) -> list[str]:
    options = detail.meta.get("options") or {}
    return [options[k] for k in sorted(options)] if isinstance(options, dict) else list(options)


def characters_of(detail: StimulusDetail) -> list[str]:
    """An AgentViSS scene's characters in order (the importer's list, else the dialogue's speakers)."""
    named = detail.meta.get("characters")
    if isinstance(named, list) and named:
        return [str(c) for c in named]
    return list(dict.fromkeys(s.speaker for s in detail.segments if s.speaker))


def _phrase(parts: Sequence[tuple[str, Any]]) -> str:
    return "; ".join(f"{label}{value}" for label, value in parts if value not in (None, ""))


def role_play_messages(detail: StimulusDetail, character: str, task: str = ROLE_PLAY_TASK,
                       template: PromptTemplate = AGENTVISS_ROLE_PLAY) -> list[dict[str, Any]]:
    """An AgentViSS role-play turn in verbalised vision (VV): the scene and dialogue as text, no images."""
    roles = detail.meta.get("roles") if isinstance(detail.meta.get("roles"), dict) else {}
    role = roles.get(character) if isinstance(roles.get(character), dict) else {}
    profile = _phrase([("", role.get("gender")), ("age ", role.get("age")), ("", role.get("occupation")),
                       ("expression style: ", role.get("expression_style")),
                       ("conflict style: ", role.get("conflict_trait"))]) or "not given"
    emotional_state = _phrase([("feels ", role.get("initial_emotion")), ("face: ", role.get("facial_expression")),
                               ("body: ", role.get("body_action"))]) or "not given"
    setting = _phrase([("dialogue type: ", detail.meta.get("dialogue_type")),
                       ("conflict intensity: ", detail.meta.get("conflict_intensity"))])
    others = [c for c in characters_of(detail) if c != character]
    scene = "\n".join(part for part in (detail.text or "", f"({setting})" if setting else "",
                                        f"With you: {', '.join(others)}." if others else "") if part)
    return agentviss_messages(character, profile, emotional_state, scene or "not described",
                              transcript_of(detail) or "(no one has spoken yet)", task, (), template)


def build_messages(detail: StimulusDetail, modality: str, template: PromptTemplate | None = None,
                   prompt_setting: str = "no", role: str | None = None,
                   role_task: str = ROLE_PLAY_TASK) -> list[dict[str, Any]]:
    """The chat messages for this stimulus in this modality (decodes media: call it on a worker).

    An AgentViSS scene is role-played as ``role`` (default: its first character)."""
    template = template or template_for(detail)
    if detail.kind == ROLE_PLAY_KIND:
        characters = characters_of(detail)
        character = role or (characters[0] if characters else "")
        if not character:
            raise ValueError(f"{detail.external_id} names no character to play")
        return role_play_messages(detail, character, role_task, template)
    if detail.kind == "echomind_mcq":
        question = (detail.text or "").split("\n", 1)[0]
        return echomind_mcq_messages(question, options_of(detail), clip_audio_wav(detail), template)
    if detail.kind == "echomind_script":
        return echomind_open_messages(clip_audio_wav(detail), prompt_setting, template)
    if detail.benchmark == "friendbench" or detail.kind == "dyad":
        transcript = transcript_of(detail) if modality == "text" else None
        audio = clip_audio_wav(detail) if modality in ("audio", "video") else None
        frames = clip_frames(detail) if modality == "video" else ()
        return friendbench_messages(modality, transcript, audio, frames, template)
    system, user = template.system, f"{template.user}\n\n{detail.text or transcript_of(detail)}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_answer(detail: StimulusDetail, text: str) -> tuple[str | None, bool | None]:
    """(answer, correct) as the benchmark scores it; correct is None without a ground truth or answer."""
    if detail.kind == "echomind_mcq":
        answer = parse_multiple_choice(text, options_of(detail))
    elif detail.benchmark == "friendbench" or detail.kind == "dyad":
        answer = parse_forced_choice(text)
    else:
        return parse_open_response(text), None
    if answer is None or detail.ground_truth is None:
        return answer, None
    return answer, answer.strip().lower() == detail.ground_truth.strip().lower()


def goal_summary(detail: StimulusDetail) -> str:
    """One line naming what an NCP task asks for (shown above the list of calls)."""
    atoms = "; ".join(a.text for a in detail.goal_atoms) or "no goal atoms"
    kind = {True: " (a false belief)", False: " (a true belief)"}.get(detail.meta.get("false_belief"), "")
    return f"Goal{kind}: {atoms}"


def prompt_record(messages: Sequence[dict[str, Any]]) -> str:
    """What was sent, as JSON text, with media replaced by a placeholder (the store keeps the words)."""
    def strip(part: Any) -> Any:
        if isinstance(part, dict) and part.get("type") == "input_audio":
            return {"type": "input_audio", "input_audio": "<wav>"}
        if isinstance(part, dict) and part.get("type") == "image_url":
            return {"type": "image_url", "image_url": "<jpeg>"}
        return part

    shown = [{**m, "content": [strip(p) for p in m["content"]] if isinstance(m.get("content"), list)
              else m.get("content")} for m in messages]
    return json.dumps(shown, ensure_ascii=False)


# ----- the panel ---------------------------------------------------------------------------------------------
def _cost(result: dict[str, Any]) -> str:
    """What an answer took: "1.23 s" and, when the endpoint reports them, the tokens in and out."""
    tokens = (f", {result['tokens_in']} tokens in / {result['tokens_out']} out"
              if result["tokens_in"] is not None else "")
    return f"{result['latency_s']:.2f} s{tokens}"


class _BatchRelay(QObject):
    progress = Signal(int, int, int, int)
    item = Signal(int, object, str)


class _StepRelay(QObject):
    step = Signal(int, object)   # episode number, app.live.NcpStep


class LivePanel(QWidget):
    """Settings, prompt, Send/Cancel with a streamed answer, and batch runs with progress and resume."""

    liveSaved = Signal(int, int)       # stimulus id, prediction id
    statusMessage = Signal(str)
    answerFinished = Signal(object)    # the result dict of one finished ask
    batchFinished = Signal(object)     # app.live.BatchReport

    def __init__(self, save_live: SaveLive | None = None,
                 load_detail: Callable[[int], StimulusDetail | None] | None = None,
                 parent: QWidget | None = None, settings: QSettings | None = None,
                 runner: TaskRunner | None = None, save_trace: SaveTrace | None = None) -> None:
        super().__init__(parent)
        self.save_live = save_live
        self.save_trace = save_trace
        self.load_detail = load_detail
        self.settings = settings or QSettings()
        self.runner = runner or TaskRunner(self)
        self.detail: StimulusDetail | None = None
        self.batch_ids: list[int] = []
        self.batch_done: set[int] = set()
        self._token: CancelToken | None = None
        self._batch_token: CancelToken | None = None
        self.last_result: dict[str, Any] | None = None
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
        for field in (self.base_url, self.model, self.key_env):
            field.editingFinished.connect(self.save_settings)
        self.key_env.textChanged.connect(lambda _t: self._show_key_status())
        form = QFormLayout()
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key variable", self.key_env)
        form.addRow("", self.key_status)
        form.addRow("Timeout", self.timeout)
        conditions = QHBoxLayout()
        conditions.addWidget(self.modality)
        conditions.addWidget(QLabel("EchoMind prompt"))
        conditions.addWidget(self.prompt_setting)
        conditions.addWidget(self.stream)
        form.addRow("Condition", conditions)
        form.addRow("Role", self.role)
        form.addRow("Role task", self.role_task)
        form.addRow("Max steps", self.max_steps)
        self.form = form
        self.template_name = QLabel()
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
        batch_box = QGroupBox("Batch (the listed stimuli; already answered ones are skipped, so a run resumes)")
        bl = QVBoxLayout(batch_box)
        row = QHBoxLayout()
        row.addWidget(self.concurrency)
        row.addWidget(self.batch_button)
        row.addWidget(self.batch_cancel)
        bl.addLayout(row)
        bl.addWidget(self.batch_progress)
        bl.addWidget(self.batch_label)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(prompt_box)
        layout.addLayout(buttons)
        layout.addWidget(self.goal)
        layout.addWidget(self.steps, 2)
        layout.addWidget(self.answer, 1)
        layout.addWidget(self.message)
        layout.addWidget(batch_box)
        self._relay = _BatchRelay()
        self._relay.progress.connect(self._batch_progress)
        self._relay.item.connect(self._batch_item)
        self._step_relay = _StepRelay()
        self._step_relay.step.connect(self._step_arrived)
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
        stored = {k: self.settings.value(f"{SETTINGS_GROUP}/{k}") for k in LiveSettings.__dataclass_fields__}
        values = LiveSettings.from_dict({k: v for k, v in stored.items() if v is not None})
        self.base_url.setText(values.base_url)
        self.model.setText(values.model)
        self.key_env.setText(values.api_key_env)
        self._show_key_status()

    def save_settings(self) -> None:
        """Store base URL, model and the key's variable name (never the key)."""
        for k, v in self.live_settings().to_dict().items():
            self.settings.setValue(f"{SETTINGS_GROUP}/{k}", v)
        self.settings.sync()

    def _show_key_status(self) -> None:
        _key, where = resolve_api_key(self.live_settings())
        self.key_status.setText(f"key: {where}")

    # ----- templates -------------------------------------------------------------------------------------
    def _stored_template(self, base: PromptTemplate) -> PromptTemplate:
        system = self.settings.value(f"{SETTINGS_GROUP}/templates/{base.name}/system")
        user = self.settings.value(f"{SETTINGS_GROUP}/templates/{base.name}/user")
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
        self.settings.setValue(f"{SETTINGS_GROUP}/templates/{edited.name}/system", edited.system)
        self.settings.setValue(f"{SETTINGS_GROUP}/templates/{edited.name}/user", edited.user)
        return edited

    def _reset_template(self) -> None:
        self.settings.remove(f"{SETTINGS_GROUP}/templates/{self._template.name}")
        self._show_template(self._template)

    # ----- one stimulus ----------------------------------------------------------------------------------
    def set_detail(self, detail: StimulusDetail | None) -> None:
        self.detail = detail
        if detail is not None:
            self._show_template(template_for(detail))
            if detail.kind.startswith("echomind"):
                self.modality.setCurrentText("audio")
        self._show_kind_rows(detail)

    def _show_kind_rows(self, detail: StimulusDetail | None) -> None:
        """Offer the choices the shown stimulus is asked with: a role to play, a step limit, the step list."""
        kind = detail.kind if detail is not None else ""
        if kind == ROLE_PLAY_KIND:
            chosen = self.role.currentText()
            self.role.clear()
            self.role.addItems(characters_of(detail))  # type: ignore[arg-type]
            if chosen:
                self.role.setCurrentText(chosen)
        for widget, shown in ((self.role, kind == ROLE_PLAY_KIND), (self.role_task, kind == ROLE_PLAY_KIND),
                              (self.max_steps, kind == NCP_KIND)):
            self.form.setRowVisible(widget, shown)
        self.steps.setVisible(kind == NCP_KIND)
        self.goal.setVisible(kind == NCP_KIND)
        self.goal.setText(goal_summary(detail) if kind == NCP_KIND else "")  # type: ignore[arg-type]
        self.modality.setEnabled(kind not in (NCP_KIND, ROLE_PLAY_KIND))

    def busy(self) -> bool:
        return self._token is not None

    def _show_error(self, text: str) -> None:
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setText(text)
        self.statusMessage.emit(text)

    def _show_info(self, text: str) -> None:
        self.message.setStyleSheet("")
        self.message.setText(text)

    def _condition(self) -> dict[str, str]:
        """The run condition of the shown stimulus, from the panel's choices (GUI thread)."""
        return self._condition_for(self.detail, {"modality": self.modality.currentText(),
                                                 "prompt_setting": self.prompt_setting.currentText(),
                                                 "role": self.role.currentText()})

    @staticmethod
    def _condition_for(detail: StimulusDetail | None, chosen: dict[str, str]) -> dict[str, str]:
        if detail is not None and detail.kind == NCP_KIND:
            # as imported NCP attempts are stored: the task is the condition
            return {"modality": "", "prompt_setting": "", "vision_mode": "", "context": ""}
        if detail is not None and detail.kind == ROLE_PLAY_KIND:
            characters = characters_of(detail)
            role = chosen.get("role") if chosen.get("role") in characters else (characters[0] if characters else "")
            return {"modality": "", "prompt_setting": "", "vision_mode": "VV", "context": role}
        if detail is not None and detail.kind == "echomind_mcq":
            task = detail.meta.get("task") or "understanding"
            return {"modality": f"mcq_{task}", "prompt_setting": "", "vision_mode": "", "context": ""}
        if detail is not None and detail.kind == "echomind_script":
            return {"modality": "conversation:target", "prompt_setting": chosen.get("prompt_setting") or "no",
                    "vision_mode": "", "context": ""}
        return {"modality": chosen.get("modality", "text"), "prompt_setting": "", "vision_mode": "", "context": ""}

    def _ask(self, client: LiveClient, detail: StimulusDetail, template: PromptTemplate, condition: dict[str, str],
             modality: str, stream: bool, cancel: Callable[[], bool],
             on_delta: Callable[[str], None] | None, role_task: str = ROLE_PLAY_TASK) -> dict[str, Any]:
        """Build, send, parse and save one request (runs on a worker: touches no widget)."""
        messages = build_messages(detail, modality, template, condition["prompt_setting"] or "no",
                                  condition["context"] or None, role_task)
        reply = client.ask(messages, stream=stream, on_delta=on_delta, cancel=cancel, temperature=0)
        answer, correct = parse_answer(detail, reply.text)
        result = {"stimulus_id": detail.id, "text": reply.text, "answer": answer, "correct": correct,
                  "latency_s": reply.latency_s, "tokens_in": reply.prompt_tokens,
                  "tokens_out": reply.completion_tokens, "prediction_id": None}
        if self.save_live is not None:
            settings = client.settings
            params = {"base_url": settings.base_url, "api_key_env": settings.api_key_env, "stream": stream,
                      "temperature": 0, "template": template.name, "timeout_s": client.timeout_s}
            result["prediction_id"] = self.save_live(
                dataset_id=detail.dataset_id, model=settings.model, **condition, stimulus_id=detail.id,
                prompt=prompt_record(messages), raw_output=reply.text, answer=answer, correct=correct,
                latency_s=reply.latency_s, tokens_in=reply.prompt_tokens, tokens_out=reply.completion_tokens,
                params_json=params)
        return result

    def _run_ncp(self, client: LiveClient, detail: StimulusDetail, template: PromptTemplate, max_steps: int,
                 stream: bool, cancel: Callable[[], bool],
                 on_step: Callable[[NcpStep], None] | None) -> dict[str, Any]:
        """Run one NCP attempt and save it with its trace (runs on a worker: touches no widget).

        A cancel that comes after the model stopped still keeps the attempt out of the store."""
        task = NcpTask.from_detail(detail)
        attempt = run_live_ncp_task(client, task, max_steps, template, on_step, cancel, stream=stream, temperature=0)
        result = {"kind": NCP_KIND, "stimulus_id": detail.id, "text": attempt.final_text, "answer": None,
                  "correct": attempt.success, "latency_s": attempt.latency_s, "tokens_in": attempt.tokens_in,
                  "tokens_out": attempt.tokens_out, "prediction_id": None, "steps": list(attempt.steps),
                  "stopped": attempt.stopped, "atoms": list(attempt.atoms)}
        if cancel():
            raise LiveCancelled(attempt.final_text)
        if self.save_live is not None:
            settings = client.settings
            params = {"base_url": settings.base_url, "api_key_env": settings.api_key_env, "stream": stream,
                      "temperature": 0, "template": template.name, "timeout_s": client.timeout_s,
                      "max_steps": max_steps, "stopped": attempt.stopped, "tool_calls": len(attempt.steps)}
            pid = self.save_live(
                dataset_id=detail.dataset_id, model=settings.model, **self._condition_for(detail, {}),
                stimulus_id=detail.id, prompt=prompt_record(ncp_messages(attempt.goal, attempt.state, template)),
                raw_output=transcript(attempt), answer=None, correct=attempt.success, latency_s=attempt.latency_s,
                tokens_in=attempt.tokens_in, tokens_out=attempt.tokens_out, params_json=params)
            result["prediction_id"] = pid
            if self.save_trace is not None:
                self.save_trace(prediction_id=pid, stimulus_id=detail.id, steps=list(attempt.trace))
        return result

    def _client(self) -> LiveClient:
        return LiveClient(self.live_settings(), timeout_s=self.timeout.value(), max_retries=0)

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
        detail, condition, stream, client = self.detail, self._condition(), self.stream.isChecked(), self._client()
        modality, max_steps = self.modality.currentText(), self.max_steps.value()
        role_task = self.role_task.text().strip() or ROLE_PLAY_TASK
        if detail.kind == ROLE_PLAY_KIND and not condition["context"]:
            self._show_error("This scene names no character to play.")
            return
        self._episode += 1
        episode, relay = self._episode, self._step_relay
        self.answer.clear()
        self.steps.clear()
        if detail.kind == NCP_KIND:
            self._show_info(f"{client.settings.model} is acting on the task (at most {max_steps} tool calls)…")
        elif detail.kind == ROLE_PLAY_KIND:
            self._show_info(f"{client.settings.model} plays {condition['context']}…")
        else:
            self._show_info(f"Asking {client.settings.model} at {client.settings.base_url}…")
        self.send_button.setEnabled(False)
        self.cancel_button.setEnabled(True)

        def work(token: CancelToken, progress: Callable[[float, str], None]) -> dict[str, Any]:
            try:
                if detail.kind == NCP_KIND:
                    return self._run_ncp(client, detail, template, max_steps, stream, token,
                                         lambda step: relay.step.emit(episode, step))
                return self._ask(client, detail, template, condition, modality, stream, token,
                                 (lambda piece: progress(0.0, piece)) if stream else None, role_task)
            finally:
                client.close()

        self._token = self.runner.submit("live", work, self._finished, self._failed,
                                         on_progress=lambda _f, piece: self._delta(piece), with_progress=True)

    def _delta(self, piece: str) -> None:
        cursor = self.answer.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        cursor.insertText(piece)
        self.answer.setTextCursor(cursor)

    def _step_arrived(self, episode: int, step: NcpStep) -> None:
        if episode == self._episode and self.busy():
            self._add_step(step)

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

    def _finished(self, result: dict[str, Any]) -> None:
        self._idle()
        self.last_result = result
        self.answer.setPlainText(result["text"])
        if result.get("kind") == NCP_KIND:
            self._show_attempt(result)
            return
        verdict = "" if result["correct"] is None else (" — right" if result["correct"] else " — wrong")
        parsed = result["answer"] if result["answer"] not in (None, "") else "unparsed"
        saved = " Saved as a live run." if result["prediction_id"] is not None else ""
        self._show_info(f"Answer: {parsed if len(parsed) < 60 else parsed[:57] + '…'}{verdict} "
                        f"({_cost(result)}).{saved}")
        self._announce(result)

    def _show_attempt(self, result: dict[str, Any]) -> None:
        """The finished NCP attempt: every call (the list is rebuilt from the result) and the verdict."""
        self.steps.clear()
        for step in result["steps"]:
            self._add_step(step)
        missing = [text for text, holds in result["atoms"] if not holds]
        if result["correct"]:
            verdict = "Goal reached"
        elif missing:
            verdict = "Goal not reached (" + "; ".join(missing) + " does not hold)"
        else:
            verdict = "Goal not reached (the beliefs hold, but the world does not match the task's true/false belief)"
        stopped = {"model_stopped": "the model stopped", "step_limit": "step limit reached"}.get(
            result["stopped"], result["stopped"])
        failed = sum(1 for s in result["steps"] if not s.returned)
        saved = " Saved as a live run with its trace." if result["prediction_id"] is not None else ""
        self._show_info(f"{verdict} after {len(result['steps'])} tool calls ({failed} failed; {stopped}; "
                        f"{_cost(result)}).{saved}")
        self._announce(result)

    def _announce(self, result: dict[str, Any]) -> None:
        """Tell the window a stored live run exists (so it can show it), then that the answer is in."""
        if result["prediction_id"] is not None:
            self.liveSaved.emit(result["stimulus_id"], result["prediction_id"])
        self.answerFinished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self._idle()
        if isinstance(exc, LiveCancelled):
            self._show_info("Cancelled.")
        elif isinstance(exc, LiveError):
            self._show_error(str(exc))
        else:
            self._show_error(f"Could not ask: {exc}")
        self.answerFinished.emit(None)

    # ----- batches ---------------------------------------------------------------------------------------
    def set_batch_ids(self, ids: Sequence[int]) -> None:
        """The stimuli a batch runs over (e.g. the filtered list)."""
        self.batch_ids = list(ids)
        self.batch_label.setText(f"{len(self.batch_ids)} stimuli listed; {len(self.batch_done)} answered so far.")

    def batch_running(self) -> bool:
        return self._batch_token is not None

    def run_batch(self) -> None:
        """Ask about every listed stimulus not yet answered, a few at a time, on a worker."""
        if self.load_detail is None or not self.batch_ids:
            self._show_error("No stimuli to run (the list is empty).")
            return
        template = self._ready_template()
        if template is None:
            return
        ids, done, load, client = list(self.batch_ids), set(self.batch_done), self.load_detail, self._client()
        workers, modality, relay = self.concurrency.value(), self.modality.currentText(), self._relay
        # Stimuli of another kind than the shown one use their own (possibly edited) template, read here
        # because settings are not to be read from workers.
        templates = {t.name: self._stored_template(t) for t in (FRIENDBENCH_FORCED_CHOICE, ECHOMIND_MCQ,
                                                                ECHOMIND_OPEN_RESPONSE, NCP_TASK, AGENTVISS_ROLE_PLAY)}
        templates[template.name] = template
        shown_condition = self._condition()
        max_steps, role_task = self.max_steps.value(), self.role_task.text().strip() or ROLE_PLAY_TASK

        def work(tok: CancelToken, _progress: Callable[[float, str], None]):
            def one(sid: int) -> dict[str, Any]:
                detail = load(sid)
                if detail is None:
                    raise ValueError(f"stimulus {sid} is gone")
                chosen = templates.get(template_for(detail).name, template)
                if detail.kind == NCP_KIND:
                    return self._run_ncp(client, detail, chosen, max_steps, False, tok, None)
                # a scene is played as the chosen character when it has one, else as its first character
                return self._ask(client, detail, chosen, self._condition_for(detail, shown_condition), modality,
                                 False, tok, None, role_task)

            try:
                return run_batch(ids, one, lambda sid: sid, done_ids=done, max_workers=workers,
                                 on_progress=lambda p: relay.progress.emit(p.done, p.failed, p.skipped, p.total),
                                 on_result=lambda key, result, error: relay.item.emit(key, result, error or ""),
                                 cancel=tok)
            finally:
                client.close()

        self.batch_button.setEnabled(False)
        self.batch_cancel.setEnabled(True)
        self.batch_progress.setRange(0, len(ids))
        self._show_info(f"Batch of {len(ids)} started ({len(done & set(ids))} already answered).")
        token = self.runner.submit("batch", work, self._batch_finished, self._batch_failed, with_progress=True)
        self._batch_token = token

    def cancel_batch(self) -> None:
        if self._batch_token is not None:
            self._batch_token.cancel()
        self._show_info("Cancelling the batch: running requests stop, the rest are not sent.")

    def _batch_progress(self, done: int, failed: int, skipped: int, total: int) -> None:
        self.batch_progress.setValue(done + failed + skipped)
        self.batch_label.setText(f"{done} answered, {failed} failed, {skipped} skipped of {total}.")

    def _batch_item(self, sid: int, result: object, error: str) -> None:
        if not error and isinstance(result, dict):
            self.batch_done.add(sid)
            if result.get("prediction_id") is not None:
                self.liveSaved.emit(sid, result["prediction_id"])
        elif error:
            self.message.setStyleSheet(ERROR_STYLE)
            self.message.setText(f"stimulus {sid}: {error}")

    def _batch_finished(self, report: Any) -> None:
        self._batch_token = None
        self.batch_button.setEnabled(True)
        self.batch_cancel.setEnabled(False)
        state = "cancelled" if report.cancelled else "finished"
        self._show_info(f"Batch {state}: {len(report.results)} answered, {len(report.errors)} failed, "
                        f"{report.skipped} skipped. Run again to resume.")
        self.batchFinished.emit(report)

    def _batch_failed(self, exc: BaseException) -> None:
        self._batch_token = None
        self.batch_button.setEnabled(True)
        self.batch_cancel.setEnabled(False)
        self._show_error(f"Batch stopped: {exc}")
