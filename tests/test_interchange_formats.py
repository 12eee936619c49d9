"""Interchange with ELAN, Praat and Audacity completes: an exported EAF links the stimulus's recordings so ELAN
opens them, dependent tiers written by another tool come back as dependent tiers, Praat's own number syntax
reads as Praat reads it, and Audacity's label files read as Audacity reads them. Each file is checked by an
independent reader (pympi-ling, Praat itself through parselmouth) and each import against a real store, whose
other rows stay as they were."""
from __future__ import annotations

import wave
from pathlib import Path
from urllib.parse import unquote, urlparse

import parselmouth
import pympi
import pytest
from parselmouth.praat import call

from app.export_service import export_annotations, import_annotations
from storage.annotations import AnnotationStore
from storage.errors import ImportFailed
from storage.exporters.audacity import read_label_track
from storage.exporters.report import TransferReport
from storage.exporters.textgrid_reader import read_textgrid
from storage.store import Store
from store_rows import changed_rows, store_rows

DATASET = "sessions"


def silent_wav(path: Path, seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * int(8000 * seconds))


def make_store(db: Path, root: Path) -> Store:
    """A dyad with one recording per speaker, a video and a group image, and a 20 s window 60 s into a long
    session recording; the recordings exist on disk."""
    store = Store.open(db)
    cur = store.cursor()
    dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES (?, 'seamless', ?) RETURNING id",
                          [DATASET, str(root)]).fetchone()[0]
    media = {"dyad-01": [("audio:A", "audio/dyad 01_A.wav", 0.0, 20.0), ("audio:B", "audio/dyad 01_B.wav", 0.0, 20.0),
                         ("video", "video/dyad-01.mp4", 0.0, 20.0), ("image:group", "images/dyad-01.jpg", 0.0, None)],
             "window-02": [("audio", "sessions/long.wav", 60.0, 20.0)]}
    for external, files in media.items():
        sid = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, ?, 'dyad') RETURNING id",
                          [dataset, external]).fetchone()[0]
        for role, path, offset, duration in files:
            cur.execute("INSERT INTO media (stimulus_id, role, path, offset_s, duration_s) VALUES (?, ?, ?, ?, ?)",
                        [sid, role, path, offset, duration])
            if path.endswith(".wav"):
                silent_wav(root / path, 0.1)
            else:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(b"\0")
    return store


def labels_of(store: Store) -> list[tuple]:
    notes = AnnotationStore(store)
    ids = notes.stimulus_ids(notes.dataset(DATASET).id)
    return sorted(((ids[a.stimulus_id], a.annotator, a.label_set, a.label, a.start_s, a.end_s, a.value, a.media_role)
                   for a in notes.for_stimuli(ids)), key=repr)


@pytest.fixture
def stores(tmp_path):
    source = make_store(tmp_path / "source.duckdb", tmp_path / "source")
    fresh = make_store(tmp_path / "fresh.duckdb", tmp_path / "fresh")
    yield source, fresh
    source.close()
    fresh.close()


def stimulus_id(store: Store, external: str) -> int:
    notes = AnnotationStore(store)
    return next(sid for sid, ext in notes.stimulus_ids(notes.dataset(DATASET).id).items() if ext == external)


