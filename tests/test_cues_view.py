"""The cues view in the real window: opened from the Compare menu, it measures on the worker, shows each
cue against a judge's correctness, opens a stimulus from a clicked point, and exports table and figure."""
from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import QPointF, Qt

from app.cues.stats import cliffs_delta
from app.sample import import_label_sets
from storage.importers.writer import write_plan
from storage.store import Store
from tests.cues_dyads import dyad_plan


@pytest.fixture
def window(qtbot, tmp_path, window_for):
    root = tmp_path / "media"
    root.mkdir()
    store = Store.open(tmp_path / "cues.duckdb")
    import_label_sets(store)
    write_plan(store, dyad_plan(root))
    win = window_for(store)
    yield win
    win.close()
    store.close()


def open_from_menu(win):
    action = next(a for a in win.compare_menu.actions() if a.text().replace("&", "") == "Voice and turn-taking cues")
    action.trigger()
    return win.cues_view


def test_compute_compare_open_and_export(qtbot, window, tmp_path):
    view = open_from_menu(window)
    assert window.cues_dock.isVisible()
    qtbot.waitUntil(lambda: view.dataset.count() == 1 and view.result is not None, timeout=20000)
    assert view.result.run is None  # nothing measured yet
    qtbot.mouseClick(view.compute_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.result is not None and view.result.run is not None and view.table.row_count() > 0,
                    timeout=60000)
    judges = [view.judge.itemText(i) for i in range(view.judge.count())]
    assert judges[:2] == ["humans · pooled", "humans · audio"] and "m · audio" in judges
    view.judge.setCurrentIndex(judges.index("m · audio"))
    view.judge.activated.emit(judges.index("m · audio"))
    cues = [r[0] for r in view.table.shown_rows()]
    row = cues.index("label:vocal cues/laugh")
    view.table.selectRow(row)
    chosen = view.selected()
    assert chosen.cue == "label:vocal cues/laugh" and chosen.delta == pytest.approx(cliffs_delta(chosen.right,
                                                                                                 chosen.wrong))
    assert view.table.shown_rows()[row][3] == "1.00"
    # click the point of the stimulus with three laughs (d3, right for the model)
    x, value, stimulus = next(p for p in view.points() if p[1] == 3.0)

    def where():
        return view.plot.mapFromScene(view.plot.getPlotItem().vb.mapViewToScene(QPointF(x, value)))

    qtbot.waitUntil(lambda: view.plot.viewport().rect().contains(where()), timeout=5000)  # ranged on the points
    point = where()
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: window.stimulus_view.detail is not None and window.stimulus_view.detail.id == stimulus,
                    timeout=10000)
    assert window.stimulus_view.detail.external_id == "d3"
    table = view.export_csv(tmp_path / "cues.csv")
    rows = list(csv.DictReader(table.open()))
    laugh = next(r for r in rows if r["judge"] == "m · audio" and r["cue"] == "label:vocal cues/laugh")
    assert float(laugh["cliffs_delta"]) == 1.0 and laugh["right_stimuli"] == "d2 d3" and laugh["correction"] == "holm"
    assert {r["judge"] for r in rows} >= {"humans · pooled", "humans · audio", "m · audio"}
    for suffix in (".png", ".svg"):
        out = view.export_figure(tmp_path / f"figure{suffix}")
        assert out.stat().st_size > 1000


def test_benjamini_hochberg_is_chosen_and_named(qtbot, window):
    from app.cues.measures import CueSettings
    from app.cues.service import compute_cues
    compute_cues(window.store, settings=CueSettings(egemaps=False))
    view = open_from_menu(window)
    qtbot.waitUntil(lambda: view.result is not None and view.table.row_count() > 0, timeout=20000)
    view.correction.setCurrentIndex(view.correction.findData("bh"))
    view.correction.activated.emit(view.correction.currentIndex())
    qtbot.waitUntil(lambda: view.result.correction == "bh", timeout=20000)
    assert "Benjamini-Hochberg" in view.methods.text() and "Cliff's delta" in view.methods.text()
