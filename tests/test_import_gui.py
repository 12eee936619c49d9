"""File > Import in the window: dry run shows the mapping, the import runs on a worker, Cancel changes nothing."""
from __future__ import annotations

import polars as pl
from fixtures_store import friendbench_like_plan, make_store
from storage.queries import info_summary


def write_predictions(path, n=50):
    pl.DataFrame({"clip": [f"clip-{i % 12:03d}" for i in range(n)], "system": [f"m{i // 12}" for i in range(n)],
                  "pred": ["familiar" if i % 3 else "stranger" for i in range(n)]}).write_csv(path)


def test_import_dialog_checks_then_imports_a_mapped_table(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    win = window_for(store, show=False)
    table = tmp_path / "preds.csv"
    pl.DataFrame({"clip": [f"clip-{i:03d}" for i in range(12)], "system": ["newbie"] * 12,
                  "pred": ["familiar"] * 12}).write_csv(table)
    dialog = win.open_import()
    dialog.path_edit.setText(str(table))
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.dataset.setText("Dyads")
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    for field, column in (("stimulus", "clip"), ("model", "system"), ("answer", "pred")):
        dialog.mapping.item(fields[field], 1).setText(column)
    dialog.check()
    qtbot.waitUntil(lambda: "predictions" in dialog.report.text(), timeout=15000)
    assert "12 predictions" in dialog.report.text()
    said = "12 predictions added to 12 existing stimuli, 0 new stimuli, 0 stimuli changed"
    assert said in dialog.report.text()
    assert len(dialog.preview.frame_model.titles()) == 3 and dialog.preview.row_count() == 12
    before = info_summary(store.cursor())["datasets"][0]["counts"]["predictions"]
    with qtbot.waitSignal(dialog.imported, timeout=30000) as blocker:
        dialog.start_import()
    assert blocker.args == ["Dyads", said]
    assert win.status_message.text() == f"Imported Dyads: {said}."
    # the import said the datasets changed: the open dataset's views show the new model without a reopen
    qtbot.waitUntil(lambda: win.filter_bar.model.findData("newbie") >= 0, timeout=10000)
    after = info_summary(store.cursor())["datasets"][0]["counts"]["predictions"]
    assert after == before + 12
    win.close()
    store.close()


def test_import_error_is_shown_in_the_dialog_and_nothing_is_written(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    win = window_for(store, show=False)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"clip": "clip-001", "system": "x", "pred": "familiar"}\n{"clip": "clip-002", truncated\n')
    before = info_summary(store.cursor())
    dialog = win.open_import()
    dialog.path_edit.setText(str(bad))
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.dataset.setText("Dyads")
    dialog.start_import()
    qtbot.waitUntil(lambda: "bad.jsonl" in dialog.report.text(), timeout=15000)
    assert ":2" in dialog.report.text()
    assert info_summary(store.cursor()) == before
    dialog.reject()
    win.close()
    store.close()