# -- ELAN: the recordings ----------------------------------------------------------------------------------
def test_an_exported_eaf_links_each_recording_of_its_stimulus(stores, tmp_path):
    source, fresh = stores
    notes = AnnotationStore(source)
    notes.create(stimulus_id(source, "dyad-01"), "ana", "vocal cues", "laugh", 1.5, 2.5, media_role="audio:A")
    notes.create(stimulus_id(source, "window-02"), "ana", "vocal cues", "sigh", 3.0, 4.0)
    folder = tmp_path / "exports"
    export_annotations(source, "eaf", folder, dataset=DATASET)
    eaf = pympi.Elan.Eaf(str(folder / "dyad-01.eaf"))
    linked = eaf.get_linked_files()
    # audio and video, not the image (ELAN plays no images); the relative path is tried first by ELAN
    assert [(m["MIME_TYPE"], Path(unquote(urlparse(m["MEDIA_URL"]).path)).name) for m in linked] == [
        ("audio/x-wav", "dyad 01_A.wav"), ("audio/x-wav", "dyad 01_B.wav"), ("video/mp4", "dyad-01.mp4")]
    for medium in linked:
        absolute = Path(unquote(urlparse(medium["MEDIA_URL"]).path))
        relative = (folder / unquote(medium["RELATIVE_MEDIA_URL"])).resolve()
        assert absolute == relative and relative.is_file() and relative.is_relative_to(tmp_path / "source")
        assert medium["RELATIVE_MEDIA_URL"].startswith("../source/")
        assert "TIME_ORIGIN" not in medium
    with wave.open(str(Path(unquote(urlparse(linked[0]["MEDIA_URL"]).path)))) as audio:
        assert audio.getframerate() == 8000   # the very recording, readable where the link points
    # a window into a long recording: ELAN starts the recording 60 s in, and the labels keep their own times
    window = pympi.Elan.Eaf(str(folder / "window-02.eaf"))
    assert [(m["MIME_TYPE"], m["TIME_ORIGIN"]) for m in window.get_linked_files()] == [("audio/x-wav", "60000")]
    assert window.get_annotation_data_for_tier("ana | vocal cues") == [(3000, 4000, "sigh")]
    before = store_rows(fresh)
    assert import_annotations(fresh, "eaf", folder, DATASET, annotator="nobody") == 2
    assert labels_of(fresh) == labels_of(source)   # the 60 s are not added to the window's label
    assert set(changed_rows(before, store_rows(fresh))) == {"annotation", "annotation_event"}


# -- ELAN: dependent tiers ---------------------------------------------------------------------------------
TIERS = {  # tier: (parent, linguistic type, its constraint)
    "utt": (None, "utterance", None),
    "trans": ("utt", "translation", "Symbolic_Association"),
    "gesture": ("utt", "gestures", "Included_In"),
    "words": ("utt", "words", "Time_Subdivision"),
    "morph": ("words", "morphemes", "Symbolic_Subdivision"),
}


def pympi_file(path: Path) -> None:
    """A recording's tiers as pympi-ling writes them: an utterance tier and one dependent tier of each kind."""
    eaf = pympi.Elan.Eaf(author="pympi")
    for tier, (parent, ling, constraint) in TIERS.items():
        eaf.add_linguistic_type(ling, constraints=constraint,
                                timealignable=constraint in (None, "Included_In", "Time_Subdivision"))
        eaf.add_tier(tier, ling=ling, parent=parent, part="A", ann="maria")
    eaf.remove_tier("default")
    eaf.add_annotation("utt", 1000, 3000, "hello there")
    eaf.add_annotation("utt", 5000, 6000, "bye")
    eaf.add_ref_annotation("trans", "utt", 2000, "hallo daar")
    eaf.add_ref_annotation("trans", "utt", 5500, "doei")
    eaf.add_annotation("gesture", 1200, 1800, "nod")
    eaf.add_annotation("words", 1000, 2000, "hello")
    eaf.add_annotation("words", 2000, 3000, "there")
    eaf.add_ref_annotation("morph", "words", 1500, "hel")
    first = next(iter(eaf.tiers["morph"][1]))
    eaf.add_ref_annotation("morph", "words", 1500, "lo", prev=first)
    eaf.to_file(str(path))


