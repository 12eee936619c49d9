"""The centre of the window: what the selected stimulus is, shown by its kind."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget, QHeaderView, QSplitter

from app.benchmarks import kind_profile
from app.benchmarks.profile import Page
from storage.records import StimulusDetail
from widgets.frame_table import Column, FrameTableView, as_written
from widgets.mcq_view import McqView
from widgets.palette import colour


class KindPage(Protocol):
    def set_detail(self, detail: StimulusDetail | None) -> None: ...


def _fmt_time(t: float | None) -> str:
    if t is None:
        return ""
    return f"{int(t // 60):02d}:{t % 60:05.2f}"


class GenericStimulusPage(QWidget):
    """Text, media files (present or missing) and the transcript or dialogue, for any kind."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.body = QTextBrowser()
        self.body.setOpenLinks(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.body)

    def set_detail(self, detail: StimulusDetail | None) -> None:
        if detail is None:
            self.body.setHtml("")
            return
        parts = []
        if detail.text:
            parts.append(f"<p style='font-size:15pt'>{_escape(detail.text)}</p>")
        if detail.media:
            missing = f"<span style='color:{colour('error')}'>missing</span>"
            rows = "".join(
                f"<tr><td>{_escape(m.role)}</td><td>{_escape(m.path.name)}</td>"
                f"<td>{'' if m.present else missing}</td></tr>"
                for m in detail.media)
            parts.append(f"<h4>Media</h4><table cellspacing=6>{rows}</table>")
        if detail.segments:
            rows = "".join(
                f"<tr><td style='color:gray'>{_fmt_time(s.start_s)}</td><td><b>{_escape(s.speaker)}</b></td>"
                f"<td>{_escape(s.text)}</td></tr>" for s in detail.segments)
            parts.append(f"<h4>Transcript</h4><table cellspacing=4>{rows}</table>")
        self.body.setHtml("".join(parts) or "<i>Nothing more to show for this stimulus.</i>")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class StimulusView(QWidget):
    """Header and metadata above a page chosen by the stimulus kind (player, scene, stepper, generic)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.meta = FrameTableView([Column("Field"), Column("Value", as_written)])
        self.meta.horizontalHeader().setStretchLastSection(True)
        self.meta.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.meta.setFrameShape(QFrame.Shape.NoFrame)
        self.pages = QStackedWidget()
        self.generic = GenericStimulusPage()
        self.pages.addWidget(self.generic)
        self._pages: dict[Page, QWidget] = {}
        self._needs_height: set[QWidget] = set()  # pages that open with the metadata folded away
        # a multiple-choice question sits above its audio, whole: it wraps and scrolls, never cut off
        self.mcq = McqView()
        self.mcq.hide()
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.mcq)
        self.split.addWidget(self.pages)
        self.split.addWidget(self.meta)
        self.split.setChildrenCollapsible(False)
        self.split.setCollapsible(2, True)  # the metadata folds to its handle, and opens by dragging it
        self.meta.setMinimumHeight(48)  # its header and a row when open; folded, it asks for no height at all
        self.split.setStretchFactor(0, 2)
        self.split.setStretchFactor(1, 5)
        self.split.setStretchFactor(2, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.split, 1)
        self.detail: StimulusDetail | None = None
        self.set_detail(None)

    def register_page(self, shows: Page, page: QWidget, *, needs_height: bool = False) -> None:
        """Show `page` (which has `set_detail`) for stimuli whose kind is shown on `shows` (its profile's
        `page`). A page that `needs_height` (a player with its tracks and tiers) opens with the metadata folded
        to its handle, to be dragged open."""
        self.pages.addWidget(page)
        if needs_height:
            self._needs_height.add(page)
        self._pages[shows] = page

    def current_page(self) -> QWidget:
        return self.pages.currentWidget()

    def set_detail(self, detail: StimulusDetail | None) -> None:
        self.detail = detail
        if detail is None:
            self.header.setText("<span style='color:gray; font-size:13pt'>Select a stimulus in the table.</span>")
            self.meta.set_rows([])
            self.generic.set_detail(None)
            self.pages.setCurrentWidget(self.generic)
            self._show_mcq(None)
            return
        self._show_header(detail)
        rows = [(k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in detail.meta.items()]
        if detail.split:
            rows.insert(0, ("split", detail.split))
        self.meta.set_rows([(str(key), value) for key, value in rows])   # a value cut off shows whole on hover
        page = self._pages.get(kind_profile(detail.kind).page, self.generic)
        page.set_detail(detail)  # type: ignore[attr-defined]
        if page is not self.pages.currentWidget():
            self._fold_metadata(page in self._needs_height)
        self.pages.setCurrentWidget(page)
        self._show_mcq(detail)

    def _fold_metadata(self, fold: bool) -> None:
        """Fold the metadata away (or open it to its usual share) as another kind of page comes up; while
        the same page stays, the annotator's drag of the handle is kept."""
        sizes = self.split.sizes()
        total = max(1, sum(sizes))
        if fold and sizes[2] > 0:
            self.split.setSizes([sizes[0], sizes[1] + sizes[2], 0])
        elif not fold and sizes[2] == 0:
            meta = int(total * 0.15)
            self.split.setSizes([sizes[0], max(1, sizes[1] - meta), meta])

    def metadata_folded(self) -> bool:
        return self.split.sizes()[2] == 0

    def set_annotation_count(self, count: int) -> None:
        """The shown stimulus now has `count` annotations (after an edit): the header says so."""
        if self.detail is not None and count != self.detail.annotation_count:
            self.detail = replace(self.detail, annotation_count=count)
            self._show_header(self.detail)

    def _show_header(self, detail: StimulusDetail) -> None:
        truth = f" · truth <b>{_escape(detail.ground_truth)}</b>" if detail.ground_truth else ""
        shown_title = detail.short_title
        title = f" — {_escape(shown_title)}" if shown_title else ""
        self.header.setText(
            f"<span style='font-size:14pt'><b>{_escape(detail.external_id)}</b>{title}</span><br/>"
            f"<span style='color:gray'>{_escape(detail.dataset_name)} · {_escape(detail.kind)}{truth}"
            f" · {len(detail.predictions)} predictions · {detail.annotation_count} annotations</span>")

    def _show_mcq(self, detail: StimulusDetail | None) -> None:
        is_mcq = detail is not None and kind_profile(detail.kind, detail.benchmark).question
        self.mcq.set_detail(detail if is_mcq else None)
        if not is_mcq:
            self.mcq.hide()
            return
        self.mcq.show()
        # as tall as the question and its options need, up to 45% of the centre (the rest scrolls)
        sizes = self.split.sizes()
        total = max(1, sum(sizes))
        width = self.mcq.viewport().width() if self.mcq.viewport().width() > 50 else self.width() - 20
        self.mcq.document().setTextWidth(max(200, width))
        needed = int(self.mcq.document().size().height()) + 2 * self.mcq.frameWidth() + 8
        top = max(self.mcq.minimumHeight(), min(needed, int(total * 0.45)))
        meta = sizes[2]  # folded on the player page unless the annotator dragged it open
        self.split.setSizes([top, max(1, total - top - meta), meta])
