"""The views a laptop squeezed, in the window at its 1366x768 size: the NCP belief table shows the world and both
people, a story's questions read in two or three lines, the AgentViSS score grid keeps four rows in view, the
transcript opens at its first line at t = 0, the live batch button is in view; on a larger screen the window opens at a share of it and
reopens at the size the user gave it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QAbstractItemView, QWidget

from test_stale_text import first_of, show
from widgets.dock_layout import DEFAULT_SIZE, SCREEN_SHARE

ROOT = Path(__file__).resolve().parents[1]


def _inside(widget: QWidget, area: QWidget) -> bool:
    """`widget`'s whole height is within `area` on screen (none of its rows scrolled or cut away)."""
    top = widget.mapTo(area.window(), QPoint(0, 0)).y()
    area_top = area.mapTo(area.window(), QPoint(0, 0)).y()
    return area_top <= top and top + widget.height() <= area_top + area.height()


def _rows_in_view(table: QAbstractItemView, rows: int) -> int:
    """How many of the first `rows` rows are wholly in the table's viewport."""
    height = table.viewport().height()
    return sum(1 for r in range(rows) if table.rowViewportPosition(r) >= 0
               and table.rowViewportPosition(r) + table.rowHeight(r) <= height)


@pytest.fixture
def laptop(qtbot, sample_store_copy, window_for):
    win = window_for(sample_store_copy, annotator="ana")
    assert (win.width(), win.height()) == (DEFAULT_SIZE.width(), DEFAULT_SIZE.height())   # a 1366x768 laptop's
    return win


def test_the_ncp_belief_table_shows_the_world_and_both_people(qtbot, laptop, sample_store_copy):
    show(qtbot, laptop, first_of(sample_store_copy, "ncp_task")[0])
    pane = laptop.ncp_page.stepper.pane(0)
    qtbot.waitUntil(lambda: pane.first_model.rowCount() >= 3, timeout=10000)
    qtbot.wait(100)
    assert _rows_in_view(pane.first_table, 3) == 3
    # and without scrolling the page: the table is in the page's view as it opens
    assert _inside(pane.first_table.viewport(), laptop.ncp_page.scroll.viewport())


def test_a_storys_questions_read_in_two_or_three_lines_beside_its_table(qtbot, laptop, sample_store_copy):
    show(qtbot, laptop, first_of(sample_store_copy, "story")[0])
    table = laptop.ncp_page.questions.table
    qtbot.waitUntil(lambda: table.row_count() > 0, timeout=10000)
    qtbot.wait(100)
    line = table.fontMetrics().lineSpacing()
    questions = [row[0] for row in table.shown_rows()]
    longest = max(range(len(questions)), key=lambda r: len(questions[r]))
    assert table.rowHeight(longest) <= 3 * line + 10, questions[longest]
    assert table.columnWidth(0) >= 150   # the question has a column to read, not a strip
    pane = laptop.ncp_page.stepper.pane(0)
    assert _rows_in_view(pane.first_table, 3) == 3
    assert _inside(pane.first_table.viewport(), laptop.ncp_page.scroll.viewport())


def test_the_scene_score_grid_keeps_four_rows_in_view(qtbot, laptop, sample_store_copy):
    show(qtbot, laptop, first_of(sample_store_copy, "agentviss_scene")[0])
    grid = laptop.scene_view.scores
    qtbot.waitUntil(lambda: grid.row_count() >= 4, timeout=10000)
    qtbot.wait(100)
    assert grid.row_count() == 6
    assert _rows_in_view(grid, grid.row_count()) >= 4


def test_the_transcript_opens_at_its_first_line_at_t0(qtbot, laptop, sample_store_copy):
    show(qtbot, laptop, first_of(sample_store_copy, "dyad")[0])
    player = laptop.media_page.player
    transcript = player.transcript
    qtbot.waitUntil(lambda: transcript.document().blockCount() > 3, timeout=10000)
    qtbot.wait(200)
    assert player.clock.position == 0.0
    assert transcript.verticalScrollBar().maximum() > 0   # more lines than it shows
    assert transcript.verticalScrollBar().value() == 0
    assert transcript.cursorForPosition(QPoint(4, 4)).blockNumber() == 0


def test_the_live_batch_button_is_in_view_as_the_live_dock_opens(qtbot, laptop, sample_store_copy):
    show(qtbot, laptop, first_of(sample_store_copy, "dyad")[0])
    laptop.live_dock.show()
    laptop.live_dock.raise_()
    qtbot.waitUntil(lambda: laptop._live is not None and laptop.live.batch_button.isVisible(), timeout=10000)
    qtbot.wait(100)
    button, scroll = laptop.live.batch_button, laptop.live_dock.widget()
    viewport = scroll.viewport()
    at = button.mapTo(viewport, QPoint(0, 0))
    assert viewport.rect().contains(button.rect().translated(at)), (at, viewport.size())
    assert scroll.verticalScrollBar().value() == 0


_SIZE_SCRIPT = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.session import Session
from storage.store import Store
from widgets.main_window import MainWindow
store = Store.open(sys.argv[1])
win = MainWindow(store, Session(), QSettings(sys.argv[2], QSettings.Format.IniFormat))
win.show()
app.processEvents()
room = win.screen().availableGeometry()
said = {"size": [win.width(), win.height()], "room": [room.width(), room.height()]}
if len(sys.argv) > 3:
    win.resize(int(sys.argv[3]), int(sys.argv[4]))
    app.processEvents()
win.close()
store.close()
print(json.dumps(said))
"""


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display to have a screen size")
def test_the_window_opens_at_a_share_of_a_large_screen_and_at_the_size_the_user_gave_it(tmp_path):
    from fixtures_store import friendbench_like_plan, make_store
    make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2)).close()

    def run(*extra: str) -> dict:
        done = subprocess.run([sys.executable, "-c", _SIZE_SCRIPT, str(tmp_path / "s.duckdb"),
                               str(tmp_path / "settings.ini"), *extra], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "QT_QPA_PLATFORM": "xcb", "PYTHONPATH": str(ROOT)}, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run("1500", "850")
    width, height = first["room"]
    expected = [min(width, max(DEFAULT_SIZE.width(), round(width * SCREEN_SHARE))),
                min(height, max(DEFAULT_SIZE.height(), round(height * SCREEN_SHARE)))]
    assert first["size"] == expected
    if width > DEFAULT_SIZE.width() / SCREEN_SHARE:   # a screen larger than a laptop's: more than the least size
        assert first["size"][0] > DEFAULT_SIZE.width()
    assert run()["size"] == [1500, 850]   # the size the user gave it is remembered
