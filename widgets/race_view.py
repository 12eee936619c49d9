"""The race on stage: a column per contender streaming its answer with its time, verdicts held back until the
presenter reveals them, and the truth last. Renders `app.live.race.RaceState`; the race itself runs on the
window's worker API and its events come here on the GUI thread.

A column shows only the last few hundred characters of its answer, refreshed at most ten times a second, so four
answers of 256 KB streaming at once cost the event loop the same few label updates as four short ones.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.contenders import Contender
from app.race_state import ANSWERED, ASKING, CANCELLED, FAILED, KEPT, WAITING, RaceEvent, RaceState
from widgets.palette import colour
from widgets.answer_html import HIDDEN, text_html, verdict_html

TAIL_CHARS = 480           # what a column shows of an answer: its end, where it has got to
REFRESH_MS = 100           # elapsed times and streamed text are redrawn at most this often
# the columns' type, as a share of the presentation's base size: smaller as more contenders share the width
TYPE_BY_COLUMNS = {1: 0.9, 2: 0.9, 3: 0.82, 4: 0.76, 5: 0.68, 6: 0.62}


class _Column:
    """One contender's labels."""

    def __init__(self, contender: Contender, parent: QWidget) -> None:
        self.frame = QFrame(parent)
        self.frame.setObjectName("lane")
        self.name = QLabel(contender.name)
        self.name.setTextFormat(Qt.TextFormat.PlainText)
        self.name.setWordWrap(True)
        self.model = QLabel(f"{contender.model} · {contender.modality}")
        self.model.setTextFormat(Qt.TextFormat.PlainText)
        self.model.setObjectName("muted")
        self.model.setWordWrap(True)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setWordWrap(True)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        # the newest words sit at the bottom; older ones leave at the top
        self.body.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom)
        self.body.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.answer = QLabel()
        self.answer.setTextFormat(Qt.TextFormat.RichText)
        self.answer.setWordWrap(True)
        layout = QVBoxLayout(self.frame)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(4)
        layout.addWidget(self.name)
        layout.addWidget(self.model)
        layout.addWidget(self.status)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.answer)
        self.shown_chars = -1   # how much of the lane's text the body shows (redrawn when it grows)


