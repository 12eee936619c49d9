"""The label set editor: build a set by clicking, keys stay unique, files round-trip, bad files change nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QColorDialog, QFileDialog, QInputDialog, QMessageBox

from app.annotation_model import AnnotationModel
from storage.annotations import AnnotationStore
from storage.store import Store
from widgets.label_set_editor import LabelSetEditorDialog

LABEL_SETS = Path(__file__).resolve().parents[1] / "resources" / "label_sets"


def _open(qtbot, path: Path) -> tuple[LabelSetEditorDialog, AnnotationStore]:
    notes = AnnotationStore(Store.open(path))
    dialog = LabelSetEditorDialog(AnnotationModel(notes, annotator="ana"))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog, notes


@pytest.fixture
def editor(qtbot, tmp_path):
    dialog, notes = _open(qtbot, tmp_path / "t.duckdb")
    yield dialog, notes
    dialog.close()  # closing saves pending fields, so it must happen while the store is open
    notes.store.close()


def _add_stimulus(notes: AnnotationStore) -> int:
    cur = notes.store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'friendbench', '/tmp/d')"
                          " RETURNING id").fetchall()[0][0]
    return int(cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'fb-001', 'dyad')"
                           " RETURNING id", [dataset]).fetchall()[0][0])


def _type_into(qtbot, field, text: str) -> None:
    """Replace a line edit's text as a user would, finishing with Return."""
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def _answer_text(monkeypatch, text: str) -> None:
    monkeypatch.setattr(QInputDialog, "getText", lambda *args, **kwargs: (text, True))


def _answer_yes(monkeypatch) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Yes)


def _stored(notes: AnnotationStore, name: str) -> tuple:
    found = notes.label_set(name)
    labels = [(l.name, l.parent, l.colour, l.shortcut, l.description, l.depth) for l in notes.labels(name)]
    return found.name, found.scope, found.description, found.source, labels


def _build_cues(qtbot, monkeypatch, dialog: LabelSetEditorDialog) -> None:
    """New set 'cues': voice > (laugh, sigh), laugh orange on key l."""
    _answer_text(monkeypatch, "cues")
    qtbot.mouseClick(dialog.new_set_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.add_top_button, Qt.MouseButton.LeftButton)
    _type_into(qtbot, dialog.name, "voice")
    qtbot.mouseClick(dialog.add_child_button, Qt.MouseButton.LeftButton)
    _type_into(qtbot, dialog.name, "laugh")
    monkeypatch.setattr(QColorDialog, "getColor", lambda *args, **kwargs: QColor("#ff8800"))
    qtbot.mouseClick(dialog.colour_button, Qt.MouseButton.LeftButton)
    _type_into(qtbot, dialog.shortcut, "l")
    qtbot.mouseClick(dialog.add_sibling_button, Qt.MouseButton.LeftButton)
    _type_into(qtbot, dialog.name, "sigh")


def test_build_a_set_with_hierarchy_colour_shortcut_and_scope(qtbot, monkeypatch, editor):
    dialog, notes = editor
    changes = []
    dialog.labelSetsChanged.connect(lambda: changes.append(1))
    _build_cues(qtbot, monkeypatch, dialog)
    assert [(l.name, l.parent, l.depth) for l in notes.labels("cues")] == [
        ("voice", None, 0), ("laugh", "voice", 1), ("sigh", "voice", 1)]
    laugh = next(l for l in notes.labels("cues") if l.name == "laugh")
    assert (laugh.colour, laugh.shortcut) == ("#ff8800", "l")
    assert dialog.current_label() == "sigh"
    assert dialog.colour_button.text().startswith("automatic")
    dialog.select_label("laugh")
    assert dialog.colour_button.text() == "#ff8800"
    assert len(changes) >= 8  # one per write: set, 3 labels, 3 names, colour, shortcut

    dialog.scope.setCurrentIndex(dialog.scope.findData("interval"))
    dialog.scope.activated.emit(dialog.scope.currentIndex())
    assert notes.label_set("cues").scope == "interval"
    dialog.label_description.setFocus()
    qtbot.keyClicks(dialog.label_description, "Laughter, alone or shared.")
    dialog.set_description.setFocus()  # leaving the field saves it
    assert next(l for l in notes.labels("cues") if l.name == "laugh").description == "Laughter, alone or shared."
    qtbot.keyClicks(dialog.set_description, "Short vocal events")
    dialog.close()  # closing keeps what was typed in the field still being edited
    assert notes.label_set("cues").description == "Short vocal events"


