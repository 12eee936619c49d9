"""The real window at laptop size on the sample store, and a stimulus opened in it as a user opens one."""
from __future__ import annotations


def laptop_window(qtbot, window_for, store):
    """The window over `store` at 1366x768, its table filled."""
    win = window_for(store, annotator="ana")
    win.resize(1366, 768)
    qtbot.waitUntil(lambda: win.table_model.rowCount() > 0, timeout=10000)
    return win


def open_first(qtbot, win, store, kind: str) -> int:
    """Open the first stimulus of `kind` as a user does: its dataset first (the dataset's table comes in and
    shows its first row), then the stimulus; returns its id once its detail is shown."""
    (stimulus, dataset) = store.cursor().execute(
        "SELECT s.id, d.name FROM stimulus s JOIN dataset d ON d.id = s.dataset_id WHERE s.kind = ?"
        " ORDER BY s.id LIMIT 1", [kind]).fetchone()
    win.select_dataset(dataset)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.dataset_name == dataset, timeout=30000)
    win.select_stimulus_id(stimulus)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == stimulus,
                    timeout=30000)
    qtbot.wait(100)   # the views it fills settle
    return stimulus
