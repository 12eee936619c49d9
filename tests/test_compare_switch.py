"""Switching stimulus in the compare view refills the same grid: what it shows is exactly what a view
built afresh for that stimulus shows; a view changed while hidden shows the latest stimulus once shown."""
from __future__ import annotations

import pytest

from fixtures_store import friendbench_like_plan, make_store
from storage import queries
from widgets.compare_view import CompareView

MODELS = ["alpha", "beta", "gamma"]


@pytest.fixture
def details(tmp_path):
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4))
    cur = store.cursor()
    found = [queries.stimulus_detail(cur, sid) for (sid,) in cur.execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    yield found
    store.close()


def seen(view: CompareView) -> dict:
    """What a reader sees in each cell: answer and verdict, judge bars and their reasons, response text."""
    return {key: (cell.answer.text(), cell.answer.isVisibleTo(cell), cell.text.text(), cell.text.toolTip(),
                  [(bar.format(), bar.value(), bar.toolTip(), bar.styleSheet()) for bar in cell.judge_bars])
            for key, cell in view.cells.items()}


def fresh(qtbot, detail) -> dict:
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(MODELS)
    view.set_compared_models(MODELS)
    view.resize(1400, 700)
    view.show()
    view.set_detail(detail)
    return seen(view)


def test_a_switch_shows_what_a_fresh_view_shows(qtbot, details):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(MODELS)
    view.set_compared_models(MODELS)
    view.resize(1400, 700)
    view.show()
    for detail in details:
        view.set_detail(detail)
        assert detail.external_id in view.header.text()
        assert seen(view) == fresh(qtbot, detail)
    first = seen(view)
    view.set_baseline("model", "beta")   # a new baseline marks other words in the same grid
    view.set_baseline("model", "alpha")
    assert seen(view) == first


def test_a_hidden_view_shows_the_latest_stimulus_when_shown(qtbot, details):
    view = CompareView()
    qtbot.addWidget(view)
    view.set_available_models(MODELS)
    view.set_compared_models(MODELS)
    view.resize(1400, 700)
    view.show()
    view.set_detail(details[0])
    view.hide()
    view.set_detail(details[2])
    view.show()
    assert details[2].external_id in view.header.text()
    assert seen(view) == fresh(qtbot, details[2])
