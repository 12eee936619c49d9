"""Annotate > Label sets…: create and edit label sets (hierarchy, colours, keys, scope), import and export JSON.

Every edit goes through the `AnnotationModel`, which writes it the moment it is made (a field when the user
leaves it, a button when it is clicked) and keeps it in the label sets' own undo history (Undo / Redo here);
`labelSetsChanged` then tells the window to refresh its palettes. Renaming a label or a set rewrites the
annotations that use it with a history event each, so it too can be undone.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFocusEvent, QKeyEvent
from PySide6.QtWidgets import (QColorDialog, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QGroupBox, QHeaderView, QHBoxLayout, QInputDialog, QLabel, QLineEdit, QListWidget,
                               QMessageBox, QPlainTextEdit, QPushButton, QSplitter, QToolButton, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from app.keymap import REDO, UNDO, WINDOW, Keymap, default_keymap
from app.annotation_model import AnnotationModel
from app.annotations import LABEL_SETS_SCOPE
from storage.annotations import Label, LabelSet
from storage.errors import ThinsliceError
from widgets.annotation_tiers import fallback_colour
from widgets.keys import key_sequence_of
from widgets.label_palette import swatch

SCOPE_CHOICES = (("interval", "Time ranges"), ("whole", "Whole stimulus"), ("both", "Both"))
NEW_LABEL = "new label"
ERROR_COLOUR = "#c62828"


class _TextBox(QPlainTextEdit):
    """A few lines of text that, like QLineEdit, say when the user is done editing (on leaving the field)."""

    editingFinished = Signal()

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802 (Qt API)
        super().focusOutEvent(event)
        self.editingFinished.emit()


def _text_or_none(text: str) -> str | None:
    return text.strip() or None


class LabelSetEditorDialog(QDialog):
    """Lists the store's label sets; edits the selected set's scope, description and label tree. Opens on
    `current` (the set in use) when given.

    Refusals (a duplicate key or name, deleting something annotations use, a malformed file) are shown in
    the dialog's message line and change nothing.
    """

    labelSetsChanged = Signal()  # after any change written to the store

    def __init__(self, model: AnnotationModel, parent: QWidget | None = None, *,
                 keymap: Keymap | None = None, current: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Label sets")
        self.model = model
        self.keymap = keymap if keymap is not None else default_keymap()
        self._set: str | None = None
        self._labels: list[Label] = []
        self._folder = ""

        # -- the sets ------------------------------------------------------------------------------
        self.sets = QListWidget()
        self.sets.currentTextChanged.connect(self._show_set)
        self.new_set_button = QPushButton("New…")
        self.rename_set_button = QPushButton("Rename…")
        self.delete_set_button = QPushButton("Delete")
        self.import_button = QPushButton("Import JSON…")
        self.export_button = QPushButton("Export JSON…")
        self.new_set_button.clicked.connect(self._ask_new_set)
        self.rename_set_button.clicked.connect(self._ask_rename_set)
        self.delete_set_button.clicked.connect(self._ask_delete_set)
        self.import_button.clicked.connect(self._ask_import)
        self.export_button.clicked.connect(self._ask_export)
        set_buttons = QHBoxLayout()
        for button in (self.new_set_button, self.rename_set_button, self.delete_set_button):
            set_buttons.addWidget(button)
        file_buttons = QHBoxLayout()
        file_buttons.addWidget(self.import_button)
        file_buttons.addWidget(self.export_button)
        sets_box = QGroupBox("Label sets")
        sets_layout = QVBoxLayout(sets_box)
        sets_layout.addWidget(self.sets, 1)
        sets_layout.addLayout(set_buttons)
        sets_layout.addLayout(file_buttons)

        # -- the selected set: scope, description, label tree ------------------------------------
        self.scope = QComboBox()
        for value, text in SCOPE_CHOICES:
            self.scope.addItem(text, value)
        self.scope.setToolTip("Time ranges: labels on a stretch of time. Whole stimulus: one answer per "
                              "stimulus. Both: either.")
        self.scope.activated.connect(self._commit_scope)
        self.set_description = _TextBox()
        self.set_description.setPlaceholderText("What the set is for")
        self.set_description.setMaximumHeight(72)
        self.set_description.editingFinished.connect(self._commit_set_description)
        self.source = QLabel()
        self.source.setWordWrap(True)
        self.source.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Label", "Key"])
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(lambda item, _old: self._show_label(self._item_name(item)))
        self.add_top_button = QPushButton("Add top-level")
        self.add_child_button = QPushButton("Add child")
        self.add_sibling_button = QPushButton("Add sibling")
        self.delete_label_button = QPushButton("Delete")
        self.up_button = QToolButton()
        self.up_button.setArrowType(Qt.ArrowType.UpArrow)
        self.up_button.setToolTip("Move the label up among its siblings")
        self.down_button = QToolButton()
        self.down_button.setArrowType(Qt.ArrowType.DownArrow)
        self.down_button.setToolTip("Move the label down among its siblings")
        self.add_top_button.clicked.connect(lambda: self._add_label(None, after=None))
        self.add_child_button.clicked.connect(self._add_child)
        self.add_sibling_button.clicked.connect(self._add_sibling)
        self.delete_label_button.clicked.connect(self._ask_delete_label)
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button.clicked.connect(lambda: self._move(+1))
        tree_buttons = QHBoxLayout()
        for button in (self.add_top_button, self.add_child_button, self.add_sibling_button,
                       self.delete_label_button, self.up_button, self.down_button):
            tree_buttons.addWidget(button)
        tree_buttons.addStretch(1)
        set_form = QFormLayout()
        set_form.addRow("Scope", self.scope)
        set_form.addRow("Description", self.set_description)
        set_form.addRow("Source", self.source)
        self.set_box = QGroupBox("Set")
        set_layout = QVBoxLayout(self.set_box)
        set_layout.addLayout(set_form)
        set_layout.addWidget(self.tree, 1)
        set_layout.addLayout(tree_buttons)

        # -- the selected label -------------------------------------------------------------------
        self.name = QLineEdit()
        self.name.editingFinished.connect(self._commit_name)
        self.parent_choice = QComboBox()
        self.parent_choice.activated.connect(self._commit_parent)
        self.colour_button = QToolButton()
        self.colour_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.colour_button.setToolTip("Choose the label's colour")
        self.colour_button.clicked.connect(self._choose_colour)
        self.automatic_colour_button = QPushButton("Automatic")
        self.automatic_colour_button.setToolTip("Forget the chosen colour; the label gets a colour from its name")
        self.automatic_colour_button.clicked.connect(lambda: self._save_current(colour=None))
        colour_row = QHBoxLayout()
        colour_row.addWidget(self.colour_button)
        colour_row.addWidget(self.automatic_colour_button)
        colour_row.addStretch(1)
        self.shortcut = QLineEdit()
        self.shortcut.setMaximumWidth(60)
        self.shortcut.setPlaceholderText("none")
        self.shortcut.setToolTip("One key that picks this label while annotating")
        self.shortcut.editingFinished.connect(self._commit_shortcut)
        self.label_description = _TextBox()
        self.label_description.setPlaceholderText("What the label means, for the annotators")
        self.label_description.editingFinished.connect(self._commit_label_description)
        label_form = QFormLayout()
        label_form.addRow("Name", self.name)
        label_form.addRow("Parent", self.parent_choice)
        label_form.addRow("Colour", colour_row)
        label_form.addRow("Shortcut", self.shortcut)
        label_form.addRow("Description", self.label_description)
        self.label_box = QGroupBox("Label")
        self.label_box.setLayout(label_form)

        # -- messages and closing ------------------------------------------------------------------
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Undo the last change of the label sets")
        self.undo_button.clicked.connect(self.undo)
        self.redo_button = QPushButton("Redo")
        self.redo_button.clicked.connect(self.redo)
        splitter = QSplitter()
        splitter.addWidget(sets_box)
        splitter.addWidget(self.set_box)
        splitter.addWidget(self.label_box)
        splitter.setSizes([230, 500, 370])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.undo_button)
        bottom.addWidget(self.redo_button)
        bottom.addWidget(self.message, 1)
        bottom.addWidget(buttons)
        layout.addLayout(bottom)
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)  # Return finishes a field; it must not also press a button
        self.resize(1100, 640)
        self._refresh_sets(select=current)   # opens on the set the window labels with

    # -- what is selected --------------------------------------------------------------------------
    def current_set(self) -> str | None:
        """The name of the set being edited, or None when the store has none."""
        return self._set

    def current_label(self) -> str | None:
        """The name of the label being edited, or None."""
        return self._item_name(self.tree.currentItem())

    def select_set(self, name: str) -> None:
        """Edit the set called `name` (ignored if there is none)."""
        matches = self.sets.findItems(name, Qt.MatchFlag.MatchExactly)
        if matches:
            self.sets.setCurrentItem(matches[0])

    def select_label(self, name: str) -> None:
        """Edit the label called `name` of the current set (ignored if there is none)."""
        item = self._find_item(name)
        if item is not None:
            self.tree.setCurrentItem(item)

    # -- files ---------------------------------------------------------------------------------------
    def import_file(self, path: Path | str) -> bool:
        """Load a label-set JSON file into the store (a set of the same name is updated) and select it.
        A file that cannot be read or checked changes nothing; the message names the file and the problem."""
        known = {s.name for s in self.model.label_sets()}
        try:
            loaded = self.model.load_label_set_file(path)
        except ThinsliceError as exc:
            self._say(str(exc), error=True)
            return False
        self._refresh_sets(select=loaded.name)
        count = len(self._labels)
        what = "Updated" if loaded.name in known else "Imported"
        self._changed(f"{what} the label set '{loaded.name}' ({count} labels) from {path}.")
        return True

    def export_file(self, path: Path | str) -> bool:
        """Write the current set as label-set JSON to `path`; False (with a message) if it cannot."""
        if self._set is None:
            self._say("Choose a label set to export.", error=True)
            return False
        try:
            self.model.store.write_label_set_file(self._set, path)
        except (ThinsliceError, OSError) as exc:
            self._say(f"Could not write {path}: {exc}", error=True)
            return False
        self._say(f"Exported '{self._set}' ({len(self._labels)} labels) to {path}.")
        return True

    def _ask_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a label set", self._folder,
                                              "Label sets (*.json);;All files (*)")
        if path:
            self._folder = str(Path(path).parent)
            self.import_file(path)

    def _ask_export(self) -> None:
        if self._set is None:
            return
        file_name = self._set.replace("/", "-").replace("\\", "-") + ".json"  # a set name may hold a slash
        suggested = str(Path(self._folder) / file_name) if self._folder else file_name
        path, _ = QFileDialog.getSaveFileName(self, f"Export '{self._set}'", suggested, "Label sets (*.json)")
        if path:
            if not Path(path).suffix:
                path += ".json"
            self._folder = str(Path(path).parent)
            self.export_file(path)

    # -- sets ----------------------------------------------------------------------------------------
    def _ask_new_set(self) -> None:
        name, ok = QInputDialog.getText(self, "New label set", "Name of the new label set:")
        name = name.strip()
        if not ok or not name:
            return
        if self.model.label_set(name) is not None:
            self._say(f"There is already a label set called '{name}'.", error=True)
            return
        if not self._write(lambda: self.model.save_label_set(name, "both")):
            return
        self._refresh_sets(select=name)
        self._changed(f"Created the label set '{name}'. Add its labels with 'Add top-level'.")

    def _ask_rename_set(self) -> None:
        old = self._set
        if old is None:
            return
        new, ok = QInputDialog.getText(self, "Rename label set", f"New name for '{old}':", text=old)
        new = new.strip()
        if not ok or new == old:
            return
        used = self.model.label_set_usage(old)
        try:
            self.model.rename_label_set(old, new)
        except ThinsliceError as exc:
            self._say(str(exc), error=True)
            return
        self._refresh_sets(select=new)
        follow = f" {used} annotations follow the new name." if used else ""
        self._changed(f"Renamed the label set '{old}' to '{new}'.{follow}")

    def _ask_delete_set(self) -> None:
        name = self._set
        if name is None:
            return
        used = self.model.label_set_usage(name)
        if used:
            self._say(f"The label set '{name}' is used by {used} annotations, so it was not deleted. "
                      "Delete or relabel those annotations first.", error=True)
            return
        answer = QMessageBox.question(self, "Delete label set",
                                      f"Delete the label set '{name}' and its {len(self._labels)} labels?")
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self.model.delete_label_set(name)
        except ThinsliceError as exc:
            self._say(str(exc), error=True)
            return
        self._refresh_sets()
        self._changed(f"Deleted the label set '{name}'.")

    def _commit_scope(self, _index: int = 0) -> None:
        found = self._stored_set()
        scope = self.scope.currentData()
        if found is None or scope == found.scope:
            return
        if not self._write(lambda: self.model.save_label_set(found.name, scope, found.description, found.source)):
            return
        self._changed(f"'{found.name}' is now for {self.scope.currentText().lower()}.")

    def _commit_set_description(self) -> None:
        found = self._stored_set()
        text = _text_or_none(self.set_description.toPlainText())
        if found is None or text == found.description:
            return
        if not self._write(lambda: self.model.save_label_set(found.name, found.scope, text, found.source)):
            return
        self._changed(f"Saved the description of '{found.name}'.")

    # -- labels --------------------------------------------------------------------------------------
    def _add_child(self) -> None:
        current = self.current_label()
        if current is not None:
            self._add_label(current, after=None)

    def _add_sibling(self) -> None:
        label = self._current()
        if label is not None:
            self._add_label(self._effective_parent(label), after=label.name)

    def _add_label(self, parent: str | None, *, after: str | None) -> None:
        """Add a label named 'new label' (numbered if taken) under `parent`, directly after the sibling
        `after` (or last), select it and put the cursor in its name."""
        if self._set is None:
            return
        taken = {label.name for label in self._labels}
        name, number = NEW_LABEL, 2
        while name in taken:
            name, number = f"{NEW_LABEL} {number}", number + 1
        order = None
        if after is not None:
            order = [label.name for label in self._labels]
            order.insert(order.index(after) + 1, name)
        if not self._write(lambda: self.model.add_label_after(self._set, name, parent, order)):
            return
        self._refresh_labels(select=name)
        where = f"under '{parent}'" if parent else "at the top level"
        self._changed(f"Added '{name}' {where}; type its name.")
        self.name.setFocus()
        self.name.selectAll()

    def _ask_delete_label(self) -> None:
        label = self._current()
        if label is None or self._set is None:
            return
        used = self.model.label_set_usage(self._set, label.name)
        if used:
            self._say(f"The label '{label.name}' is used by {used} annotations, so it was not deleted. "
                      "Relabel those annotations first.", error=True)
            return
        children = [c for c in self._labels if self._effective_parent(c) == label.name]
        parent = self._effective_parent(label)
        question = f"Delete the label '{label.name}'?"
        if children:
            question += (f" Its {len(children)} sub-labels move up to "
                         + (f"'{parent}'." if parent else "the top level."))
        if QMessageBox.question(self, "Delete label", question) != QMessageBox.StandardButton.Yes:
            return
        siblings = self._siblings(label)
        index = siblings.index(label.name)
        neighbour = (siblings[index + 1] if index + 1 < len(siblings)
                     else siblings[index - 1] if index > 0 else parent)
        try:
            self.model.delete_label(self._set, label.name)
        except ThinsliceError as exc:
            self._say(str(exc), error=True)
            return
        self._refresh_labels(select=neighbour or (children[0].name if children else None))
        self._changed(f"Deleted the label '{label.name}'.")

    def _move(self, step: int) -> None:
        """Move the current label up (-1) or down (+1) among its siblings."""
        label = self._current()
        if label is None or self._set is None:
            return
        siblings = self._siblings(label)
        index = siblings.index(label.name)
        target = index + step
        if not 0 <= target < len(siblings):
            return
        siblings[index], siblings[target] = siblings[target], siblings[index]
        if not self._write(lambda: self.model.reorder_labels(self._set, self._flattened(
                {self._effective_parent(label): siblings}))):
            return
        self._refresh_labels(select=label.name)
        self._changed(f"Moved '{label.name}' {'up' if step < 0 else 'down'}.")

    def _commit_name(self) -> None:
        label = self._current()
        if label is None or self._set is None:
            return
        new = self.name.text().strip()
        if new == label.name:
            return
        if not new:
            self._say("A label needs a name; the old name was kept.", error=True)
            self.name.setText(label.name)
            return
        used = self.model.label_set_usage(self._set, label.name)
        try:
            self.model.rename_label(self._set, label.name, new)
        except ThinsliceError as exc:
            self._say(f"{exc} The old name was kept.", error=True)
            self.name.setText(label.name)
            return
        self._refresh_labels(select=new)
        follow = f" {used} annotations follow the new name." if used else ""
        self._changed(f"Renamed '{label.name}' to '{new}'.{follow}")

    def _commit_parent(self, _index: int = 0) -> None:
        label = self._current()
        parent = self.parent_choice.currentData()
        if label is None or parent == self._effective_parent(label):
            return
        self._save_current(parent=parent)

    def _choose_colour(self) -> None:
        label = self._current()
        if label is None:
            return
        chosen = QColorDialog.getColor(QColor(label.colour or fallback_colour(label.name)), self,
                                       f"Colour of '{label.name}'")
        if chosen.isValid():
            self._save_current(colour=chosen.name())

    def _commit_shortcut(self) -> None:
        label = self._current()
        if label is None:
            return
        key = self.shortcut.text().strip() or None
        if key == label.shortcut:
            return
        if key is not None and len(key) != 1:
            self._say(f"A shortcut is a single key such as 1 or f, not '{key}'; the shortcut was not changed.",
                      error=True)
            self.shortcut.setText(label.shortcut or "")
            return
        owner = next((other.name for other in self._labels if other.name != label.name and other.shortcut
                      and key is not None and other.shortcut.lower() == key.lower()), None)
        if owner is not None:
            self._say(f"The key '{key}' is already the shortcut of '{owner}' in this set; "
                      f"'{label.name}' keeps {repr(label.shortcut) if label.shortcut else 'no shortcut'}.",
                      error=True)
            self.shortcut.setText(label.shortcut or "")
            return
        self._save_current(shortcut=key)
        clash = self.keymap.action_for(key) if key is not None else None
        if clash is not None:
            binding = next(b for b in self.keymap if b.action == clash)
            self._say(f"Saved, but '{key}' is also the key for “{binding.description}”; "
                      "while that key plays or seeks it may not pick this label.", error=True)

    def _commit_label_description(self) -> None:
        label = self._current()
        if label is not None and _text_or_none(self.label_description.toPlainText()) != label.description:
            self._save_current(description=_text_or_none(self.label_description.toPlainText()))

    _KEEP = object()

    def _save_current(self, *, parent: object = _KEEP, colour: object = _KEEP, shortcut: object = _KEEP,
                      description: object = _KEEP) -> None:
        """Write the current label with the given fields changed and the others as stored."""
        label = self._current()
        if label is None or self._set is None:
            return
        keep = LabelSetEditorDialog._KEEP
        changes = {"parent": self._effective_parent(label) if parent is keep else parent,
                   "colour": label.colour if colour is keep else colour,
                   "shortcut": label.shortcut if shortcut is keep else shortcut,
                   "description": label.description if description is keep else description}
        if not self._write(lambda: self.model.save_label(self._set, label.name, ord=label.ord, **changes)):
            return
        self._refresh_labels(select=label.name)
        changed = ", ".join(name for name, value in (("parent", parent), ("colour", colour),
                                                     ("shortcut", shortcut), ("description", description))
                            if value is not keep)
        self._changed(f"Saved the {changed} of '{label.name}'.")

    # -- showing the store ---------------------------------------------------------------------------
    def _refresh_sets(self, select: str | None = None) -> None:
        names = [s.name for s in self.model.label_sets()]
        keep = select if select in names else self._set if self._set in names else (names[0] if names else None)
        self.sets.blockSignals(True)
        self.sets.clear()
        self.sets.addItems(names)
        self.sets.blockSignals(False)
        if keep is not None:
            self.sets.blockSignals(True)
            self.select_set(keep)
            self.sets.blockSignals(False)
        self._show_set(keep)

    def _show_set(self, name: str | None) -> None:
        self._set = name or None
        found = self._stored_set()
        for widget in (self.set_box, self.label_box, self.rename_set_button, self.delete_set_button,
                       self.export_button):
            widget.setEnabled(found is not None)
        self.set_box.setTitle(f"Set: {found.name}" if found else "Set")
        self.scope.setCurrentIndex(max(0, self.scope.findData(found.scope if found else "both")))
        self.set_description.blockSignals(True)
        self.set_description.setPlainText(found.description or "" if found else "")
        self.set_description.blockSignals(False)
        self.source.setText((found.source or "—") if found else "")
        self._refresh_labels()

    def _refresh_labels(self, select: str | None = None) -> None:
        """Rebuild the tree from the store, keeping the selected label (or selecting `select`)."""
        keep = select or self.current_label()
        self._labels = self.model.labels(self._set) if self._set else []
        self.tree.blockSignals(True)
        self.tree.clear()
        items: dict[str, QTreeWidgetItem] = {}
        for label in self._labels:  # hierarchy order: a parent always comes before its children
            parent = self._effective_parent(label)
            item = QTreeWidgetItem(items[parent] if parent is not None else self.tree)
            item.setText(0, label.name)
            item.setIcon(0, swatch(label.colour or fallback_colour(label.name)))
            item.setText(1, label.shortcut or "")
            item.setToolTip(0, label.description or label.name)
            item.setData(0, Qt.ItemDataRole.UserRole, label.name)
            items[label.name] = item
        self.tree.expandAll()
        self.tree.blockSignals(False)
        target = items.get(keep) if keep else None
        if target is None and self._labels:
            target = items[self._labels[0].name]
        if target is not None:
            self.tree.setCurrentItem(target)
            self.tree.scrollToItem(target)
        self._show_label(self._item_name(target))

    def _show_label(self, name: str | None) -> None:
        label = next((item for item in self._labels if item.name == name), None)
        self.label_box.setEnabled(label is not None)
        for button in (self.add_child_button, self.add_sibling_button, self.delete_label_button):
            button.setEnabled(label is not None)
        siblings = self._siblings(label) if label is not None else []
        self.up_button.setEnabled(bool(siblings) and siblings[0] != name)
        self.down_button.setEnabled(bool(siblings) and siblings[-1] != name)
        self.label_box.setTitle(f"Label: {label.name}" if label else "Label")
        fields = (self.name, self.parent_choice, self.shortcut, self.label_description)
        for widget in fields:
            widget.blockSignals(True)
        self.name.setText(label.name if label else "")
        self.shortcut.setText(label.shortcut or "" if label else "")
        self.label_description.setPlainText(label.description or "" if label else "")
        self.parent_choice.clear()
        self.parent_choice.addItem("(top level)", None)
        if label is not None:
            barred = self._descendants(label.name) | {label.name}  # a label cannot sit under itself
            for other in self._labels:
                if other.name not in barred:
                    self.parent_choice.addItem(swatch(other.colour or fallback_colour(other.name)),
                                               self._path(other), other.name)
            self.parent_choice.setCurrentIndex(max(0, self.parent_choice.findData(self._effective_parent(label))))
            colour = label.colour or fallback_colour(label.name)
            self.colour_button.setIcon(swatch(colour, 16))
            self.colour_button.setText(label.colour or f"automatic ({colour})")
        else:
            self.colour_button.setIcon(swatch("#00000000", 16))
            self.colour_button.setText("")
        for widget in fields:
            widget.blockSignals(False)

    # -- helpers -------------------------------------------------------------------------------------
    def _stored_set(self) -> LabelSet | None:
        return self.model.label_set(self._set) if self._set else None

    def _current(self) -> Label | None:
        name = self.current_label()
        return next((label for label in self._labels if label.name == name), None)

    def _effective_parent(self, label: Label) -> str | None:
        """The parent the tree shows: a parent that is not in the set counts as the top level."""
        return label.parent if any(other.name == label.parent for other in self._labels) else None

    def _path(self, label: Label) -> str:
        """The label's place in the hierarchy, e.g. 'paralinguistic › emotion'."""
        by_name = {other.name: other for other in self._labels}
        chain, current = [label.name], label
        while (parent := self._effective_parent(current)) is not None and parent not in chain:
            chain.append(parent)
            current = by_name[parent]
        return " › ".join(reversed(chain))

    def _siblings(self, label: Label) -> list[str]:
        parent = self._effective_parent(label)
        return [other.name for other in self._labels if self._effective_parent(other) == parent]

    def _descendants(self, name: str) -> set[str]:
        found: set[str] = set()
        frontier = [name]
        while frontier:
            current = frontier.pop()
            for other in self._labels:
                if self._effective_parent(other) == current and other.name not in found:
                    found.add(other.name)
                    frontier.append(other.name)
        return found

    def _flattened(self, replaced: dict[str | None, list[str]]) -> list[str]:
        """All label names depth-first, with the children of the parents in `replaced` in the given order."""
        children: dict[str | None, list[str]] = {}
        for label in self._labels:
            children.setdefault(self._effective_parent(label), []).append(label.name)
        children.update(replaced)
        order: list[str] = []

        def visit(parent: str | None) -> None:
            for name in children.get(parent, []):
                order.append(name)
                visit(name)

        visit(None)
        return order

    def _find_item(self, name: str) -> QTreeWidgetItem | None:
        matches = self.tree.findItems(name, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, 0)
        return matches[0] if matches else None

    @staticmethod
    def _item_name(item: QTreeWidgetItem | None) -> str | None:
        return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setStyleSheet(f"color: {ERROR_COLOUR};" if error else "")
        self.message.setText(text)

    def _changed(self, text: str) -> None:
        self._say(text)
        self.labelSetsChanged.emit()

    def _write(self, change) -> bool:
        """Make an edit through the model; a refusal or a failed write is said here and changes nothing."""
        try:
            change()
        except ThinsliceError as exc:
            self._say(str(exc), error=True)
            return False
        return True

    def undo(self) -> bool:
        """Undo the last change of the label sets (a rename takes its annotations back with it)."""
        return self._step(self.model.undo_label_sets, "Undid")

    def redo(self) -> bool:
        return self._step(self.model.redo_label_sets, "Redid")

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        """The window's undo keys work here on the label sets' own history (a text field keeps its own)."""
        action = self.keymap.action_for(key_sequence_of(event), WINDOW)
        if action in (UNDO, REDO):
            event.accept()
            if action == UNDO:
                self.undo()
            else:
                self.redo()
            return
        super().keyPressEvent(event)

    def _step(self, move, verb: str) -> bool:
        text = self.model.undo_text(LABEL_SETS_SCOPE) if verb == "Undid" else self.model.redo_text(LABEL_SETS_SCOPE)
        done: list[bool] = []
        if not self._write(lambda: done.append(move())) or not done[0]:
            return False
        self._refresh_sets()
        self._changed(f"{verb}: {text}.")
        return True

    def done(self, result: int) -> None:
        """Closing keeps what was typed in a field the user has not left yet."""
        self._commit_name()
        self._commit_shortcut()
        self._commit_label_description()
        self._commit_set_description()
        super().done(result)
