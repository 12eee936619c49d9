"""Every framed table of the window, read through its table model as a user reads it, shows what it showed when
each was filled by hand: the same rows, the same texts, the same colours and marks. The expected texts are made
here from the data by the rule each table followed; where the one table model changed a reading for every table
(an empty number reads "—"), the test says so. The transfer report's rows are checked whole in
test_transfer_report_gui.py and the story questions' in test_beliefs_story_page.py; the story test here checks
every cell and mark."""
from __future__ import annotations

import csv
import json
import math

import polars as pl
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication

from laptop_window import laptop_window, open_first
from test_beliefs_story_page import story_store  # noqa: F401 (a fixture)
from widgets.palette import qcolour, score_colour


def _roles(view, row: int, column: int, role: Qt.ItemDataRole):
    return view.model().index(row, column).data(role)


def test_the_metadata_shows_each_stored_field_and_ctrl_c_copies_it_in_the_window(qtbot, window_for,
                                                                                  sample_store_copy):
    win = laptop_window(qtbot, window_for, sample_store_copy)
    stimulus = open_first(qtbot, win, sample_store_copy, "agentviss_scene")
    meta, split = sample_store_copy.cursor().execute("SELECT meta, split FROM stimulus WHERE id = ?",
                                                     [stimulus]).fetchone()
    expected = [[k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)]
                for k, v in json.loads(meta).items()]
    if split:
        expected.insert(0, ["split", split])
    view = win.stimulus_view.meta
    assert view.shown_rows() == expected and len(expected) > 2
    # a user selects the first two rows and presses Ctrl+C with the window's own keys in force
    view.setFocus()
    view.selectionModel().clear()
    for row in (0, 1):
        for column in (0, 1):
            view.selectionModel().select(view.model().index(row, column),
                                         view.selectionModel().SelectionFlag.Select)
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "\n".join("\t".join(r) for r in expected[:2])


def test_the_scene_scores_show_each_judged_score_on_its_colour_with_its_reason(qtbot, window_for,
                                                                                 sample_store_copy):
    from storage.importers.words import AGENTVISS_TASKS

    win = laptop_window(qtbot, window_for, sample_store_copy)
    open_first(qtbot, win, sample_store_copy, "agentviss_scene")
    detail = win.stimulus_view.detail
    cells: dict[tuple[str, str], dict[str, tuple[float, float, str]]] = {}
    for p in detail.predictions:
        for j in p.judgments:
            if j.score is not None and j.criterion in AGENTVISS_TASKS and p.vision_mode in ("VV", "DV"):
                cells.setdefault((p.context or "-", p.model), {})[f"{j.criterion} {p.vision_mode}"] = (
                    j.score, j.scale_max or 5.0, j.rationale or "")
    columns = [f"{t} {m}" for t in AGENTVISS_TASKS for m in ("VV", "DV")]
    rows = sorted(cells)
    grid = win.scene_view.scores
    model = grid.model()
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(len(columns))] == \
        [c.replace(" ", "\n") for c in columns]
    assert [model.headerData(r, Qt.Orientation.Vertical) for r in range(len(rows))] == \
        [f"{role} · {name}" for role, name in rows]
    assert grid.shown_rows() == [[f"{cells[k][c][0]:g}" if c in cells[k] else "" for c in columns] for k in rows]
    judged = 0
    for r, key in enumerate(rows):
        for c, column in enumerate(columns):
            if column not in cells[key]:
                assert _roles(grid, r, c, Qt.ItemDataRole.BackgroundRole) is None
                continue
            score, scale, reason = cells[key][column]
            assert _roles(grid, r, c, Qt.ItemDataRole.BackgroundRole).color() == score_colour(score, scale)
            assert _roles(grid, r, c, Qt.ItemDataRole.ToolTipRole) == (reason or f"{score:g} of {scale:g}")
            assert _roles(grid, r, c, Qt.ItemDataRole.TextAlignmentRole) == Qt.AlignmentFlag.AlignCenter
            judged += 1
    assert judged > 6


def _dashboard_text(value) -> str:
    """The dashboard tables' reading of a value, as they were filled by hand; except that a value rounding to
    zero reads "0.000" in every framed table, where these tables wrote "-0.000" for a criterion of -0.0."""
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return f"{value:.3f}".replace("-0.000", "0.000") if isinstance(value, float) else str(value)


