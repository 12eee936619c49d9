"""In the real window, Annotate > Import annotations reads a file by what it holds: every export of every format
comes back whole, whatever the file is called; and labels past the stimulus are asked about with every choice
the command line has (Skip with the count, Clip, Cancel), each landing exactly what the command line lands."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from annotation_files_fixtures import eaf_text, make_store, stored
from app.cli import dispatch
from app.export_service import export_annotations, import_annotations
from storage.exporters.registry import exporters
from storage.store import Store
from store_rows import store_rows

CLIPS = {"friendbench": [("fb-001", 20.0), ("fb-002", 20.0)]}
LABELS = ("stimulus,annotator,label_set,label,start_s,end_s,media_role\n"
          "fb-001,ana,vocal cues,laugh,1.5,2.5,audio:A\n"
          "fb-001,bo,vocal cues,sigh,7.0,8.25,\n"
          "fb-001,ana,familiarity,familiar,,,\n")


def _ready(qtbot, win) -> None:
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.external_id == "fb-001", timeout=10000)


def _imported(qtbot, win, path: Path):
    """Import `path` through the window's Import annotations and wait for its report."""
    dialog = win.import_annotation_file(path)
    panel = dialog.panel
    qtbot.waitUntil(lambda: panel.report is not None or panel.question.isVisible()
                    or panel.headline.styleSheet() != "", timeout=15000)
    return panel


@pytest.fixture
def source(tmp_path):
    """The labels to export: two annotators on fb-001, one on the first speaker's audio, one whole-clip label."""
    store = make_store(tmp_path / "source.duckdb", tmp_path / "source", CLIPS)
    (tmp_path / "labels.csv").write_text(LABELS)
    assert import_annotations(store, "csv", tmp_path / "labels.csv", "friendbench") == 3
    yield store
    store.close()


@pytest.fixture
def target(tmp_path):
    """The same clips in a store of their own, with no labels yet."""
    store = make_store(tmp_path / "target.duckdb", tmp_path / "target", CLIPS)
    yield store
    store.close()


@pytest.mark.parametrize("format", [e.name for e in exporters()])
def test_every_export_comes_back_through_the_window(qtbot, window_for, source, target, tmp_path, format):
    exporter = next(e for e in exporters() if e.name == format)
    # a per-recording file is named after its clip, as the export names it; a table is named anything
    name = f"fb-001{exporter.extension}" if exporter.per_stimulus else f"labels{exporter.extension}"
    written = export_annotations(source, format, tmp_path / "out" / name, dataset="friendbench").path
    before = store_rows(target)
    win = window_for(target, annotator="ana")
    _ready(qtbot, win)
    panel = _imported(qtbot, win, Path(written))
    assert panel.report is not None, panel.headline.text()
    assert stored(target, "friendbench") == stored(source, "friendbench")
    assert panel.headline.text() == f"Imported 3 labels from {name}"
    after = store_rows(target)
    assert {table for table in after if after[table] != before[table]} == {"annotation", "annotation_event"}


@pytest.mark.parametrize("format, name", [("friendbench", "clips.txt"), ("echomind", "cases.data"),
                                          ("eaf", "fb-001.xml")])
def test_an_export_under_another_name_comes_back_through_the_window(qtbot, window_for, source, target, tmp_path,
                                                                    format, name):
    """The window reads a file by its content: a FriendBench CSV called .txt is not taken for Audacity labels."""
    exporter = next(e for e in exporters() if e.name == format)
    written = export_annotations(source, format, tmp_path / "out" / f"fb-001{exporter.extension}",
                                 dataset="friendbench").path
    renamed = tmp_path / name
    shutil.copyfile(written, renamed)
    win = window_for(target, annotator="ana")
    _ready(qtbot, win)
    panel = _imported(qtbot, win, renamed)
    assert panel.report is not None, panel.headline.text()
    assert stored(target, "friendbench") == stored(source, "friendbench")