def tier_shape(eaf: pympi.Elan.Eaf) -> dict[str, tuple]:
    """Each tier's parent, linguistic type, constraint, participant and annotations (times where it has them)."""
    shape = {}
    for tier in eaf.get_tier_names():
        params = eaf.get_parameters_for_tier(tier)
        ling = params["LINGUISTIC_TYPE_REF"]
        if eaf.tiers[tier][0]:
            items = sorted(eaf.get_annotation_data_for_tier(tier))
        else:
            items = sorted(value for _, value, _, _ in eaf.tiers[tier][1].values())
        shape[tier] = (params.get("PARENT_REF"), ling, eaf.linguistic_types[ling].get("CONSTRAINTS"),
                       params.get("PARTICIPANT"), items)
    return shape


def test_dependent_tiers_from_another_tool_come_back_dependent_on_the_same_parents(stores, tmp_path):
    _, fresh = stores
    original = tmp_path / "dyad-01.eaf"
    pympi_file(original)
    before = store_rows(fresh)
    report = TransferReport()
    assert import_annotations(fresh, "eaf", original, DATASET, report=report) == 9
    assert report.left_out == 0
    assert set(changed_rows(before, store_rows(fresh))) == {"annotation", "annotation_event"}
    result = export_annotations(fresh, "eaf", tmp_path / "again" / "dyad-01.eaf", dataset=DATASET,
                                filters={"stimulus": "dyad-01"})
    theirs, ours = tier_shape(pympi.Elan.Eaf(str(original))), tier_shape(pympi.Elan.Eaf(str(result.path)))
    assert ours == theirs
    assert {tier: shape[:3] for tier, shape in ours.items()} == TIERS
    morph = pympi.Elan.Eaf(str(result.path)).tiers["morph"][1]
    order = {value: prev for _, value, prev, _ in morph.values()}
    assert order["hel"] is None and morph[order["lo"]][1] == "hel"   # the subdivision keeps its order


# -- Praat's numbers ---------------------------------------------------------------------------------------
FORMS_GRID = '''File type = "ooTextFile"
Object class = "TextGrid"

xmin = -0.5s
xmax = 3
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "words"
        xmin = -0.5s
        xmax = 3
        intervals: size = 3intervals
        intervals [1]:
            xmin = -0.5s
            xmax = 2/200
            text = "pre"
        intervals [2]:
            xmin = 2/200
            xmax = 80%
            text = "yes"
        intervals [3]:
            xmin = 80%
            xmax = 3.0e0
            text = "no"
    item [2]:
        class = "TextTier"
        name = "points"
        xmin = -0.5s
        xmax = 3
        points: size = 3
        points [1]:
            number = 0ignored
            mark = "zero"
        points [2]:
            number = + 150%
            mark = "one and a half"
        points [3]:
            number = 4/2s
            mark = "two"
'''


def test_praat_number_forms_read_as_praat_itself_reads_them(tmp_path):
    path = tmp_path / "forms.TextGrid"
    path.write_text(FORMS_GRID, encoding="utf-8")
    ours = [(r["origin"].tier, r["start_s"], r["end_s"], r["label"]) for r in read_textgrid(path).rows]
    assert ours == [("words", -0.5, 0.01, "pre"), ("words", 0.01, 0.8, "yes"), ("words", 0.8, 3.0, "no"),
                    ("points", 0.0, 0.0, "zero"), ("points", 1.5, 1.5, "one and a half"), ("points", 2.0, 2.0, "two")]
    grid = parselmouth.read(str(path))
    praat = [("words", call(grid, "Get start time of interval", 1, i), call(grid, "Get end time of interval", 1, i),
              call(grid, "Get label of interval", 1, i)) for i in range(1, 4)]
    praat += [("points", call(grid, "Get time of point", 2, i), call(grid, "Get time of point", 2, i),
               call(grid, "Get label of point", 2, i)) for i in range(1, 4)]
    assert ours == praat


# Praat reads hexadecimal since melder_atof.cpp gained it (2023); the Praat inside parselmouth (6.1.38) is
# older and reads `0x3` as 0, so these are checked against the value the current reader gives
@pytest.mark.parametrize("word, seconds", [("0x3", 3.0), ("0x1.8p1", 3.0), ("0X10", 16.0), ("0x", 0.0),
                                           ("80%", 0.8), ("2/200", 0.01), ("0ignored", 0.0), ("-0.5s", -0.5)])
