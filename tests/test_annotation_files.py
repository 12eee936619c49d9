"""Annotation files from ELAN, Praat and Audacity land whole, on the right stimulus, with a report; bad ones leave
the store as it was. Each file is written in the shape the other tool writes and checked against an
independent reader reading the same file: pympi-ling for EAF; praatio and Praat itself (parselmouth) for
TextGrid."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import parselmouth
import pympi
import pytest
from parselmouth.praat import call
from praatio import textgrid

from annotation_files_fixtures import EAF_EXPECTED, eaf_text, make_store, praat_binary, stored
from app.cli import dispatch
from app.export_service import export_annotations, import_annotations
from storage.errors import ImportFailed, ThinsliceError
from storage.exporters.audacity import read_label_track
from storage.exporters.eaf_reader import read_eaf
from storage.exporters.registry import ExportRefused
from storage.exporters.report import TransferReport
from storage.exporters.textgrid_reader import read_textgrid

CHILD = {"childes": [("rec01", 10.0), ("rec02", 10.0), ("synthesis/901", 12.5)]}


@pytest.fixture
def db(tmp_path):
    store = make_store(tmp_path / "t.duckdb", tmp_path / "data", CHILD)
    store.close()
    return tmp_path / "t.duckdb"


def open_store(db):
    from storage.store import Store
    return Store.open(db)


def info(db, capsys) -> dict:
    capsys.readouterr()
    assert dispatch(["info", "--db", str(db)]) == 0
    summary = json.loads(capsys.readouterr().out)
    summary.pop("store")
    return summary


def spans(rows, tier):
    return sorted((r["start_s"], r["end_s"], r["label"]) for r in rows if r["origin"].tier == tier)


# -- ELAN ------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Parsing unknown version of ELAN spec")  # pympi-ling knows 2.7 on
@pytest.mark.parametrize("version", ["2.6", "2.7", "2.8", "3.0"])
def test_every_elan_tier_type_lands_with_the_times_elan_shows(tmp_path, version):
    path = tmp_path / "rec01.eaf"
    path.write_text(eaf_text(version), encoding="utf-8")
    reading = read_eaf(path)
    for tier, expected in EAF_EXPECTED.items():
        assert spans(reading.rows, tier) == sorted(expected), tier
    # pympi-ling reads the same tiers, participants, aligned times (before TIME_ORIGIN) and references
    eaf = pympi.Elan.Eaf(str(path))
    assert set(eaf.get_tier_names()) == set(EAF_EXPECTED)
    assert all(eaf.get_parameters_for_tier(t)["PARTICIPANT"] == "CHI" for t in EAF_EXPECTED)
    origin = eaf.get_linked_files()[0]["TIME_ORIGIN"]
    for tier in ("utt@CHI", "gesture@CHI"):
        theirs = sorted(((s + int(origin)) / 1000, (e + int(origin)) / 1000, v)
                        for s, e, v in eaf.get_annotation_data_for_tier(tier))
        assert spans(reading.rows, tier) == theirs
    assert [(s + 500, e + 500, v) for s, e, v, _ in eaf.get_ref_annotation_data_for_tier("eng@CHI")] == \
        [(round(a * 1000), round(b * 1000), t) for a, b, t in spans(reading.rows, "eng@CHI")]
    assert sorted(v for _, v, _, _ in eaf.tiers["morph@CHI"][1].values()) == ["plea", "se"]
    words = {r["label"]: r["meta"] for r in reading.rows if r["origin"].tier == "words@CHI"}
    assert words["juice"] == {"tier": "words@CHI", "speaker": "CHI", "parent_tier": "utt@CHI",
                              "tier_type": "Time_Subdivision", "linguistic_type": "words", "times": "interpolated"}
    assert [r["annotator"] for r in reading.rows if r["origin"].tier == "utt@CHI"] == ["maria", "maria"]
    assert reading.vocabularies == {"gesture@CHI": [("point", "index finger"), ("wave", None)]}
    assert reading.report.read == 9 and reading.report.left_out == 0


def test_an_elan_file_imports_whole_with_speaker_vocabulary_and_report(db, tmp_path, capsys):
    path = tmp_path / "rec01.eaf"
    path.write_text(eaf_text(), encoding="utf-8")
    code = dispatch(["annotations", "import", "eaf", str(path), "--db", str(db), "--annotator", "tom"])
    out = capsys.readouterr().out
    assert code == 0 and "added 9 labels" in out
    assert "rec01.eaf, tier 'morph@CHI': read 2, wrote 2" in out and "TIME_ORIGIN of 500 ms" in out
    store = open_store(db)
    try:
        labels = stored(store, "childes")
        assert ("rec01", "maria", "utt@CHI", "", 5.5, 6.5, "") in labels      # the empty segment
        assert ("rec01", "tom", "morph@CHI", "plea", 3.5, 4.0, "") in labels
        from storage.annotations import AnnotationStore
        notes = AnnotationStore(store)
        assert [label.name for label in notes.labels("gesture@CHI")] == ["point", "wave"]
        rows = notes.export_rows(notes.stimulus_ids(notes.dataset("childes").id))
        assert {r["meta"]["speaker"] for r in rows} == {"CHI"}
        # exported again, the tiers keep their names, participant, hierarchy and constraints
        with pytest.raises(ExportRefused, match="gesture@CHI.*meta.cve"):   # the vocabulary entry has no place
            export_annotations(store, "eaf", tmp_path / "again.eaf", filters={"stimulus": "rec01"})
        result = export_annotations(store, "eaf", tmp_path / "again.eaf", filters={"stimulus": "rec01"},
                                    skip_unrepresentable=True)
        lines = "\n".join(result.report.lines())
        assert "again.eaf, tier 'gesture@CHI': wrote 1, written without meta.cve (1)" in lines
        assert "tier 'words@CHI': wrote 3\n" in lines + "\n"
        eaf = pympi.Elan.Eaf(str(result.path))
        assert set(eaf.get_tier_names()) == set(EAF_EXPECTED)
        assert eaf.get_parameters_for_tier("words@CHI")["PARTICIPANT"] == "CHI"
        assert {t: eaf.get_parameters_for_tier(t).get("PARENT_REF") for t in EAF_EXPECTED} == {
            "utt@CHI": None, "words@CHI": "utt@CHI", "morph@CHI": "words@CHI", "eng@CHI": "utt@CHI",
            "gesture@CHI": "utt@CHI"}
        assert {eaf.linguistic_types[eaf.get_parameters_for_tier(t)["LINGUISTIC_TYPE_REF"]].get("CONSTRAINTS")
                for t in EAF_EXPECTED} == {None, "Time_Subdivision", "Symbolic_Subdivision", "Symbolic_Association",
                                           "Included_In"}
        assert [(s, e, v) for s, e, v, _ in eaf.get_ref_annotation_data_for_tier("eng@CHI")] == \
            [(1500, 4500, "more juice, please")]
        again = read_eaf(result.path)
        for tier, expected in EAF_EXPECTED.items():
            assert spans(again.rows, tier) == sorted(expected), tier
    finally:
        store.close()


def test_two_annotators_on_one_elan_tier_name_come_back_as_the_same_label_set(db, tmp_path):
    path = tmp_path / "rec01.eaf"
    path.write_text(eaf_text(), encoding="utf-8")
    store = open_store(db)
    try:
        import_annotations(store, "eaf", path, "childes", annotator="tom")
        other = eaf_text().replace('ANNOTATOR="maria"', 'ANNOTATOR="li"')
        _write(path, other)
        assert import_annotations(store, "eaf", path, "childes", annotator="tom") == 5   # maria's tiers, now li's
        out = export_annotations(store, "eaf", tmp_path / "out" / "rec01.eaf", skip_unrepresentable=True).path
        fresh = make_store(tmp_path / "fresh.duckdb", tmp_path / "fresh", CHILD)
        try:
            assert import_annotations(fresh, "eaf", out, "childes", annotator="tom") == 14
            assert [x[1:] for x in stored(fresh, "childes")] == [x[1:] for x in stored(store, "childes")]
        finally:
            fresh.close()
    finally:
        store.close()


def test_an_annotation_with_no_time_refuses_the_file_or_is_skipped_and_listed(db, tmp_path, capsys):
    text = eaf_text(time_origin=0).replace('<TIME_SLOT TIME_SLOT_ID="ts7" TIME_VALUE="1500"/>',
                                           '<TIME_SLOT TIME_SLOT_ID="ts7"/>')
    text = text.replace('<TIME_SLOT TIME_SLOT_ID="ts8" TIME_VALUE="2500"/>', '<TIME_SLOT TIME_SLOT_ID="ts8"/>')
    text = text.replace('PARENT_REF="utt@CHI" PARTICIPANT="CHI" TIER_ID="gesture@CHI"', 'TIER_ID="gesture@CHI"')
    path = tmp_path / "rec01.eaf"
    path.write_text(text, encoding="utf-8")
    before = info(db, capsys)
    code = dispatch(["annotations", "import", "eaf", str(path), "--db", str(db), "--annotator", "tom"])
    err = capsys.readouterr().err
    assert code == 1 and "rec01.eaf, tier 'gesture@CHI', item 1: 'point': no time can be found" in err
    assert "--skip-unrepresentable" in err
    assert info(db, capsys) == before
    assert dispatch(["annotations", "import", "eaf", str(path), "--db", str(db), "--annotator", "tom",
                     "--skip-unrepresentable"]) == 0
    out = capsys.readouterr().out
    assert "added 8 labels" in out and "left out: rec01.eaf, tier 'gesture@CHI', item 1" in out


def test_an_elan_file_with_a_missing_time_slot_is_refused_naming_tier_and_item(tmp_path):
    path = tmp_path / "rec01.eaf"
    path.write_text(eaf_text().replace('TIME_SLOT_REF2="ts8"', 'TIME_SLOT_REF2="ts99"'), encoding="utf-8")
    with pytest.raises(ImportFailed, match=r"rec01.eaf, tier 'gesture@CHI', item 1: found the time slot 'ts99'"):
        read_eaf(path)


# -- Praat -------------------------------------------------------------------------------------------
def praatio_grid():
    grid = textgrid.Textgrid()
    grid.addTier(textgrid.IntervalTier("words", [(0.5, 1.25, "héllo"), (1.25, 2.0, "wörld")], 0, 3.0))
    grid.addTier(textgrid.PointTier("tones", [(0.75, "H*"), (1.6, "L%")], 0, 3.0))
    return grid


EXPECTED_GRID = {"words": [(0.5, 1.25, "héllo"), (1.25, 2.0, "wörld")], "tones": [(0.75, 0.75, "H*"), (1.6, 1.6, "L%")]}


def praatio_entries(path):
    grid = textgrid.openTextgrid(str(path), includeEmptyIntervals=False)
    out = {}
    for name in grid.tierNames:
        tier = grid.getTier(name)
        out[name] = sorted((e.start, e.end, e.label) if len(e) == 3 else (e.time, e.time, e.label)
                           for e in tier.entries)
    return out


def praat_reads(path):
    """What Praat itself (through parselmouth) reads from a TextGrid: labels by tier, gaps left out."""
    grid = parselmouth.read(str(path))
    out = {}
    for tier in range(1, int(call(grid, "Get number of tiers")) + 1):
        name = call(grid, "Get tier name", tier)
        if call(grid, "Is interval tier", tier):
            items = [(call(grid, "Get start time of interval", tier, i), call(grid, "Get end time of interval", tier, i),
                      call(grid, "Get label of interval", tier, i))
                     for i in range(1, int(call(grid, "Get number of intervals", tier)) + 1)]
            out[name] = sorted(item for item in items if item[2] != "")
        else:
            out[name] = sorted((call(grid, "Get time of point", tier, i), call(grid, "Get time of point", tier, i),
                                call(grid, "Get label of point", tier, i))
                               for i in range(1, int(call(grid, "Get number of points", tier)) + 1))
    return out


# Praat reads UTF-16 without a BOM by dropping the zero bytes, and says so in a warning
@pytest.mark.filterwarnings("ignore::parselmouth.PraatWarning")
@pytest.mark.parametrize("form", ["long", "short"])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-16-le", "latin-1", "cp1252"])
def test_textgrids_in_every_form_and_encoding_praat_reads(tmp_path, form, encoding):
    original = tmp_path / "original.TextGrid"
    praatio_grid().save(str(original), format=f"{form}_textgrid", includeBlankSpaces=True)
    text = original.read_text(encoding="utf-8")
    path = tmp_path / "rec01.TextGrid"
    path.write_bytes(text.encode(encoding))  # utf-16 has a BOM; utf-16-be/-le have none
    reading = read_textgrid(path)
    found = {tier: spans(reading.rows, tier) for tier in EXPECTED_GRID}
    assert found == EXPECTED_GRID == praatio_entries(original) == praat_reads(path)
    assert reading.report.read == 4
    assert "rec01.TextGrid, tier 'words': read 2, wrote 0 (and 2 empty intervals, Praat's gaps between labels)" \
        in reading.report.lines()


def test_binary_textgrid_reads_like_its_text_form(tmp_path):
    original = tmp_path / "original.TextGrid"
    praatio_grid().save(str(original), format="long_textgrid", includeBlankSpaces=True)
    path = tmp_path / "rec01.TextGrid"
    path.write_bytes(praat_binary(0.0, 3.0, [
        ("IntervalTier", "words", [(0.0, 0.5, ""), (0.5, 1.25, "héllo"), (1.25, 2.0, "wörld"), (2.0, 3.0, "")]),
        ("TextTier", "tones", [(0.75, "H*"), (1.6, "L%")])]))
    reading = read_textgrid(path)
    assert {tier: spans(reading.rows, tier) for tier in EXPECTED_GRID} == praatio_entries(original) == praat_reads(path)


def test_short_textgrid_with_comments_and_praat_numbers(tmp_path):
    path = tmp_path / "rec01.TextGrid"
    path.write_text('File type = "ooTextFile"\nObject class = "TextGrid"\n\n'
                    "+0 ! the grid starts here\n3  ! and ends at 3 s\n<exists>\n2 ! tiers\n"
                    '"IntervalTier" ! class\n"words"\n0\n3\n2\n0\n1/2\n""\n50%\n3.0e0\n"say ""hi"""\n'
                    '"TextTier"\n"clicks"\n0\n3\n1\n1.25\n"click"\n', encoding="utf-8")
    reading = read_textgrid(path)
    assert spans(reading.rows, "words") == [(0.5, 3.0, 'say "hi"')]
    assert spans(reading.rows, "clicks") == [(1.25, 1.25, "click")]
    assert praat_reads(path) == {"words": [(0.5, 3.0, 'say "hi"')], "clicks": [(1.25, 1.25, "click")]}


