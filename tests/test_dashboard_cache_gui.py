"""The window's metrics dashboard is computed once per change: shown again it is not redrawn, and after a service
says on the change channel that the dataset's figures changed it shows the new answers."""
from __future__ import annotations

import polars as pl

from app.changes import Topic
from storage.live_runs import store_live_prediction


def _models(win) -> list[str]:
    return win.dashboard.panel("friendbench.accuracy").table.frame["model"].to_list()


def test_the_dashboard_is_redrawn_only_after_a_change(main_window, qtbot):
    win = main_window
    dataset_id = win.session.dataset_id
    win.show_dock(win.metrics_dock)   # the dashboard is computed while it is in view
    qtbot.waitUntil(lambda: win.dashboard.dashboard is not None and "friendbench.accuracy" in win.dashboard.panels,
                    timeout=20000)
    shown, panel = win.dashboard.dashboard, win.dashboard.panel("friendbench.accuracy")
    assert "alpha (live)" not in _models(win)

    with qtbot.waitSignal(win.dashboard.dashboardShown, timeout=20000):
        win.dashboard.set_dataset(dataset_id)   # the dataset shown again, nothing changed
    assert win.dashboard.dashboard is shown and win.dashboard.panel("friendbench.accuracy") is panel

    stimulus_id = win.store.cursor().execute(
        "SELECT min(id) FROM stimulus WHERE dataset_id = ? AND ground_truth = 'familiar'", [dataset_id]).fetchall()[0][0]
    store_live_prediction(win.store.cursor(), dataset_id, "alpha", "video", "", "", "", stimulus_id, "prompt",
                          "They know each other.", "familiar", True, 0.3, 12, 2)
    with qtbot.waitSignal(win.dashboard.dashboardShown, timeout=20000):
        win.changes.publish({Topic.ROWS, Topic.METRICS}, dataset_id=dataset_id, stimulus_ids=[stimulus_id],
                            source="live")
    assert win.dashboard.dashboard is not shown
    live = win.dashboard.panel("friendbench.accuracy").table.frame.filter(pl.col("model") == "alpha (live)")
    assert live.select("modality", "n", "accuracy").rows() == [("video", 1, 1.0)]
