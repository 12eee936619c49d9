"""The main window: lazy table, selection, predictions and judge scores, filters, screenshot."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from widgets.main_window import MainWindow
from fixtures_store import big_predictions_plan, friendbench_like_plan, make_store
from widgets.stimulus_table import LOADING, PAGE_SIZE

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def window(main_window):
    return main_window


def visible_ids(win: MainWindow) -> list[str]:
    model = win.table_model
    return [model.data(model.index(r, 0)) for r in range(model.rowCount())]


def test_selecting_a_stimulus_shows_its_predictions_and_judge_scores(qtbot, window):
    with qtbot.waitSignal(window.detailShown, timeout=10000):
        window.table.selectRow(3)
    assert window.session.stimulus_id == window.table_model.stimulus_id(3)
    assert "clip-003" in window.stimulus_view.header.text()
    tree = window.predictions.tree
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == ["alpha", "beta", "gamma"]
    first = tree.topLevelItem(0).child(0)
    assert first.text(2) in ("✓ right", "✗ wrong")
    assert first.text(3).startswith("C1 ")
    assert "raters" in window.predictions.human.text()


def test_down_key_moves_to_the_next_stimulus(qtbot, window):
    qtbot.waitUntil(lambda: window.session.stimulus_id is not None, timeout=10000)
    first = window.session.stimulus_id
    window.table.setFocus()
    with qtbot.waitSignal(window.detailShown, timeout=10000):
        qtbot.keyClick(window.table, Qt.Key.Key_Down)
    assert window.session.stimulus_id == window.table_model.stimulus_id(1) != first


def test_filter_bar_narrows_the_table(qtbot, window):
    bar = window.filter_bar
    bar.truth.setCurrentIndex(bar.truth.findData("stranger"))
    qtbot.waitUntil(lambda: window.table_model.rowCount() == 6, timeout=10000)
    qtbot.waitUntil(lambda: LOADING not in [window.table_model.data(window.table_model.index(r, 2))
                                            for r in range(6)], timeout=10000)
    assert {window.table_model.data(window.table_model.index(r, 2)) for r in range(6)} == {"stranger"}
    bar.text.setText("clip-005")
    qtbot.waitUntil(lambda: window.table_model.rowCount() == 1, timeout=10000)
    bar.reset()
    qtbot.waitUntil(lambda: window.table_model.rowCount() == 12, timeout=10000)
    bar.model.setCurrentIndex(bar.model.findData("alpha"))
    bar.outcome.setCurrentText("incorrect")
    qtbot.waitUntil(lambda: window.table_model.rowCount() < 12, timeout=10000)
    n = window.table_model.rowCount()
    qtbot.waitUntil(lambda: LOADING not in [window.table_model.data(window.table_model.index(r, 3))
                                            for r in range(n)], timeout=10000)
    assert {window.table_model.data(window.table_model.index(r, 3)) for r in range(n)} == {"✗"}
    assert window.filter_bar.count.text() == f"{n} stimuli"


def test_lazy_table_over_a_million_predictions_fetches_only_what_is_shown(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "big.duckdb", big_predictions_plan(tmp_path, 250_000, 4))
    win = window_for(store)
    model = win.table_model
    qtbot.waitUntil(lambda: model.rowCount() == 250_000, timeout=30000)
    qtbot.waitUntil(lambda: model.data(model.index(0, 0)) != LOADING, timeout=10000)
    win.table.scrollToBottom()
    last = model.rowCount() - 1
    model.data(model.index(last, 0))
    qtbot.waitUntil(lambda: model.data(model.index(last, 0)) == "s0249999", timeout=10000)
    assert model.rows_fetched <= 4 * PAGE_SIZE
    assert model.cached_rows() <= 4 * PAGE_SIZE
    assert model.data(model.index(last, 3)) in ("✓", "✗")
    win.close()
    store.close()


def test_window_remembers_the_last_dataset(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, name="First"))
    from storage.importers.writer import write_plan
    write_plan(store, friendbench_like_plan(tmp_path, name="Second", n_stimuli=3))
    win = window_for(store, show=False)
    assert win.select_dataset("Second (synthetic)")
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 3, timeout=10000)
    win.close()
    again = window_for(store, show=False)
    assert again.dataset_combo.currentText() == "Second (synthetic)"
    again.close()
    store.close()


def test_screenshot_command_writes_a_non_blank_image(tmp_path):
    db = tmp_path / "s.duckdb"
    make_store(db, friendbench_like_plan(tmp_path)).close()
    out = tmp_path / "shot.png"
    env = {**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, str(ROOT / "main.py"), "--db", str(db), "--no-sample",
                             "--screenshot", str(out), "--stimulus", "clip-004"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert image.width() >= 800 and image.height() >= 500
    pixels = np.array([image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 29)])
    assert len(np.unique(pixels)) > 20


def test_a_saved_live_answer_refreshes_the_table_facets_and_dashboard(qtbot, main_window):
    import threading

    from app.changes import Topic
    from storage.live_runs import store_live_prediction

    win = main_window
    with qtbot.waitSignal(win.dashboard.dashboardShown, timeout=10000):
        win.show_dock(win.metrics_dock)   # a hidden dashboard is computed when it is next shown
    win.session.set_compared_models(("alpha", "live-model"))
    model = win.table_model
    qtbot.waitUntil(lambda: model.headerData(4, Qt.Orientation.Horizontal) == "live-model"
                    and model.data(model.index(0, 4)) == "", timeout=10000)
    stimulus_id, dataset_id = model.stimulus_id(0), win.session.dataset_id
    win.table.selectRow(0)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == stimulus_id,
                    timeout=10000)
    truth = model.data(model.index(0, 2))
    store_live_prediction(win.store.cursor(), dataset_id=dataset_id, model="live-model", modality="text",
                          prompt_setting="", vision_mode="", context="", stimulus_id=stimulus_id, prompt="Who?",
                          raw_output=f"They are {truth}.", answer=truth, correct=True, latency_s=0.1,
                          tokens_in=3, tokens_out=4)
    with qtbot.waitSignal(win.dashboard.dashboardShown, timeout=10000):
        # a service publishes from the thread that wrote, here a worker's: views refresh on the GUI thread
        publisher = threading.Thread(target=lambda: win.changes.publish(
            (Topic.ROWS, Topic.FACETS, Topic.METRICS, Topic.DETAIL), dataset_id=dataset_id,
            stimulus_ids=[stimulus_id], source="live"))
        publisher.start()
        publisher.join()
    qtbot.waitUntil(lambda: model.data(model.index(model.row_of(stimulus_id), 4)) == "✓", timeout=10000)
    qtbot.waitUntil(lambda: win.filter_bar.model.findData("live-model") >= 0, timeout=10000)
    qtbot.waitUntil(lambda: "live-model" in {p.model for p in win.stimulus_view.detail.predictions}, timeout=10000)
    assert win.session.stimulus_id == stimulus_id  # the selection stayed where the user left it


def test_an_error_shows_in_the_status_bar_until_the_next_action_succeeds(qtbot, main_window):
    from storage.errors import ThinsliceError

    win = main_window
    win.report_error(ThinsliceError("runs.csv line 4: found 'maybe', expected true or false"))
    assert win.status_message.text() == "runs.csv line 4: found 'maybe', expected true or false"
    with qtbot.waitSignal(win.detailShown, timeout=10000):
        win.table.selectRow(2)
    qtbot.waitUntil(lambda: "runs.csv" not in win.status_message.text(), timeout=10000)
    try:
        open(win.store.path.parent / "gone.wav", "rb")
    except OSError as exc:
        win.report_error(exc)
    assert win.status_message.text() == "gone.wav: no such file or directory"  # a sentence, not [Errno 2]
