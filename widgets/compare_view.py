"""Compare models on one stimulus, and present the comparison to an audience.

`CompareView` shows, for the current stimulus, each chosen model's answers side by side: right or
wrong, judge scores as bars (the judge's reasons on hover), the response text with its word-level
differences from the first chosen model (or from the reference text) highlighted, and an audio button
where a response audio file exists. The human crowd is a column of its own. NCP traces can be shown
side by side below (the main window answers `tracesWanted` with `set_traces`).

`enter_presentation` opens the same comparison full screen for a room (`widgets.presentation_view`).
"""
from __future__ import annotations

import difflib
import html
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QBoxLayout, QCheckBox, QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QListWidget,
                               QListWidgetItem, QProgressBar, QPushButton, QScrollArea, QSplitter,
                               QVBoxLayout, QWidget)

from app.benchmarks import kind_profile
from app.benchmarks.profile import Asking
from app.conditions import condition_name
from widgets.answer_html import verdict_html
from widgets.judge_bar import judge_bar, show_judgment
from widgets.palette import colour
from widgets.player_panel import PlayerPanel
from widgets.presentation_view import PresentationView, RaceDesk
from storage.records import HumanSplit, Prediction, StimulusDetail

MIN_MODELS, MAX_MODELS = 2, 6
# below this width per chosen model the comparison is one column (model after model), so every model shows
COLUMN_WIDTH = 230


def word_diff_html(baseline: str, text: str) -> str:
    """`text` as HTML with words that differ from `baseline` marked: added or changed words highlighted,
    baseline words it lacks struck through."""
    old, new = baseline.split(), text.split()
    inserted = f"background:{colour('diff_inserted_bg')};color:{colour('diff_inserted_fg')};"
    deleted = f"color:{colour('diff_deleted_fg')};text-decoration:line-through;"
    parts: list[str] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(html.escape(" ".join(new[b0:b1])))
            continue
        if op in ("delete", "replace") and a1 > a0:
            parts.append(f"<span style='{deleted}'>{html.escape(' '.join(old[a0:a1]))}</span>")
        if op in ("insert", "replace") and b1 > b0:
            parts.append(f"<span style='{inserted}'>{html.escape(' '.join(new[b0:b1]))}</span>")
    return " ".join(parts)


def response_text(p: Prediction) -> str:
    """What the model said: the full output when stored, else the parsed answer."""
    return (p.raw_output or p.answer or "").strip()


def human_summary(splits: Sequence[HumanSplit], truth: str | None) -> list[str]:
    lines = []
    for s in splits:
        answers = ", ".join(f"{a or '—'} {n}" for a, n in sorted(s.answers.items(), key=lambda t: -t[1]))
        share = f"{s.share_correct:.0%} right" if s.share_correct is not None and truth is not None else ""
        lines.append(f"{s.condition}: {s.n} raters {share} ({answers})".replace("  ", " "))
    return lines


def _same_condition(a: Prediction, b: Prediction) -> bool:
    return (a.modality, a.prompt_setting, a.vision_mode, a.context) == (b.modality, b.prompt_setting, b.vision_mode,
                                                                        b.context)


SHORT_ANSWER = 40
STACKED_CELL_WIDTH = 100  # a cell stacked in a narrow dock: its text wraps to the dock's width


