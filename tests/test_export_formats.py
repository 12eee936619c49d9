"""Exports: independent readers accept them, each format reads back the same labels, writes are safe."""
from __future__ import annotations

import json
from pathlib import Path

import pympi
import pytest
from praatio import textgrid

from app.cli_annotations import export_main
from app.export_service import export_annotations, import_annotations
from storage.annotations import AnnotationStore
from storage.exporters.registry import ExportRefused, exporters, get_exporter
from storage.store import Store

FORMATS = [e.name for e in exporters()]


def make_dataset(db: Path, root: Path) -> Store:
    """A dataset with two clips (20 s and 12 s) and labels by two annotators, some overlapping."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "metadata.csv").write_text("clip_id\nfb-001\nfb-002\n")
    store = Store.open(db)
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES ('FriendBench (test)', 'friendbench',"
                          " ?) RETURNING id", [str(root)]).fetchone()[0]
    ids = {}
    for ext, duration in (("fb-001", 20.0), ("fb-002", 12.0)):
        ids[ext] = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, ?, 'dyad')"
                               " RETURNING id", [dataset, ext]).fetchone()[0]
        cur.execute("INSERT INTO media (stimulus_id, role, path, duration_s) VALUES (?, 'audio:A', ?, ?)",
                    [ids[ext], f"audio/{ext}.wav", duration])
    notes = AnnotationStore(store)
    plan = [("fb-001", "ana", "laugh", 1.0, 2.5), ("fb-001", "ana", "overlap", 2.0, 3.25),
            ("fb-001", "ana", "sigh", 7.125, 8.0), ("fb-001", "bo", "laugh", 1.2, 2.4),
            ("fb-001", "bo", "whisper", 15.5, 19.75), ("fb-002", "ana", "hesitation", 0.0, 0.75),
            ("fb-002", "bo", "backchannel", 4.333, 5.667)]
    for ext, who, label, start, end in plan:
        notes.create(ids[ext], who, "vocal cues", label, start, end, note="n" if label == "sigh" else None)
    notes.create(ids["fb-001"], "ana", "familiarity", "familiar")
    notes.create(ids["fb-001"], "bo", "familiarity", "stranger")
    notes.create(ids["fb-002"], "ana", "familiarity", "stranger")
    return store


@pytest.fixture
def store(tmp_path):
    store = make_dataset(tmp_path / "t.duckdb", tmp_path / "dataset")
    yield store
    store.close()


def key(row, ms=False):
    """A label's identity; a file of one recording names no stimulus, so its file name stands for it."""
    times = (row["start_s"], row["end_s"])
    if ms and row["start_s"] is not None:
        times = (round(row["start_s"], 3), round(row["end_s"], 3))
    stimulus = row["stimulus"] or Path(row["origin"].file).stem
    return (stimulus, row["annotator"], row["label_set"], row["label"], *times)


def stored_rows(store):
    notes = AnnotationStore(store)
    ids = notes.stimulus_ids(notes.dataset(None).id)
    return [{"stimulus": ids[a.stimulus_id], "annotator": a.annotator, "label_set": a.label_set,
             "label": a.label, "start_s": a.start_s, "end_s": a.end_s} for a in notes.for_stimuli(ids)]


def expected_for(name, rows):
    """Every label comes back (ELAN counts in ms)."""
    return sorted(key(r, ms=True) for r in rows)


# a note on one label: Audacity has no place for it, so it exports only when told to leave it out
LOSSY = {"audacity"}


@pytest.mark.parametrize("name", FORMATS)
def test_round_trip_reads_back_the_same_labels(store, tmp_path, name):
    exporter = get_exporter(name)
    out = tmp_path / "out" / f"all{exporter.extension}"
    result = export_annotations(store, name, out, skip_unrepresentable=name in LOSSY)
    rows = exporter.read(result.path).rows
    assert sorted(key(r, ms=True) for r in rows) == expected_for(name, stored_rows(store))
    assert result.report.written == len(rows) == 10
    if name in LOSSY:
        assert "written without note (1)" in "\n".join(result.report.lines())
    assert not list(result.path.parent.glob(".*.tmp")), "temp files left behind"


@pytest.mark.parametrize("name", sorted(LOSSY))
def test_an_export_that_would_lose_a_note_is_refused_and_writes_nothing(store, tmp_path, name):
    out = tmp_path / "out" / f"all{get_exporter(name).extension}"
    with pytest.raises(ExportRefused, match=r"fb-001, tier 'ana \| vocal cues', 'sigh' 7.125-8.000 s: .*note"):
        export_annotations(store, name, out)
    assert not out.exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", FORMATS)
def test_import_into_a_fresh_store_gives_the_same_labels(store, tmp_path, name):
    exporter = get_exporter(name)
    written = export_annotations(store, name, tmp_path / "out" / f"all{exporter.extension}",
                                 skip_unrepresentable=name in LOSSY).path
    fresh = make_dataset(tmp_path / "fresh.duckdb", tmp_path / "dataset2")
    try:
        notes = AnnotationStore(fresh)
        notes.delete_many([a.id for a in notes.for_stimuli(notes.stimulus_ids(1))], "setup")
        count = import_annotations(fresh, name, written, "FriendBench (test)", annotator="importer")
        rows = stored_rows(fresh)
        assert count == len(rows)
        assert sorted(key(r, ms=True) for r in rows) == expected_for(name, stored_rows(store))
    finally:
        fresh.close()


