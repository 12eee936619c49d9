"""Two speakers' identical labels stay two labels: the media role is part of a label's identity, so a label on
`audio:A` and the same label on `audio:B` both survive every export and its import into a fresh store (and an
AgentViSS scene's labels on two roles, whose target is their value). ELAN and Praat files keep each speaker on
a tier of its own, which pympi-ling, praatio and Praat itself (parselmouth) read as such."""
from __future__ import annotations

from pathlib import Path

import parselmouth
import pympi
import pytest
from parselmouth.praat import call
from praatio import textgrid

from app.export_service import export_annotations, import_annotations
from storage.annotations import AnnotationStore
from storage.exporters.registry import get_exporter
from storage.exporters.report import TransferReport
from storage.store import Store
from store_rows import changed_rows, store_rows

DATASET = "dyads"
SPEAKERS = ("audio:A", "audio:B")
# (stimulus, annotator, set, label, start, end, value, media role)
DYAD_LABELS = [
    ("dyad-01", "ana", "vocal cues", "laugh", 1.5, 2.5, None, "audio:A"),
    ("dyad-01", "ana", "vocal cues", "laugh", 1.5, 2.5, None, "audio:B"),
    ("dyad-01", "ana", "vocal cues", "laugh", 1.5, 2.5, None, None),        # the mix of both
    ("dyad-01", "ana", "vocal cues", "click", 4.0, 4.0, None, "audio:A"),   # a moment on both channels
    ("dyad-01", "ana", "vocal cues", "click", 4.0, 4.0, None, "audio:B"),
    ("dyad-01", "bo", "vocal cues", "laugh", 1.5, 2.5, None, "audio:A"),
]
# an AgentViSS scene: the same label on two roles and on a turn, told apart by the value that names the target
SCENE_LABELS = [
    ("scene-07", "cy", "AgentViSS expression style", "honest", None, None, "Yusra", None),
    ("scene-07", "cy", "AgentViSS expression style", "honest", None, None, "Benedikt", None),
    ("scene-07", "cy", "AgentViSS expression style", "honest", None, None, "turn:1", None),
]
# formats and the labels each can hold (Audacity has no place for a value)
FORMATS = {"csv": DYAD_LABELS + SCENE_LABELS, "jsonl": DYAD_LABELS + SCENE_LABELS,
           "parquet": DYAD_LABELS + SCENE_LABELS, "eaf": DYAD_LABELS + SCENE_LABELS,
           "textgrid": DYAD_LABELS + SCENE_LABELS, "audacity": DYAD_LABELS}


def make_store(db: Path, root: Path) -> Store:
    """A dyad with one recording per speaker and a scene with its group image; no labels."""
    root.mkdir(parents=True, exist_ok=True)
    store = Store.open(db)
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES (?, 'seamless', ?) RETURNING id",
                          [DATASET, str(root)]).fetchone()[0]
    dyad = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'dyad-01', 'dyad')"
                       " RETURNING id", [dataset]).fetchone()[0]
    for role in SPEAKERS:
        cur.execute("INSERT INTO media (stimulus_id, role, path, duration_s) VALUES (?, ?, ?, 20.0)",
                    [dyad, role, f"audio/dyad-01_{role[-1]}.wav"])
    scene = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, 'scene-07', 'agentviss_scene')"
                        " RETURNING id", [dataset]).fetchone()[0]
    cur.execute("INSERT INTO media (stimulus_id, role, path) VALUES (?, 'image:group', 'images/scene-07.jpg')", [scene])
    return store


def add(store: Store, labels: list[tuple]) -> None:
    notes = AnnotationStore(store)
    ids = {ext: sid for sid, ext in notes.stimulus_ids(notes.dataset(DATASET).id).items()}
    notes.create_many(None, "", [{"stimulus_id": ids[s], "annotator": who, "label_set": label_set, "label": label,
                                  "start_s": start, "end_s": end, "value": value, "media_role": role}
                                 for s, who, label_set, label, start, end, value, role in labels])


def labels_of(store: Store) -> list[tuple]:
    """Every live label of the dataset with every field that makes it itself, and its note, sorted."""
    notes = AnnotationStore(store)
    ids = notes.stimulus_ids(notes.dataset(DATASET).id)
    return sorted(((ids[a.stimulus_id], a.annotator, a.label_set, a.label, a.start_s, a.end_s, a.value,
                    a.media_role, a.note) for a in notes.for_stimuli(ids)), key=repr)