class _PredictionCell(QFrame):
    """One prediction: its answer and verdict, judge bars (reasons on hover), response text, audio button.
    Made for a number of judge criteria; `show` fills it, again for each stimulus with as many."""

    def __init__(self, p: Prediction, text_html: str, audio: Path | None, on_play, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(160)
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        self.answer = QLabel()
        self.answer.setTextFormat(Qt.TextFormat.RichText)
        grid.addWidget(self.answer, 0, 0, 1, 2)
        self._judges: list[tuple[QLabel, QProgressBar]] = []
        self.judge_bars: list[QProgressBar] = []
        row = 1
        for j in p.judgments:
            name, bar = judge_bar(j, 18, no_reason="no reason given")
            self._judges.append((name, bar))
            self.judge_bars.append(bar)
            grid.addWidget(name, row, 0)
            grid.addWidget(bar, row, 1)
            row += 1
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.text, row, 0, 1, 2)
        self._audio_row = row + 1
        self._audio: Path | None = None
        self._on_play = on_play
        self.audio_button: QPushButton | None = None
        self.show_prediction(p, text_html, audio)

    def show_prediction(self, p: Prediction, text_html: str, audio: Path | None) -> None:
        """Fill the cell with `p` (as many judge criteria as the cell was made for)."""
        short = p.answer if p.answer and len(p.answer) <= SHORT_ANSWER and p.answer != response_text(p) else ""
        self.answer.setText(f"<b>{html.escape(short)}</b> {verdict_html(p.correct)}".strip())
        # only once it has a parent: shown without one it would flash up as a window and take the focus
        self.answer.setVisible(bool(short) or p.correct is not None)
        for (name, bar), j in zip(self._judges, p.judgments):
            show_judgment(name, bar, j, no_reason="no reason given")
        self.text.setText(text_html)
        self.text.setToolTip((p.raw_output or "")[:2000])
        self._audio = audio
        if audio is not None and self.audio_button is None:
            self.audio_button = QPushButton("▶ response audio")
            self.audio_button.clicked.connect(lambda _=False: self._audio is not None and self._on_play(str(self._audio)))
            self.layout().addWidget(self.audio_button, self._audio_row, 0, 1, 2)
        if self.audio_button is not None:
            self.audio_button.setToolTip(str(audio) if audio is not None else "")
            self.audio_button.setVisible(audio is not None)