def test_every_dashboard_table_shows_its_frame(qtbot, window_for, sample_store_copy):
    from widgets.metrics_dashboard import TABLE_HIDDEN

    win = laptop_window(qtbot, window_for, sample_store_copy)
    names = [n for (n,) in sample_store_copy.cursor().execute("SELECT name FROM dataset ORDER BY id").fetchall()]
    win.show_dock(win.metrics_dock)
    checked = 0
    for name in names:
        win.select_dataset(name)
        qtbot.waitUntil(lambda: win.dashboard.dashboard is not None and win.dashboard.dashboard.dataset.name == name
                        and win.dashboard.status.text() == "", timeout=60000)
        for key, panel in win.dashboard.panels.items():
            frame = panel.table.frame
            columns = [c for c in frame.columns if c not in TABLE_HIDDEN]
            assert panel.grid.frame_model.titles() == columns, key
            assert panel.grid.shown_rows() == [[_dashboard_text(v) for v in row]
                                               for row in frame.select(columns).iter_rows()], key
            numeric = [frame[c].dtype.is_numeric() for c in columns]
            for r, row in enumerate(frame.select(columns).iter_rows()):
                for c, value in enumerate(row):
                    right = bool(_roles(panel.grid, r, c, Qt.ItemDataRole.TextAlignmentRole)
                                 & Qt.AlignmentFlag.AlignRight)
                    # numbers sit right; an empty value among numbers now sits with them (it sat left)
                    number = isinstance(value, (int, float)) and not isinstance(value, bool)
                    assert right == (number or (value is None and numeric[c] and frame[columns[c]].drop_nulls().len()
                                                > 0)), (key, r, c)
            checked += frame.height
    assert checked > 20


def test_the_slice_table_shows_each_slice_found(qtbot, tmp_path):
    from app.dashboard import load_frames
    from fixtures_store import friendbench_like_plan, make_store
    from widgets.failure_panel import HUMANS_KEY, FailurePanel

    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=40, n_raters=5))
    panel = FailurePanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.stateReady, timeout=20000):
        panel.set_frames(load_frames(store, store.cursor().execute("SELECT id FROM dataset").fetchone()[0]))
    panel.side_a.setCurrentText("gamma / text")
    panel.side_b.setCurrentText(HUMANS_KEY)
    panel.min_size.setValue(3)
    with qtbot.waitSignal(panel.stateReady, timeout=20000):
        panel.find_slices()
    slices = panel.slices
    assert slices is not None and slices.height > 1
    assert panel.slice_table.frame_model.titles() == ["slice", "n", "acc A", "acc B", "gap A−B", "95% CI"]
    assert panel.slice_table.shown_rows() == [
        [r["slice"], str(r["n"]), f"{r['accuracy_a']:.0%}", f"{r['accuracy_b']:.0%}", f"{r['gap']:+.0%}",
         f"[{r['ci_low']:+.0%}, {r['ci_high']:+.0%}]"] for r in slices.iter_rows(named=True)]
    # sorted by n (a click on its header), a click on the first row drills down into that slice
    panel.resize(900, 900)
    panel.show()
    qtbot.waitExposed(panel)
    table = panel.slice_table
    header = table.horizontalHeader()
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(header.sectionViewportPosition(1) + 5, header.height() // 2))
    assert [int(r[1]) for r in table.shown_rows()] == sorted(slices["n"])
    shown = table.frame_model.source_row(0)
    with qtbot.waitSignal(panel.drillDown) as caught:
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                         pos=table.visualRect(table.model().index(0, 0)).center())
    assert len(caught.args[0]) == slices["n"][shown] == min(slices["n"])
    panel.runner.wait()
    store.close()


