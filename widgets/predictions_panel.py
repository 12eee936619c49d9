"""What others said about the stimulus: every model's answer, judge scores by criterion, the human split."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QFont, QFontMetrics
from PySide6.QtWidgets import (QHeaderView, QLabel, QSplitter, QStyledItemDelegate, QStyleOptionViewItem,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget, QGridLayout, QScrollArea, QFrame)

from app.conditions import condition_name
from storage.records import HumanSplit, Prediction, StimulusDetail
from widgets.judge_bar import judge_bar
from widgets.palette import colour, qcolour

NARROW_WIDTH = 420  # below this the tree drops its answer and judges columns
ANSWER_CHARS = 80   # a long free-text answer (AgentViSS role play) shows its start in the tree, all of it below


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br/>")


def short_answer(p: Prediction) -> str:
    """The parsed answer, or the start of the free-text reply when there is none (AgentViSS role play)."""
    text = (p.answer or p.raw_output or "").strip()
    if not text:
        return "—"
    line = " ".join(text.split())
    return line if len(line) <= ANSWER_CHARS else line[:ANSWER_CHARS - 1] + "…"


def verdict(correct: bool | None) -> str:
    return "" if correct is None else ("✓ right" if correct else "✗ wrong")


class _WrappedNames(QStyledItemDelegate):
    """The first column's rows as tall as their wrapped text is in the room the tree really gives it: Qt's
    own size hint forgets the indentation of a child row, so a long condition name was cut, not wrapped."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self._tree = tree

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802 (Qt API)
        hint = super().sizeHint(option, index)
        depth, parent = 0, index.parent()
        while parent.isValid():
            depth, parent = depth + 1, parent.parent()
        levels = depth + (1 if self._tree.rootIsDecorated() else 0)
        width = self._tree.header().sectionSize(0) - levels * self._tree.indentation() - 10
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        font = index.data(Qt.ItemDataRole.FontRole) or option.font
        height = QFontMetrics(font).boundingRect(QRect(0, 0, max(20, width), 100000),
                                                 int(Qt.TextFlag.TextWordWrap), text).height()
        return QSize(hint.width(), max(hint.height(), height + 4))