def test_chronological_textgrid(tmp_path):
    path = tmp_path / "rec01.TextGrid"
    path.write_text('"Praat chronological TextGrid text file"\n0 3   ! Time domain.\n2   ! Number of tiers.\n'
                    '"IntervalTier" "words" 0 3\n"TextTier" "tones" 0 3\n\n! words:\n1 0.5 1.25\n"héllo"\n'
                    '! tones:\n2 0.75\n"H*"\n\n! words:\n1 1.25 2\n"wörld"\n2 1.6\n"L%"\n', encoding="utf-8")
    reading = read_textgrid(path)
    found = {tier: spans(reading.rows, tier) for tier in EXPECTED_GRID}
    assert found == EXPECTED_GRID == praat_reads(path)


def test_a_textgrid_tier_of_notes_goes_onto_its_labels(tmp_path):
    grid = praatio_grid()
    grid.addTier(textgrid.IntervalTier("words :note", [(0.5, 1.25, "first word"), (2.0, 2.5, "stray")], 0, 3.0))
    path = tmp_path / "rec01.TextGrid"
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)
    reading = read_textgrid(path)
    assert [(r["label"], r["note"]) for r in reading.rows if r["origin"].tier == "words"] == [("héllo", "first word"),
                                                                                               ("wörld", None)]
    assert reading.report.read == 4 and reading.report.left_out == 1
    assert "tier 'words :note', item 4: 'stray': a note at times where the tier 'words' has no label" in \
        "\n".join(reading.report.lines())


