"""An EchoMind multiple-choice question is shown whole at 1366x768, with the truth and each model's choice."""
from __future__ import annotations

import json

import pytest

from fixtures_store import make_store
from storage.importers.plan import DatasetInfo, ImportPlan

OPTIONS = {"A": "The speaker is shouting at the top of their voice across a crowded room.",
           "B": "The speaker is whispering so as not to wake someone sleeping nearby.",
           "C": "The speaker is sobbing between words after hearing some very bad news.",
           "D": "The speaker is hoarse after a long day of teaching and can barely speak.",
           "E": "The speaker sounds perfectly calm and neutral."}


def mcq_plan(root) -> ImportPlan:
    plan = ImportPlan(DatasetInfo("Questions", "echomind", root, "generated in a test", synthetic=True), "test")
    question = "Which of the following best describes the voice in this audio?\n" + "\n".join(
        f"{k}. {v}" for k, v in OPTIONS.items())
    plan.add("stimuli", [{"external_id": "mcq/1", "kind": "echomind_mcq", "ground_truth": "B", "text": question,
                          "title": "understanding 1", "meta": json.dumps({"options": OPTIONS})}])
    plan.add("media", [{"stimulus": "mcq/1", "role": "audio", "path": "media/none.wav", "present": False}])
    plan.add("predictions", [
        {"stimulus": "mcq/1", "model": "atlas-7b", "modality": "mcq", "answer": "B", "correct": True},
        {"stimulus": "mcq/1", "model": "corvid-pro", "modality": "mcq", "answer": "D", "correct": False},
        {"stimulus": "mcq/1", "model": "nimbus-omni", "modality": "mcq", "answer": OPTIONS["B"], "correct": True}])
    return plan


@pytest.fixture
def window(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", mcq_plan(tmp_path))
    win = window_for(store, size=(1366, 768))
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None, timeout=10000)
    yield win
    win.close()
    store.close()


def test_question_and_every_option_are_readable_at_laptop_size(qtbot, window):
    view = window.stimulus_view.mcq
    qtbot.waitUntil(view.isVisible, timeout=5000)
    text = view.toPlainText()
    assert "best describes the voice" in text
    for letter, option in OPTIONS.items():
        assert f"{letter}." in text and option in text
    # all of it fits, or the rest is a scroll away: never clipped out of reach
    bar = view.verticalScrollBar()
    assert view.document().size().height() <= view.viewport().height() or bar.maximum() > 0
    bar.setValue(bar.maximum())
    assert bar.value() == bar.maximum()
    # the player no longer shows the question as a large script cut off top and bottom
    assert not window.media_page.player.script.isVisible()


def test_options_show_the_truth_and_which_model_chose_which(qtbot, window):
    qtbot.waitUntil(window.stimulus_view.mcq.isVisible, timeout=5000)
    text = window.stimulus_view.mcq.toPlainText()
    starts = {letter: text.index(f"{letter}.\n{option}") for letter, option in OPTIONS.items()}
    ends = dict(zip("ABCDE", [starts["B"], starts["C"], starts["D"], starts["E"], len(text)]))
    rows = {letter: text[starts[letter]:ends[letter]] for letter in OPTIONS}
    assert "✓ truth" in rows["B"] and "atlas-7b" in rows["B"] and "nimbus-omni" in rows["B"]
    assert "corvid-pro" in rows["D"] and "truth" not in rows["D"]
    assert "chosen" not in rows["A"]
