"""An AgentViSS scene's labels: every annotator's, grouped by the role or turn they describe, and a row to add
one (pick the role or turn, the label set, the label). Edits go through the annotation model, so they are
undoable, stamped with the annotator and published on the change channel like any other label."""
from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from app.annotation_model import AnnotationModel
from app.page_labels import describe_target, label_sets_for, turn_target
from storage.records import StimulusDetail
from widgets.tasks import TaskRunner

_ID = Qt.ItemDataRole.UserRole


class SceneAnnotationsPanel(QWidget):
    """The labels of the scene on screen; `set_detail` shows a scene, `set_annotator` says who edits."""

    message = Signal(str)

    def __init__(self, model: AnnotationModel, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.runner = runner
        self.detail: StimulusDetail | None = None
        self.title = QLabel("<b>Labels on this scene</b>")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Role / turn", "Label", "Annotator"])
        self.tree.setRootIsDecorated(True)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.target = QComboBox()
        self.target.setToolTip("The role (its profile) or the turn the label describes")
        self.label_set = QComboBox()
        self.label_set.currentIndexChanged.connect(self._fill_labels)
        self.label = QComboBox()
        self.add_button = QPushButton("Add label")
        self.add_button.clicked.connect(self.add)
        self.delete_button = QPushButton("Delete mine")
        self.delete_button.setToolTip("Delete the selected label (only your own)")
        self.delete_button.clicked.connect(self.delete_selected)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Undo your last label edit on this scene")
        self.undo_button.clicked.connect(lambda _checked=False: self.model.undo())
        row = QHBoxLayout()
        for widget in (self.target, self.label_set, self.label):
            row.addWidget(widget, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.delete_button)
        row.addWidget(self.undo_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        model.subscribe(self._refresh)

    def set_annotator(self, name: str) -> None:
        self.model.annotator = name

    def set_detail(self, detail: StimulusDetail | None) -> None:
        """Show this scene's labels (read on a worker) and offer its roles, turns and the sets that apply."""
        self.detail = detail
        self.target.clear()
        self.tree.clear()
        if detail is None:
            self.runner.cancel("scene-annotations")
            self.model.show(None, [])
            return
        for role in (detail.meta.get("roles") or {}):
            self.target.addItem(f"role: {role}", role)
        for seg in detail.segments:
            self.target.addItem(f"turn {seg.ord + 1} ({seg.speaker})", turn_target(seg.ord))
        self.reload_label_sets()
        stimulus_id = detail.id
        self.model.expect(stimulus_id)
        self.runner.submit("scene-annotations", lambda: self.model.read(stimulus_id),
                           lambda rows: self.model.show(stimulus_id, rows),
                           lambda exc: self.message.emit(f"The labels of this scene could not be read: {exc}"))

    def reload_label_sets(self) -> None:
        """Offer the whole-stimulus label sets made for this scene's benchmark."""
        benchmark = self.detail.benchmark if self.detail is not None else None
        sets = [s for s in label_sets_for(self.model.label_sets(), benchmark) if s.scope in ("whole", "both")]
        current = self.label_set.currentText()
        self.label_set.blockSignals(True)
        self.label_set.clear()
        self.label_set.addItems([s.name for s in sets])
        self.label_set.setCurrentIndex(max(0, self.label_set.findText(current)))
        self.label_set.blockSignals(False)
        self._fill_labels()

    def _fill_labels(self) -> None:
        self.label.clear()
        if self.label_set.currentText():
            self.label.addItems([label.name for label in self.model.labels(self.label_set.currentText())])

    def add(self) -> None:
        """Add the chosen label to the chosen role or turn, as the current annotator."""
        if self.detail is None or not self.label_set.currentText() or not self.label.currentText():
            return
        try:
            self.model.add_label(self.label_set.currentText(), self.label.currentText(), None, None,
                                 value=self.target.currentData())
        except Exception as exc:  # noqa: BLE001 (a refused edit is a message, not a crash)
            self.message.emit(str(exc))

    def delete_selected(self) -> None:
        item = self.tree.currentItem()
        annotation_id = item.data(0, _ID) if item is not None else None
        if annotation_id is None:
            return
        try:
            self.model.delete([int(annotation_id)])
        except Exception as exc:  # noqa: BLE001 (someone else's label: the model refuses, the user is told)
            self.message.emit(str(exc))

    def _refresh(self) -> None:
        self.undo_button.setEnabled(self.model.can_undo())
        self.undo_button.setToolTip(self.model.undo_text() or "Nothing to undo on this scene")
        if self.detail is None or self.model.stimulus_id != self.detail.id:
            return
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        labels = [a for a in self.model.annotations() if a.is_whole and a.label]
        for a in sorted(labels, key=lambda a: (a.value or "", a.label_set, a.annotator)):
            target = describe_target(a.value, self.detail.segments)
            group = groups.get(target)
            if group is None:
                group = QTreeWidgetItem([target])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                groups[target] = group
                self.tree.addTopLevelItem(group)
            child = QTreeWidgetItem([a.label_set, a.label or "", a.annotator])
            child.setData(0, _ID, a.id)
            child.setToolTip(1, escape(a.note or ""))
            group.addChild(child)
        self.tree.expandAll()
        self.title.setText(f"<b>Labels on this scene</b> ({len(labels)})")