def test_a_broken_textgrid_names_file_and_line(tmp_path):
    path = tmp_path / "rec01.TextGrid"
    path.write_text('File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0\nxmax = 3\ntiers? <exists>\n'
                    'size = 1\nitem []:\n    item [1]:\n        class = "IntervalTier"\n        name = "w"\n'
                    '        xmin = 0\n        xmax = 3\n        intervals: size = 1\n        intervals [1]:\n'
                    '            xmin = zero\n            xmax = 3\n            text = "a"\n', encoding="utf-8")
    with pytest.raises(ImportFailed, match=r"rec01.TextGrid:18: found \"a\"|rec01.TextGrid:\d+: found"):
        read_textgrid(path)


def test_point_tiers_import_and_export_as_point_tiers(db, tmp_path):
    path = tmp_path / "rec02.TextGrid"
    grid = textgrid.Textgrid()
    grid.addTier(textgrid.PointTier("tones", [(0.75, "H*"), (1.6, "L%")], 0, 10.0))
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)
    store = open_store(db)
    try:
        report = TransferReport()
        assert import_annotations(store, "textgrid", path, "childes", annotator="ana", report=report) == 2
        assert ("rec02", "ana", "tones", "H*", 0.75, 0.75, "") in stored(store, "childes")
        result = export_annotations(store, "textgrid", tmp_path / "out" / "rec02.TextGrid", filters={"stimulus": "rec02"})
        out = result.path
        assert "tier 'tones': written under its own name, so without its annotator 'ana'" in "\n".join(result.report.lines())
        assert praat_reads(out) == {"tones": [(0.75, 0.75, "H*"), (1.6, 1.6, "L%")]}
        back = textgrid.openTextgrid(str(out), includeEmptyIntervals=False)
        assert back.getTier("tones").entryType.__name__ == "Point"
        assert [(p.time, p.label) for p in back.getTier("tones").entries] == [(0.75, "H*"), (1.6, "L%")]
        eaf = export_annotations(store, "eaf", tmp_path / "out" / "rec02.eaf", filters={"stimulus": "rec02"},
                                 skip_unrepresentable=True).path
        assert sorted(pympi.Elan.Eaf(str(eaf)).get_annotation_data_for_tier("tones")) == [(750, 750, "H*"),
                                                                                         (1600, 1600, "L%")]
        txt = export_annotations(store, "audacity", tmp_path / "out" / "rec02.txt", filters={"stimulus": "rec02"},
                                 skip_unrepresentable=True).path
        assert txt.read_text().splitlines()[0] == "0.750000\t0.750000\tH*"
    finally:
        store.close()


