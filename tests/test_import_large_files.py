"""Size limits by kind of file: a results table a program wrote is imported whatever its size, a file a person
writes is still refused past its limit (an option raises it), and a pipe or a link to a device is refused
either way."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.import_service import run_import
from storage.errors import FileRefused
from storage.files import DEFAULT_MAX_BYTES, LIMIT_VARIABLE, MB, read_regular_text
from storage.importers.common import ImportOptions
from storage.importers.generic import GenericImporter
from storage.store import Store

MAP = {"stimulus": "clip", "model": "system", "answer": "pred", "label": "truth"}
ROWS = 2_000


def _stream_big_csv(path: Path) -> None:
    """A predictions table just over the default limit, written a row at a time (never held whole): each row
    carries a long note in a column the map leaves out, as a results table with its prompts would."""
    note = "n" * ((DEFAULT_MAX_BYTES // ROWS) + 4096)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("clip,system,pred,truth,note\n")
        for row in range(ROWS):
            fh.write(f"clip-{row},model-{row % 2},{'familiar' if row % 3 else 'stranger'},familiar,{note}\n")


@pytest.fixture
def big_csv(tmp_path):
    path = tmp_path / "predictions.csv"
    _stream_big_csv(path)
    yield path
    path.unlink(missing_ok=True)


def test_a_results_table_over_the_hand_written_limit_is_imported(tmp_path, big_csv):
    assert big_csv.stat().st_size > DEFAULT_MAX_BYTES
    store = Store.open(tmp_path / "s.duckdb")
    try:
        summary = run_import(store, "generic", big_csv, ImportOptions(dataset_name="big", mapping=dict(MAP)))
        assert summary.written["predictions"] == ROWS
        cur = store.cursor()
        assert cur.execute("SELECT count(*), count(DISTINCT stimulus_id), count(*) FILTER (WHERE correct)"
                           " FROM prediction").fetchone() == (ROWS, ROWS, sum(1 for r in range(ROWS) if r % 3))
        # the note column was not mapped: nothing of it is stored
        assert cur.execute("SELECT max(length(raw_output)) FROM prediction").fetchone() == (None,)
    finally:
        store.close()


def test_a_hand_written_file_over_its_limit_is_refused_and_the_option_raises_it(tmp_path, monkeypatch):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"stimulus": "clip-1", "label": "laugh"}\n' * 40_000)   # 1.6 MB
    monkeypatch.setenv(LIMIT_VARIABLE, "1")
    with pytest.raises(FileRefused) as refused:
        read_regular_text(labels)
    message = str(refused.value)
    assert "the limit is 1.0 MB" in message and LIMIT_VARIABLE in message and "\n" not in message
    monkeypatch.setenv(LIMIT_VARIABLE, "2")
    assert read_regular_text(labels).count("\n") == 40_000
    monkeypatch.delenv(LIMIT_VARIABLE)
    assert len(read_regular_text(labels)) == labels.stat().st_size
    # a results table of the same size is not held to the hand-written limit
    monkeypatch.setenv(LIMIT_VARIABLE, "1")
    table = tmp_path / "results.csv"
    table.write_text("clip,system,pred\n" + "".join(f"clip-{i},m,familiar\n" for i in range(100_000)))
    assert table.stat().st_size > MB
    plan = GenericImporter().plan(table, ImportOptions(dataset_name="d", mapping={
        "stimulus": "clip", "model": "system", "answer": "pred"}))
    assert plan.frame("predictions").height == 100_000


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_pipe_or_a_link_to_a_device_is_still_refused_as_a_results_table(tmp_path, suffix):
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    link = tmp_path / f"zero{suffix}"
    os.symlink("/dev/zero", link)
    for path, kind in ((fifo, "a pipe"), (link, "a device")):
        with pytest.raises(FileRefused) as refused:
            GenericImporter().plan(path, ImportOptions(dataset_name="d", mapping=dict(MAP)))
        assert kind in str(refused.value) and str(path) in str(refused.value)
