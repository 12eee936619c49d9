"""Seamless Interaction import: per-participant files paired into dyads, relationships joined, windows cut."""
from __future__ import annotations

import copy
import json
import shutil
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import polars as pl
import pytest
import soundfile as sf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.seamless import SeamlessImporter, clip_segments
from storage.importers.writer import write_plan
from storage.store import Store

SEAMLESS = "seamless-interaction"
STRANGERS = ("V00_S0038_I00000125_P0059A", "V00_S0038_I00000125_P0060")   # from the transcript excerpt
COWORKERS = ("V03_S1805_I00000004_P0101", "V03_S1805_I00000004_P0100B")   # V03,1805 is familiar/coworkers


def tiny_wav(path: Path, seconds: float) -> None:
    sf.write(str(path), np.zeros(int(1000 * seconds), np.int16), 1000, subtype="PCM_16")


def tiny_mp4(path: Path) -> None:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=2)
        stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        for i in range(2):
            frame = av.VideoFrame.from_ndarray(np.zeros((16, 16, 3), np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 2)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def generated_record(pid: str, offset: float) -> dict:
    words = [{"word": w, "start": offset + i * 0.4, "end": offset + i * 0.4 + 0.3, "score": 0.9}
             for i, w in enumerate(["We", "sat", "together", "again."])]
    return {"id": pid, "metadata:transcript": [{"words": words, "start": words[0]["start"], "end": words[-1]["end"],
                                                "transcript": "We sat together again."}],
            "metadata:vad": [{"start": offset, "end": offset + 1.6}]}


_BUILT: dict[str, Path] = {}


@pytest.fixture
def corpus_template(tmp_path_factory, reference_data) -> Path:
    """A folder in the release's shape: the real CSVs and transcript excerpt, generated media (built once)."""
    if "root" not in _BUILT:
        _BUILT["root"] = build_corpus(reference_data / SEAMLESS, tmp_path_factory.mktemp("seamless") / "corpus")
    return _BUILT["root"]


def build_corpus(ref: Path, root: Path) -> Path:
    (root / "assets").mkdir(parents=True)
    shutil.copy(ref / "relationships.csv", root / "assets" / "relationships.csv")
    shutil.copy(ref / "participants.first200.csv", root / "assets" / "participants.csv")
    shutil.copy(ref / "interactions.first40.csv", root / "assets" / "interactions.csv")
    records = json.loads((ref / "transcript_vad_excerpt.json").read_text())["records"]
    records += [generated_record(COWORKERS[0], 3.0), generated_record(COWORKERS[1], 30.0)]
    for record in records:
        folder = root / "improvised" / record["id"].split("_I")[0]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{record['id']}.json").write_text(json.dumps(record), encoding="utf-8")
        tiny_wav(folder / f"{record['id']}.wav", 60.0)
        tiny_mp4(folder / f"{record['id']}.mp4")
    return root


@pytest.fixture
def corpus(corpus_template, tmp_path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(corpus_template, root)
    return root


def plan(root: Path, **options):
    return SeamlessImporter().plan(root, ImportOptions(**options))


def test_participants_pair_into_dyads_with_relationship_from_the_reference_csv(corpus, tmp_path):
    importer = SeamlessImporter()
    assert importer.detect(corpus) > 0.5
    p = plan(corpus)
    stimuli = {r["external_id"]: r for r in p.frame("stimuli").iter_rows(named=True)}
    assert set(stimuli) == {"V00_S0038_I00000125", "V03_S1805_I00000004"}
    assert stimuli["V00_S0038_I00000125"]["ground_truth"] == "stranger"
    coworkers = stimuli["V03_S1805_I00000004"]
    meta = json.loads(coworkers["meta"])
    assert coworkers["ground_truth"] == "familiar" and meta["relationship_detail"] == "coworkers"
    assert meta["participants"] == {"A": COWORKERS[1], "B": COWORKERS[0]}   # P0100B sorts before P0101
    assert meta["session"] == "1805" and meta["site"] == "V03"
    stranger_meta = json.loads(stimuli["V00_S0038_I00000125"]["meta"])
    assert stranger_meta["participants"]["A"] == STRANGERS[0]
    assert stranger_meta["vad"]["B"][0] == [1.138, 1.742]
    media = p.frame("media")
    assert media.height == 8 and media["present"].all()
    assert set(media.filter(pl.col("role") == "audio:A")["sample_rate"]) == {1000}
    segments = p.frame("segments").filter(pl.col("stimulus") == "V00_S0038_I00000125").sort("ord")
    assert segments["speaker"].to_list() == ["B", "A"] and segments["text"].to_list() == ["That's interesting.", "Nice."]
    assert json.loads(segments["words"][0])[1]["word"] == "interesting."
    assert segments["media_role"].to_list() == ["audio:B", "audio:A"]
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, p)
    write_plan(store, plan(corpus))
    assert store.cursor().execute("SELECT count(*) FROM stimulus").fetchone()[0] == 2
    assert store.cursor().execute("SELECT count(*) FROM media").fetchone()[0] == 8


def test_windows_refer_to_the_source_files_with_clipped_shifted_segments(corpus):
    p = plan(corpus, extra={"window_s": 20.0, "window_every_s": 20.0})
    ids = sorted(p.frame("stimuli")["external_id"])
    assert ids == [f"V00_S0038_I00000125@{s:.2f}" for s in (0, 20, 40)] + \
        [f"V03_S1805_I00000004@{s:.2f}" for s in (0, 20, 40)]
    media = p.frame("media").filter(pl.col("stimulus") == "V00_S0038_I00000125@20.00")
    assert set(media["offset_s"]) == {20.0} and set(media["duration_s"]) == {20.0}
    assert media["path"].str.ends_with(".mp4").sum() == 2
    seg = p.frame("segments").filter(pl.col("stimulus") == "V00_S0038_I00000125@20.00").row(0, named=True)
    assert seg["speaker"] == "A" and seg["start_s"] == pytest.approx(4.355)
    assert json.loads(seg["words"])[0]["start"] == pytest.approx(4.355)
    # the coworkers' B turn (30.0 .. 31.5 s) starts 10 s into the second window
    seg = p.frame("segments").filter(pl.col("stimulus") == "V03_S1805_I00000004@20.00").row(0, named=True)
    assert seg["start_s"] == pytest.approx(10.0)


def test_snapping_moves_a_window_start_to_the_nearest_turn(corpus):
    p = plan(corpus, extra={"window_s": 10.0, "window_starts": [22.0], "snap_to_turn": True})
    stimulus = p.frame("stimuli").filter(pl.col("external_id").str.starts_with("V00")).row(0, named=True)
    window = json.loads(stimulus["meta"])["window"]
    assert window["start_s"] == pytest.approx(24.355) and window["snapped_from_s"] == 22.0
    seg = p.frame("segments").filter(pl.col("stimulus") == stimulus["external_id"]).row(0, named=True)
    assert seg["start_s"] == 0.0 and seg["text"] == "Nice."


def test_clip_segments_drops_words_outside_and_rebuilds_text():
    segments = [{"speaker": "A", "start_s": 1.0, "end_s": 4.0, "text": "one two three",
                 "words": [{"word": "one", "start": 1.0, "end": 1.5}, {"word": "two", "start": 2.0, "end": 2.5},
                           {"word": "three", "start": 3.5, "end": 4.0}]}]
    clipped = clip_segments(segments, 1.8, 3.0)
    assert clipped[0]["text"] == "two" and clipped[0]["start_s"] == 0.0 and clipped[0]["end_s"] == pytest.approx(1.2)


def test_missing_media_recorded_and_bad_options_refused(corpus):
    next(corpus.rglob(f"{STRANGERS[1]}.mp4")).unlink()
    p = plan(corpus)
    row = p.frame("media").filter(pl.col("path").str.contains(STRANGERS[1] + ".mp4")).row(0, named=True)
    assert row["present"] is False and row["role"] == "video:B"
    assert "1 media files missing" in p.notes
    with pytest.raises(ImportFailed, match="window_s"):
        plan(corpus, extra={"window_s": -1})


def test_unknown_relationship_and_truncated_json_name_their_files(corpus):
    rel = corpus / "assets" / "relationships.csv"
    rel.write_text(rel.read_text().replace("V00,0038,stranger", "V00,0038,cousins"))
    with pytest.raises(ImportFailed, match=r"relationships.csv:\d+: field 'relationship' found 'cousins'"):
        plan(corpus)
    json_file = next(corpus.rglob(f"{STRANGERS[0]}.json"))
    json_file.write_bytes(json_file.read_bytes()[:50])
    p = plan(corpus, skip_bad=True)
    assert {Path(x.file).name for x in p.problems} == {"relationships.csv", f"{STRANGERS[0]}.json"}
    assert p.frame("stimuli").filter(pl.col("external_id") == "V00_S0038_I00000125")["ground_truth"][0] is None


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    return Store.open(tmp_path_factory.mktemp("store") / "t.duckdb")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_malformed_participant_json_imports_or_fails_naming_the_file(corpus_template, shared_store, data):
    record = json.loads((next(corpus_template.rglob(f"{STRANGERS[1]}.json"))).read_text())
    broken = copy.deepcopy(record)
    segment = broken["metadata:transcript"][0]
    key = data.draw(st.sampled_from(["start", "end", "transcript", "words", "vad", "id"]))
    junk = data.draw(st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=5), st.lists(st.integers(), max_size=2),
                               st.floats(allow_nan=True)))
    if key == "vad":
        broken["metadata:vad"] = junk
    elif key == "id":
        broken["id"] = junk
    else:
        segment[key] = junk
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        shutil.copytree(corpus_template, root)
        next(root.rglob(f"{STRANGERS[1]}.json")).write_text(json.dumps(broken), encoding="utf-8")
        before = shared_store.cursor().execute("SELECT count(*) FROM segment").fetchone()[0]
        try:
            write_plan(shared_store, plan(root, dataset_name="S"), replace_stimuli=True)
        except ImportFailed as exc:
            assert f"{STRANGERS[1]}.json" in str(exc)
            assert shared_store.cursor().execute("SELECT count(*) FROM segment").fetchone()[0] == before