# -- Audacity ------------------------------------------------------------------------------------------
def test_audacity_comma_decimals_points_and_frequency_ranges(db, tmp_path):
    path = tmp_path / "rec01.txt"
    path.write_text("1,500000\t2,250000\tlaugh\n\\\t120,5\t3400\n3,000000\t3,000000\tclick\n4.5\tbeep\n",
                    encoding="utf-8")
    reading = read_label_track(path)
    got = [(r["start_s"], r["end_s"], r["label"], r["meta"]) for r in reading.rows]
    assert got == [(1.5, 2.25, "laugh", {"low_hz": 120.5, "high_hz": 3400.0}), (3.0, 3.0, "click", None),
                   (4.5, 4.5, "beep", None)]
    store = open_store(db)
    try:
        assert import_annotations(store, "audacity", path, "childes", annotator="ana", label_set="cues") == 3
        out = export_annotations(store, "audacity", tmp_path / "out" / "rec01.txt",
                                 filters={"stimulus": "rec01"}).path
        assert out.read_text().splitlines()[:2] == ["1.500000\t2.250000\tlaugh", "\\\t120.5\t3400.0"]
    finally:
        store.close()


# -- landing on the right stimulus ---------------------------------------------------------------------
def test_labels_past_the_clip_are_refused_or_cut_with_clip(db, tmp_path, capsys):
    path = tmp_path / "rec01.txt"
    path.write_text("1.0\t2.0\tlaugh\n3077.0\t3078.5\tlate\n9.5\t11.0\tover\n", encoding="utf-8")
    before = info(db, capsys)
    assert dispatch(["annotations", "import", "audacity", str(path), "--db", str(db), "--annotator", "a"]) == 1
    err = capsys.readouterr().err
    assert "rec01.txt:2: 'late' 3077.000-3078.500 s lies outside the stimulus 'rec01' (0-10 s)" in err
    assert "--clip" in err and info(db, capsys) == before
    # the way past is named once, with how many labels it concerns, not once per label
    assert err.count("--clip") == 1 and "2 labels lie outside their stimulus: add --clip" in err
    assert dispatch(["annotations", "import", "audacity", str(path), "--db", str(db), "--annotator", "a",
                     "--clip"]) == 0
    out = capsys.readouterr().out
    assert "added 2 labels" in out and "left out: rec01.txt:2: 'late' 3077.000-3078.500 s: wholly outside" in out
    assert "1 cut to the stimulus (0-10 s) with --clip" in out
    store = open_store(db)
    try:
        assert [x[3:6] for x in stored(store, "childes")] == [("laugh", 1.0, 2.0), ("over", 9.5, 10.0)]
    finally:
        store.close()


