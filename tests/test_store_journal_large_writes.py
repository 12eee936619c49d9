"""A write of thousands of labels (an annotation file) is put in the store's main file by a checkpoint rather
than journaled row by row: nothing of it waits in the log or the journal, the store reopens with all of it,
and the edits after it are journaled as before, without it."""
from __future__ import annotations

from fixtures_store import friendbench_like_plan, make_store
from storage.annotations import AnnotationStore
from storage.journal import CHECKPOINT_EVENTS, journal_path, read_records
from storage.store import Store, wal_path
from store_rows import store_rows


def test_a_large_write_is_checkpointed_and_later_edits_are_journaled_alone(tmp_path):
    store = make_store(tmp_path / "s.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2))
    store.cursor().execute("SET checkpoint_threshold = '1GB'")   # only our checkpoints empty the log
    notes = AnnotationStore(store)
    notes.create(1, "ana", "vocal cues", "before", 0.0, 0.5)
    assert len(read_records(journal_path(store.path))) == 1
    many = [{"label_set": "vocal cues", "label": f"l{i % 7}", "start_s": i * 0.1, "end_s": i * 0.1 + 0.05}
            for i in range(CHECKPOINT_EVENTS + 1)]
    notes.create_many(1, "bo", many)
    # in the main file, with the edit journaled before it: the journal and the log are empty
    assert read_records(journal_path(store.path)) == []
    assert not wal_path(store.path).exists() or wal_path(store.path).stat().st_size == 0
    after = notes.create(1, "ana", "vocal cues", "after", 9.0, 9.5)
    records = read_records(journal_path(store.path))
    events = [dict(zip(r["annotation_event"]["columns"], row))
              for r in records for row in r["annotation_event"]["rows"]]
    assert [e["annotation_id"] for e in events] == [after.id]
    expected = store_rows(store)
    store.close()
    again = Store.open(tmp_path / "s.duckdb", create=False)
    try:
        assert store_rows(again) == expected
        assert again.cursor().execute("SELECT count(*) FROM annotation").fetchone()[0] == CHECKPOINT_EVENTS + 3
    finally:
        again.close()
