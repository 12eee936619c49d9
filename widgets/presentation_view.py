"""Presentation mode: one stimulus and the chosen models' answers, full screen, for a room.

The clip plays in the presentation itself: while presenting, the main player's media area (its video
surfaces, or the EchoMind script) is shown here and put back on leaving, so there is one set of
players and one `PlaybackClock`, and Space plays and pauses it. Answers are revealed one at a time
(a model, then the crowd, then the truth). Benchmarks whose answers are judged rather than marked
right or wrong (EchoMind's replies per voice and prompt, AgentViSS's role-play turns) show one row
per condition with the judge's scores; the others show one row per model. Type is sized from the
window's height, so the page reads from the back of a room at 1920x1080 and still fits 1366x768;
every colour comes from `widgets.palette`. Keys are the one keymap's presentation context.

A race (R, or the Race button) asks the live models named as contenders about the stimulus on stage, all at
once, each streaming into a column of its own (`widgets.race_view`); the reveal keys then reveal their verdicts
in the order they finished, and the truth last. Escape cancels a running race (and leaves once none runs).
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent
from PySide6.QtWidgets import (QGridLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy,
                               QVBoxLayout, QWidget)

from app.benchmarks import kind_profile
from app.clock import ClockEvent
from app.conditions import condition_name
from app.keymap import PRESENTATION, PRESENTATION_BINDINGS, Keymap
from storage.records import Judgment, Prediction, StimulusDetail
from widgets.answer_html import HIDDEN, text_html, verdict_html
from widgets.keys import key_sequence_of
from widgets.palette import colour, score_colour
from widgets.player_panel import PlayerPanel
from widgets.settings_store import SettingsStore
from widgets.tasks import CancelToken, TaskRunner
from widgets.waveform_view import format_time

if TYPE_CHECKING:
    from widgets.race_view import RaceView

# key, action, description, from the one keymap: drives key handling, the help line and the tests.
PRESENTATION_KEYS: tuple[tuple[str, str, str], ...] = tuple(
    (b.sequence, b.action.split(".", 1)[1], b.description) for b in PRESENTATION_BINDINGS)
PRESENTATION_KEYMAP = Keymap(PRESENTATION_BINDINGS)
HELP_KEYS = ("Space", "Right", "Left", "A", "V", "R", "Escape")

CONTEXT_CHARS = 400
CELL_CHARS = 160          # a reply longer than this is cut in a cell: a room reads a sentence, not a page
# the type's base size is the window's height over this: 30 px at 1080, 21 px at 768
LINES_PER_SCREEN = 36
MIN_BASE_PX = 14
VOICES = ("target", "alternative", "neutral")
PROMPTS = ("no", "basic", "enhance")
# judged cells: larger type while the rows fit a laptop's screen (AgentViSS's six roles × modes), smaller past it
ROOMY_CONDITIONS = 6
ROOMY_CELL, DENSE_CELL = 0.75, 0.62
# the clip's share of the height against the answers' 4, and during a race against the columns'
MEDIA_STRETCH, RACE_MEDIA_STRETCH, RACE_STRETCH = 5, 3, 5


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def scores_html(judgments: Sequence[Judgment]) -> str:
    """Each criterion and its score on a chip coloured by the score on the judge's own scale."""
    chips = []
    for j in judgments:
        if j.score is None:
            chips.append(f"{text_html(j.criterion)} —")
            continue
        scale = j.scale_max or 5.0
        shade = score_colour(j.score, scale).name()
        chips.append(f"<span style='background:{shade}'>&nbsp;{text_html(j.criterion)} {j.score:g}&nbsp;</span>")
    scale = next((j.scale_max for j in judgments if j.scale_max), None)
    return " ".join(chips) + (f" <span style='color:{colour('muted')}'>/ {scale:g}</span>" if scale else "")


def is_judged(predictions: Sequence[Prediction]) -> bool:
    """Answers scored by a judge and not marked right or wrong (EchoMind's replies, AgentViSS's turns)."""
    return any(p.judgments for p in predictions) and all(p.correct is None for p in predictions if p.judgments)


