"""The story page: an imported ExploreToM story steps through its trace and lists its questions; clicking a
question shows the step where the belief it asks about was last set."""
from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from app.import_service import run_import
from app.ncp import detail_traces
from storage.importers.common import ImportOptions
from storage.queries import stimulus_detail
from storage.story_questions import StoryQuestion
from storage.store import Store
from tests.conftest import ROOT
from widgets.ncp_task_page import NcpTaskPage

SAMPLE_CSV = ROOT / "resources" / "sample" / "ncp" / "exploretom" / "questions.csv"


@pytest.fixture
def story_store(tmp_path):
    store = Store.open(tmp_path / "stories.duckdb")
    run_import(store, "exploretom", SAMPLE_CSV, ImportOptions(dataset_name="stories"))
    yield store
    store.close()


def _page(qtbot) -> NcpTaskPage:
    page = NcpTaskPage(detail_traces)
    qtbot.addWidget(page)
    page.resize(1500, 900)
    page.show()
    return page


def _click_row(qtbot, page: NcpTaskPage, row: int) -> None:
    table = page.questions.table
    rect = table.visualRect(table.model().index(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_a_story_lists_its_questions_and_a_click_steps_to_the_belief(qtbot, story_store):
    cur = story_store.cursor()
    second = cur.execute("SELECT id FROM stimulus WHERE title = 'In which container will Tobias search for the key?'"
                         ).fetchone()[0]
    detail = stimulus_detail(cur, second)
    page = _page(qtbot)
    page.set_detail(detail)
    assert page.scroll.isVisibleTo(page) and page.questions.isVisibleTo(page)
    assert page.stepper.step_count() == 5 and page.stepper.step() == 4
    table = page.questions.table
    rows = table.shown_rows()
    assert len(rows) == 5   # the story's five questions, not the other story's
    assert table.frame_model.titles() == ["Question", "Expected", "Engine"]
    assert [r[1] for r in rows] == [r[2] for r in rows]
    assert table.model().index(1, 0).data(Qt.ItemDataRole.FontRole).bold()   # the question this stimulus is
    assert "engine <b>drawer</b> ✔" in page.summary.text() and "false belief" in page.summary.text()
    assert "Maren slipped the spare key" in page.questions.texts.text()   # the prose beside the structure
    assert "Tobias left the kitchen." in page.questions.texts.text()
    # Tobias last learnt where the key is when Maren put it in the drawer (step 2), before he left.
    _click_row(qtbot, page, 1)
    assert page.stepper.step() == 2
    assert "Step 2</b>" in page.stepper.pane(0).header.text()
    _click_row(qtbot, page, 0)   # Maren saw the key go into the tin: step 4
    assert page.stepper.step() == 4


def test_each_model_answer_has_a_column(qtbot, story_store):
    cur = story_store.cursor()
    first = cur.execute("SELECT min(id) FROM stimulus").fetchone()[0]
    detail = stimulus_detail(cur, first)
    questions = [replace(q, model_answers=(("Lantern 9B", "drawer", False),)) if i == 0 else q
                 for i, q in enumerate(detail.extra["story_questions"])]
    page = _page(qtbot)
    page.set_detail(replace(detail, extra={**detail.extra, "story_questions": questions}))
    table = page.questions.table
    assert table.frame_model.titles()[3] == "Lantern 9B"
    assert table.shown_rows()[0][3] == "drawer" and table.shown_rows()[1][3] == ""
    assert isinstance(questions[0], StoryQuestion)


def _window_on_a_story(qtbot, story_store, window_for):
    """The window showing a story question about Kofi, picked in its table."""
    win = window_for(story_store)
    target = story_store.cursor().execute(
        "SELECT id FROM stimulus WHERE title LIKE 'Does Kofi believe%'").fetchone()[0]
    win.select_stimulus_id(target)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == target,
                    timeout=30000)
    return win


def test_the_window_opens_an_imported_story_in_the_stepper_and_its_keys_step_it(qtbot, story_store, window_for):
    from PySide6.QtWidgets import QApplication

    win = _window_on_a_story(qtbot, story_store, window_for)
    page = win.ncp_page
    assert win.stimulus_view.current_page() is page
    assert page.questions.isVisibleTo(win) and page.questions.table.row_count() == 5
    assert page.stepper.step() == page.stepper.step_count() - 1
    page.stepper.setFocus()   # as a click on the stepper does
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Home)
    assert page.stepper.step() == 0
    win.close()


def test_a_clicked_question_is_copied_with_ctrl_c_and_the_stepper_keys_still_step(qtbot, story_store, window_for):
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    win = _window_on_a_story(qtbot, story_store, window_for)
    page = win.ncp_page
    table = page.questions.table
    qtbot.waitUntil(lambda: table.row_count() == 5)
    _click_row(qtbot, page, 1)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is table)
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "\t".join(table.shown_rows()[1])
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Home)   # the stepper's key, from the list
    assert page.stepper.step() == 0
    win.close()
