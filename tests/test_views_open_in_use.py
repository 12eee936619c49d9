"""Views open on what the window shows: Cues on the dataset in the toolbar (and follow it), Agreement on a label
set the dataset has labels in (the one in use first), the label-set editor on the set the page labels with.
Each is opened from the window's own menus."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from test_stale_text import first_of, show


def _menu_item(win, menu, text: str):
    """The action of `menu` whose text (without its accelerator mark) is `text`."""
    return next(a for a in menu.actions() if a.text().replace("&", "") == text)


def test_cues_open_on_the_dataset_shown_and_follow_it(qtbot, sample_store_copy, window_for):
    win = window_for(sample_store_copy, annotator="ana")
    show(qtbot, win, first_of(sample_store_copy, "dyad")[0])
    assert win.dataset_combo.currentText() == "FriendBench (sample)"
    _menu_item(win, win.compare_menu, "Voice and turn-taking cues").trigger()
    qtbot.waitUntil(lambda: win.cues_view.dataset.count() > 1, timeout=20000)
    assert win.cues_view.dataset.currentText() == "FriendBench (sample)"
    assert win.cues_view.dataset.itemText(0) != "FriendBench (sample)"   # not merely the first listed
    show(qtbot, win, first_of(sample_store_copy, "echomind_mcq")[0])
    assert win.cues_view.dataset.currentText() == "EchoMind (sample)"


def test_agreement_on_a_dyad_opens_on_a_set_its_dataset_has_labels_in(qtbot, sample_store_copy, window_for):
    win = window_for(sample_store_copy, annotator="ana")
    show(qtbot, win, first_of(sample_store_copy, "dyad")[0])
    assert win.label_set_in_use() == "vocal cues"
    _menu_item(win, win.annotate_menu, "Agreement between annotators").trigger()
    qtbot.waitUntil(lambda: win.agreement.label_set.currentText() == "vocal cues", timeout=10000)
    assert win.agreement.label_set.itemText(0).startswith("AgentViSS")   # what it opened on before
    win.agreement.compute.click()
    qtbot.waitUntil(lambda: "vocal cues</b>:" in win.agreement.summary.text(), timeout=30000)
    assert "no annotators" not in win.agreement.summary.text()
    assert win.agreement.figures.topLevelItemCount() > 0
    # another dataset: the figures were about FriendBench, and EchoMind's labels are in its own set
    show(qtbot, win, first_of(sample_store_copy, "echomind_mcq")[0])
    assert win.agreement.figures.topLevelItemCount() == 0 and win.agreement.summary.text() == ""
    qtbot.waitUntil(lambda: win.agreement.label_set.currentText() == "EchoMind vocal attributes", timeout=10000)


def test_the_label_set_editor_opens_on_the_set_in_use(qtbot, sample_store_copy, window_for):
    win = window_for(sample_store_copy, annotator="ana")
    for kind, expected in (("dyad", "vocal cues"), ("echomind_mcq", "EchoMind vocal attributes"),
                           ("agentviss_scene", None)):
        show(qtbot, win, first_of(sample_store_copy, kind)[0])
        expected = expected or win.scene_annotations.label_set.currentText()
        assert expected.startswith("AgentViSS") or kind != "agentviss_scene"
        before = set(QApplication.topLevelWidgets())
        _menu_item(win, win.annotate_menu, "Label sets…").trigger()
        (dialog,) = [w for w in QApplication.topLevelWidgets() if w not in before and w.isVisible()]
        assert dialog.current_set() == expected and dialog.sets.currentItem().text() == expected
        dialog.close()
