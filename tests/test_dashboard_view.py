"""The dashboard view: a click on a bar or point drills down to its stimuli; exports; the correction selector."""
from __future__ import annotations

from functools import partial

import pytest
from PySide6.QtCore import Qt

from app.dashboard import load_frames
from fixtures_store import friendbench_like_plan, make_store
from widgets.metrics_dashboard import MetricsDashboardView


@pytest.fixture
def view(qtbot, tmp_path):
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=10))
    dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
    widget = MetricsDashboardView(partial(load_frames, store))
    qtbot.addWidget(widget)
    widget.resize(1200, 1400)
    widget.show()
    with qtbot.waitSignal(widget.dashboardShown, timeout=20000):
        widget.set_dataset(dataset_id)
    yield widget
    widget.runner.wait()
    store.close()


def _click(qtbot, panel, row):
    plot = panel.plot
    point = plot.mapFromScene(panel.scene_pos_of_row(row))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_clicking_a_bar_emits_its_stimuli(qtbot, view):
    panel = view.panel("friendbench.accuracy")
    table = panel.table
    row = next(i for i, r in enumerate(table.frame.iter_rows(named=True))
               if r["model"] == "beta" and r["modality"] == "audio")
    with qtbot.waitSignal(view.drillDown, timeout=3000) as caught:
        _click(qtbot, panel, row)
    ids, description = caught.args
    assert ids == table.stimulus_ids[row] and len(ids) == 10
    assert "beta" in description and "audio" in description


def test_clicking_a_point_of_the_scatter_emits_its_stimuli(qtbot, view):
    panel = view.panel("friendbench.signal")
    row = next(i for i, r in enumerate(panel.table.frame.iter_rows(named=True)) if r["model"] == "humans")
    with qtbot.waitSignal(view.drillDown, timeout=3000) as caught:
        _click(qtbot, panel, row)
    assert caught.args[0] == panel.table.stimulus_ids[row]
    assert "humans" in caught.args[1]


def test_correction_selector_recomputes_and_names_the_correction(qtbot, view):
    assert view.panel("friendbench.signal").table.frame["correction"][0] == "loglinear"
    with qtbot.waitSignal(view.dashboardShown, timeout=20000):
        view.set_correction("half_over_n")
    table = view.panel("friendbench.signal").table
    assert set(table.frame["correction"]) == {"half_over_n"}
    assert "1/(2N)" in table.title


def test_exports_png_svg_and_csv(view, tmp_path):
    panel = view.panel("friendbench.accuracy")
    png = panel.export_chart(tmp_path / "acc.png")
    svg = panel.export_chart(tmp_path / "acc.svg")
    csv = panel.export_csv(tmp_path / "acc.csv")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()
    import polars as pl

    frame = pl.read_csv(csv)
    assert frame.height == panel.table.frame.height
    assert "stimulus_ids" in frame.columns and "accuracy" in frame.columns


def test_the_d_prime_correction_is_offered_only_where_d_prime_is_shown(qtbot, tmp_path):
    from fixtures_store import big_predictions_plan

    store = make_store(tmp_path / "generic.duckdb", big_predictions_plan(tmp_path, n_stimuli=30, n_models=2))
    fb = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=10))
    for source, shown in ((fb, True), (store, False)):
        dataset_id = source.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
        widget = MetricsDashboardView(partial(load_frames, source))
        qtbot.addWidget(widget)
        widget.show()
        with qtbot.waitSignal(widget.dashboardShown, timeout=20000):
            widget.set_dataset(dataset_id)
        assert widget.correction_box.isVisible() == shown
        widget.runner.wait()
    store.close()
    fb.close()
