"""The window over a dataset of a fifth benchmark found through its entry point (the toy riddles of
`toy_benchmark.py`): its stimulus is shown on the page its kind names, the live panel offers its own
question, its dashboard shows its answers scored by its rules, and presentation mode presents it with each
model's answer hidden until revealed. The package is put on this process's path and the registry read again."""
from __future__ import annotations

import shutil

import pytest

from app.benchmarks import profiles, registry
from storage.store import Store
from test_presentation import present
from test_window_keys import press
from toy_benchmark import make_store, write_toy


@pytest.fixture
def riddles_store(tmp_path_factory, tmp_path, monkeypatch):
    """A store of the riddles dataset, opened while the toy package is registered in this process."""
    toy = write_toy(tmp_path_factory.mktemp("toy_package"))
    made = make_store(toy, tmp_path_factory.mktemp("riddles"))
    monkeypatch.syspath_prepend(str(toy))
    registry.cache_clear()
    path = tmp_path / "riddles.duckdb"
    shutil.copy(made, path)
    store = Store.open(path)
    yield store
    store.close()
    registry.cache_clear()   # read again without the package once the path is given back


def test_the_window_shows_scores_and_presents_the_toy_s_riddles(qtbot, window_for, riddles_store):
    assert "riddles" in profiles()
    win = window_for(riddles_store, annotator="pat")
    show, chosen = present(qtbot, win, "Riddles", "r2", models=1)
    assert chosen == ["tiny"]
    assert win.stimulus_view.current_page() is win.stimulus_view.generic
    assert "What gets wetter the more it dries?" in show.context.text() + show.title.text()
    assert show.total() == 2 and show.answer_text(0) == "?"   # the model's answer hidden until revealed, then the truth
    press(qtbot, "A")
    assert "a sponge" in show.answer_text(0).lower() and "towel" in show.answer_text(1)
    show.leave()
    qtbot.waitUntil(lambda: win.compare.presentation is None, timeout=5000)
    assert win.live.template_name.text().startswith("riddles.answer")
    with qtbot.waitSignal(win.dashboard.dashboardShown, timeout=20000):
        win.show_dock(win.metrics_dock)
    accuracy = win.dashboard.panel("generic.accuracy").table
    assert accuracy.frame.row(0, named=True)["accuracy"] == pytest.approx(2 / 3)