def test_the_cue_table_shows_each_comparison_of_the_judge(qtbot, tmp_path, window_for):
    from app.cues.measures import CueSettings
    from app.cues.service import compute_cues
    from app.sample import import_label_sets
    from storage.importers.writer import write_plan
    from storage.store import Store
    from tests.cues_dyads import dyad_plan
    from test_cues_view import open_from_menu

    root = tmp_path / "media"
    root.mkdir()
    store = Store.open(tmp_path / "cues.duckdb")
    import_label_sets(store)
    write_plan(store, dyad_plan(root))
    compute_cues(store, settings=CueSettings(egemaps=False))
    win = window_for(store)
    view = open_from_menu(win)
    qtbot.waitUntil(lambda: view.result is not None and view.table.row_count() > 0, timeout=30000)
    out = view.export_csv(tmp_path / "cues.csv")
    judge = view.judge.currentText()
    exported = [r for r in csv.DictReader(out.open()) if r["judge"] == judge]

    def num(text: str, digits: int) -> str:
        # an empty number read "–" when this table was filled by hand; every framed table reads "—"
        return "—" if text == "" or not math.isfinite(float(text)) else f"{float(text):.{digits}f}"

    by_cue = {r["cue"]: r for r in exported}
    shown = view.table.shown_rows()
    assert sorted(r[0] for r in shown) == sorted(by_cue)
    for row in shown:
        r = by_cue[row[0]]
        interval = row[4]
        assert row[:4] == [r["cue"], r["n_right"], r["n_wrong"], num(r["cliffs_delta"], 2)]
        assert row[5:] == [num(r["p_adjusted"], 3), num(r["spearman_rho"], 2), num(r["rho_p_adjusted"], 3), r["flag"]]
        if r["ci_low"] and r["ci_high"]:
            assert interval == f"[{float(r['ci_low']):.2f}, {float(r['ci_high']):.2f}]"
    deltas = [abs(float(by_cue[row[0]]["cliffs_delta"] or "nan")) for row in shown]
    finite = [d for d in deltas if math.isfinite(d)]
    assert finite == sorted(finite, reverse=True)   # the largest effects first, as before
    for r, row in enumerate(shown):
        flagged = bool(by_cue[row[0]]["flag"])
        font = _roles(view.table, r, 3, Qt.ItemDataRole.FontRole)
        assert (font is not None and font.italic()) == flagged
    voices = view.voices.shown_rows()
    assert len(voices) == len(view.result.voices)
    win.close()
    store.close()


def test_the_story_questions_show_each_answer_and_mark(qtbot, story_store):
    from storage import queries
    from test_beliefs_story_page import _page

    cur = story_store.cursor()
    opened = cur.execute("SELECT id FROM stimulus WHERE title = 'In which container will Tobias search for the key?'"
                         ).fetchone()[0]
    page = _page(qtbot)
    detail = queries.stimulus_detail(cur, opened)
    page.set_detail(detail)
    table = page.questions.table
    questions = page.questions.rows
    assert table.shown_rows() == [[q.question, q.expected or "", q.engine or "—"] for q in questions]
    for r, q in enumerate(questions):
        engine = _roles(table, r, 2, Qt.ItemDataRole.BackgroundRole)
        if q.engine_matches is None:
            assert engine is None
        else:
            assert engine.color() == qcolour("match_bg" if q.engine_matches else "mismatch_bg")
        bold = _roles(table, r, 0, Qt.ItemDataRole.FontRole)
        assert (bold is not None and bold.bold()) == (q.stimulus_id == opened)
        tip = "\n".join(t for t in (
            q.belief, f"order {q.order}" if q.order else "",
            {True: "false belief", False: "true belief"}.get(q.false_belief, ""),
            f"last set at step {q.belief_step}" if q.belief_step is not None else "never set by any step") if t)
        assert all(_roles(table, r, c, Qt.ItemDataRole.ToolTipRole) == tip for c in range(3))


def test_the_import_preview_shows_the_files_first_rows_as_written(qtbot, tmp_path, window_for):
    from test_import_dialog_flow import open_window

    win, store = open_window(window_for, tmp_path)
    path = tmp_path / "answers.csv"
    pl.DataFrame({"clip": [f"clip-{i:03d}" for i in range(4)], "score": [1.5, 2.0, None, 10.25],
                  "n": [3, 10, 2, 1]}).write_csv(path)
    dialog = win.open_import()
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.path_edit.setText(str(path))
    dialog.check()
    qtbot.waitUntil(lambda: dialog.preview.row_count() == 4, timeout=15000)
    with path.open() as f:
        written = list(csv.reader(f))
    assert dialog.preview.frame_model.titles() == written[0]
    assert dialog.preview.shown_rows() == written[1:]
    dialog.reject()
    win.close()
    store.close()
