"""File > Import with two files in a row: each file's own mapping and preview; skipped rows stay readable."""
from __future__ import annotations

import polars as pl

from fixtures_store import friendbench_like_plan, make_store


def mapping_of(dialog) -> dict[str, str]:
    return {dialog.mapping.item(r, 0).text(): dialog.mapping.item(r, 1).text()
            for r in range(dialog.mapping.rowCount()) if dialog.mapping.item(r, 1).text()}


def preview_columns(dialog) -> list[str]:
    return dialog.preview.frame_model.titles()


def open_window(window_for, tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    return window_for(store, show=False), store


def test_a_second_file_gets_its_own_mapping_and_preview(qtbot, tmp_path, window_for):
    win, store = open_window(window_for, tmp_path)
    first = tmp_path / "first.csv"
    pl.DataFrame({"clip": [f"clip-{i:03d}" for i in range(12)], "system": ["one"] * 12,
                  "pred": ["familiar"] * 12}).write_csv(first)
    second = tmp_path / "second.csv"
    pl.DataFrame({"item_id": [f"clip-{i:03d}" for i in range(5)], "engine": ["two"] * 5,
                  "guess": ["stranger"] * 5, "was_right": ["true"] * 5}).write_csv(second)
    dialog = win.open_import()
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.path_edit.setText(str(first))
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    for field, column in (("stimulus", "clip"), ("model", "system"), ("answer", "pred")):
        dialog.mapping.item(fields[field], 1).setText(column)
    dialog.check()
    qtbot.waitUntil(lambda: "predictions" in dialog.report.text(), timeout=15000)
    assert preview_columns(dialog) == ["clip", "system", "pred"]

    dialog.path_edit.setText(str(second))
    assert mapping_of(dialog) == {}   # nothing of the first file's mapping is carried over
    dialog.check()
    qtbot.waitUntil(lambda: len(dialog.preview.frame_model.titles()) == 4, timeout=15000)
    assert preview_columns(dialog) == ["item_id", "engine", "guess", "was_right"]
    assert dialog.preview.row_count() == 5 and dialog.preview.shown_rows()[0][1] == "two"
    assert "clip" not in mapping_of(dialog).values() and "system" not in mapping_of(dialog).values()
    dialog.reject()
    win.close()
    store.close()


def test_the_preview_shows_a_files_columns_even_when_its_plan_fails(qtbot, tmp_path, window_for):
    win, store = open_window(window_for, tmp_path)
    odd = tmp_path / "odd.csv"
    pl.DataFrame({"alpha": ["x", "y"], "beta": ["1", "2"]}).write_csv(odd)
    dialog = win.open_import()
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.path_edit.setText(str(odd))
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    dialog.mapping.item(fields["stimulus"], 1).setText("no_such_column")
    dialog.check()
    qtbot.waitUntil(lambda: len(dialog.preview.frame_model.titles()) == 2, timeout=15000)
    assert preview_columns(dialog) == ["alpha", "beta"]
    qtbot.waitUntil(lambda: "no_such_column" in dialog.report.text(), timeout=15000)
    dialog.reject()
    win.close()
    store.close()


def test_skipped_rows_stay_listed_after_a_successful_import(qtbot, tmp_path, window_for):
    win, store = open_window(window_for, tmp_path)
    table = tmp_path / "scores.csv"
    table.write_text("clip,system,pred,correct\nclip-001,m,familiar,true\nclip-002,m,stranger,maybe\n"
                     "clip-003,m,familiar,false\n")
    dialog = win.open_import()
    dialog.show()
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.path_edit.setText(str(table))
    dialog.dataset.setText("Dyads")
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    for field, column in (("stimulus", "clip"), ("model", "system"), ("answer", "pred"), ("correct", "correct")):
        dialog.mapping.item(fields[field], 1).setText(column)
    dialog.skip_bad.setChecked(True)
    with qtbot.waitSignal(dialog.imported, timeout=30000):
        dialog.start_import()
    assert dialog.isVisible()
    assert "skipped" in dialog.report.text() and "maybe" in dialog.report.text()
    assert dialog.cancel_button.text() == "Close"
    dialog.cancel_button.click()
    assert not dialog.isVisible()
    win.close()
    store.close()


def test_results_for_stimuli_of_another_dataset_are_offered_to_attach_there(qtbot, tmp_path, window_for):
    from storage.queries import info_summary

    win, store = open_window(window_for, tmp_path)
    table = tmp_path / "more_results.csv"
    pl.DataFrame({"clip": [f"clip-{i:03d}" for i in range(6)], "system": ["late-model"] * 6,
                  "pred": ["familiar"] * 6}).write_csv(table)
    before = info_summary(store.cursor())["datasets"]
    dialog = win.open_import()
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.path_edit.setText(str(table))
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    for field, column in (("stimulus", "clip"), ("model", "system"), ("answer", "pred")):
        dialog.mapping.item(fields[field], 1).setText(column)
    dialog.check()
    qtbot.waitUntil(lambda: dialog.attach.isVisibleTo(dialog), timeout=15000)
    assert "Dyads" in dialog.attach.text() and "6 of these 6" in dialog.attach.text()
    with qtbot.waitSignal(dialog.imported, timeout=30000) as blocker:
        dialog.start_import()
    assert blocker.args == ["Dyads", "6 predictions added to 6 existing stimuli, 0 new stimuli, 0 stimuli changed"]
    after = info_summary(store.cursor())["datasets"]
    assert len(after) == len(before) == 1
    assert after[0]["counts"]["predictions"] == before[0]["counts"]["predictions"] + 6
    assert after[0]["counts"]["stimuli"] == before[0]["counts"]["stimuli"]
    win.close()
    store.close()


def test_a_table_that_would_change_stored_stimuli_says_so_and_imports_only_when_asked(qtbot, tmp_path, window_for):
    from store_rows import changed_rows, store_rows

    win, store = open_window(window_for, tmp_path)
    truths = store.cursor().execute("SELECT external_id, ground_truth FROM stimulus ORDER BY 1 LIMIT 3").fetchall()
    flipped = {"familiar": "stranger", "stranger": "familiar"}
    table = tmp_path / "truths.csv"
    pl.DataFrame({"clip": [c for c, _ in truths], "truth": [flipped[t] for _, t in truths]}).write_csv(table)
    dialog = win.open_import()
    dialog.kind.setCurrentIndex(dialog.kind.findData("generic"))
    dialog.dataset.setText("Dyads")
    dialog.path_edit.setText(str(table))
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    for field, column in (("stimulus", "clip"), ("label", "truth")):
        dialog.mapping.item(fields[field], 1).setText(column)
    dialog.check()
    qtbot.waitUntil(lambda: "stimuli changed" in dialog.report.text(), timeout=15000)
    assert "0 new stimuli, 3 stimuli changed" in dialog.report.text()
    assert f"would change {truths[0][0]} (truths.csv) ground_truth" in dialog.report.text()
    assert dialog.replace.isVisibleTo(dialog) and not dialog.replace.isChecked()
    before = store_rows(store)
    dialog.start_import()
    qtbot.waitUntil(lambda: "Import refused" in dialog.report.text(), timeout=30000)
    assert "3 stored stimuli would change" in dialog.report.text() and "replace the stored values" in dialog.report.text()
    assert "--replace-stimuli" not in dialog.report.text()
    assert changed_rows(before, store_rows(store)) == {}
    dialog.replace.setChecked(True)
    with qtbot.waitSignal(dialog.imported, timeout=30000) as blocker:
        dialog.start_import()
    assert blocker.args[1] == "no results added to 3 existing stimuli, 0 new stimuli, 3 stimuli changed"
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"stimulus"}
    win.close()
    store.close()


def test_a_benchmark_release_is_never_offered_to_attach_elsewhere(tmp_path):
    from app.import_service import attach_offer
    from app.sample import import_sample
    from storage.resources import SAMPLE_DIR
    from storage.importers.common import ImportOptions
    from storage.store import Store

    store = Store.open(tmp_path / "sample.duckdb")
    import_sample(store)
    assert attach_offer(store, "friendbench", SAMPLE_DIR / "friendbench", ImportOptions(dataset_name="Again")) is None
    store.close()