def test_a_folder_lands_each_file_on_its_own_stimulus_and_refuses_strays(db, tmp_path, capsys):
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "rec01.txt").write_text("1.0\t2.0\ta\n")
    (folder / "synthesis_901.txt").write_text("3.0\t4.0\tb\n")   # how an export names `synthesis/901`
    (folder / "rec99.txt").write_text("1.0\t2.0\tc\n")
    before = info(db, capsys)
    assert dispatch(["annotations", "import", "audacity", str(folder), "--db", str(db), "--annotator", "a"]) == 1
    assert "rec99.txt: cannot tell which stimulus it belongs to" in capsys.readouterr().err
    assert info(db, capsys) == before
    assert dispatch(["annotations", "import", "audacity", str(folder), "--db", str(db), "--annotator", "a",
                     "--stimulus", "rec02"]) == 1
    assert "--stimulus places one file on one stimulus" in capsys.readouterr().err
    (folder / "rec99.txt").unlink()
    assert dispatch(["annotations", "import", "audacity", str(folder), "--db", str(db), "--annotator", "a"]) == 0
    assert dispatch(["annotations", "import", "audacity", str(folder / "rec01.txt"), "--db", str(db),
                     "--annotator", "a", "--stimulus", "rec02"]) == 0
    out = capsys.readouterr().out
    assert dispatch(["annotations", "import", "audacity", str(folder), "--db", str(db), "--annotator", "a"]) == 0
    again = capsys.readouterr().out
    assert "added 0 labels" in again and "already in the store" in again
    store = open_store(db)
    try:
        assert [(x[0], x[3]) for x in stored(store, "childes")] == [("rec01", "a"), ("rec02", "a"),
                                                                    ("synthesis/901", "b")]
    finally:
        store.close()
    assert "added 1 labels" in out


