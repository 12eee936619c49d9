"""AnnotationStore: every edit is durable with its history, bulk edits are atomic, label sets load."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from storage.annotations import AnnotationError, AnnotationStore
from storage.store import Store

ROOT = Path(__file__).resolve().parents[1]
LABEL_SETS = ROOT / "resources" / "label_sets"


def make_store(path: Path) -> tuple[Store, int]:
    store = Store.open(path)
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'friendbench', '/tmp/d')"
                          " RETURNING id").fetchone()[0]
    stimulus = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'fb-001', 'dyad')"
                           " RETURNING id", [dataset]).fetchone()[0]
    return store, int(stimulus)


@pytest.fixture
def annotations(tmp_path):
    store, stimulus = make_store(tmp_path / "t.duckdb")
    yield AnnotationStore(store), stimulus
    store.close()


def test_create_update_delete_restore_write_history(annotations):
    store, stim = annotations
    made = store.create(stim, "ana", "vocal cues", "laugh", 8.0, 9.0)
    store.update(made.id, "ana", start_s=8.5, end_s=9.5)
    store.update(made.id, "ana", label="sigh", note="soft")
    store.delete(made.id, "ana")
    assert store.for_stimulus(stim) == []
    restored = store.restore(made.id, "ana")
    assert (restored.label, restored.start_s, restored.end_s, restored.note) == ("sigh", 8.5, 9.5, "soft")
    assert restored.revision == 5
    events = store.history(annotation_id=made.id)
    assert [e.action for e in events] == ["restore", "delete", "update", "update", "create"]
    assert events[-1].before is None and events[-1].after["label"] == "laugh"
    assert events[3].before["start_s"] == 8.0 and events[3].after["start_s"] == 8.5
    assert all(e.annotator == "ana" for e in events)
    assert store.history(stimulus_id=stim)[0].action == "restore"


def test_filters_and_whole_labels(annotations):
    store, stim = annotations
    store.create(stim, "ana", "vocal cues", "laugh", 1.0, 2.0)
    store.create(stim, "bo", "vocal cues", "sigh", 0.5, 1.5)
    store.create(stim, "ana", "familiarity", "familiar")
    assert [a.label for a in store.for_stimulus(stim)] == ["familiar", "sigh", "laugh"]
    assert [a.label for a in store.for_stimulus(stim, annotator="ana", label_set="vocal cues")] == ["laugh"]
    assert store.for_stimulus(stim, label_set="familiarity")[0].is_whole
    assert store.annotators(stim) == ["ana", "bo"]


def test_bad_edits_are_refused_and_leave_nothing(annotations):
    store, stim = annotations
    with pytest.raises(AnnotationError):
        store.create(stim, "ana", "vocal cues", "laugh", 5.0, 4.0)
    with pytest.raises(AnnotationError):
        store.create(stim, "ana", "vocal cues", "laugh", 5.0, None)
    good = store.create(stim, "ana", "vocal cues", "laugh", 1.0, 2.0)
    with pytest.raises(AnnotationError):
        store.update_many("ana", [(good.id, {"end_s": 3.0}), (good.id, {"start_s": 9.0})])
    assert store.get(good.id).end_s == 2.0  # the first edit of the failed batch was rolled back too
    assert len(store.history(annotation_id=good.id)) == 1


def test_bulk_delete_is_one_transaction(annotations):
    store, stim = annotations
    ids = [store.create(stim, "ana", "vocal cues", "laugh", i, i + 0.5).id for i in range(5)]
    with pytest.raises(AnnotationError):
        store.delete_many([*ids[:3], 999_999], "ana")
    assert len(store.for_stimulus(stim)) == 5
    store.delete_many(ids[:3], "ana")
    assert len(store.for_stimulus(stim)) == 2


def test_label_sets_load_with_hierarchy_and_edit(annotations):
    store, stim = annotations
    for path in sorted(LABEL_SETS.glob("*.json")):
        store.load_label_set_file(path)
    cues = store.labels("vocal cues")
    assert [(l.name, l.shortcut) for l in cues][:3] == [("laugh", "1"), ("sigh", "2"), ("overlap", "3")]
    assert store.label_set("familiarity").scope == "whole"
    echomind = store.labels("EchoMind vocal attributes")
    by_name = {l.name: l for l in echomind}
    child = next(l for l in echomind if l.parent)
    assert child.depth == by_name[child.parent].depth + 1
    assert echomind.index(child) > echomind.index(by_name[child.parent])
    store.save_label_set("mine", "interval")
    store.save_label("mine", "top", colour="#ff0000")
    store.save_label("mine", "below", parent="top", shortcut="b")
    assert [(l.name, l.depth) for l in store.labels("mine")] == [("top", 0), ("below", 1)]
    store.create(stim, "ana", "mine", "below", 0.0, 1.0)
    with pytest.raises(AnnotationError):
        store.delete_label("mine", "below")
    store.delete_label("mine", "top")
    assert [(l.name, l.parent) for l in store.labels("mine")] == [("below", None)]
    with pytest.raises(AnnotationError):
        store.delete_label_set("mine")


def test_label_set_file_round_trip(annotations, tmp_path):
    store, _ = annotations
    store.load_label_set_file(LABEL_SETS / "vocal_cues.json")
    store.write_label_set_file("vocal cues", tmp_path / "cues.json")
    written = json.loads((tmp_path / "cues.json").read_text())
    original = json.loads((LABEL_SETS / "vocal_cues.json").read_text())
    assert written == original
    (tmp_path / "bad.json").write_text("{\"labels\": 3}")
    with pytest.raises(AnnotationError, match="not a label set file"):
        store.load_label_set_file(tmp_path / "bad.json")


_EDITOR = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from storage.annotations import AnnotationStore
    from storage.store import Store
    annotations = AnnotationStore(Store.open({db!r}))
    stimulus = {stimulus}
    first = None
    for i in range(100000):
        if i % 3 == 0 or first is None:
            item = annotations.create(stimulus, "ana", "vocal cues", "laugh", i * 0.1, i * 0.1 + 0.05)
            first = first or item.id
            print(f"create {{item.id}} {{item.start_s}}", flush=True)
        elif i % 3 == 1:
            item = annotations.update(first, "ana", end_s=1000.0 + i)
            print(f"update {{item.id}} {{item.end_s}}", flush=True)
        else:
            item = annotations.delete(annotations.create(stimulus, "ana", "vocal cues", "sigh", 0.0, 1.0).id, "ana")
            print(f"delete {{item.id}} 0", flush=True)
""")


