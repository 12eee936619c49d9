"""The rows an annotation import writes, in every format: each label as the file holds it, one 'create' event
per label whose JSON is the label's state as `json.dumps` writes it (compared text for text), the store's
commit listeners told, and nothing else in the store changed."""
from __future__ import annotations

import json

import pytest

from annotation_files_fixtures import make_store
from app.export_service import export_annotations, import_annotations
from storage.annotations import AnnotationStore, after_commit
from storage.exporters.registry import exporters, get_exporter

FORMATS = [e.name for e in exporters()]
NO_NOTES = {"audacity"}   # no place for a label's note or value: exported only when told to leave them out
DATASET = "friendbench"
# (stimulus, annotator, label set, label, start, end, value, note, media role): times a millisecond format holds
PLAN = [("clip-a", "ana", "cues", "laugh", 1.0, 2.5, None, None, "audio:A"),
        ("clip-a", "ana", "cues", "overlap", 2.0, 3.25, None, "starts over", None),
        ("clip-a", "ana", "cues", "click", 4.0, 4.0, None, None, None),
        ("clip-a", "ana", "cues", "click", 4.5, 4.5, "2", None, None),
        ("clip-a", "bo", "cues", 'say "hé"\\', 1.2, 2.4, None, None, "audio:A"),
        ("clip-b", "bo", "cues", "sigh", 0.0, 0.75, None, None, "video"),
        ("clip-b", "ana", "cues", "end", 8.5, 8.999, None, None, None),
        ("clip-a", "ana", "familiarity", "familiar", None, None, None, None, None),
        ("clip-b", "bo", "familiarity", "stranger", None, None, None, None, None)]
STIMULI = [("clip-a", 10.0), ("clip-b", 9.0)]
FIELDS = ("label_set", "label", "start_s", "end_s", "value", "note", "media_role")


def everything(store) -> dict[str, list[tuple]]:
    """Every row of every table, sorted."""
    cur = store.cursor()
    tables = [r[0] for r in cur.execute("SELECT table_name FROM information_schema.tables"
                                        " WHERE table_schema = 'main' AND table_type = 'BASE TABLE'").fetchall()]
    return {t: sorted(map(repr, cur.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}


def expected_labels(name: str) -> list[tuple]:
    carried = name not in NO_NOTES
    return sorted((ext, who, label_set, label, start, end, value if carried else None, note if carried else None,
                   role) for ext, who, label_set, label, start, end, value, note, role in PLAN)


@pytest.mark.parametrize("name", FORMATS)
def test_an_import_writes_each_label_and_its_create_event(tmp_path, name):
    source = make_store(tmp_path / "a.duckdb", tmp_path / "a", {DATASET: STIMULI})
    fresh = make_store(tmp_path / "b.duckdb", tmp_path / "b", {DATASET: STIMULI})
    try:
        notes = AnnotationStore(source)
        ids = {ext: sid for sid, ext in notes.stimulus_ids(notes.dataset(DATASET).id).items()}
        notes.create_many(None, "", [dict(zip(("stimulus_id", "annotator", *FIELDS),
                                              (ids[ext], *rest))) for ext, *rest in PLAN])
        out = tmp_path / "out" / f"all{get_exporter(name).extension}"
        path = export_annotations(source, name, out, dataset=DATASET, skip_unrepresentable=name in NO_NOTES).path
        before = everything(fresh)
        commits = []
        after_commit(fresh, lambda: commits.append(1))
        assert import_annotations(fresh, name, path, DATASET, annotator="nobody") == len(PLAN)
        assert commits, "the import's commit was not told to the store's listeners (team sync queues from them)"
        after = everything(fresh)
        assert {t for t in before if before[t] != after[t]} == {"annotation", "annotation_event"}

        cur = fresh.cursor()
        labels = cur.execute("SELECT a.id, s.external_id, a.annotator, a.label_set, a.label, a.start_s, a.end_s,"
                             " a.value, a.note, a.media_role, a.revision, a.deleted_at FROM annotation a"
                             " JOIN stimulus s ON s.id = a.stimulus_id ORDER BY a.id").fetchall()
        assert sorted(row[1:10] for row in labels) == expected_labels(name)
        assert {row[10] for row in labels} == {1} and {row[11] for row in labels} == {None}
        events = cur.execute("SELECT annotation_id, annotator, action, before, CAST(after AS VARCHAR)"
                             " FROM annotation_event ORDER BY id").fetchall()
        # one event per label, in the labels' order, each the label's state as json.dumps writes it
        assert [e[0] for e in events] == [row[0] for row in labels]
        for (label_id, ext, who, *fields, revision, deleted_at), event in zip(labels, events):
            state = dict(zip(FIELDS, fields))
            state.update(revision=revision, deleted=deleted_at is not None)
            assert event == (label_id, who, "create", None, json.dumps(state)), (ext, event)

        # the same file again writes nothing at all
        assert import_annotations(fresh, name, path, DATASET, annotator="nobody") == 0
        assert everything(fresh) == after
    finally:
        source.close()
        fresh.close()