def test_an_eaf_named_otherwise_lands_on_the_stimulus_of_its_media(db, tmp_path):
    path = tmp_path / "session 3 (checked).eaf"
    path.write_text(eaf_text().replace("file:///corpus/rec01.wav", "file:///corpus/rec02.wav"), encoding="utf-8")
    store = open_store(db)
    try:
        report = TransferReport()
        assert import_annotations(store, "eaf", path, "childes", annotator="tom", report=report) == 9
        assert {x[0] for x in stored(store, "childes")} == {"rec02"}
        assert "placed on the stimulus 'rec02' by its media file 'rec02.wav'" in "\n".join(report.lines())
    finally:
        store.close()


def test_an_eaf_lands_on_the_stimulus_it_names_inside(db, tmp_path):
    path = tmp_path / "exported.eaf"
    path.write_text(eaf_text(time_origin=0, stimulus_property="rec02"), encoding="utf-8")
    store = open_store(db)
    try:
        assert import_annotations(store, "eaf", path, "childes", annotator="tom") == 9
        assert {x[0] for x in stored(store, "childes")} == {"rec02"}
    finally:
        store.close()


@pytest.mark.parametrize("name", ["rec01.txt", "rec01.eaf", "rec01.TextGrid"])
def test_a_pipe_or_a_device_is_refused_in_one_line_not_read_forever(db, tmp_path, name):
    os.mkfifo(tmp_path / name)
    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / name).symlink_to("/dev/zero")
    fmt = {".txt": "audacity", ".eaf": "eaf", ".TextGrid": "textgrid"}[Path(name).suffix]
    store = open_store(db)
    try:
        for path in (tmp_path / name, tmp_path / "zero" / name):
            with pytest.raises(ThinsliceError, match="expected a regular file"):
                import_annotations(store, fmt, path, "childes", annotator="a")
    finally:
        store.close()