def test_duplicate_shortcut_is_refused_with_a_message(qtbot, monkeypatch, editor):
    dialog, notes = editor
    _build_cues(qtbot, monkeypatch, dialog)
    dialog.select_label("sigh")
    _type_into(qtbot, dialog.shortcut, "L")
    assert "already the shortcut of 'laugh'" in dialog.message.text()
    assert dialog.shortcut.text() == ""
    assert {l.name: l.shortcut for l in notes.labels("cues")} == {"voice": None, "laugh": "l", "sigh": None}
    _type_into(qtbot, dialog.shortcut, "ab")
    assert "single key" in dialog.message.text()
    _type_into(qtbot, dialog.shortcut, "s")
    assert {l.name: l.shortcut for l in notes.labels("cues")}["sigh"] == "s"
    _type_into(qtbot, dialog.shortcut, "j")  # also a playback key: kept, with a warning
    assert {l.name: l.shortcut for l in notes.labels("cues")}["sigh"] == "j"
    assert "Back 5 s" in dialog.message.text()


def test_rename_reorder_and_reparent(qtbot, monkeypatch, editor):
    dialog, notes = editor
    _build_cues(qtbot, monkeypatch, dialog)
    stim = _add_stimulus(notes)
    notes.create(stim, "ana", "cues", "laugh", 1.0, 2.0)

    dialog.select_label("laugh")
    _type_into(qtbot, dialog.name, "sigh")  # taken: refused, nothing renamed
    assert "already has a label 'sigh'" in dialog.message.text()
    assert dialog.name.text() == "laugh"
    _type_into(qtbot, dialog.name, "laughter")
    assert "1 annotations follow" in dialog.message.text()
    assert [a.label for a in notes.for_stimulus(stim)] == ["laughter"]

    dialog.select_label("sigh")
    dialog.name.setFocus()
    qtbot.keyClicks(dialog.name, "s")  # no Return: clicking another label in the tree saves it
    voice = dialog.tree.visualItemRect(dialog.tree.topLevelItem(0)).center()
    qtbot.mouseClick(dialog.tree.viewport(), Qt.MouseButton.LeftButton, pos=voice)
    assert [l.name for l in notes.labels("cues")] == ["voice", "laughter", "sighs"]
    assert dialog.current_label() == "voice"

    dialog.select_label("laughter")
    qtbot.mouseClick(dialog.down_button, Qt.MouseButton.LeftButton)
    assert [l.name for l in notes.labels("cues")] == ["voice", "sighs", "laughter"]
    assert not dialog.down_button.isEnabled() and dialog.up_button.isEnabled()  # already last
    qtbot.mouseClick(dialog.up_button, Qt.MouseButton.LeftButton)
    assert [l.name for l in notes.labels("cues")] == ["voice", "laughter", "sighs"]

    dialog.select_label("sighs")
    top = dialog.parent_choice.findData(None)
    dialog.parent_choice.setCurrentIndex(top)
    dialog.parent_choice.activated.emit(top)
    assert [(l.name, l.depth) for l in notes.labels("cues")] == [("voice", 0), ("laughter", 1), ("sighs", 0)]
    dialog.select_label("voice")
    choices = [dialog.parent_choice.itemData(i) for i in range(dialog.parent_choice.count())]
    assert choices == [None, "sighs"]  # never under itself or its own children

    _answer_text(monkeypatch, "vocal cues")
    qtbot.mouseClick(dialog.rename_set_button, Qt.MouseButton.LeftButton)
    assert [s.name for s in notes.label_sets()] == ["vocal cues"]
    assert dialog.current_set() == "vocal cues"
    assert [a.label_set for a in notes.for_stimulus(stim)] == ["vocal cues"]


def test_delete_refused_while_annotations_use_it(qtbot, monkeypatch, editor):
    dialog, notes = editor
    _build_cues(qtbot, monkeypatch, dialog)
    stim = _add_stimulus(notes)
    annotation = notes.create(stim, "ana", "cues", "sigh", 1.0, 2.0)
    _answer_yes(monkeypatch)
    dialog.select_label("sigh")
    qtbot.mouseClick(dialog.delete_label_button, Qt.MouseButton.LeftButton)
    assert "used by 1 annotations" in dialog.message.text()
    qtbot.mouseClick(dialog.delete_set_button, Qt.MouseButton.LeftButton)
    assert "used by 1 annotations" in dialog.message.text()
    assert notes.label_set("cues") is not None

    dialog.select_label("voice")
    qtbot.mouseClick(dialog.delete_label_button, Qt.MouseButton.LeftButton)
    assert [(l.name, l.depth) for l in notes.labels("cues")] == [("laugh", 0), ("sigh", 0)]
    notes.delete(annotation.id, "ana")
    qtbot.mouseClick(dialog.delete_set_button, Qt.MouseButton.LeftButton)
    assert notes.label_sets() == []
    assert dialog.current_set() is None
    assert not dialog.set_box.isEnabled()


