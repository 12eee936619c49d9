"""Opening a stimulus of another dataset lands on that stimulus, in its dataset's table, whatever loads first:
the first dataset's table may still be loading when the user (or `--stimulus`, a chart, a failure list) jumps."""
from __future__ import annotations

import pytest


def _last_dataset_and_its_first_stimulus(store) -> tuple[str, int]:
    rows = store.cursor().execute(
        "SELECT d.name, min(s.id) FROM stimulus s JOIN dataset d ON d.id = s.dataset_id GROUP BY d.name"
        " ORDER BY min(s.id)").fetchall()
    assert len(rows) >= 2
    return rows[-1]


def _lands_on(qtbot, win, dataset: str, wanted: int) -> None:
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == wanted,
                    timeout=30000)
    qtbot.waitUntil(lambda: not win.runner.busy() and win.dataset_combo.currentText() == dataset
                    and win.table.currentIndex().isValid(), timeout=30000)
    qtbot.wait(200)   # any late table load would have moved the selection by now
    assert win.session.stimulus_id == wanted
    assert win.stimulus_view.detail.id == wanted
    assert win.dataset_combo.currentText() == dataset
    assert win.table_model.stimulus_id(win.table.currentIndex().row()) == wanted


@pytest.mark.parametrize("delay_ms", [0, 5, 30, 120])
def test_choosing_the_dataset_then_the_stimulus(qtbot, window_for, sample_store_copy, delay_ms):
    dataset, wanted = _last_dataset_and_its_first_stimulus(sample_store_copy)
    win = window_for(sample_store_copy)
    qtbot.wait(delay_ms)
    win.select_dataset(dataset)
    win.select_stimulus_id(wanted)
    _lands_on(qtbot, win, dataset, wanted)


@pytest.mark.parametrize("delay_ms", [0, 5, 30, 120, 1500])
def test_jumping_to_a_stimulus_of_another_dataset_brings_its_dataset(qtbot, window_for, sample_store_copy,
                                                                     delay_ms):
    dataset, wanted = _last_dataset_and_its_first_stimulus(sample_store_copy)
    win = window_for(sample_store_copy)
    qtbot.wait(delay_ms)
    assert win.dataset_combo.currentText() != dataset
    win.select_stimulus_id(wanted)
    _lands_on(qtbot, win, dataset, wanted)
