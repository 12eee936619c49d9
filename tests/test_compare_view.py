"""The compare view shows chosen models side by side; presentation mode reveals answers one key at a time."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from fixtures_store import friendbench_like_plan, make_store
from storage import queries
from widgets.compare_view import MAX_MODELS, CompareView, word_diff_html


@pytest.fixture
def detail(tmp_path):
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4))
    cur = store.cursor()
    details = [queries.stimulus_detail(cur, sid) for (sid,) in cur.execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    yield details
    store.close()


def test_word_diff_marks_added_and_missing_words():
    marked = word_diff_html("they are old friends", "they are strangers")
    assert "line-through" in marked and ">old friends<" in marked
    assert "background" in marked and ">strangers<" in marked
    assert word_diff_html("same words", "same words") == "same words"


def test_chosen_models_side_by_side_with_judges_and_verdicts(qtbot, detail):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(["alpha", "beta", "gamma"])
    with qtbot.waitSignal(view.comparedModelsChanged) as caught:
        view.set_compared_models(["gamma", "alpha"])
    assert caught.args == [("gamma", "alpha")]
    view.set_detail(detail[0])
    assert {m for m, _c in view.cells} == {"gamma", "alpha"}
    cell = view.cells[("alpha", "text")]
    p = next(p for p in detail[0].predictions if p.model == "alpha" and p.modality == "text")
    assert ("right" if p.correct else "wrong") in cell.answer.text()
    assert cell.judge_bars and f"reason for {detail[0].external_id}" in cell.judge_bars[0].toolTip()
    # gamma is the baseline; alpha's text is compared with gamma's answer in the same modality
    gamma = next(q for q in detail[0].predictions if q.model == "gamma" and q.modality == "text")
    assert view.baseline_text(p) == gamma.raw_output
    if gamma.answer != p.answer:
        assert "background" in cell.text.text()


def test_at_most_six_models_and_the_list_is_checkable(qtbot, detail):
    view = CompareView()
    qtbot.addWidget(view)
    names = [f"m{i}" for i in range(8)]
    view.set_available_models(names)
    for i in range(8):
        view.model_list.item(i).setCheckState(Qt.CheckState.Checked)
    assert len(view.compared_models()) == MAX_MODELS
    assert view.model_list.item(7).checkState() == Qt.CheckState.Unchecked
    assert "At most" in view.hint.text()


def test_response_audio_button_asks_to_play(qtbot, detail, tmp_path):
    audio = tmp_path / "reply.wav"
    audio.write_bytes(b"RIFF")
    view = CompareView()
    qtbot.addWidget(view)
    view.set_compared_models(["alpha", "beta"])
    p = next(p for p in detail[0].predictions if p.model == "beta" and p.modality == "audio")
    view.set_detail(detail[0], {p.id: audio})
    button = view.cells[("beta", "audio")].audio_button
    assert button is not None and view.cells[("alpha", "audio")].audio_button is None
    with qtbot.waitSignal(view.playResponseRequested) as caught:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert caught.args == [str(audio)]


def test_presentation_reveals_one_by_one_then_moves_on(qtbot, detail):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_compared_models(["alpha", "beta", "gamma"])
    view.set_detail(detail[0])
    show = view.enter_presentation(full_screen=False)
    qtbot.addWidget(show)
    assert show.total() == 5          # three models, the crowd, the truth
    assert [show.answer_text(i) for i in range(5)] == ["?"] * 5
    qtbot.keyClick(show, Qt.Key.Key_Right)
    assert show.revealed() == 1 and show.answer_text(0) != "?"
    assert show.answer_text(1) == "?"
    qtbot.keyClick(show, Qt.Key.Key_Right)
    qtbot.keyClick(show, Qt.Key.Key_PageDown)
    qtbot.keyClick(show, Qt.Key.Key_Return)
    assert show.revealed() == 4 and show.answer_text(4) == "?"
    qtbot.keyClick(show, Qt.Key.Key_Right)
    assert detail[0].ground_truth in show.answer_text(4)
    with qtbot.waitSignal(view.nextStimulusRequested, timeout=1000):
        qtbot.keyClick(show, Qt.Key.Key_Right)
    view.set_detail(detail[1])       # what the main window does on nextStimulusRequested
    assert show.revealed() == 0 and detail[1].external_id in show.title.text()
    with qtbot.waitSignal(view.previousStimulusRequested, timeout=1000):
        qtbot.keyClick(show, Qt.Key.Key_Left)
    qtbot.keyClick(show, Qt.Key.Key_Escape)
    assert not show.isVisible() and view.presentation is None


def test_the_diff_baseline_is_chosen_by_name(qtbot, detail):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(["alpha", "beta", "gamma"])
    view.set_compared_models(["gamma", "alpha", "beta"])
    view.set_detail(detail[0])
    options = [view.baseline_box.itemText(i) for i in range(view.baseline_box.count())]
    assert options[:3] == ["differences from gamma", "differences from alpha", "differences from beta"]
    assert "no differences marked" in options
    view.set_baseline("model", "beta")
    p = next(p for p in detail[0].predictions if p.model == "alpha" and p.modality == "text")
    beta = next(q for q in detail[0].predictions if q.model == "beta" and q.modality == "text")
    assert view.baseline_text(p) == beta.raw_output
    view.set_baseline("none")
    assert view.baseline_text(p) is None
    # the choice survives a change of the models shown
    view.set_baseline("model", "beta")
    view.set_compared_models(["beta", "gamma"])
    assert view.baseline_model() == "beta"


def test_docked_narrow_every_chosen_model_is_shown(qtbot, detail):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(["alpha", "beta", "gamma"])
    view.set_compared_models(["alpha", "beta", "gamma"])
    view.resize(400, 700)
    view.show()
    view.set_detail(detail[0])
    qtbot.waitUntil(lambda: len(view.cells) == 9 and all(c.isVisible() for c in view.cells.values()), timeout=5000)
    qtbot.wait(50)
    for model in ("alpha", "beta", "gamma"):
        cell = view.cells[(model, "text")]
        assert cell.width() >= 150   # a readable column, not a sliver
        right_edge = cell.mapTo(view, QPoint(cell.width(), 0)).x()
        assert right_edge <= view.width()   # in view, not behind a sideways scroll


def test_judge_bars_are_coloured_by_score(qtbot, detail):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(["alpha", "beta"])
    view.set_compared_models(["alpha", "beta"])
    view.set_detail(detail[0])
    sheets = {}
    for cell in view.cells.values():
        for bar in cell.judge_bars:
            sheets[bar.format()] = bar.styleSheet()
    assert len({sheet for sheet in sheets.values()}) == len(sheets) > 1   # different scores, different colours
