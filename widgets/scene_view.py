"""An AgentViSS scene: the group image, the dialogue turn by turn with each speaker's portrait for that turn,
profiles on hover, and the four tasks' judged scores per role in both vision modes."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSplitter, QVBoxLayout, QWidget, QHeaderView

from widgets.frame_table import Cell, Column, FrameTableView
from widgets.palette import score_colour
from storage.importers.words import AGENTVISS_TASKS as TASKS
from storage.records import StimulusDetail

MODES = ("VV", "DV")
PROFILE_FIELDS = ("gender", "age", "occupation", "expression_style", "conflict_trait", "initial_emotion",
                  "facial_expression", "body_action")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def profile_html(name: str, profile: dict) -> str:
    rows = "".join(f"<tr><td style='color:gray'>{k.replace('_', ' ')}</td><td>{_escape(str(profile[k]))}</td></tr>"
                   for k in PROFILE_FIELDS if profile.get(k) not in (None, ""))
    return f"<b>{_escape(name)}</b><table>{rows}</table>"


SCORE_ROWS_SHOWN = 4   # score rows always in view (a scene's roles times its models often number 6)


class SceneView(QWidget):
    """Renders an `agentviss_scene` stimulus."""

    PORTRAIT = 56

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.group_image = QLabel()
        self.group_image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.group_image.setMinimumHeight(160)
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.dialogue = QWidget()
        self.dialogue_layout = QVBoxLayout(self.dialogue)
        self.dialogue_layout.setContentsMargins(4, 4, 4, 4)
        self.dialogue_layout.setSpacing(6)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.dialogue)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scores = FrameTableView()
        self.scores.verticalHeader().setVisible(True)
        self.scores.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.scores.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)   # one line a row
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.group_image)
        left_layout.addWidget(self.description)
        left_layout.addStretch(1)
        left.setMaximumWidth(380)
        self.description.setMinimumWidth(200)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(left)
        top.addWidget(scroll)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 3)
        top.setSizes([360, 520])
        scroll.setMinimumWidth(260)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.scores)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.split = split
        self.annotations: QWidget | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self.turn_rows: list[QWidget] = []

    def attach_annotations(self, panel: QWidget) -> None:
        """Show the scene's labels (a panel with `set_detail`, e.g. `SceneAnnotationsPanel`) under the scores."""
        self.annotations = panel
        self.split.addWidget(panel)
        self.split.setStretchFactor(2, 2)

    def set_detail(self, detail: StimulusDetail | None) -> None:
        for row in self.turn_rows:
            row.deleteLater()
        self.turn_rows = []
        self.scores.set_rows([], [])
        if self.annotations is not None:
            self.annotations.set_detail(detail)  # type: ignore[attr-defined]
        if detail is None:
            self.group_image.clear()
            self.description.clear()
            return
        roles: dict = detail.meta.get("roles") or {}
        group = next((m for m in detail.media if m.role == "image:group"), None)
        if group is not None and group.present:
            pixmap = QPixmap(str(group.path))
            self.group_image.setPixmap(pixmap.scaled(340, 230, Qt.AspectRatioMode.KeepAspectRatio,
                                                     Qt.TransformationMode.SmoothTransformation))
        else:
            self.group_image.setText("group image missing" if group else "no group image")
        facts = [f"<b>{_escape(str(detail.meta.get(k)))}</b> {k.replace('_', ' ')}"
                 for k in ("dialogue_type", "conflict_intensity") if detail.meta.get(k)]
        self.description.setText(f"<p>{_escape(detail.text or '')}</p><p>{' · '.join(facts)}</p>"
                                 f"<p style='color:gray'>Hover a name for the role's profile.</p>")
        portraits = {m.role: m for m in detail.media if m.role.startswith("image:portrait:")}
        for seg in detail.segments:
            self.turn_rows.append(self._turn_row(seg.ord, seg.speaker, seg.text, roles.get(seg.speaker),
                                                 portraits.get(f"image:portrait:{seg.speaker}:{seg.ord}")))
            self.dialogue_layout.insertWidget(self.dialogue_layout.count(), self.turn_rows[-1])
        self.dialogue_layout.addStretch(1)
        self._fill_scores(detail)

    def _turn_row(self, ord_: int, speaker: str, text: str, profile: dict | None, portrait) -> QWidget:
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        picture = QLabel()
        picture.setFixedSize(self.PORTRAIT, self.PORTRAIT)
        if portrait is not None and portrait.present:
            picture.setPixmap(QPixmap(str(portrait.path)).scaled(
                self.PORTRAIT, self.PORTRAIT, Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation))
        else:
            picture.setText("—")
            picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        words = QLabel(f"<b>{_escape(speaker)}</b> <span style='color:gray'>turn {ord_ + 1}</span><br/>"
                       f"{_escape(text)}")
        words.setWordWrap(True)
        words.setTextFormat(Qt.TextFormat.RichText)
        if profile:
            tip = profile_html(speaker, profile)
            words.setToolTip(tip)
            picture.setToolTip(tip)
        layout.addWidget(picture)
        layout.addWidget(words, 1)
        return row

    def _fill_scores(self, detail: StimulusDetail) -> None:
        cells: dict[tuple[str, str], dict[str, tuple[float, float, str]]] = {}
        for p in detail.predictions:
            key = (p.context or "-", p.model)
            for j in p.judgments:
                if j.score is not None and j.criterion in TASKS and (p.vision_mode or "") in MODES:
                    cells.setdefault(key, {})[f"{j.criterion} {p.vision_mode}"] = (
                        j.score, j.scale_max or 5.0, j.rationale or "")
        columns = [f"{t} {m}" for t in TASKS for m in MODES]
        rows = sorted(cells)
        shown = [[_score_cell(*cells[key][column]) if column in cells[key] else "" for column in columns]
                 for key in rows]
        self.scores.set_rows(shown, [Column(c.replace(" ", "\n"), align=Qt.AlignmentFlag.AlignCenter) for c in columns],
                             row_titles=[f"{role} · {model}" for role, model in rows])
        self._fit_scores()

    def _fit_scores(self) -> None:
        """Keep `SCORE_ROWS_SHOWN` rows of the score grid (or all, when fewer) in view however short the page:
        the splitter gives the grid at least that, and it scrolls for the rest."""
        rows = self.scores.row_count()
        row = self.scores.verticalHeader().defaultSectionSize()
        chrome = self.scores.horizontalHeader().sizeHint().height() + 2 * self.scores.frameWidth() + 2
        self.scores.setMinimumHeight(chrome + min(rows, SCORE_ROWS_SHOWN) * row)


def _score_cell(score: float, scale: float, reason: str) -> Cell:
    """A judged score on its judge's colour scale, with the judge's reason (or the scale) on hover."""
    return Cell(score, f"{score:g}", tooltip=reason or f"{score:g} of {scale:g}", background=score_colour(score, scale))