class CompareView(QWidget):
    """Side-by-side answers of 2 to 6 chosen models (plus the human crowd) on the current stimulus."""

    comparedModelsChanged = Signal(tuple)
    playResponseRequested = Signal(str)
    tracesWanted = Signal(int, tuple)          # NCP task id, chosen models: answer with set_traces
    nextStimulusRequested = Signal()
    previousStimulusRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.detail: StimulusDetail | None = None
        self.response_audio: dict[int, Path] = {}
        self._available: list[str] = []
        self._chosen: list[str] = []
        self._cells: dict[tuple[str, str], _PredictionCell] = {}
        self._stale = False  # changed while hidden: rendered when shown (or when its cells are read)
        # what the grid was built for; a stimulus of the same shape refills its widgets instead of new ones
        self._shape: tuple | None = None
        self._headings: dict[str, QLabel] = {}
        self._condition_labels: dict[tuple[str | None, str], QLabel] = {}  # (model when stacked, condition)
        self._crowd: QLabel | None = None
        self.presentation: PresentationView | None = None
        self.race_desk: RaceDesk | None = None   # set by the window: lets a presentation race live models
        self.model_list = QListWidget()
        self.model_list.setMaximumWidth(220)
        self.model_list.itemChanged.connect(self._item_changed)
        self.humans_box = QCheckBox("human crowd")
        self.humans_box.setChecked(True)
        self.humans_box.toggled.connect(lambda _on: self._render())
        self.baseline_box = QComboBox()
        self.baseline_box.setToolTip("Which answer the others' words are compared with")
        self.baseline_box.currentIndexChanged.connect(lambda _i: self._render())
        self.baseline_box.activated.connect(self._baseline_picked)
        self._baseline_choice: str | None = None   # what the user picked ("model:NAME", "reference", "none")
        self._narrow = False
        self._condition_names: dict[str, str] = {}
        present = QPushButton("Present…")
        present.setToolTip("Full screen, large type; Right/PgDown/Space advance, Left/PgUp back, Esc leaves")
        present.clicked.connect(lambda _checked=False: self.enter_presentation(full_screen=True))
        self.hint = QLabel("")
        self.header = QLabel("No stimulus selected.")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        side = QVBoxLayout()
        side.addWidget(QLabel(f"Compare {MIN_MODELS}-{MAX_MODELS} models:"))
        side.addWidget(self.model_list, 1)
        side.addWidget(self.humans_box)
        side.addWidget(QLabel("Diff baseline:"))
        side.addWidget(self.baseline_box)
        side.addWidget(present)
        side_widget = QWidget()
        side_widget.setLayout(side)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setHorizontalSpacing(8)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.grid_host)
        main = QVBoxLayout()
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        main.addLayout(top)
        main.addWidget(self.hint)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(scroll)
        self.trace_host = QWidget()
        self.trace_layout = QVBoxLayout(self.trace_host)
        self.trace_layout.setContentsMargins(0, 0, 0, 0)
        self.trace_host.hide()
        self.stepper = None
        self.splitter.addWidget(self.trace_host)
        main.addWidget(self.splitter, 1)
        main_widget = QWidget()
        main_widget.setLayout(main)
        # the model list sits beside the answers when there is room, above them in a narrow dock
        self.outer = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.outer.addWidget(side_widget)
        self.outer.addWidget(main_widget, 1)

    # ----- models ----------------------------------------------------------------------------------------
    def set_available_models(self, models: Sequence[str]) -> None:
        """The models the user can choose from (the dataset's models)."""
        self._available = list(dict.fromkeys(models))
        self._fill_list()

    def compared_models(self) -> tuple[str, ...]:
        return tuple(self._chosen)

    def set_compared_models(self, models: Sequence[str]) -> None:
        """Choose these models (at most six are kept, in this order)."""
        chosen = [m for m in dict.fromkeys(models)][:MAX_MODELS]
        if chosen == self._chosen:
            return
        self._chosen = chosen
        for m in chosen:
            if m not in self._available:
                self._available.append(m)
        self._fill_list()
        self._render()
        self.comparedModelsChanged.emit(tuple(chosen))

    def _fill_baselines(self) -> None:
        """The diff baseline is named, never implied: one of the chosen models, the reference text, or none."""
        kept = self._baseline_choice
        self.baseline_box.blockSignals(True)
        self.baseline_box.clear()
        for model in self._chosen:
            self.baseline_box.addItem(f"differences from {model}", f"model:{model}")
        self.baseline_box.addItem("differences from the reference text", "reference")
        self.baseline_box.addItem("no differences marked", "none")
        index = self.baseline_box.findData(kept) if kept is not None else -1
        self.baseline_box.setCurrentIndex(index if index >= 0 else 0)
        self.baseline_box.blockSignals(False)

    def _baseline_picked(self, _index: int) -> None:
        self._baseline_choice = self.baseline_box.currentData()

    def set_baseline(self, kind: str, model: str | None = None) -> None:
        """Compare with `model`'s answers (kind 'model'), the reference text ('reference') or nothing ('none')."""
        data = f"model:{model}" if kind == "model" else kind
        index = self.baseline_box.findData(data)
        if index >= 0:
            self._baseline_choice = data
            self.baseline_box.setCurrentIndex(index)

    def baseline_model(self) -> str | None:
        data = self.baseline_box.currentData() or ""
        return data.split(":", 1)[1] if data.startswith("model:") else None

    def _fill_list(self) -> None:
        self._fill_baselines()
        self.model_list.blockSignals(True)
        self.model_list.clear()
        for name in self._available:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in self._chosen else Qt.CheckState.Unchecked)
            self.model_list.addItem(item)
        self.model_list.blockSignals(False)

    def _item_changed(self, item: QListWidgetItem) -> None:
        name = item.text()
        if item.checkState() == Qt.CheckState.Checked and name not in self._chosen:
            if len(self._chosen) >= MAX_MODELS:
                self.model_list.blockSignals(True)
                item.setCheckState(Qt.CheckState.Unchecked)
                self.model_list.blockSignals(False)
                self.hint.setText(f"At most {MAX_MODELS} models side by side: uncheck one first.")
                return
            self._chosen.append(name)
        elif item.checkState() != Qt.CheckState.Checked and name in self._chosen:
            self._chosen.remove(name)
        else:
            return
        self._fill_baselines()
        self._render()
        self.comparedModelsChanged.emit(tuple(self._chosen))

    # ----- content ---------------------------------------------------------------------------------------
    def set_detail(self, detail: StimulusDetail | None, response_audio: dict[int, Path] | None = None) -> None:
        """Show this stimulus. `response_audio` maps prediction ids to response audio files (see
        `storage.analysis.response_audio_paths`); `detail.extra["response_audio"]` is read when omitted."""
        self.detail = detail
        if response_audio is None and detail is not None:
            response_audio = detail.extra.get("response_audio", {})
        self.response_audio = dict(response_audio or {})
        if detail is not None:
            new = [p.model for p in detail.predictions if p.model not in self._available]
            if new:
                self._available += list(dict.fromkeys(new))
                self._fill_list()
            if not self._chosen:
                first = list(dict.fromkeys(p.model for p in detail.predictions))[:MIN_MODELS]
                self._chosen = first
                self._fill_list()
                self.comparedModelsChanged.emit(tuple(first))
        self.set_traces([])
        self._render()
        if detail is not None and kind_profile(detail.kind, detail.benchmark).asking is Asking.TOOLS and self._chosen:
            self.tracesWanted.emit(detail.id, tuple(self._chosen))
        if self.presentation is not None:
            self.presentation.set_content(detail, self._chosen, self.humans_box.isChecked())

    def set_traces(self, traces: Sequence[tuple[str, list[dict], object]]) -> None:
        """Show NCP traces side by side ([(label, steps, goal)], e.g. from
        `app.ncp.compare_traces`); an empty list hides the area."""
        if not traces:
            self.trace_host.hide()
            if self.stepper is not None:
                self.stepper.set_traces([])
            return
        if self.stepper is None:
            from widgets.belief_stepper import BeliefStepperView

            self.stepper = BeliefStepperView()
            self.trace_layout.addWidget(self.stepper)
        self.stepper.set_traces(list(traces))
        self.trace_host.show()

    def baseline_text(self, p: Prediction) -> str | None:
        """What `p`'s response is compared with: the reference text, or the first chosen model's response in
        the same condition (None for the first model itself)."""
        if self.detail is None:
            return None
        kind = (self.baseline_box.currentData() or "none").split(":", 1)[0]
        if kind == "reference":
            return self.detail.text or None
        baseline = self.baseline_model()
        if kind != "model" or baseline is None or p.model == baseline:
            return None
        firsts = [q for q in self.detail.predictions if q.model == baseline]
        match = next((q for q in firsts if _same_condition(p, q)), None)
        if match is None:
            match = next((q for q in firsts if q.modality == p.modality), None)
        return response_text(match) if match is not None else None

    def _clear_grid(self) -> None:
        while self.grid.count():
            widget = self.grid.takeAt(0).widget()
            if widget is not None:
                widget.setParent(None)
                widget.deleteLater()
        self._cells = {}
        self._shape = None
        self._headings, self._condition_labels, self._crowd = {}, {}, None

    @property
    def cells(self) -> dict[tuple[str, str], _PredictionCell]:
        """The shown prediction cells by (model, condition), rendered first if the view changed while hidden."""
        if self._stale:
            self._render_now()
        return self._cells

    def showEvent(self, event) -> None:  # noqa: N802 (Qt API)
        if self._stale:
            self._render_now()
        super().showEvent(event)

    def _render(self) -> None:
        """Render now if on screen; a hidden view (a dock behind another tab) waits until it is shown."""
        if self.isVisible():
            self._render_now()
        else:
            self._stale = True

    def _render_now(self) -> None:
        """One column per chosen model (then the crowd), one row per condition, so like faces like."""
        self._stale = False
        detail = self.detail
        if detail is None:
            self._clear_grid()
            self.header.setText("No stimulus selected.")
            return
        truth = f" · truth <b>{html.escape(detail.ground_truth)}</b>" if detail.ground_truth else ""
        self.header.setText(f"<b>{html.escape(detail.external_id)}</b> {html.escape(detail.short_title)}{truth}")
        if len(self._chosen) < MIN_MODELS:
            self.hint.setText(f"Choose at least {MIN_MODELS} models to compare.")
        elif not self.hint.text().startswith("At most"):
            self.hint.setText("")
        conditions = list(dict.fromkeys(p.condition for p in detail.predictions if p.model in self._chosen))
        self._condition_names = {p.condition: condition_name(p) for p in detail.predictions}
        self._narrow = self._is_narrow()
        self.outer.setDirection(QBoxLayout.Direction.TopToBottom if self._narrow else QBoxLayout.Direction.LeftToRight)
        self.model_list.setMaximumHeight(96 if self._narrow else 16777215)
        shape = self._shape_of(detail, conditions)
        if shape == self._shape:
            self._refill(detail, conditions)
            return
        self._clear_grid()
        self._shape = shape
        if self._narrow:
            self._render_stacked(detail, conditions)
            return
        for c, model in enumerate(self._chosen, start=1):
            self.grid.addWidget(self._heading(model), 0, c)
        for r, condition in enumerate(conditions, start=1):
            label = self._condition_labels[(None, condition)] = QLabel(self._condition_text(condition))
            label.setWordWrap(True)
            label.setMaximumWidth(150)
            self.grid.addWidget(label, r, 0, Qt.AlignmentFlag.AlignTop)
            for c, model in enumerate(self._chosen, start=1):
                self.grid.addWidget(self._cell(detail, model, condition), r, c, Qt.AlignmentFlag.AlignTop)
        if self.humans_box.isChecked() and detail.human:
            c = len(self._chosen) + 1
            self.grid.addWidget(QLabel("<b>human crowd</b>"), 0, c)
            crowd = self._crowd = QLabel(self._crowd_text(detail))
            crowd.setWordWrap(True)
            crowd.setMinimumWidth(200)
            self.grid.addWidget(crowd, 1, c, max(1, len(conditions)), 1, Qt.AlignmentFlag.AlignTop)
        self.grid.setRowStretch(len(conditions) + 1, 1)
        for c in range(1, len(self._chosen) + 2):
            self.grid.setColumnStretch(c, 1)

    def _is_narrow(self) -> bool:
        """Too narrow for a column per model (e.g. docked beside the stimulus): stack the models instead."""
        return self.width() < COLUMN_WIDTH * max(1, len(self._chosen)) + self.model_list.maximumWidth()

    def _shape_of(self, detail: StimulusDetail, conditions: list[str]) -> tuple:
        """What decides the grid's widgets: layout, models, conditions, the crowd, and which cells hold a
        prediction with how many judge criteria."""
        cells = tuple(None if p is None else len(p.judgments)
                      for p in (self._prediction(detail, m, c) for m in self._chosen for c in conditions))
        return (self._narrow, tuple(self._chosen), tuple(conditions),
                self.humans_box.isChecked() and bool(detail.human), cells)

    def _refill(self, detail: StimulusDetail, conditions: list[str]) -> None:
        """Show `detail` in the widgets of the last stimulus, which had the same shape."""
        for model, heading in self._headings.items():
            heading.setText(self._heading_text(model))
        for (_model, condition), label in self._condition_labels.items():
            label.setText(self._condition_text(condition))
        for (model, condition), cell in self._cells.items():
            p = self._prediction(detail, model, condition)
            cell.show_prediction(p, self._body(p), self.response_audio.get(p.id))
        if self._crowd is not None:
            self._crowd.setText(self._crowd_text(detail))

    def _condition_text(self, condition: str) -> str:
        return html.escape(self._condition_names.get(condition, condition))

    def _crowd_text(self, detail: StimulusDetail) -> str:
        return "<br/>".join(html.escape(line) for line in human_summary(detail.human, detail.ground_truth))

    def _heading_text(self, model: str) -> str:
        mark = " <span style='font-weight:normal'>(baseline)</span>" if model == self.baseline_model() else ""
        return f"<b>{html.escape(model)}</b>{mark}"

    def _heading(self, model: str) -> QLabel:
        heading = self._headings[model] = QLabel(self._heading_text(model))
        heading.setWordWrap(True)  # "Lantern-VL 9B (baseline)" wraps in a narrow dock instead of widening it
        font = QFont(heading.font())
        font.setPointSizeF(font.pointSizeF() * 1.2)
        heading.setFont(font)
        return heading

    @staticmethod
    def _prediction(detail: StimulusDetail, model: str, condition: str) -> Prediction | None:
        return next((q for q in detail.predictions if q.model == model and q.condition == condition), None)

    def _body(self, p: Prediction) -> str:
        """The response as HTML, its differences from the baseline marked."""
        text = response_text(p)
        baseline = self.baseline_text(p)
        return word_diff_html(baseline, text) if baseline is not None else html.escape(text)

    def _cell(self, detail: StimulusDetail, model: str, condition: str) -> QWidget:
        p = self._prediction(detail, model, condition)
        if p is None:
            return QLabel("—")
        cell = _PredictionCell(p, self._body(p), self.response_audio.get(p.id), self.playResponseRequested.emit)
        self._cells[(model, condition)] = cell
        return cell

    def _render_stacked(self, detail: StimulusDetail, conditions: list[str]) -> None:
        """One column: each model's heading, then per condition its name over its answer, each as wide as
        the dock (a name beside the answer left neither room in a docked panel, and every cell was cut);
        the crowd last."""
        row = 0
        for model in self._chosen:
            self.grid.addWidget(self._heading(model), row, 0, 1, 2)
            row += 1
            for condition in conditions:
                label = self._condition_labels[(model, condition)] = QLabel(self._condition_text(condition))
                label.setWordWrap(True)
                label.setStyleSheet(f"color: {colour('muted')};")
                self.grid.addWidget(label, row, 0, 1, 2, Qt.AlignmentFlag.AlignTop)
                cell = self._cell(detail, model, condition)
                cell.setMinimumWidth(STACKED_CELL_WIDTH)
                self.grid.addWidget(cell, row + 1, 0, 1, 2, Qt.AlignmentFlag.AlignTop)
                row += 2
        if self.humans_box.isChecked() and detail.human:
            self.grid.addWidget(QLabel("<b>human crowd</b>"), row, 0, 1, 2)
            crowd = self._crowd = QLabel(self._crowd_text(detail))
            crowd.setWordWrap(True)
            self.grid.addWidget(crowd, row + 1, 0, 1, 2, Qt.AlignmentFlag.AlignTop)
            row += 2
        self.grid.setRowStretch(row, 1)
        self.grid.setColumnStretch(1, 1)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if self.detail is not None and self._is_narrow() != self._narrow:
            self._render()

    # ----- presentation ----------------------------------------------------------------------------------
    def enter_presentation(self, full_screen: bool = True, player: PlayerPanel | None = None) -> PresentationView:
        """Open the presentation of the current comparison (full screen unless told otherwise); the clip
        plays there on `player`'s clock."""
        if self.presentation is None:
            self.presentation = PresentationView(player=player)
            self.presentation.nextStimulusRequested.connect(self.nextStimulusRequested)
            self.presentation.previousStimulusRequested.connect(self.previousStimulusRequested)
            self.presentation.left.connect(self._presentation_left)
            if self.race_desk is not None:
                self.presentation.enable_race(self.race_desk)
        self.presentation.set_content(self.detail, self._chosen, self.humans_box.isChecked())
        if full_screen:
            self.presentation.showFullScreen()
        else:
            self.presentation.show()
        self.presentation.activateWindow()
        self.presentation.setFocus()
        return self.presentation

    def _presentation_left(self) -> None:
        if self.presentation is not None:
            self.presentation.deleteLater()
            self.presentation = None