def test_export_then_import_into_a_fresh_store_gives_the_same_set(qtbot, monkeypatch, editor, tmp_path):
    dialog, notes = editor
    _build_cues(qtbot, monkeypatch, dialog)
    notes.save_label_set("cues", "interval", "Short vocal events", "made by hand")
    out = tmp_path / "exported"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args, **kwargs: (str(out), ""))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert (tmp_path / "exported.json").exists()
    assert "Exported 'cues' (3 labels)" in dialog.message.text()

    fresh, fresh_notes = _open(qtbot, tmp_path / "fresh.duckdb")
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *args, **kwargs: (str(tmp_path / "exported.json"), ""))
    with qtbot.waitSignal(fresh.labelSetsChanged):
        qtbot.mouseClick(fresh.import_button, Qt.MouseButton.LeftButton)
    assert _stored(fresh_notes, "cues") == _stored(notes, "cues")
    assert fresh.current_set() == "cues"
    assert fresh.tree.topLevelItemCount() == 1 and fresh.tree.topLevelItem(0).childCount() == 2
    fresh.close()
    fresh_notes.store.close()


@pytest.mark.parametrize("content, problem", [
    ("{\"name\": \"cues\", \"labels\": [", "Cannot read"),
    (json.dumps({"name": "cues", "labels": [{"name": "a", "shortcut": "x"}, {"name": "b", "shortcut": "x"}]}),
     "labels[2].shortcut"),
    (json.dumps({"name": "cues", "labels": [{"name": "a", "parent": "nowhere"}]}), "labels[1].parent"),
    (json.dumps({"name": "cues", "labels": [{"name": "a", "colour": "orange"}]}), "colour like #1f77b4"),
    (json.dumps([1, 2]), "not a label set file"),
])
def test_malformed_file_shows_the_file_and_problem_and_changes_nothing(qtbot, monkeypatch, editor, tmp_path,
                                                                       content, problem):
    dialog, notes = editor
    _build_cues(qtbot, monkeypatch, dialog)
    before = _stored(notes, "cues")
    bad = tmp_path / "broken set.json"
    bad.write_text(content, encoding="utf-8")
    changes = []
    dialog.labelSetsChanged.connect(lambda: changes.append(1))
    assert not dialog.import_file(bad)
    assert "broken set.json" in dialog.message.text() and problem in dialog.message.text()
    assert _stored(notes, "cues") == before
    assert [s.name for s in notes.label_sets()] == ["cues"]
    assert changes == []


def test_echomind_taxonomy_shows_as_a_three_level_tree(editor):
    dialog, notes = editor
    assert dialog.import_file(LABEL_SETS / "echomind_vocal_attributes.json")
    tree = dialog.tree
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == [
        "speaker", "paralinguistic", "environment"]
    fine = sum(tree.topLevelItem(i).childCount() for i in range(3))
    assert fine == 12
    assert "Imported the label set 'EchoMind vocal attributes' (60 labels)" in dialog.message.text()


def test_renaming_a_used_label_writes_history_and_undo_takes_it_back(qtbot, editor):
    dialog, notes = editor
    assert dialog.import_file(LABEL_SETS / "vocal_cues.json")
    stimulus = _add_stimulus(notes)
    used = notes.create(stimulus, "bo", "vocal cues", "laugh", 1.0, 2.0)
    dialog.select_set("vocal cues")
    dialog.select_label("laugh")
    _type_into(qtbot, dialog.name, "giggle")
    assert notes.get(used.id).label == "giggle"
    event = notes.history(annotation_id=used.id)[0]
    assert (event.action, event.annotator, event.before["label"], event.after["label"]) == \
        ("update", "ana", "laugh", "giggle")
    qtbot.mouseClick(dialog.undo_button, Qt.MouseButton.LeftButton)
    assert notes.get(used.id).label == "laugh"
    assert "laugh" in [l.name for l in notes.labels("vocal cues")]
    assert dialog.tree.findItems("laugh", Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, 0)
    assert "Undid" in dialog.message.text()
    qtbot.mouseClick(dialog.redo_button, Qt.MouseButton.LeftButton)
    assert notes.get(used.id).label == "giggle"


def test_the_undo_key_in_the_editor_takes_back_the_last_change_of_the_sets(qtbot, monkeypatch, editor):
    dialog, notes = editor
    _answer_text(monkeypatch, "cues")
    qtbot.mouseClick(dialog.new_set_button, Qt.MouseButton.LeftButton)
    assert notes.label_set("cues") is not None
    dialog.sets.setFocus()
    qtbot.keyClick(dialog.sets, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert notes.label_set("cues") is None
    qtbot.keyClick(dialog.sets, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert notes.label_set("cues") is not None