def condition_order(p: Prediction) -> tuple:
    """Voices in the paper's order (target, alternative, neutral), prompts from none to enhanced, then the rest."""
    task, _, voice = (p.modality or "").partition(":")
    return (VOICES.index(voice) if voice in VOICES else len(VOICES), task,
            PROMPTS.index(p.prompt_setting) if p.prompt_setting in PROMPTS else len(PROMPTS),
            p.prompt_setting or "", p.context or "", p.vision_mode or "")


def judged_cell_html(p: Prediction) -> str:
    """One judged answer: its verdict if any, the reply (cut for the room), its scores."""
    reply = (p.raw_output or p.answer or "").strip()
    parts = [verdict_html(p.correct), text_html(shorten(reply, CELL_CHARS)) if reply else "<i>no reply</i>"]
    head = " ".join(part for part in parts if part)
    return head + (f"<br/>{scores_html(p.judgments)}" if p.judgments else "")


def short_answers_html(predictions: Sequence[Prediction]) -> str:
    """A model's marked answers in a row, each with its condition when there are several."""
    parts = [(f"{text_html(condition_name(p))}: " if len(predictions) > 1 else "")
             # an unparsed answer with a verdict (NCP's plans) reads as the verdict alone
             + f"{text_html(p.answer or ('' if p.correct is not None else '—'))} {verdict_html(p.correct)}".strip()
             for p in predictions]
    return " &nbsp; ".join(parts) or "<i>no answer</i>"


@dataclass(frozen=True)
class RaceDesk:
    """What a race needs from the window: the live service to ask through (made on first use: the live client
    and the benchmarks' rules are not needed until then), the settings holding the contenders, the worker API."""

    service: Callable[[], Any]
    settings: SettingsStore
    runner: TaskRunner


def _prepare_race() -> None:
    """Load the live client on a worker as the stage opens, so that R starts every stream at once (a failure
    here shows when the race runs)."""
    from app.live.race import prepare_race

    prepare_race()


class _Reveal:
    """One unit the presenter reveals with one key: its labels and what each shows once revealed."""

    def __init__(self) -> None:
        self.labels: list[tuple[QLabel, str]] = []