class RaceView(QWidget):
    """Every contender's column side by side and a truth line under them; says what the keys do now."""

    keysChanged = Signal(str)   # what the presenter's keys do now, for the presentation's key line

    def __init__(self, contenders: Sequence[Contender], truth: str | None, verdicts_at_once: bool,
                 base_px: Callable[[], int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("race")
        self.state = RaceState(contenders, truth, verdicts_at_once)
        self._base_px = base_px
        self.columns: list[_Column] = []
        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        for index, contender in enumerate(contenders):
            column = _Column(contender, self)
            self.columns.append(column)
            grid.addWidget(column.frame, 0, index)
            grid.setColumnStretch(index, 1)
        self.truth = QLabel()
        self.truth.setObjectName("truth")
        self.truth.setTextFormat(Qt.TextFormat.RichText)
        self.keys = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addLayout(grid, 1)
        layout.addWidget(self.truth)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._timer.start()
        self.apply_palette()
        self.apply_fonts()
        self.refresh()

    # ----- look --------------------------------------------------------------------------------------
    def apply_palette(self) -> None:
        self.setStyleSheet(
            f"QFrame#lane {{ background: {colour('world_bg')}; border-radius: 8px; }}"
            f" QLabel {{ color: {colour('page_fg')}; background: transparent; }}"
            f" QLabel#muted {{ color: {colour('muted')}; }}"
            f" QLabel#truth {{ background: {colour('truth_bg')}; padding: 4px 10px; }}")

    def apply_fonts(self) -> None:
        """Type from the presentation's base size, smaller as more columns share the width."""
        base = self._base_px()
        scale = TYPE_BY_COLUMNS.get(len(self.columns), min(TYPE_BY_COLUMNS.values()))
        for column in self.columns:
            for label, share, bold in ((column.name, scale + 0.1, True), (column.model, scale * 0.7, False),
                                       (column.status, scale * 0.8, False), (column.body, scale * 0.85, False),
                                       (column.answer, scale + 0.1, True)):
                self._font(label, base * share, bold)
        self._font(self.truth, base * 0.8, False)

    @staticmethod
    def _font(label: QLabel, px: float, bold: bool) -> None:
        font = label.font()
        font.setPixelSize(max(10, round(px)))
        font.setBold(bold)
        label.setFont(font)

    # ----- the race ----------------------------------------------------------------------------------
    def apply(self, event: RaceEvent) -> None:
        """One event from the race's worker; text waits for the next refresh, an ending shows at once."""
        self.state.apply(event)
        if event.kind != "text":
            self._draw(event.lane)
            self._draw_truth()

    def cancel_all(self) -> None:
        """Escape: every lane still running shows as cancelled (the worker stops their requests)."""
        self.state.cancel_all()
        self.finish()

    def finish(self) -> None:
        """The race's worker is done: stop the clock and draw the final state."""
        self._timer.stop()
        self.refresh()

    def refresh(self) -> None:
        now = time.monotonic()
        for index in range(len(self.columns)):
            self._draw(index, now)
        self._draw_truth()

    def reveal_next(self) -> bool:
        """Reveal the next verdict in finishing order, then the truth; False when nothing can be shown yet."""
        if self.state.reveal_next() is None:
            return False
        self.refresh()
        return True

    def reveal_all(self) -> None:
        self.state.reveal_all()
        self.refresh()

    # ----- drawing -----------------------------------------------------------------------------------
    def _draw(self, index: int, now: float | None = None) -> None:
        lane, column = self.state.lanes[index], self.columns[index]
        seconds = seconds_text(self.state.elapsed(index, now))
        muted = colour("muted")
        status = {
            WAITING: f"<span style='color:{muted}'>preparing the question…</span>",
            ASKING: f"<span style='color:{colour('warning')}'>●</span> {'answering' if lane.chars else 'asking'}"
                    f" · {seconds}",
            ANSWERED: f"answered in {seconds}",
            KEPT: f"kept from an earlier race · {seconds}",
            FAILED: f"<span style='color:{colour('error')}'>✗ {text_html(lane.message)}</span> · {seconds}",
            CANCELLED: f"<span style='color:{muted}'>cancelled at {seconds}</span>",
        }[lane.status]
        if column.status.text() != status:
            column.status.setText(status)
        column.status.setToolTip(lane.full_message)
        if lane.chars != column.shown_chars:
            column.body.setText(lane.tail(TAIL_CHARS))
            column.shown_chars = lane.chars
        answer = self._answer_html(index)
        if column.answer.text() != answer:
            column.answer.setText(answer)

    def _answer_html(self, index: int) -> str:
        lane = self.state.lanes[index]
        if not lane.has_verdict:
            return ""
        given = text_html(lane.answer) if lane.answer else "<i>no answer read</i>"
        if not self.state.verdict_shown(index):
            return f"{given} &nbsp; <span style='color:{colour('muted')}'>{HIDDEN}</span>"
        verdict = verdict_html(lane.correct) or f"<span style='color:{colour('muted')}'>not scored</span>"
        return f"{given} &nbsp; {verdict}"

    def _draw_truth(self) -> None:
        truth = self.state.truth
        self.truth.setVisible(truth is not None)
        if truth is not None:
            shown = f"<b>{text_html(truth)}</b>" if self.state.truth_shown() else HIDDEN
            text = f"truth: {shown}"
            if self.truth.text() != text:
                self.truth.setText(text)
        over = self.state.over()
        waiting = sum(1 for lane in self.state.lanes if not lane.ended)
        keys = [f"{waiting} still answering · Esc cancels them all" if waiting else "",
                "" if self.state.all_revealed() else "Down: reveal the next verdict · A: every verdict",
                "Right: next stimulus · R: show again · Shift+R: ask again · Esc: leave" if over else ""]
        text = " · ".join(k for k in keys if k)
        if text != self.keys:
            self.keys = text
            self.keysChanged.emit(text)

    # ----- what the stage shows (for tests and the presenter's own checks) ----------------------------
    def column_text(self, index: int) -> dict[str, str]:
        """What column `index` shows: its name, status, body and answer line, as a reader sees them."""
        column = self.columns[index]
        return {"name": column.name.text(), "status": _plain(column.status.text()), "body": column.body.text(),
                "answer": _plain(column.answer.text())}


def seconds_text(seconds: float) -> str:
    """"0.42 s" under ten seconds (a local model answers in less than one), "12.3 s" above."""
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def _plain(html_text: str) -> str:
    document = QTextDocument()
    document.setHtml(html_text)
    return " ".join(document.toPlainText().split())
