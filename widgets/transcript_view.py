"""The transcript that follows the clock: one paragraph per segment, speaker colours, the segment being
spoken highlighted and kept in view, the word being spoken highlighted when word times exist.

Clicking a word asks to seek to the word's start; clicking elsewhere in a segment, to the segment's start.
The view never seeks by itself: it emits `seekRequested` and is told the position with `set_position`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QTextBrowser, QTextEdit, QWidget

from storage.records import Segment
from widgets.palette import qcolour
from widgets.waveform_view import LANE_COLOURS, format_time



@dataclass(frozen=True)
class _Span:
    """Characters [first, last) of the document and the time they stand for."""

    first: int
    last: int
    start_s: float | None
    end_s: float | None


class TranscriptView(QTextBrowser):
    """Read-only transcript; `set_segments`, then `set_position` from the clock."""

    seekRequested = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self._segments: list[Segment] = []
        self._segment_spans: list[_Span] = []
        self._word_spans: list[list[_Span]] = []
        self._speaker_colours: dict[str, QColor] = {}
        self._starts = np.zeros(0)
        self._ends = np.zeros(0)
        self._active: tuple[tuple[int, ...], tuple[int, int] | None] = ((), None)

    # ----- content -------------------------------------------------------------------------------------
    def set_speaker_colours(self, colours: dict[str, str]) -> None:
        """Colours by speaker name (e.g. matching the waveform lanes); others get the next free colour."""
        self._speaker_colours = {name: QColor(c) for name, c in colours.items()}

    def speaker_colour(self, speaker: str) -> QColor:
        if speaker not in self._speaker_colours:
            self._speaker_colours[speaker] = QColor(LANE_COLOURS[len(self._speaker_colours) % len(LANE_COLOURS)])
        return self._speaker_colours[speaker]

    def set_segments(self, segments: Sequence[Segment]) -> None:
        """Show `segments` (times relative to the stimulus start); clears the highlight."""
        self._segments = list(segments)
        self._segment_spans, self._word_spans = [], []
        self.clear()
        cursor = QTextCursor(self.document())
        plain, stamp = QTextCharFormat(), QTextCharFormat()
        stamp.setForeground(QColor("#888888"))
        for index, segment in enumerate(self._segments):
            if index:
                cursor.insertBlock()
            first = cursor.position()
            if segment.start_s is not None:
                cursor.insertText(format_time(segment.start_s) + "  ", stamp)
            speaker = QTextCharFormat()
            speaker.setForeground(self.speaker_colour(segment.speaker))
            speaker.setFontWeight(QFont.Weight.Bold)
            cursor.insertText(f"{segment.speaker}: ", speaker)
            words: list[_Span] = []
            if segment.words:
                for n, word in enumerate(segment.words):
                    if n:
                        cursor.insertText(" ", plain)
                    at = cursor.position()
                    cursor.insertText(word.word, plain)
                    words.append(_Span(at, cursor.position(), word.start_s, word.end_s))
            else:
                cursor.insertText(segment.text, plain)
            self._segment_spans.append(_Span(first, cursor.position(), segment.start_s, segment.end_s))
            self._word_spans.append(words)
        nan = float("nan")
        self._starts = np.array([s.start_s if s.start_s is not None else nan for s in self._segments])
        self._ends = np.array([s.end_s if s.end_s is not None else nan for s in self._segments])
        self._active = ((), None)
        self.setExtraSelections([])
        # the view's own cursor rode along to the end as the text went in, and the view would scroll to it
        # once laid out: it opens at the first line, as at t = 0
        self.setTextCursor(QTextCursor(self.document()))
        self.verticalScrollBar().setValue(0)

    # ----- following the clock -------------------------------------------------------------------------
    def active_segments(self, seconds: float) -> tuple[int, ...]:
        """Indices of the segments spoken at `seconds` (several when speakers overlap)."""
        if not len(self._starts):
            return ()
        with np.errstate(invalid="ignore"):
            hits = np.nonzero((self._starts <= seconds) & (seconds < self._ends))[0]
        return tuple(int(i) for i in hits)

    def set_position(self, seconds: float) -> None:
        """Highlight what is spoken at `seconds`; scrolls only when the active segment changes."""
        segments = self.active_segments(seconds)
        word = None
        for index in segments:
            for n, span in enumerate(self._word_spans[index]):
                if span.start_s is not None and span.end_s is not None and span.start_s <= seconds < span.end_s:
                    word = (index, n)
                    break
        if (segments, word) == self._active:
            return
        first_changed = segments[:1] != self._active[0][:1]
        self._active = (segments, word)
        self._apply_highlight()
        if segments and first_changed:
            self._scroll_to(self._segment_spans[segments[0]])

    @property
    def active(self) -> tuple[tuple[int, ...], tuple[int, int] | None]:
        """(active segment indices, (segment, word) being spoken or None)."""
        return self._active

    def _apply_highlight(self) -> None:
        selections = []
        segments, word = self._active
        for index in segments:
            span = self._segment_spans[index]
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(qcolour("segment_bg"))   # a dark counterpart under a dark palette
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = self._cursor_over(span)
            selections.append(selection)
        if word is not None:
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(qcolour("word_bg"))
            selection.cursor = self._cursor_over(self._word_spans[word[0]][word[1]])
            selections.append(selection)
        self.setExtraSelections(selections)

    def _cursor_over(self, span: _Span) -> QTextCursor:
        cursor = QTextCursor(self.document())
        cursor.setPosition(span.first)
        cursor.setPosition(span.last, QTextCursor.MoveMode.KeepAnchor)
        return cursor

    def _scroll_to(self, span: _Span) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(span.first)
        rect = self.cursorRect(cursor)
        viewport = self.viewport().rect()
        if rect.top() < 0 or rect.bottom() > viewport.height() * 0.8:
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + rect.top() - viewport.height() // 4)

    # ----- clicks --------------------------------------------------------------------------------------
    def time_at(self, point: QPoint) -> float | None:
        """The time a click at `point` (viewport coordinates) stands for: a word's start, else its
        segment's start, None outside timed text."""
        char = self.cursorForPosition(point).position()
        for index, span in enumerate(self._segment_spans):
            if span.first <= char <= span.last:
                for word in self._word_spans[index]:
                    if word.first <= char < word.last and word.start_s is not None:
                        return word.start_s
                return span.start_s
        return None

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().mouseReleaseEvent(event)
        if event.button() != Qt.MouseButton.LeftButton or self.textCursor().hasSelection():
            return  # a drag that selected text is a copy, not a seek
        seconds = self.time_at(event.position().toPoint())
        if seconds is not None:
            self.seekRequested.emit(seconds)

    def point_for_word(self, segment: int, word: int) -> QPoint:
        """Viewport point in the middle of a word (for tests that click like a person)."""
        span = self._word_spans[segment][word]
        return self._point_inside(span)

    def point_for_segment(self, segment: int) -> QPoint:
        return self._point_inside(self._segment_spans[segment])

    def _point_inside(self, span: _Span) -> QPoint:
        cursor = QTextCursor(self.document())
        cursor.setPosition(span.first)
        left = self.cursorRect(cursor)
        cursor.setPosition(span.first + max(1, (span.last - span.first) // 2))
        middle = self.cursorRect(cursor)
        return QPoint((left.left() + middle.left()) // 2 + 1, left.center().y())
