"""The annotation panel: palette keys, labelling while playing, whole labels and notes, history, agreement."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.agreement import interval_agreement
from app.annotation_model import AnnotationModel
from storage.annotations import AnnotationStore
from storage.store import Store
from widgets.agreement_panel import AgreementPanel
from widgets.annotation_panel import AnnotationPanel
from widgets.history_panel import HistoryPanel

LABEL_SETS = Path(__file__).resolve().parents[1] / "resources" / "label_sets"


@pytest.fixture
def panel(qtbot, tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'friendbench', '/tmp/d')"
                          " RETURNING id").fetchone()[0]
    stim = int(cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'fb-001', 'dyad')"
                           " RETURNING id", [dataset]).fetchone()[0])
    notes = AnnotationStore(store)
    for name in ("vocal_cues.json", "friendbench_familiarity.json"):
        notes.load_label_set_file(LABEL_SETS / name)
    model = AnnotationModel(notes)
    widget = AnnotationPanel(model)
    qtbot.addWidget(widget)
    widget.resize(1200, 300)
    widget.show()
    widget.set_annotator("ana")
    widget.set_stimulus(stim, 20.0)
    qtbot.waitUntil(lambda: not widget.busy() and model.ready)  # the stimulus's labels are read on a worker
    yield widget, notes, stim
    store.close()


def test_shortcut_picks_label_and_live_labelling_marks_a_range(qtbot, panel):
    widget, notes, stim = panel
    qtbot.keyClick(widget.tiers, "3")
    assert widget.palette.current() == "overlap" and widget.tiers.current_label == ("vocal cues", "overlap")
    widget.set_clock(5.0, playing=True)
    qtbot.keyClick(widget.tiers, "1")
    widget.set_clock(6.5, playing=True)
    qtbot.keyClick(widget.tiers, "1")
    made = notes.for_stimulus(stim)
    assert [(a.label, a.start_s, a.end_s, a.annotator) for a in made] == [("laugh", 4.75, 6.25, "ana")]
    assert widget.undo()
    assert notes.for_stimulus(stim) == []


def test_whole_label_and_note_are_undoable(qtbot, panel):
    widget, notes, stim = panel
    widget.whole_labels.choose("familiarity", "stranger")
    assert [a.label for a in notes.for_stimulus(stim, label_set="familiarity")] == ["stranger"]
    widget.whole_labels.note.setPlainText("they finish each other's sentences")
    widget.whole_labels.save_note.click()
    assert notes.for_stimulus(stim, label_set="note")[0].note == "they finish each other's sentences"
    widget.undo()
    widget.undo()
    assert notes.for_stimulus(stim) == []
    assert widget.whole_labels.choice("familiarity") == ""


def test_relabel_selection(qtbot, panel):
    widget, notes, stim = panel
    first = widget.model.add_label("vocal cues", "laugh", 1.0, 2.0)
    widget.tiers.select([first.id])
    widget.palette.pick("sigh")
    widget.palette.relabel_button.click()
    assert notes.get(first.id).label == "sigh"
    assert [a.label for a in widget.tiers.labels()] == ["sigh"]


def test_a_write_the_store_refuses_is_said_in_place_and_changes_nothing(qtbot, panel):
    widget, notes, stim = panel
    notes.store.cursor().execute("ALTER TABLE annotation_event RENAME TO annotation_event_away")
    with qtbot.waitSignal(widget.message) as said:
        widget.whole_labels.choose("familiarity", "stranger")
    assert "was not saved" in said.args[0] and "was not saved" in widget.status.text()
    assert widget.whole_labels.choice("familiarity") == ""  # the combo goes back to what is stored
    assert widget.model.annotations() == [] and not widget.model.can_undo()
    notes.store.cursor().execute("ALTER TABLE annotation_event_away RENAME TO annotation_event")
    assert notes.for_stimulus(stim) == []


def test_history_and_agreement_panels(qtbot, panel):
    widget, notes, stim = panel
    item = notes.create(stim, "ana", "vocal cues", "laugh", 1.0, 2.0)
    notes.update(item.id, "ana", end_s=2.5)
    notes.create(stim, "bo", "vocal cues", "sigh", 1.5, 3.0)
    history = HistoryPanel()
    qtbot.addWidget(history)
    history.set_events(notes.history(stimulus_id=stim))
    rows = history.row_texts()
    assert rows[1][1:] == ["ana", "update", "laugh 1.00-2.00 s", "laugh 1.00-2.50 s"]
    agreement = AgreementPanel()
    qtbot.addWidget(agreement)
    report = interval_agreement(notes.for_stimulus(stim), "vocal cues", {stim: 20.0})
    agreement.set_report(report, {stim: "fb-001"})
    assert agreement.figures.topLevelItemCount() == 3
    assert "10 ms" in agreement.figures.topLevelItem(0).text(2)
    first = agreement.disagreements.topLevelItem(0)
    assert first.text(0) == "fb-001" and first.text(1) == "1.00"
    with qtbot.waitSignal(agreement.jumpRequested) as caught:
        agreement.disagreements.itemDoubleClicked.emit(first, 0)
    assert caught.args == [stim, 1.0]


def test_a_note_the_store_refuses_keeps_its_text_marked_unsaved(qtbot, panel):
    widget, notes, stim = panel
    notes.store.cursor().execute("ALTER TABLE annotation_event RENAME TO annotation_event_away")
    widget.whole_labels.note.setPlainText("they finish each other's sentences")
    widget.whole_labels.save_note.click()
    assert widget.whole_labels.note.toPlainText() == "they finish each other's sentences"
    assert widget.whole_labels.note_is_unsaved() and "Not saved" in widget.whole_labels.note_state.text()
    assert "was not saved" in widget.status.text()
    notes.store.cursor().execute("ALTER TABLE annotation_event_away RENAME TO annotation_event")
    widget.whole_labels.save_note.click()
    assert not widget.whole_labels.note_is_unsaved()
    assert notes.for_stimulus(stim, label_set="note")[0].note == "they finish each other's sentences"