@pytest.fixture
def stores(tmp_path):
    source = make_store(tmp_path / "source.duckdb", tmp_path / "source")
    fresh = make_store(tmp_path / "fresh.duckdb", tmp_path / "fresh")
    yield source, fresh
    source.close()
    fresh.close()


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_two_speakers_identical_labels_survive_export_and_import(stores, tmp_path, name):
    source, fresh = stores
    add(source, FORMATS[name])
    expected = labels_of(source)
    assert len(expected) == len(FORMATS[name])   # the store itself keeps them all
    exporter = get_exporter(name)
    out = tmp_path / "out" if exporter.per_stimulus else tmp_path / f"all{exporter.extension}"  # a file per stimulus
    result = export_annotations(source, name, out, dataset=DATASET)
    assert result.report.written == len(expected) and result.report.left_out == 0
    before = store_rows(fresh)
    report = TransferReport()
    added = import_annotations(fresh, name, result.path, DATASET, annotator="nobody", report=report)
    assert added == len(expected), report.lines()
    assert report.read == report.written == len(expected) and report.left_out == 0
    assert labels_of(fresh) == expected
    # nothing but the labels and their history changed
    assert set(changed_rows(before, store_rows(fresh))) == {"annotation", "annotation_event"}
    # the same file again adds nothing: each label is already there, speaker and all
    assert import_annotations(fresh, name, result.path, DATASET, annotator="nobody") == 0
    assert labels_of(fresh) == expected


def test_a_csv_with_one_label_per_speaker_writes_both(stores, tmp_path):
    _, fresh = stores
    path = tmp_path / "labels.csv"
    path.write_text("stimulus,annotator,label_set,label,start_s,end_s,value,note,media_role,meta\n"
                    "dyad-01,ana,vocal cues,laugh,1.5,2.5,,,audio:A,\n"
                    "dyad-01,ana,vocal cues,laugh,1.5,2.5,,,audio:B,\n", encoding="utf-8")
    report = TransferReport()
    assert import_annotations(fresh, "csv", path, DATASET, report=report) == 2
    assert "labels.csv: read 2, wrote 2" in report.lines()
    assert [row[7] for row in labels_of(fresh)] == ["audio:A", "audio:B"]


def test_each_speaker_is_an_elan_tier_of_its_own(stores, tmp_path):
    source, _ = stores
    add(source, DYAD_LABELS)
    path = export_annotations(source, "eaf", tmp_path / "dyad-01.eaf", dataset=DATASET).path
    eaf = pympi.Elan.Eaf(str(path))
    tiers = {name: sorted(eaf.get_annotation_data_for_tier(name)) for name in eaf.get_tier_names()}
    assert tiers == {"ana | vocal cues": [(1500, 2500, "laugh")],
                     "ana | vocal cues | role=audio:A": [(1500, 2500, "laugh"), (4000, 4000, "click")],
                     "ana | vocal cues | role=audio:B": [(1500, 2500, "laugh"), (4000, 4000, "click")],
                     "bo | vocal cues | role=audio:A": [(1500, 2500, "laugh")]}
    assert {eaf.get_parameters_for_tier(name)["ANNOTATOR"] for name in tiers} == {"ana", "bo"}


def test_each_speaker_is_a_praat_tier_of_its_own(stores, tmp_path):
    source, _ = stores
    add(source, DYAD_LABELS)
    path = export_annotations(source, "textgrid", tmp_path / "dyad-01.TextGrid", dataset=DATASET).path
    grid = textgrid.openTextgrid(str(path), includeEmptyIntervals=False)
    by_praatio = {name: [tuple(entry) for entry in grid.getTier(name).entries] for name in grid.tierNames}
    assert by_praatio == {"ana | vocal cues": [(1.5, 2.5, "laugh")],
                          "ana | vocal cues | role=audio:A": [(1.5, 2.5, "laugh")],
                          "ana | vocal cues | role=audio:A #2": [(4.0, "click")],   # moments: a TextTier
                          "ana | vocal cues | role=audio:B": [(1.5, 2.5, "laugh")],
                          "ana | vocal cues | role=audio:B #2": [(4.0, "click")],
                          "bo | vocal cues | role=audio:A": [(1.5, 2.5, "laugh")]}
    praat = parselmouth.read(str(path))
    names = [call(praat, "Get tier name", i) for i in range(1, int(call(praat, "Get number of tiers")) + 1)]
    assert names == list(grid.tierNames)
    assert call(praat, "Get number of points", names.index("ana | vocal cues | role=audio:B #2") + 1) == 1
