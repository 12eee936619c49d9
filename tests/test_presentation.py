"""Presentation mode in the real window over the bundled sample: the clip plays there on the one clock with
Space, each benchmark's answers read as they should, and no HTML entity shows as text."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication, QLabel

from storage import lookups
from test_window_keys import become_active, click_row, press

ENTITIES = ("&#x27;", "&#39;", "&amp;", "&quot;", "&lt;", "&gt;")


@pytest.fixture
def window(window_for, sample_store_copy, qtbot):
    win = window_for(sample_store_copy, annotator="pat")
    yield win
    if win.compare.presentation is not None:
        win.compare.presentation.leave()
    win.close()


def present(qtbot, win, dataset: str, external_id: str, models: int = 3):
    """Pick the dataset, click the stimulus's row (the table has the focus), choose models, press F5."""
    assert win.select_dataset(dataset)
    qtbot.waitUntil(lambda: win.table_model.rowCount() > 0, timeout=15000)
    found = lookups.find_stimulus(win.store.cursor(), external_id, dataset)
    win.select_stimulus_id(found[0])
    qtbot.waitUntil(lambda: win.compare.detail is not None and win.compare.detail.external_id == external_id,
                    timeout=15000)
    # the table marks the stimulus's row once its page of rows has arrived from the worker
    qtbot.waitUntil(lambda: win.table.currentIndex().row() >= 0, timeout=15000)
    become_active(qtbot, win)
    click_row(qtbot, win, win.table.currentIndex().row())
    qtbot.waitUntil(lambda: win.compare.detail is not None and win.compare.detail.external_id == external_id,
                    timeout=15000)
    chosen = list(dict.fromkeys(p.model for p in win.compare.detail.predictions))[:models]
    win.compare.set_compared_models(chosen)
    press(qtbot, "F5")
    show = win.compare.presentation
    assert show is not None
    qtbot.waitUntil(show.isFullScreen, timeout=5000)
    become_active(qtbot, show)
    return show, chosen


def shown_text(label: QLabel) -> str:
    """What a reader sees in a label: rich text as rendered, plain text as it is."""
    if label.textFormat().name == "PlainText":
        return label.text()
    doc = QTextDocument()
    doc.setHtml(label.text())
    return doc.toPlainText()


def assert_no_entities(show) -> None:
    for label in show.findChildren(QLabel):
        for text in (label.text(), shown_text(label)):
            assert not any(e in text for e in ENTITIES), text


def test_f5_then_space_plays_the_clip_in_the_presentation(qtbot, window):
    page = window.media_page
    show, _ = present(qtbot, window, "FriendBench (sample)", "fb_001")
    player = page.player
    qtbot.waitUntil(lambda: not page.busy(), timeout=30000)
    assert show.isAncestorOf(player.media_area)          # the videos are on the presenter's screen
    assert len(player.video.surfaces) == 2
    assert show.transport.isVisible() and "paused" in show.transport.text()
    assert QApplication.focusWidget() is show
    press(qtbot, "Space")
    assert player.clock.playing
    qtbot.waitUntil(lambda: player.clock.position > 0.5, timeout=10000)
    qtbot.waitUntil(lambda: "playing" in show.transport.text(), timeout=2000)
    press(qtbot, "Space")
    assert not player.clock.playing
    press(qtbot, "Escape")
    qtbot.waitUntil(lambda: window.compare.presentation is None, timeout=5000)
    assert window.isAncestorOf(player.media_area)        # given back to the player's own splitter
    qtbot.waitUntil(lambda: player.media_area.isVisible() and player.media_area.height() > 50, timeout=5000)


def test_closing_the_presentation_window_gives_the_videos_back(qtbot, window):
    show, _ = present(qtbot, window, "FriendBench (sample)", "fb_001")
    player = window.media_page.player
    press(qtbot, "Space")
    assert show.isAncestorOf(player.media_area) and player.clock.playing
    show.close()                                          # as the window manager closes it
    qtbot.waitUntil(lambda: window.compare.presentation is None, timeout=5000)
    assert window.isAncestorOf(player.media_area) and not player.clock.playing


def test_echomind_shows_a_row_per_condition_with_its_judge_scores(qtbot, window):
    show, chosen = present(qtbot, window, "EchoMind (sample)", "synthesis/901")
    assert show.total() == len(chosen) + 1                # a column per model, then the truth
    names = {label.text() for label in show.findChildren(QLabel)}
    for condition in ("target voice, no prompt", "target voice, basic prompt", "alternative voice, basic prompt",
                      "neutral voice, no prompt"):
        assert condition in names
    assert show.answer_text(0).split("\n") == ["?"] * len(show.answer_labels(0))
    press(qtbot, "A")
    first = "\n".join(shown_text(label) for label in show.answer_labels(0))
    assert "No need to speak up" in first and "I'll review it" in first
    for criterion in ("C1", "C2", "C3", "C4"):
        assert criterion in first
    assert "whisper" in show.answer_text(show.total() - 1)
    assert_no_entities(show)


def test_agentviss_shows_each_roles_reply_and_its_scores(qtbot, window):
    show, chosen = present(qtbot, window, "AgentViSS (sample)", "flat-s01-e02-sc1")
    assert "landlord's" in show.context.text()
    press(qtbot, "A")
    assert show.revealed() == show.total() == len(chosen)
    names = {label.text() for label in show.findChildren(QLabel)}
    assert "as Benedikt, direct vision (DV)" in names and "as Yusra, verbalized vision (VV)" in names
    cells = [shown_text(label) for label in show.answer_labels(0)]
    assert len(cells) == 6 and all(cell.strip() not in ("", "—") for cell in cells)
    assert any("As Benedikt (defensive)" in cell for cell in cells)
    assert all("Char" in cell and "Int-Reg" in cell and "/ 10" in cell for cell in cells)
    assert_no_entities(show)


def test_the_slice_finders_note_follows_the_dataset(qtbot, window):
    panel = window.failures
    window.show_dock(window.failures_dock)
    assert window.select_dataset("FriendBench (sample)")
    qtbot.waitUntil(lambda: panel.frames is not None and panel.frames.dataset.name == "FriendBench (sample)"
                    and panel.state is not None and panel.side_a.count() >= 2, timeout=20000)
    panel.min_size.setValue(1)
    panel.find_button.click()
    # the panel also reports a recomputed state through the same signal, so wait for the slices themselves
    qtbot.waitUntil(lambda: panel.slices is not None, timeout=20000)
    assert panel.slice_note.text().startswith("FriendBench (sample): ")
    assert panel.slice_table.model().rowCount() > 0
    assert window.select_dataset("EchoMind (sample)")
    qtbot.waitUntil(lambda: panel.frames is not None and panel.frames.dataset.name == "EchoMind (sample)",
                    timeout=20000)
    assert panel.slice_table.model().rowCount() == 0
    assert panel.slice_note.text().startswith("EchoMind (sample): ") and "FriendBench" not in panel.slice_note.text()


def test_closing_the_window_while_presenting_ends_the_presentation(qtbot, window):
    show, _ = present(qtbot, window, "FriendBench (sample)", "fb_001")
    player = window.media_page.player
    window.close()
    assert window.compare.presentation is None and not show.isVisible()
    assert window.isAncestorOf(player.media_area)