# -- exports ---------------------------------------------------------------------------------------------
def test_exports_follow_the_umask_and_report_counts(db, tmp_path, capsys):
    store = open_store(db)
    try:
        import_annotations(store, "audacity", _write(tmp_path / "rec01.txt", "1.0\t2.0\ta\n2.0\t2.0\tp\n"),
                           "childes", annotator="a", label_set="cues")
    finally:
        store.close()
    old = os.umask(0o002)
    try:
        assert dispatch(["export", "textgrid", str(tmp_path / "rec01.TextGrid"), "--db", str(db)]) == 0
    finally:
        os.umask(old)
    out = capsys.readouterr().out
    assert stat.S_IMODE((tmp_path / "rec01.TextGrid").stat().st_mode) == 0o664
    assert "rec01.TextGrid, tier 'a | cues': wrote 1" in out and "wrote 2 labels to" in out
    old = os.umask(0o077)
    try:
        assert dispatch(["export", "csv", str(tmp_path / "all.csv"), "--db", str(db)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "all.csv").stat().st_mode) == 0o600


def test_an_empty_label_cannot_go_to_a_textgrid_silently(db, tmp_path):
    store = open_store(db)
    try:
        import_annotations(store, "audacity", _write(tmp_path / "rec01.txt", "1.0\t2.0\t\n3.0\t4.0\tb\n"),
                           "childes", annotator="a", label_set="cues")
        with pytest.raises(ExportRefused, match="'' 1.000-2.000 s: a label with no text would be read back as a gap"):
            export_annotations(store, "textgrid", tmp_path / "x.TextGrid")
        assert not (tmp_path / "x.TextGrid").exists()
        result = export_annotations(store, "textgrid", tmp_path / "x.TextGrid", skip_unrepresentable=True)
        assert result.report.left_out == 1 and result.report.written == 1
        assert any("x.TextGrid, tier 'a | cues'" in line and "no text" in line for line in result.report.lines())
    finally:
        store.close()


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path