class PresentationView(QWidget):
    """The comparison for an audience: big type, the clip on the one clock, answers revealed one at a time."""

    nextStimulusRequested = Signal()
    previousStimulusRequested = Signal()
    left = Signal()

    def __init__(self, parent: QWidget | None = None, player: PlayerPanel | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Thinslice — presentation")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAutoFillBackground(True)
        self.player = player
        self._fonts: list[tuple[QWidget, float, bool]] = []
        self._row_fonts: list[tuple[QWidget, float, bool]] = []
        self._voices = False
        self._leaving = False
        self.title = self._label(1.25, bold=True)
        self.context = self._label(0.75)
        self.media_box = QVBoxLayout()
        self.media_box.setContentsMargins(0, 0, 0, 0)
        self.transport = self._label(0.65)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.help = self._label(0.55)
        self.race_button = QPushButton("Race (R)")
        self.race_button.setToolTip("Ask every contender about this stimulus at once")
        self.race_button.clicked.connect(lambda _checked=False: self.start_race())
        self.contenders_button = QPushButton("Contenders…")
        self.contenders_button.setToolTip("The live models a race asks")
        self.contenders_button.clicked.connect(lambda _checked=False: self.edit_contenders())
        # a button rather than a check box: its state reads on a dark stage as well as a light one
        self.at_once = QPushButton()
        self.at_once.setCheckable(True)
        self.at_once.setToolTip("Show each contender's verdict as soon as it answers instead of on a reveal key")
        self.at_once.toggled.connect(self._at_once_toggled)
        self._name_at_once(False)
        footer = QHBoxLayout()
        footer.addWidget(self.help, 1)
        for widget in (self.race_button, self.contenders_button, self.at_once):
            widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)   # the keys stay with the presentation
            widget.hide()
            footer.addWidget(widget)
        self._race_desk: RaceDesk | None = None
        self.race_view: RaceView | None = None
        self._race_stop: threading.Event | None = None
        self._detail: StimulusDetail | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 28, 48, 18)
        layout.setSpacing(10)
        layout.addWidget(self.title)
        layout.addWidget(self.context)
        layout.addLayout(self.media_box, MEDIA_STRETCH)
        layout.addWidget(self.transport)
        layout.addWidget(self.scroll, 4)
        layout.addLayout(footer)
        self._layout = layout
        self._reveals: list[_Reveal] = []
        self._revealed = 0
        self._clear_rows()
        self._borrowed: QWidget | None = None
        self._unsubscribe: Callable[[], None] | None = None
        actions = {"advance": self.advance, "reveal": self.reveal_next, "reveal_all": self.reveal_all,
                   "back": self.previousStimulusRequested.emit, "leave": self.leave,
                   "play": self.toggle_play, "voice": self.next_voice,
                   "race": self.start_race, "race_again": lambda: self.start_race(ask_again=True)}
        self._actions = {f"{PRESENTATION}.{name}": handler for name, handler in actions.items()}
        self._apply_palette()
        if player is not None:
            self._unsubscribe = player.clock.subscribe(self._on_clock)

    # ----- type and colour ---------------------------------------------------------------------------
    def _label(self, scale: float, bold: bool = False) -> QLabel:
        label = QLabel()
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        self._sized(label, scale, bold)
        return label

    def _sized(self, widget: QWidget, scale: float, bold: bool = False, row: bool = False) -> None:
        """Give `widget` type `scale` times the base size, now and whenever the window is resized;
        `row` widgets go with the answers when the stimulus changes."""
        (self._row_fonts if row else self._fonts).append((widget, scale, bold))
        self._apply_font(widget, scale, bold)

    def base_px(self) -> int:
        """The body type's size in pixels for this window's height."""
        return max(MIN_BASE_PX, round(self.height() / LINES_PER_SCREEN))

    def _apply_font(self, widget: QWidget, scale: float, bold: bool) -> None:
        font = QFont(widget.font())
        font.setPixelSize(max(10, round(self.base_px() * scale)))
        font.setBold(bold)
        widget.setFont(font)

    def _apply_palette(self) -> None:
        page, text, muted = colour("page_bg"), colour("page_fg"), colour("muted")
        self.setStyleSheet(f"PresentationView, QScrollArea, QWidget#rows {{ background: {page}; }}"
                           f" QLabel {{ color: {text}; }} QLabel[hidden_answer='true'] {{ color: {muted}; }}"
                           f" QLabel#truth {{ background: {colour('truth_bg')}; padding: 4px 10px; }}")
        self.help.setStyleSheet(f"color: {muted}")
        self.transport.setStyleSheet(f"color: {muted}")

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        for widget, scale, bold in self._fonts + self._row_fonts:
            self._apply_font(widget, scale, bold)
        if self.race_view is not None:
            self.race_view.apply_fonts()

    # ----- content -----------------------------------------------------------------------------------
    def set_content(self, detail: StimulusDetail | None, models: Sequence[str], humans: bool = True) -> None:
        """Show a stimulus with every answer hidden, and its clip paused where the player has it (a race on
        the stimulus before ends here; one on this stimulus goes on when its stored answers change)."""
        if detail is None or self._detail is None or detail.id != self._detail.id:
            self._end_race()
        self._detail = detail
        self._clear_rows()
        self._voices = detail is not None and kind_profile(detail.kind, detail.benchmark).voices
        self._show_media(detail)
        if detail is None:
            self.title.setText("No stimulus")
            self.context.setText("")
            return
        title = detail.short_title
        self.title.setText(title if title.startswith(detail.external_id)
                           else f"{detail.external_id} — {title}".rstrip(" —"))
        context = detail.text or " ".join(f"{s.speaker}: {s.text}" for s in detail.segments[:6])
        self.context.setText(shorten(context, CONTEXT_CHARS))
        self.context.setVisible(bool(context))
        chosen = [p for p in detail.predictions if p.model in models]
        if is_judged(chosen):
            row = self._judged_rows(detail, models)
        else:
            row = 0
            for model in models:
                preds = [p for p in detail.predictions if p.model == model]
                self._add_row(row, model, short_answers_html(preds))
                row += 1
        if humans and detail.human:
            text = " &nbsp; ".join(
                f"{text_html(s.condition)}: {s.share_correct:.0%} right" if s.share_correct is not None
                else text_html(s.condition) for s in detail.human)
            self._add_row(row, "human crowd", text)
            row += 1
        if detail.ground_truth:
            self._add_row(row, "truth", f"<b>{text_html(detail.ground_truth)}</b>", object_name="truth")
        self.rows.setRowStretch(self.rows.rowCount(), 1)

    def _judged_rows(self, detail: StimulusDetail, models: Sequence[str]) -> int:
        """A column per model and a row per condition; a model's column is revealed at once. Returns the
        next free row."""
        by_model = {m: {condition_name(p): p for p in detail.predictions if p.model == m} for m in models}
        conditions = list(dict.fromkeys(condition_name(p) for p in sorted(
            (p for p in detail.predictions if p.model in models), key=condition_order)))
        for column, model in enumerate(models, start=1):
            heading = QLabel(model)
            heading.setTextFormat(Qt.TextFormat.PlainText)
            self._sized(heading, 0.8, bold=True, row=True)
            self.rows.addWidget(heading, 0, column, Qt.AlignmentFlag.AlignTop)
            self.rows.setColumnStretch(column, 1)
        cell_scale = ROOMY_CELL if len(conditions) <= ROOMY_CONDITIONS else DENSE_CELL
        for row, condition in enumerate(conditions, start=1):
            name = QLabel(condition)
            name.setTextFormat(Qt.TextFormat.PlainText)
            name.setWordWrap(True)
            self._sized(name, cell_scale + 0.03, bold=True, row=True)
            self.rows.addWidget(name, row, 0, Qt.AlignmentFlag.AlignTop)
        self.rows.setColumnStretch(0, 0)
        for column, model in enumerate(models, start=1):
            reveal = _Reveal()
            for row, condition in enumerate(conditions, start=1):
                p = by_model[model].get(condition)
                cell = self._answer_label(cell_scale)
                reveal.labels.append((cell, judged_cell_html(p) if p is not None else "<i>not run</i>"))
                self.rows.addWidget(cell, row, column, Qt.AlignmentFlag.AlignTop)
            self._reveals.append(reveal)
        return len(conditions) + 1

    def _answer_label(self, scale: float) -> QLabel:
        label = QLabel(HIDDEN)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setProperty("hidden_answer", True)
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._sized(label, scale, row=True)
        return label

    def _add_row(self, row: int, name: str, answer_html: str, *, object_name: str = "") -> None:
        """A row of its own: the name, and the answer hidden until revealed, across every model column."""
        label = QLabel(name)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        self._sized(label, 0.8, bold=True, row=True)
        answer = self._answer_label(0.8)
        answer.setObjectName(object_name)
        self.rows.addWidget(label, row, 0, Qt.AlignmentFlag.AlignTop)
        self.rows.addWidget(answer, row, 1, 1, max(1, self.rows.columnCount() - 1), Qt.AlignmentFlag.AlignTop)
        self.rows.setColumnStretch(1, 1)
        reveal = _Reveal()
        reveal.labels.append((answer, answer_html))
        self._reveals.append(reveal)

    def _clear_rows(self) -> None:
        """A fresh grid for the next stimulus (a grid never gives back rows and columns it once had)."""
        rows_widget = QWidget()
        rows_widget.setObjectName("rows")
        self.rows = QGridLayout(rows_widget)
        self.rows.setHorizontalSpacing(36)
        self.rows.setVerticalSpacing(14)
        self.scroll.setWidget(rows_widget)  # the old grid and its labels are deleted with it
        self._row_fonts = []
        self._reveals = []
        self._revealed = 0

    # ----- revealing ---------------------------------------------------------------------------------
    def revealed(self) -> int:
        return self._revealed

    def total(self) -> int:
        return len(self._reveals)

    def answer_text(self, index: int) -> str:
        """What the `index`-th unit shows now ("?" while hidden), its cells joined by new lines."""
        return "\n".join(label.text() for label, _ in self._reveals[index].labels)

    def answer_labels(self, index: int) -> list[QLabel]:
        return [label for label, _ in self._reveals[index].labels]

    def reveal_next(self) -> bool:
        """Reveal the next hidden unit (in a race, the next verdict); False when all are shown."""
        if self.race_view is not None:
            return self.race_view.reveal_next()
        if self._revealed >= len(self._reveals):
            return False
        for label, text in self._reveals[self._revealed].labels:
            label.setText(text)
            label.setProperty("hidden_answer", False)
            label.style().unpolish(label)
            label.style().polish(label)
        # the room sees what was just revealed, even below the fold on a small screen
        self.scroll.ensureWidgetVisible(self._reveals[self._revealed].labels[0][0])
        self._revealed += 1
        return True

    def reveal_all(self) -> None:
        if self.race_view is not None:
            self.race_view.reveal_all()
            return
        while self.reveal_next():
            pass

    def advance(self) -> None:
        """The presenter's one key: the next answer, or the next stimulus once all are shown (a race's only
        once it is over)."""
        if not self.reveal_next() and (self.race_view is None or self.race_view.state.all_revealed()):
            self.nextStimulusRequested.emit()

    # ----- the clip ----------------------------------------------------------------------------------
    def _show_media(self, detail: StimulusDetail | None) -> None:
        """Show the player's media area here for a stimulus with video; audio alone needs only the
        transport line."""
        wants_video = detail is not None and self.player is not None and bool(detail.media_by_role("video"))
        if wants_video and self._borrowed is None:
            self._borrowed = self.player.media_area
            self.media_box.addWidget(self._borrowed)
            self._borrowed.show()
        elif not wants_video:
            self._give_back()
        has_clip = detail is not None and self.player is not None and bool(
            detail.media_by_role("video") or detail.media_by_role("audio"))
        self.transport.setVisible(has_clip)
        # the keys line names only what works on this stimulus
        shown = [k for k in HELP_KEYS if (k != "Space" or has_clip) and (k != "V" or (has_clip and self._voices))
                 and (k != "R" or self._race_desk is not None)]
        self.help.setText(self.race_view.keys if self.race_view is not None else " · ".join(
            f"{k}: {d.split(',')[0]}" for k in shown for key, _a, d in PRESENTATION_KEYS if key == k))
        self._show_position()

    def _give_back(self) -> None:
        if self._borrowed is not None and self.player is not None:
            self.player.splitter.insertWidget(0, self._borrowed)
        self._borrowed = None

    def toggle_play(self) -> None:
        """Space: play or pause the clip on the one clock."""
        if self.player is not None:
            self.player.clock.toggle()

    def next_voice(self) -> None:
        if self.player is not None:
            self.player.next_voice()
            self._show_position()

    def _on_clock(self, _event: ClockEvent) -> None:
        self._show_position()

    def _show_position(self) -> None:
        if self.player is None or not self.transport.isVisibleTo(self):
            return
        clock = self.player.clock
        state = "▶ playing" if clock.playing else "❚❚ paused"
        voice = f" · voice: {self.player.voice} (V)" if self._voices and self.player.voice else ""
        self.transport.setText(f"{state}  {format_time(clock.position)} / {format_time(clock.duration or 0.0)}"
                               f"{voice} · Space plays")

    # ----- the race --------------------------------------------------------------------------------------
    def enable_race(self, desk: RaceDesk) -> None:
        """Let the presenter race the contenders the settings name (R, the Race button)."""
        self._race_desk = desk
        for widget in (self.race_button, self.contenders_button, self.at_once):
            widget.show()
        settings = desk.settings.load()
        self.at_once.setChecked(settings.race_verdicts_at_once)
        self._show_media(self._detail)
        if settings.contenders:
            desk.runner.submit("race-prepare", _prepare_race, lambda _done: None, lambda _error: None)

    def race_running(self) -> bool:
        return self._race_stop is not None

    def start_race(self, ask_again: bool = False) -> None:
        """Ask every contender about the stimulus on stage at once (R); a contender with a kept answer shows it
        unless `ask_again` (Shift+R). Nothing happens while a race runs."""
        desk, detail = self._race_desk, self._detail
        if desk is None or detail is None or self.race_running():
            return
        from app.contenders import lineup_problem
        from widgets.race_view import RaceView

        contenders = desk.settings.load().contenders
        problem = "no contenders yet: name the live models to race with Contenders…" if not contenders \
            else lineup_problem(contenders)
        if problem:
            self.help.setText(f"Cannot race: {problem}")
            return
        self._end_race()
        self.race_view = RaceView(contenders, detail.ground_truth, self.at_once.isChecked(), self.base_px)
        self.scroll.hide()
        self.help.setText(self.race_view.keys)   # the keys line says what the keys do in the race
        self.race_view.keysChanged.connect(self.help.setText)
        # the columns take the room the clip gives up while the models answer
        self._layout.setStretchFactor(self.media_box, RACE_MEDIA_STRETCH)
        self._layout.insertWidget(self._layout.indexOf(self.scroll) + 1, self.race_view, RACE_STRETCH)
        stop = threading.Event()
        self._race_stop = stop
        view, make_service = self.race_view, desk.service

        def work(token: CancelToken, progress: Callable[[float, object], None]) -> None:
            # the live client and the benchmarks' rules load here, off the GUI thread, on the first race
            from app.live.race import run_race

            run_race(make_service(), detail, contenders, lambda event: progress(0.0, event),
                     lambda: stop.is_set() or token(), ask_again=ask_again)

        def finished(_result: object = None) -> None:
            if self.race_view is view:
                self._race_stop = None
                view.finish()

        def failed(exc: BaseException) -> None:
            finished()
            self.help.setText(f"The race stopped: {type(exc).__name__}: {exc}")

        desk.runner.submit("race", work, finished, failed,
                           on_progress=lambda _f, event: view.apply(event) if self.race_view is view else None,
                           with_progress=True)

    def cancel_race(self) -> None:
        """Escape during a race: every contender's request stops; what arrived stays on stage."""
        if self._race_stop is not None:
            self._race_stop.set()
            self._race_stop = None
            if self.race_view is not None:
                self.race_view.cancel_all()

    def _end_race(self) -> None:
        """Leave the race's stage (another stimulus, or leaving): its requests stop, the answers come back."""
        self.cancel_race()
        if self.race_view is not None:
            self.race_view.deleteLater()
            self.race_view = None
            self.scroll.show()
            self._layout.setStretchFactor(self.media_box, MEDIA_STRETCH)
            self._show_media(self._detail)   # and the keys line its keys again

    def edit_contenders(self) -> None:
        """The Contenders… button: name the live models a race asks (kept in the settings)."""
        if self._race_desk is None:
            return
        from widgets.contenders_dialog import ContendersDialog

        dialog = ContendersDialog(self._race_desk.settings.load().contenders, self)
        if dialog.exec() == ContendersDialog.DialogCode.Accepted:
            self._race_desk.settings.update(contenders=dialog.contenders())
            self._show_media(self._detail)
        self.setFocus()

    def _name_at_once(self, on: bool) -> None:
        self.at_once.setText("Verdicts: at once" if on else "Verdicts: on reveal")

    def _at_once_toggled(self, on: bool) -> None:
        self._name_at_once(on)
        if self._race_desk is not None:
            self._race_desk.settings.update(race_verdicts_at_once=on)
        if self.race_view is not None:
            self.race_view.state.verdicts_at_once = on
            self.race_view.refresh()

    # ----- leaving -----------------------------------------------------------------------------------
    def leave(self) -> None:
        """Close the presentation (Escape, F5): the clip pauses and the player gets its media back. Escape
        during a race cancels the race instead."""
        if self.race_running():
            self.cancel_race()
            return
        self._leaving = True
        self.close()
        self.left.emit()

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        # however the window goes (a key, the window manager), the media area must not go with it
        super().closeEvent(event)
        self._end_race()
        if self._unsubscribe is not None:
            self.player.clock.pause()
            self._unsubscribe()
            self._unsubscribe = None
        self._give_back()
        if not self._leaving:
            self.left.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        # a window of its own, outside the main window's key dispatcher: the same keymap, read here
        action = self._actions.get(PRESENTATION_KEYMAP.action_for(key_sequence_of(event), PRESENTATION) or "")
        if action is None:
            super().keyPressEvent(event)
            return
        action()
        event.accept()