def test_killed_process_keeps_every_acknowledged_edit(tmp_path):
    db = tmp_path / "t.duckdb"
    store, stimulus = make_store(db)
    store.close()
    script = _EDITOR.format(root=str(ROOT), db=str(db), stimulus=stimulus)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    acknowledged = []
    for line in proc.stdout:
        acknowledged.append(line.split())
        if len(acknowledged) >= 60:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    reopened = Store.open(db)  # opens cleanly: the write-ahead log is replayed
    try:
        annotations = AnnotationStore(reopened)
        created = [int(a[1]) for a in acknowledged if a[0] == "create"]
        assert {a.id for a in annotations.for_stimulus(stimulus)} >= set(created)
        last_update = [a for a in acknowledged if a[0] == "update"][-1]
        assert annotations.get(int(last_update[1])).end_s >= float(last_update[2])
        for action, ident, _ in acknowledged:
            if action == "delete":
                assert annotations.get(int(ident)).deleted
        events = sum(len(annotations.history(annotation_id=i)) for i in
                     {int(a[1]) for a in acknowledged})
        assert events >= len(acknowledged) + sum(1 for a in acknowledged if a[0] == "delete")
    finally:
        reopened.close()


def test_label_aliases_survive_the_store_and_an_edit_in_the_app(annotations, tmp_path):
    store, _ = annotations
    source = LABEL_SETS / "echomind_vocal_attributes.json"
    original = json.loads(source.read_text())
    loaded = store.load_label_set_file(source)
    with_aliases = {label["name"]: label["aliases"] for label in original["labels"] if label.get("aliases")}
    assert with_aliases  # the EchoMind taxonomy names the release's other spellings
    name, aliases = next(iter(with_aliases.items()))
    store.save_label(loaded.name, name, colour="#123456")  # an edit in the label-set editor names no aliases
    assert {label.name: list(label.aliases) for label in store.labels(loaded.name) if label.aliases} == with_aliases
    store.write_label_set_file(loaded.name, tmp_path / "out.json")
    written = {label["name"]: label.get("aliases") for label in json.loads((tmp_path / "out.json").read_text())["labels"]}
    assert written[name] == aliases
    assert {n: a for n, a in written.items() if a} == with_aliases


def test_an_old_stores_import_events_take_the_one_shape(tmp_path):
    """Release imports of schema version 7 and before wrote 'import' events with a shorter state."""
    import duckdb

    from storage.annotations import EDITABLE_FIELDS
    from storage.schema import migrate

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    migrate(con, 7)
    con.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('d', 'friendbench', '/tmp/d')")
    con.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (1, 'fb-001', 'dyad')")
    con.execute("INSERT INTO annotation (stimulus_id, annotator, label_set, label, start_s, end_s, media_role)"
                " VALUES (1, 'bo', 'vocal cues', 'laugh', 1.5, 2.0, 'audio:A')")
    con.execute("INSERT INTO annotation_event (annotation_id, annotator, action, before, after) SELECT id, annotator,"
                " 'import', NULL, to_json(struct_pack(label_set := label_set, label := label, start_s := start_s,"
                " end_s := end_s, value := value, note := note)) FROM annotation")
    con.close()
    store = Store.open(path)
    try:
        [event] = AnnotationStore(store).history(stimulus_id=1)
    finally:
        store.close()
    assert event.action == "create" and event.before is None
    assert set(event.after) == {*EDITABLE_FIELDS, "revision", "deleted"}
    assert (event.after["label"], event.after["start_s"], event.after["media_role"], event.after["deleted"]) == \
        ("laugh", 1.5, "audio:A", False)
