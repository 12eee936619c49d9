"""One judge score as a labelled bar with the judge's reason on hover (predictions panel, compare view)."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QProgressBar

from storage.records import Judgment
from widgets.palette import score_colour


def judge_bar(judgment: Judgment, height: int, no_reason: str = "") -> tuple[QLabel, QProgressBar]:
    """The criterion's name and a bar filled to score / scale (5 when the scale is unknown), coloured by score."""
    name = QLabel()
    bar = QProgressBar()
    bar.setRange(0, 100)
    bar.setMaximumHeight(height)
    show_judgment(name, bar, judgment, no_reason)
    return name, bar


def show_judgment(name: QLabel, bar: QProgressBar, judgment: Judgment, no_reason: str = "") -> None:
    """Show `judgment` on a name and bar made by `judge_bar` (a view reuses them for the next stimulus)."""
    name.setText(judgment.criterion)
    scale = judgment.scale_max or 5.0
    bar.setValue(int(round(100 * (judgment.score or 0) / scale)))
    bar.setFormat(f"{judgment.score:g} / {scale:g}" if judgment.score is not None else "—")
    # the bar's colour says the score at a glance: red low, green high, on the judge's own scale
    sheet = (f"QProgressBar::chunk {{ background: {score_colour(judgment.score, scale).name()}; }}"
             " QProgressBar { text-align: center; }") if judgment.score is not None else ""
    if bar.styleSheet() != sheet:  # a style sheet is costly to apply: only when the colour changes
        bar.setStyleSheet(sheet)
    judge = judgment.judge or ("judge" if judgment.rationale else no_reason)
    tip = f"{judge}: {judgment.rationale}" if judgment.rationale else judge
    for widget in (name, bar):
        widget.setToolTip(tip)