def test_a_file_in_no_format_is_refused_in_one_line_and_the_store_is_unchanged(qtbot, window_for, target,
                                                                                tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# what I heard\nlaughter at the start\n")
    before = store_rows(target)
    win = window_for(target, annotator="ana")
    _ready(qtbot, win)
    dialog = win.import_annotation_file(notes)
    # the worker's answer reaches the panel through the event loop, which runs only while waiting here
    with qtbot.waitSignal(dialog.panel.failed, timeout=15000) as failed:
        pass
    said = dialog.panel.headline.text()
    assert said.startswith("Import failed, nothing was written: notes.md: found <a file in no annotation format")
    assert "\n" not in said and failed.args == [said]
    assert store_rows(target) == before


def test_a_ragged_row_is_refused_in_the_window_as_the_command_line_refuses_it(qtbot, window_for, target, tmp_path):
    """The issue's own row, 8 fields in a 10-column file: the window says what every reader of tables says."""
    labels = tmp_path / "labels.csv"
    labels.write_text("stimulus,annotator,label_set,label,start_s,end_s,value,note,media_role,meta\n"
                      "fb_001,x,vocal cues,laugh,1.5,2.5,,,,\nfb_002,x,vocal cues,laugh,1.5,2.5,,\n")
    before = store_rows(target)
    win = window_for(target, annotator="ana")
    _ready(qtbot, win)
    dialog = win.import_annotation_file(labels)
    with qtbot.waitSignal(dialog.panel.failed, timeout=15000):
        pass
    assert dialog.panel.headline.text() == ("Import failed, nothing was written: labels.csv:3: found <8 fields>;"
                                            " expected 10 fields as in the header")
    assert store_rows(target) == before


# -- labels past the stimulus: the command line's choices, in the window ---------------------------------------
def textgrid(xmax: float, intervals: list[tuple[float, float, str]]) -> str:
    """A long-form TextGrid as Praat writes it, one interval tier `vocal cues`."""
    items = "".join(f"        intervals [{i}]:\n            xmin = {a}\n            xmax = {b}\n"
                    f"            text = \"{text}\"\n" for i, (a, b, text) in enumerate(intervals, 1))
    return ('File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0\n'
            f"xmax = {xmax}\ntiers? <exists>\nsize = 1\nitem []:\n    item [1]:\n        class = \"IntervalTier\"\n"
            f"        name = \"vocal cues\"\n        xmin = 0\n        xmax = {xmax}\n"
            f"        intervals: size = {len(intervals)}\n{items}")


def _by_the_command_line(tmp_path: Path, stimuli: dict, path: Path, dataset: str, *options: str) -> list[tuple]:
    """What `thinslice annotations import auto` lands with these options in a fresh store of the same stimuli."""
    db = tmp_path / "cli.duckdb"
    make_store(db, tmp_path / "cli", stimuli).close()
    assert dispatch(["annotations", "import", "auto", str(path), "--db", str(db), "--dataset", dataset,
                     "--annotator", "ana", "--stimulus", "fb-001" if dataset == "friendbench" else "rec01",
                     *options]) == 0
    store = Store.open(db)
    try:
        return stored(store, dataset)
    finally:
        store.close()


@pytest.mark.parametrize("answer, option", [("skip", "--skip-outside"), ("clip", "--clip")])
def test_labels_past_the_stimulus_are_asked_about_with_skip_clip_and_cancel(qtbot, window_for, target, tmp_path,
                                                                            answer, option):
    grid = tmp_path / "fb-001.TextGrid"
    grid.write_text(textgrid(30.0, [(0.0, 2.0, "laugh"), (2.0, 18.0, ""), (18.0, 23.5, "sigh"),
                                    (23.5, 25.0, ""), (25.0, 30.0, "whisper")]))
    win = window_for(target, annotator="ana")
    _ready(qtbot, win)
    panel = _imported(qtbot, win, grid)
    assert panel.question.isVisible()
    assert "these 2 labels lie outside the stimulus" in panel.question_text.text().lower()
    shown = [b.text() for b in (panel.skip_button, panel.clip_button, panel.cancel_button) if b.isVisible()]
    assert shown == ["Skip these 2 labels and import the rest", "Clip them to the stimulus", "Cancel"]
    assert stored(target, "friendbench") == []
    qtbot.mouseClick(panel.skip_button if answer == "skip" else panel.clip_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.report is not None, timeout=10000)
    landed = stored(target, "friendbench")
    assert landed == _by_the_command_line(tmp_path, CLIPS, grid, "friendbench", option)
    if answer == "skip":
        assert landed == [("fb-001", "ana", "vocal cues", "laugh", 0.0, 2.0, "")]
        assert panel.headline.text() == "Imported 1 label from fb-001.TextGrid"
        assert [r[2:5] for r in panel.table_rows()] == [["3", "1", "2"]]   # read, written, left out
        assert all("outside the stimulus (0-20 s), left out with --skip-outside" in item
                   for item in panel.left_out_texts()) and len(panel.left_out_texts()) == 2
    else:
        assert landed == [("fb-001", "ana", "vocal cues", "laugh", 0.0, 2.0, ""),
                          ("fb-001", "ana", "vocal cues", "sigh", 18.0, 20.0, "")]   # whisper lay wholly past


def test_skip_leaves_out_labels_past_the_stimulus_and_labels_that_cannot_be_represented(qtbot, window_for,
                                                                                       tmp_path):
    """An ELAN file with an annotation whose time cannot be found and an utterance past the recording's end:
    one question, Skip counts both, and lands what the command line lands with both options."""
    stimuli = {"childes": [("rec01", 5.5)]}
    text = eaf_text(time_origin=0).replace('<TIME_SLOT TIME_SLOT_ID="ts7" TIME_VALUE="1500"/>',
                                           '<TIME_SLOT TIME_SLOT_ID="ts7"/>')
    text = text.replace('<TIME_SLOT TIME_SLOT_ID="ts8" TIME_VALUE="2500"/>', '<TIME_SLOT TIME_SLOT_ID="ts8"/>')
    text = text.replace('PARENT_REF="utt@CHI" PARTICIPANT="CHI" TIER_ID="gesture@CHI"', 'TIER_ID="gesture@CHI"')
    path = tmp_path / "rec01.eaf"
    path.write_text(text, encoding="utf-8")
    store = make_store(tmp_path / "s.duckdb", tmp_path / "data", stimuli)
    try:
        before = store_rows(store)
        win = window_for(store, annotator="ana")
        qtbot.waitUntil(lambda: win.stimulus_view.detail is not None, timeout=10000)
        panel = _imported(qtbot, win, path)
        assert panel.question.isVisible()
        assert panel.skip_button.text() == "Skip these 2 labels and import the rest"
        assert panel.clip_button.text() == "Clip it to the stimulus" and panel.cancel_button.isVisible()
        assert store_rows(store) == before
        qtbot.mouseClick(panel.skip_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.report is not None, timeout=10000)
        landed = stored(store, "childes")
        assert landed and landed == _by_the_command_line(tmp_path, stimuli, path, "childes", "--skip-outside",
                                                         "--skip-unrepresentable")
        assert not any(label[5] is not None and label[5] > 5.5 for label in landed)
        assert len(panel.left_out_texts()) == 2
    finally:
        store.close()