def test_eaf_is_read_by_pympi(store, tmp_path):
    out = export_annotations(store, "eaf", tmp_path / "fb-001.eaf", filters={"stimulus": "fb-001"}).path
    eaf = pympi.Elan.Eaf(str(out))
    tiers = set(eaf.get_tier_names())
    assert {"ana | vocal cues", "ana | vocal cues #2", "bo | vocal cues", "ana | familiarity | whole"} <= tiers
    ana = sorted(eaf.get_annotation_data_for_tier("ana | vocal cues")
                 + eaf.get_annotation_data_for_tier("ana | vocal cues #2"))
    assert ana == [(1000, 2500, "laugh"), (2000, 3250, "overlap"), (7125, 8000, "sigh")]
    assert eaf.get_annotation_data_for_tier("ana | familiarity | whole") == [(0, 20000, "familiar")]
    assert eaf.get_parameters_for_tier("bo | vocal cues")["ANNOTATOR"] == "bo"
    # the note on 'sigh' hangs under its label, as ELAN users attach notes
    assert eaf.get_parameters_for_tier("ana | vocal cues :note")["PARENT_REF"] == "ana | vocal cues"
    assert eaf.get_ref_annotation_data_for_tier("ana | vocal cues :note") == [(7125, 8000, "n", "sigh")]


def test_textgrid_is_read_by_praatio(store, tmp_path):
    out = export_annotations(store, "textgrid", tmp_path / "fb-001.TextGrid", filters={"stimulus": "fb-001"}).path
    grid = textgrid.openTextgrid(str(out), includeEmptyIntervals=False)
    assert grid.maxTimestamp == 20.0
    # the note on 'sigh' sits on a tier of notes beside its label's tier, at the label's times
    assert [(e.start, e.end, e.label) for e in grid.getTier("ana | vocal cues :note").entries] == [(7.125, 8.0, "n")]
    entries = [(e.start, e.end, e.label) for name in ("ana | vocal cues", "ana | vocal cues #2")
               for e in grid.getTier(name).entries]
    assert sorted(entries) == [(1.0, 2.5, "laugh"), (2.0, 3.25, "overlap"), (7.125, 8.0, "sigh")]
    full = textgrid.openTextgrid(str(out), includeEmptyIntervals=True)
    bo = full.getTier("bo | vocal cues").entries
    assert bo[0].start == 0 and bo[-1].end == 20.0  # gaps are filled with empty intervals
    assert all(a.end == b.start for a, b in zip(bo, bo[1:]))


def test_refuses_to_overwrite_a_source_file(store, tmp_path):
    source = tmp_path / "dataset" / "metadata.csv"
    before = source.read_text()
    with pytest.raises(ExportRefused):
        export_annotations(store, "csv", source)
    assert source.read_text() == before
    sidecar = export_annotations(store, "jsonl", tmp_path / "dataset" / "annotations" / "thinslice_annotations.jsonl").path
    assert len(sidecar.read_text().splitlines()) == 10


def test_native_shapes(store, tmp_path):
    fb = export_annotations(store, "friendbench", tmp_path / "fb.csv", annotator="ana").path
    header, first = fb.read_text().splitlines()[:2]
    assert header == "clip_id,annotator,familiarity,ranges"
    assert first.startswith("fb-001,ana,familiar,")
    em = json.loads(export_annotations(store, "echomind", tmp_path / "em.json").path.read_text())
    assert [c["case_id"] for c in em] == ["fb-001", "fb-002"] and len(em[0]["annotations"]) == 7


def test_cli_export(store, tmp_path, capsys):
    db = store.path
    store.close()
    out = tmp_path / "cli.parquet"
    code = export_main(["parquet", str(out), "--db", str(db), "--annotator", "bo", "--filter", "label_set=vocal cues"])
    printed = capsys.readouterr().out
    assert code == 0 and f"wrote 3 labels to {out}" in printed and "cli.parquet: wrote 3" in printed
    rows = get_exporter("parquet").read(out).rows
    assert sorted(r["label"] for r in rows) == ["backchannel", "laugh", "whisper"]
    assert export_main(["csv", str(tmp_path / "x.csv"), "--db", str(db), "--filter", "colour=red"]) == 1
    assert "Unknown filter colour" in capsys.readouterr().err


def test_audacity_for_one_annotator_is_plain_labels(store, tmp_path):
    result = export_annotations(store, "audacity", tmp_path / "fb-001.txt", annotator="ana",
                                filters={"stimulus": "fb-001", "label_set": "vocal cues"}, skip_unrepresentable=True)
    out = result.path
    assert "give --annotator and --label-set when importing them back" in "\n".join(result.report.lines())
    assert out.read_text().splitlines() == ["1.000000\t2.500000\tlaugh", "2.000000\t3.250000\toverlap",
                                            "7.125000\t8.000000\tsigh"]
    fresh = make_dataset(tmp_path / "fresh.duckdb", tmp_path / "dataset2")
    try:
        count = import_annotations(fresh, "audacity", out, None, annotator="cy", label_set="vocal cues")
        notes = AnnotationStore(fresh)
        mine = notes.for_stimuli(notes.stimulus_ids(1), annotator="cy")
        assert count == 3 and [(a.label, a.label_set) for a in mine][0] == ("laugh", "vocal cues")
    finally:
        fresh.close()


def test_import_names_unknown_stimuli_and_writes_nothing(store, tmp_path):
    bad = tmp_path / "zz-999.txt"
    bad.write_text("1.0\t2.0\tlaugh\n")
    before = len(stored_rows(store))
    with pytest.raises(Exception, match="zz-999"):
        import_annotations(store, "audacity", bad, None, annotator="cy")
    assert len(stored_rows(store)) == before
