"""File > Import's "Read Parquet in place": a folder of Parquet parts becomes a dataset whose predictions stay in
the files, shown in the window like an imported one."""
from __future__ import annotations

from app.dashboard import dashboard_json
from fixtures_store import friendbench_like_plan, make_store
from store_rows import changed_rows, store_rows
from test_attach_parquet import MAP, write_parts


def test_reading_parquet_in_place_from_the_import_dialog(qtbot, tmp_path, window_for):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path))
    parts = write_parts(tmp_path / "release")
    before = store_rows(store)
    win = window_for(store, show=False)
    dialog = win.open_import()
    assert dialog.in_place.isVisibleTo(dialog)
    dialog.path_edit.setText(str(parts))
    dialog.dataset.setText("Attached")
    fields = {dialog.mapping.item(r, 0).text(): r for r in range(dialog.mapping.rowCount())}
    for field, column in MAP.items():
        dialog.mapping.item(fields[field], 1).setText(column)
    dialog.in_place.setChecked(True)
    dialog.start_import()
    qtbot.waitUntil(lambda: win.dataset_combo.currentText().startswith("Attached"), timeout=30000)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 40, timeout=30000)   # one row per clip of the files

    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"dataset", "stimulus", "run", "model", "attachment", "attached_file"}
    assert "prediction" not in changes   # the answers stayed in the files
    rows = dashboard_json(store, "Attached")["datasets"][0]["tables"][0]["rows"]
    assert sorted((r["model"], r["n"]) for r in rows) == [("model-0", 40), ("model-1", 40), ("model-2", 40)]
    win.close()
    store.close()