def test_each_praat_number_form_gives_its_time(tmp_path, word, seconds):
    path = tmp_path / "one.TextGrid"
    path.write_text(f'File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = -1\nxmax = 20\ntiers? <exists>\n'
                    f'size = 1\nitem []:\n    item [1]:\n        class = "TextTier"\n        name = "p"\n'
                    f'        xmin = -1\n        xmax = 20\n        points: size = 1\n        points [1]:\n'
                    f'            number = {word}\n            mark = "x"\n', encoding="utf-8")
    assert [(r["start_s"], r["label"]) for r in read_textgrid(path).rows] == [(seconds, "x")]
    if not word.lower().startswith("0x"):
        grid = parselmouth.read(str(path))
        assert call(grid, "Get time of point", 1, 1) == seconds


@pytest.mark.parametrize("word", ["1e", "-.5", "1/0", "2/x", "1" * 41])
def test_what_praat_reads_as_no_number_is_refused_naming_file_and_line(stores, tmp_path, word):
    _, fresh = stores
    path = tmp_path / "dyad-01.TextGrid"
    path.write_text(FORMS_GRID.replace("xmax = 80%", f"xmax = {word}"), encoding="utf-8")
    before = store_rows(fresh)
    with pytest.raises(ImportFailed) as refused:
        import_annotations(fresh, "textgrid", path, DATASET, annotator="a")
    message = str(refused.value)
    assert message.count("\n") == 0
    assert f"dyad-01.TextGrid:21: found {word!r}; expected a number" in message
    assert store_rows(fresh) == before


# -- Audacity ----------------------------------------------------------------------------------------------
def test_audacity_reads_an_end_before_its_start_and_undefined_frequencies_as_audacity_does(stores, tmp_path, capsys):
    _, fresh = stores
    path = tmp_path / "dyad-01.txt"
    # Audacity writes -1 for a frequency bound the selection left open; a time of -1 it never writes, and
    # reads an end before its start by swapping the two (SelectedRegion::setTimes)
    path.write_text("2.000000\t1.000000\tbreath\n\\\t-1.000000\t3400.000000\n"
                    "3.000000\t4.000000\tlaugh\n\\\t-1.000000\t-1.000000\n"
                    "5.000000\t-1\tlate\n", encoding="utf-8")
    reading = read_label_track(path)
    assert [(r["start_s"], r["end_s"], r["label"], r["meta"]) for r in reading.rows] == [
        (1.0, 2.0, "breath", {"high_hz": 3400.0}), (3.0, 4.0, "laugh", None), (-1.0, 5.0, "late", None)]
    assert ("dyad-01.txt: 2 labels end before they start (line 1, 5); read as Audacity reads them, from the"
            " earlier time to the later") in reading.report.notes
    before = store_rows(fresh)
    with pytest.raises(ImportFailed, match=r"dyad-01.txt:5: 'late' -1.000-5.000 s lies outside the stimulus"):
        import_annotations(fresh, "audacity", path, DATASET, annotator="ana", label_set="cues")
    assert store_rows(fresh) == before
    assert import_annotations(fresh, "audacity", path, DATASET, annotator="ana", label_set="cues", clip=True) == 3
    assert [row[3:6] for row in labels_of(fresh)] == [("breath", 1.0, 2.0), ("late", 0.0, 5.0), ("laugh", 3.0, 4.0)]
    out = export_annotations(fresh, "audacity", tmp_path / "out" / "dyad-01.txt", dataset=DATASET).path
    assert out.read_text().splitlines() == ["0.000000\t5.000000\tlate", "1.000000\t2.000000\tbreath",
                                            "\\\t-1\t3400.0", "3.000000\t4.000000\tlaugh"]