class PredictionsPanel(QWidget):
    """A tree of predictions grouped by model, judge bars for the selected one, and the human split."""

    predictionSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Model / condition", "Answer", "", "Judges"])
        self.tree.setRootIsDecorated(True)
        self.tree.setIndentation(12)
        # full condition names wrap in their column rather than being cut to "conversat…"
        self.tree.setWordWrap(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.tree.setUniformRowHeights(False)
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        # rows take their height again when a column's width changes, so wrapped names stay whole
        header.sectionResized.connect(lambda *_: self.tree.doItemsLayout())
        self.tree.setItemDelegateForColumn(0, _WrappedNames(self.tree))
        self.tree.setColumnWidth(1, 80)
        self.tree.setColumnWidth(3, 90)
        self.tree.currentItemChanged.connect(self._current_changed)
        self.judges = QWidget()
        self.judges_layout = QGridLayout(self.judges)
        self.judges_layout.setContentsMargins(4, 4, 4, 4)
        judges_scroll = QScrollArea()
        judges_scroll.setWidgetResizable(True)
        judges_scroll.setWidget(self.judges)
        judges_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.human = QLabel()
        self.human.setWordWrap(True)
        self.human.setTextFormat(Qt.TextFormat.RichText)
        self.human.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        split = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.summary)
        top_layout.addWidget(self.tree)
        split.addWidget(top)
        split.addWidget(judges_scroll)
        split.addWidget(self.human)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 1)
        # the selected prediction's answer and every judge's reason get as much room as the list: they are
        # what one reads; the human split is a few lines (each pane's handle can be dragged)
        split.setSizes([44, 44, 12])
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._predictions: dict[int, Prediction] = {}
        self.set_detail(None)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        # in a narrow dock the model and condition keep the room: the selected answer and its judges are
        # shown in full below the tree anyway
        narrow = self.width() < NARROW_WIDTH
        self.tree.setColumnHidden(1, narrow)
        self.tree.setColumnHidden(3, narrow)

    def set_detail(self, detail: StimulusDetail | None) -> None:
        self.tree.clear()
        self._predictions = {}
        self._show_judges(None)
        if detail is None:
            self.summary.setText("No stimulus selected.")
            self.human.setText("")
            return
        by_model: dict[str, list[Prediction]] = {}
        for p in detail.predictions:
            by_model.setdefault(p.model, []).append(p)
            self._predictions[p.id] = p
        n_right = sum(1 for p in detail.predictions if p.correct)
        n_scored = sum(1 for p in detail.predictions if p.correct is not None)
        truth = f"truth <b>{detail.ground_truth}</b> · " if detail.ground_truth else ""
        scored = f"{n_right} of {n_scored} right" if n_scored else "no scored answers"
        self.summary.setText(f"{truth}{len(by_model)} models, {len(detail.predictions)} predictions, {scored}")
        first_child = None
        for model, preds in by_model.items():
            parent = QTreeWidgetItem([model])
            font = parent.font(0)
            font.setBold(True)
            parent.setFont(0, font)
            scored_preds = [p for p in preds if p.correct is not None]
            if scored_preds:
                k = sum(1 for p in scored_preds if p.correct)
                parent.setText(2, f"{k}/{len(scored_preds)}")
                parent.setForeground(2, QBrush(qcolour("right" if k * 2 >= len(scored_preds) else "wrong")))
            if any(p.is_live for p in preds):
                parent.setText(1, "live")
            self.tree.addTopLevelItem(parent)
            for p in preds:
                item = QTreeWidgetItem([condition_name(p), short_answer(p), verdict(p.correct), self._judge_text(p)])
                item.setData(0, Qt.ItemDataRole.UserRole, p.id)
                if p.correct is not None:
                    item.setForeground(2, QBrush(qcolour("right" if p.correct else "wrong")))
                tip = (p.raw_output or p.answer or "")[:2000]
                item.setToolTip(0, f"{p.model} · {condition_name(p)}" + (f"\n\n{tip}" if tip else ""))
                for col in range(1, 4):
                    item.setToolTip(col, tip)
                parent.addChild(item)
                first_child = first_child or item
            parent.setExpanded(True)
        if first_child is not None:
            self.tree.setCurrentItem(first_child)
        self.human.setText(self._human_html(detail.human, detail.ground_truth))

    @staticmethod
    def _judge_text(p: Prediction) -> str:
        parts = []
        for j in p.judgments:
            if j.score is None:
                continue
            score = f"{j.score:g}" if j.scale_max is None else f"{j.score:g}/{j.scale_max:g}"
            parts.append(f"{j.criterion} {score}")
        return "  ".join(parts)

    @staticmethod
    def _human_html(splits: tuple[HumanSplit, ...], truth: str | None) -> str:
        if not splits:
            return "<i>No human ratings for this stimulus.</i>"
        lines = ["<b>Humans</b>"]
        for s in splits:
            answers = ", ".join(f"{_escape(a) or '—'} {n}" for a, n in sorted(s.answers.items(), key=lambda t: -t[1]))
            share = "" if s.share_correct is None or truth is None else f" — <b>{s.share_correct:.0%}</b> right"
            lines.append(f"{s.condition}: {s.n} raters{share}<br/><span style='color:gray'>{answers}</span>")
        return "<br/>".join(lines)

    def _current_changed(self, current: QTreeWidgetItem | None, _prev: QTreeWidgetItem | None) -> None:
        pid = current.data(0, Qt.ItemDataRole.UserRole) if current is not None else None
        prediction = self._predictions.get(pid) if pid is not None else None
        self._show_judges(prediction)
        if prediction is not None:
            self.predictionSelected.emit(prediction.id)

    def _show_judges(self, prediction: Prediction | None) -> None:
        while self.judges_layout.count():
            item = self.judges_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.reasons: list[QLabel] = []   # each criterion's reason, shown under its bar
        if prediction is None:
            return
        title = QLabel(f"<b>{_escape(prediction.model)}</b> · {_escape(condition_name(prediction))}"
                       f" {verdict(prediction.correct)}")
        title.setWordWrap(True)
        self.judges_layout.addWidget(title, 0, 0, 1, 3)
        said = prediction.answer or ""
        if prediction.raw_output and prediction.raw_output != said:
            said = f"{said}\n\n{prediction.raw_output}" if said else prediction.raw_output
        answer = QLabel(_escape(said[:3000]) if said else "<i>no answer</i>")
        answer.setWordWrap(True)
        answer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        answer.setStyleSheet("QLabel { background: palette(base); padding: 4px; }")
        self.judges_layout.addWidget(answer, 1, 0, 1, 3)
        if not prediction.judgments:
            self.judges_layout.addWidget(QLabel("<i>No judge scores.</i>"), 2, 0, 1, 3)
            self.judges_layout.setRowStretch(3, 1)
            return
        # each criterion: its bar, then its reason right under it (read without hovering)
        row = 2
        for j in prediction.judgments:
            name, bar = judge_bar(j, 16)
            self.judges_layout.addWidget(name, row, 0)
            self.judges_layout.addWidget(bar, row, 1, 1, 2)
            row += 1
            if j.rationale:
                text = QLabel(_escape(j.rationale))
                text.setWordWrap(True)
                text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                text.setStyleSheet(f"QLabel {{ color: {colour('muted')}; padding-left: 8px; }}")
                small = QFont(text.font())
                small.setPointSizeF(small.pointSizeF() * 0.92)
                text.setFont(small)
                self.judges_layout.addWidget(text, row, 0, 1, 3)
                self.reasons.append(text)
                row += 1
        self.judges_layout.setRowStretch(row, 1)
