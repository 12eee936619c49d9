"""In the real window, an annotation-file import or export says what it read, wrote and left out, per tier, and
asks in place when the file holds labels past the stimulus's end or labels the format cannot hold."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from annotation_files_fixtures import make_store, stored
from app.export_service import import_annotations

SHOTS = Path("/tmp/shots12")


def textgrid(xmax: float, tier: str, intervals: list[tuple[float, float, str]]) -> str:
    """A long-form TextGrid as Praat writes it, one interval tier."""
    items = "".join(f"        intervals [{i}]:\n            xmin = {a}\n            xmax = {b}\n"
                    f"            text = \"{text}\"\n" for i, (a, b, text) in enumerate(intervals, 1))
    end = max(xmax, intervals[-1][1])
    return ('File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0\n'
            f"xmax = {end}\ntiers? <exists>\nsize = 1\nitem []:\n    item [1]:\n        class = \"IntervalTier\"\n"
            f"        name = \"{tier}\"\n        xmin = 0\n        xmax = {end}\n"
            f"        intervals: size = {len(intervals)}\n{items}")


@pytest.fixture
def clip_store(tmp_path):
    """One FriendBench dyad, fb-001, whose audio is 20 s long (not on disk)."""
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data", {"friendbench": [("fb-001", 20.0)]})
    yield store
    store.close()


def _ready(qtbot, win) -> None:
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.external_id == "fb-001", timeout=10000)


def _shoot(widget, name: str) -> None:
    """With THINSLICE_SHOTS=light or dark, save the dialog at 1366x768 in the palette in use, for a look by eye."""
    palette = os.environ.get("THINSLICE_SHOTS")
    if palette:
        SHOTS.mkdir(exist_ok=True)
        widget.resize(1366, 768)
        widget.grab().save(str(SHOTS / f"{name}-{palette}.png"))


def test_a_textgrid_label_past_the_end_is_asked_about_and_clip_imports_it_clipped(qtbot, clip_store, window_for,
                                                                                     tmp_path):
    grid = tmp_path / "fb-001.TextGrid"
    grid.write_text(textgrid(20.0, "vocal cues", [(0.0, 2.0, "laugh"), (2.0, 18.0, ""), (18.0, 23.5, "sigh")]))
    win = window_for(clip_store, annotator="ana")
    _ready(qtbot, win)
    dialog = win.import_annotation_file(grid)
    panel = dialog.panel
    qtbot.waitUntil(lambda: panel.question.isVisible(), timeout=10000)
    assert panel.clip_button.isVisible() and panel.clip_button.text() == "Clip it to the stimulus"
    assert "this label lies outside the stimulus" in panel.question_text.text().lower()
    assert panel.left_out_texts() == ["fb-001.TextGrid:26, tier 'vocal cues', item 3: 'sigh' 18.000-23.500 s lies"
                                      " outside the stimulus 'fb-001' (0-20 s)"]
    assert stored(clip_store, "friendbench") == []  # asking writes nothing
    _shoot(dialog, "import-question")
    qtbot.mouseClick(panel.clip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.report is not None, timeout=10000)
    assert [(r[1], r[3], r[4], r[5]) for r in stored(clip_store, "friendbench")] == [
        ("ana", "laugh", 0.0, 2.0), ("ana", "sigh", 18.0, 20.0)]
    rows = panel.table_rows()
    assert [r[:5] for r in rows] == [["fb-001.TextGrid", "vocal cues", "2", "2", "0"]]
    assert "1 cut to the stimulus (0-20 s)" in rows[0][5]
    assert "Imported 2 labels from fb-001.TextGrid" in panel.headline.text()
    assert "Imported 2 labels" in win.status_message.text()
    _shoot(dialog, "import-report")


def test_cancel_at_the_question_leaves_the_store_unchanged(qtbot, clip_store, window_for, tmp_path):
    grid = tmp_path / "fb-001.TextGrid"
    grid.write_text(textgrid(30.0, "vocal cues", [(0.0, 25.0, "laugh"), (25.0, 30.0, "sigh")]))
    win = window_for(clip_store, annotator="ana")
    _ready(qtbot, win)
    dialog = win.import_annotation_file(grid)
    panel = dialog.panel
    qtbot.waitUntil(lambda: panel.question.isVisible(), timeout=10000)
    assert "these 2 labels lie outside" in panel.question_text.text().lower()
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel.clip_button, timeout=5000)  # the way on is ready
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is panel.cancel_button
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)
    assert not panel.question.isVisible()
    assert "nothing was imported; the store is unchanged" in panel.headline.text()
    qtbot.waitUntil(lambda: not win.runner.busy(), timeout=10000)
    assert stored(clip_store, "friendbench") == []


def test_an_export_the_format_cannot_hold_asks_then_reports_what_it_left_out(qtbot, clip_store, window_for,
                                                                              tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"stimulus": "fb-001", "annotator": "ana", "label_set": "vocal cues",
                                  "label": "laugh", "start_s": 1.0, "end_s": 2.0}) + "\n")
    assert import_annotations(clip_store, "jsonl", labels, "friendbench") == 1
    # a label with a tab, as a store written before labels were held to the value rule may hold (no path
    # writes one now): Audacity's format cannot hold it
    clip_store.cursor().execute(
        "INSERT INTO annotation (stimulus_id, annotator, label_set, label, start_s, end_s)"
        " SELECT id, 'ana', 'vocal cues', 'two\tparts', 3.0, 4.0 FROM stimulus WHERE external_id = 'fb-001'")
    win = window_for(clip_store, annotator="ana")
    _ready(qtbot, win)
    dialog = win.open_export()
    dialog.format.setCurrentIndex(next(i for i in range(dialog.format.count())
                                       if dialog.format.itemData(i)[0] == "audacity"))
    out = tmp_path / "out"
    dialog.out.setText(str(out))
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    panel = dialog.transfer
    qtbot.waitUntil(lambda: panel.question.isVisible(), timeout=10000)
    assert panel.skip_button.text() == "Skip this label and export the rest"
    assert not panel.clip_button.isVisible()
    assert not out.exists()
    assert ["tab or a line break" in item and "'two\\tparts'" in item for item in panel.left_out_texts()] == [True]
    _shoot(dialog, "export-question")
    qtbot.mouseClick(panel.skip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.report is not None, timeout=10000)
    rows = {(r[0], r[1]): r[3:] for r in panel.table_rows()}  # file, tier -> written, left out, why
    assert rows[("fb-001.txt", "—")] == ["1", "0", ""]
    assert rows[("fb-001.txt", "ana | vocal cues")][:2] == ["0", "1"]  # the tier the label was on
    assert "tab or a line break" in rows[("fb-001.txt", "ana | vocal cues")][2]
    assert panel.table.isColumnHidden(2)  # an export reads nothing: no Read column
    assert any("'two\\tparts'" in item and "tab or a line break" in item for item in panel.left_out_texts())
    assert panel.headline.text() == f"Wrote 1 label to {out}"
    written = list(out.rglob("*.txt")) if out.is_dir() else [out]
    assert len(written) == 1 and "laugh" in written[0].read_text() and "parts" not in written[0].read_text()
    _shoot(dialog, "export-report")
