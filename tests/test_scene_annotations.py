"""AgentViSS labels are seen and made on a scene, on a role or a turn; each page offers the sets made for it."""
from __future__ import annotations

import pytest

from app.page_labels import applies_to, describe_target, label_sets_for, target_turn, turn_target
from storage import lookups
from storage.annotations import LabelSet

SCENE = "flat-s01-e02-sc1"


@pytest.fixture
def window(window_for, sample_store_copy, qtbot):
    win = window_for(sample_store_copy, annotator="cy")
    yield win
    win.close()


def show(window, qtbot, dataset: str, external_id: str):
    assert window.select_dataset(dataset)
    found = lookups.find_stimulus(window.store.cursor(), external_id, dataset)
    window.select_stimulus_id(found[0])
    qtbot.waitUntil(lambda: window.stimulus_view.detail is not None
                    and window.stimulus_view.detail.external_id == external_id, timeout=15000)


def tree_rows(panel) -> dict[str, list[tuple[str, str, str]]]:
    tree = panel.tree
    return {tree.topLevelItem(i).text(0): [tuple(tree.topLevelItem(i).child(k).text(c) for c in range(3))
                                           for k in range(tree.topLevelItem(i).childCount())]
            for i in range(tree.topLevelItemCount())}


def test_the_samples_scene_labels_are_visible_on_their_roles(qtbot, window):
    show(window, qtbot, "AgentViSS (sample)", SCENE)
    panel = window.scene_annotations
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 2, timeout=10000)
    rows = tree_rows(panel)
    assert set(rows) == {"Yusra", "Benedikt"}
    assert ("AgentViSS expression style", "honest", "ben") in rows["Yusra"]
    assert len(rows["Yusra"]) + len(rows["Benedikt"]) == 6


def test_a_label_is_made_on_a_turn_and_kept(qtbot, window):
    show(window, qtbot, "AgentViSS (sample)", SCENE)
    panel = window.scene_annotations
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 2, timeout=10000)
    sets = [panel.label_set.itemText(i) for i in range(panel.label_set.count())]
    assert sets == ["AgentViSS conflict trait", "AgentViSS expression style"]
    panel.target.setCurrentIndex(panel.target.findData(turn_target(1)))
    panel.label_set.setCurrentText("AgentViSS expression style")
    panel.label.setCurrentText("deception")
    panel.add_button.click()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 3, timeout=5000)
    turn_group = next(name for name in tree_rows(panel) if name.startswith("turn 2"))
    assert tree_rows(panel)[turn_group] == [("AgentViSS expression style", "deception", "cy")]
    stored = [a for a in window.annotations.for_stimuli([window.stimulus_view.detail.id]) if a.annotator == "cy"]
    assert [(a.label, a.value, a.is_whole) for a in stored] == [("deception", "turn:1", True)]
    panel.undo_button.click()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 2, timeout=5000)
    assert not [a for a in window.annotations.for_stimuli([window.stimulus_view.detail.id]) if a.annotator == "cy"]


@pytest.mark.parametrize("dataset, external_id", [("FriendBench (sample)", "fb_001"),
                                                  ("EchoMind (sample)", "synthesis/901")])
def test_media_pages_do_not_offer_agentviss_sets(qtbot, window, dataset, external_id):
    show(window, qtbot, dataset, external_id)
    panel = window.media_page.annotation
    whole = list(panel.whole_labels._combos)
    interval = [panel.label_set.itemText(i) for i in range(panel.label_set.count())]
    assert not [name for name in whole + interval if "AgentViSS" in name]
    if dataset.startswith("FriendBench"):
        assert "familiarity" in whole
    else:
        assert "familiarity" not in whole and "EchoMind vocal attributes" in interval


def test_which_sets_apply_and_what_a_label_is_attached_to():
    def ls(name, source=None):
        return LabelSet(1, name, "whole", None, source)
    sets = [ls("AgentViSS conflict trait"), ls("familiarity", "FriendBench (fluid-concepts/friend-bench)"),
            ls("vocal cues", "Thinslice"), ls("EchoMind vocal attributes", "github.com/hlt-cuhksz/EchoMind")]
    assert [s.name for s in label_sets_for(sets, "agentviss")] == ["AgentViSS conflict trait", "vocal cues"]
    assert [s.name for s in label_sets_for(sets, "seamless")] == ["familiarity", "vocal cues"]
    assert applies_to(sets[0], None)
    assert target_turn(turn_target(4)) == 4 and target_turn("Yusra") is None
    assert describe_target("Yusra", []) == "Yusra"
