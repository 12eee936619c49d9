"""Labels added in bulk get the history event each label added alone gets: one 'create' per label, in id
order, its `after` the text `json.dumps(Annotation.state())` writes, whatever the values hold (accents,
quotes, a line break in a note, whole-stimulus labels, tiny and huge times)."""
from __future__ import annotations

import json

from storage.annotations import AnnotationStore
from storage.store import Store

ROWS = [
    {"label_set": "cues", "label": "laugh", "start_s": 0.5, "end_s": 0.9},
    {"label_set": "cues", "label": "Überlappung \u00e9\u6f22", "start_s": 1e-05, "end_s": 3.0, "value": "A"},
    {"label_set": 'say "hi"\\', "label": "slash / and <>", "start_s": 1e16, "end_s": 1e16, "note": "line\nbreak"},
    {"label_set": "whole", "label": None, "start_s": None, "end_s": None, "media_role": "audio:B"},
    {"label_set": "cues", "label": "laugh", "start_s": 123456.78901234, "end_s": 123457.0, "note": "\U0001F600"},
]


def _stimulus(store: Store) -> int:
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'generic', '/') RETURNING id"
                          ).fetchone()[0]
    return cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 's', 'generic') RETURNING id",
                       [dataset]).fetchone()[0]


def test_bulk_create_events_are_the_state_json_of_each_label(tmp_path):
    store = Store.open(tmp_path / "s.duckdb")
    try:
        stimulus = _stimulus(store)
        labels = AnnotationStore(store)
        created = labels.create_many(stimulus, "ana", ROWS * 10)  # 50 labels: the bulk path
        one = labels.create(stimulus, "bo", "cues", "alone", 2.0, 2.5)  # a single edit, for the shape
        stored = {a.id: a for a in labels.for_stimulus(stimulus)}
        events = store.cursor().execute("SELECT annotation_id, annotator, action, before, after"
                                        " FROM annotation_event ORDER BY id").fetchall()
    finally:
        store.close()
    assert len(created) == 50 and [a.id for a in created] == sorted(a.id for a in created)
    assert created + [one] == [stored[a.id] for a in created + [one]]  # as the store reads them back, times too
    expected = [(a.id, a.annotator, "create", None, json.dumps(a.state())) for a in created + [one]]
    assert events == expected
    by_id = {a.id: a for a in created}
    assert [by_id[e[0]].label for e in events[:5]] == [r["label"] for r in ROWS]


def test_each_labels_meta_is_stored_as_json_dumps_writes_it(tmp_path):
    metas = [{"tier": "A"}, {"n": 1}, {"n": True}, {"x": 0.0}, {"x": -0.0}, None, {"cve": ["a", "b"]},
             {"tier": "A"}, {"b": "é", "a": 1}, {"a": 1, "b": "é"}]
    rows = [{"label_set": "cues", "label": f"l{i}", "start_s": float(i), "end_s": i + 0.5, "meta": meta}
            for i, meta in enumerate(metas)]
    store = Store.open(tmp_path / "s.duckdb")
    try:
        stimulus = _stimulus(store)
        AnnotationStore(store).create_many(stimulus, "ana", rows)
        stored = [m for (m,) in store.cursor().execute("SELECT meta FROM annotation ORDER BY id").fetchall()]
    finally:
        store.close()
    assert stored == [json.dumps(meta) if meta else None for meta in metas]
