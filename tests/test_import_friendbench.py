"""FriendBench import: the bundled sample, small releases in both layouts, sniffed columns, bad input."""
from __future__ import annotations

import csv
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

from app.benchmarks.friendbench import parse_familiarity
from app.import_service import plan_import
from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.friendbench import FriendBenchImporter
from storage.importers.writer import write_plan
from storage.store import Store

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "friendbench"
TABLES = ["dataset", "stimulus", "media", "segment", "model", "run", "prediction", "human_rating",
          "annotation", "aggregate_result"]
CLIPS = [("c1", "familiar"), ("c2", "stranger"), ("c3", "friends"), ("c4", "0")]
TRUTH = {"c1": "familiar", "c2": "stranger", "c3": "familiar", "c4": "stranger"}


def tiny_wav(path: Path, seconds: float = 1.0) -> None:
    t = np.arange(int(8000 * seconds)) / 8000
    sf.write(str(path), (0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 8000)


def tiny_mp4(path: Path, frames: int = 5) -> None:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=5)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((32, 32, 3), 40 * i, np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 5)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])


def transcript(clip: str) -> dict:
    return {"segments": [
        {"speaker": "A", "start": 0.1, "end": 0.5, "transcript": f"Cats or dogs {clip}?",
         "words": [{"word": "Cats", "start": 0.1, "end": 0.2}, {"word": "or", "start": 0.2, "end": 0.3},
                   {"word": "dogs", "start": 0.3, "end": 0.4}, {"word": f"{clip}?", "start": 0.4, "end": 0.5}]},
        {"speaker": "B", "start": 0.6, "end": 0.9, "transcript": "Dogs.",
         "words": [{"word": "Dogs.", "start": 0.6, "end": 0.9}]}]}


@pytest.fixture(scope="module")
def release_template(tmp_path_factory) -> Path:
    """A four-clip release in the current layout, media referenced from metadata columns."""
    root = tmp_path_factory.mktemp("fb") / "release"
    v = root / "validation"
    meta = []
    for clip, truth in CLIPS:
        folder = v / "media" / clip
        folder.mkdir(parents=True)
        for letter in "AB":
            tiny_mp4(folder / f"{letter}.mp4")
            tiny_wav(folder / f"{letter}.wav")
        (folder / "transcript.json").write_text(json.dumps(transcript(clip)), encoding="utf-8")
        rel = f"validation/media/{clip}"
        meta.append([clip, truth, "V01", "MF" if clip in ("c1", "c4") else "same", "early", "friends", "pets",
                     "extra-" + clip, f"{rel}/A.mp4", f"{rel}/B.mp4", f"{rel}/A.wav", f"{rel}/B.wav",
                     f"{rel}/transcript.json"])
    write_csv(v / "data" / "metadata.csv", ["clip_id", "label", "vendor", "gender_composition", "part",
                                            "relationship_detail", "topic", "notes", "video_a", "video_b",
                                            "audio_a", "audio_b", "transcript"], meta)
    ratings = [[f"r{r}", clip, cond, ans, "2.5"] for r in range(2) for clip, _ in CLIPS
               for cond, ans in (("text", "stranger"), ("audio", "friend"), ("video", "familiar"))]
    write_csv(v / "ratings" / "human_ratings.csv", ["rater_id", "clip_id", "condition", "response", "rt_s"], ratings)
    preds = [["m1", "Org", clip, cond, f"Answer: {'familiar' if clip in ('c1', 'c2') else 'stranger'}.", "", "800"]
             for clip, _ in CLIPS for cond in ("text", "audio", "video")]
    write_csv(v / "ratings" / "model_predictions.csv",
              ["model", "provider", "clip_id", "modality", "raw_output", "parsed_answer", "latency_ms"], preds)
    write_csv(v / "baselines" / "results.csv", ["model", "modality", "accuracy", "d_prime", "note"],
              [["m1", "text", "0.5", "0.0", "n/a"], ["m1", "audio", "0.5", "0.0", ""]])
    return root


@pytest.fixture
def release(release_template, tmp_path) -> Path:
    root = tmp_path / "release"
    shutil.copytree(release_template, root)
    return root


def counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def plan(root: Path, **options):
    return plan_import("friendbench", root, ImportOptions(**options))


def rewrite(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="bundled sample not generated")
def test_bundled_sample_gives_eight_dyads_with_media_transcripts_ratings_and_four_models(tmp_path):
    p = plan(SAMPLE)
    stimuli = p.frame("stimuli")
    assert stimuli.height == 8 and set(stimuli["ground_truth"]) == {"familiar", "stranger"}
    assert p.dataset.synthetic
    media = p.frame("media")
    assert media.group_by("stimulus").len()["len"].to_list() == [4] * 8
    assert set(media["role"]) == {"video:A", "video:B", "audio:A", "audio:B"} and media["present"].all()
    segments = p.frame("segments")
    assert set(segments["speaker"]) == {"A", "B"}
    assert all(json.loads(w) for w in segments["words"])
    preds = p.frame("predictions")
    assert preds.select("model", "modality").unique().height == 12
    assert preds["model"].n_unique() == 4 and preds.filter(pl.col("answer").is_not_null())["correct"].is_not_null().all()
    ratings = p.frame("human_ratings")
    assert ratings.group_by("condition").agg(pl.col("rater").n_unique())["rater"].min() >= 24
    assert p.frame("aggregate_results").height > 0 and p.frame("annotations").height > 0
    meta = [json.loads(m) for m in stimuli["meta"]]
    assert {m["site"] for m in meta} == {"V00", "V01", "V02"}
    assert {m["gender_composition"] for m in meta} == {"same", "mixed"}
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, p)
    first = counts(store)
    write_plan(store, plan(SAMPLE))
    assert counts(store) == first and first["prediction"] == 96


def test_release_is_read_with_sniffed_columns_normalised_labels_and_computed_correctness(release, tmp_path):
    p = plan(release)
    stimuli = {r["external_id"]: r for r in p.frame("stimuli").iter_rows(named=True)}
    assert {k: v["ground_truth"] for k, v in stimuli.items()} == TRUTH
    meta = json.loads(stimuli["c1"]["meta"])
    assert meta["gender_composition"] == "mixed" and meta["site"] == "V01" and meta["notes"] == "extra-c1"
    assert p.mapping["stimulus"] == "clip_id" and p.mapping["answer"] == "response"
    assert p.mapping["answer (model_predictions.csv)"] == "parsed_answer"
    assert p.frame("media").height == 16 and p.frame("media")["present"].all()
    assert stimuli["c1"]["text"].startswith("A: Cats or dogs c1?")
    ratings = p.frame("human_ratings")
    audio = ratings.filter(pl.col("condition") == "audio")
    assert set(audio["answer"]) == {"familiar"}
    assert audio.sort("stimulus")["correct"].to_list() == [True, True, False, False] * 2
    preds = p.frame("predictions")
    assert preds["latency_s"].to_list()[0] == pytest.approx(0.8)
    assert {r["stimulus"]: r["correct"] for r in preds.iter_rows(named=True)} == \
        {"c1": True, "c2": False, "c3": False, "c4": True}
    agg = p.frame("aggregate_results")
    assert set(agg["metric"]) == {"accuracy", "d_prime", "note"}
    assert agg.filter(pl.col("metric") == "note")["value_text"].to_list() == ["n/a"]
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, p)
    first = counts(store)
    write_plan(store, plan(release))
    assert counts(store) == first


def test_media_are_found_by_clip_id_when_metadata_has_no_media_columns(release):
    meta = pl.read_csv(release / "validation/data/metadata.csv")
    meta.drop("video_a", "video_b", "audio_a", "audio_b", "transcript").write_csv(
        release / "validation/data/metadata.csv")
    # c2 is stored flat, with B's video missing: B's expected path is recorded as missing
    flat = release / "validation/media"
    for name in ("A.mp4", "A.wav", "B.wav", "transcript.json"):
        shutil.move(flat / "c2" / name, flat / f"c2_{name}")
    shutil.rmtree(flat / "c2")
    p = plan(release)
    media = p.frame("media").filter(pl.col("stimulus") == "c2").sort("role")
    assert media["role"].to_list() == ["audio:A", "audio:B", "video:A", "video:B"]
    assert media["path"].to_list()[3] == "validation/media/c2_B.mp4" and media["present"].to_list() == [True] * 3 + [False]
    assert "1 media files missing" in p.notes
    assert p.frame("segments").filter(pl.col("stimulus") == "c2").height == 2
    assert p.frame("media").height == 16


def test_two_unmarked_participant_files_are_paired_in_name_order(release):
    meta = pl.read_csv(release / "validation/data/metadata.csv")
    meta.drop("video_a", "video_b", "audio_a", "audio_b", "transcript").write_csv(
        release / "validation/data/metadata.csv")
    folder = release / "validation/media/c3"
    for letter, pid in (("A", "P0059A"), ("B", "P0060")):
        (folder / f"{letter}.mp4").rename(folder / f"c3_{pid}.mp4")
    p = plan(release)
    media = p.frame("media").filter(pl.col("stimulus") == "c3").sort("role")
    assert dict(zip(media["role"], media["path"]))["video:A"].endswith("c3_P0059A.mp4")
    assert dict(zip(media["role"], media["path"]))["video:B"].endswith("c3_P0060.mp4")


def test_older_jsonl_layout(tmp_path):
    val = tmp_path / "old" / "val"
    val.mkdir(parents=True)
    with (val / "metadata.jsonl").open("w") as fh:
        fh.write(json.dumps({"id": "d1", "relationship": "friends", "site": "V02", "transcript": "A: hi\nB: hello"}) + "\n")
        fh.write(json.dumps({"id": "d2", "relationship": "strangers", "site": "V02"}) + "\n")
    with (val / "human_responses.jsonl").open("w") as fh:
        for rater in ("p1", "p2"):
            for clip in ("d1", "d2"):
                fh.write(json.dumps({"participant_id": rater, "id": clip, "modality": "video",
                                     "judgment": 1, "rt": 3.5}) + "\n")
    importer = FriendBenchImporter()
    assert importer.detect(tmp_path / "old") > 0.5
    p = plan_import("friendbench", tmp_path / "old", ImportOptions())
    assert p.frame("stimuli").sort("external_id")["ground_truth"].to_list() == ["familiar", "stranger"]
    assert p.frame("stimuli").sort("external_id")["text"].to_list()[0] == "A: hi\nB: hello"
    assert p.frame("stimuli")["split"].to_list() == ["val", "val"]
    ratings = p.frame("human_ratings").sort("stimulus", "rater")
    assert ratings["answer"].to_list() == ["familiar"] * 4 and ratings["correct"].to_list() == [True, True, False, False]
    assert "1 media" not in " ".join(p.notes) and "clips without media files" in " ".join(p.notes)


def test_unrecognised_columns_fail_with_the_columns_listed_until_mapped(release):
    path = release / "validation/data/metadata.csv"
    rewrite(path, "clip_id,label,", "k,rel_status,")
    with pytest.raises(ImportFailed) as failed:
        plan(release)
    message = str(failed.value)
    assert "metadata.csv" in message and "rel_status" in message and "--map stimulus=COLUMN" in message
    p = plan(release, mapping={"stimulus": "k"})
    # the truth column was recognised from its familiar/stranger values alone
    assert p.mapping["label"] == "rel_status" and p.mapping["stimulus"] == "k"
    # the other files keep their own clip column, sniffed as before
    assert p.mapping["stimulus (human_ratings.csv)"] == "clip_id"
    assert p.frame("stimuli").height == 4 and p.frame("human_ratings").height == 24


def test_unknown_truth_label_names_file_and_line_and_can_be_skipped(release):
    rewrite(release / "validation/data/metadata.csv", "c4,0,", "c4,cousins,")
    with pytest.raises(ImportFailed, match=r"metadata.csv:5: field 'label' found 'cousins'"):
        plan(release)
    p = plan(release, skip_bad=True)
    assert p.frame("stimuli").height == 3 and [x.line for x in p.problems] == [5]
    # ratings of the skipped clip are dropped with it, not reported again
    assert "c4" not in set(p.frame("human_ratings")["stimulus"])


def test_duplicate_clip_and_bad_answers_are_reported(release):
    with (release / "validation/data/metadata.csv").open("a") as fh:
        fh.write("c1,familiar,V01,same,early,friends,pets,x,,,,,\n")
    rewrite(release / "validation/ratings/human_ratings.csv", "r1,c2,audio,friend", "r1,c2,audio,maybe")
    with pytest.raises(ImportFailed) as failed:
        plan(release)
    found = {(x.file.split("/")[-1], x.found) for x in failed.value.problems}
    assert ("metadata.csv", "'c1'") in found and ("human_ratings.csv", "'maybe'") in found


def test_missing_media_are_recorded_as_missing(release):
    (release / "validation/media/c3/B.wav").unlink()
    p = plan(release)
    row = p.frame("media").filter((pl.col("stimulus") == "c3") & (pl.col("role") == "audio:B")).row(0, named=True)
    assert row["present"] is False and row["path"] == "validation/media/c3/B.wav"
    assert "1 media files missing" in p.notes


def test_media_outside_the_root_are_refused_unless_allowed(release, tmp_path):
    outside = tmp_path / "elsewhere.mp4"
    tiny_mp4(outside)
    rewrite(release / "validation/data/metadata.csv", "validation/media/c1/A.mp4", "../elsewhere.mp4")
    with pytest.raises(ImportFailed, match="allow-outside-root"):
        plan(release)
    p = plan(release, allow_outside_root=True)
    row = p.frame("media").filter((pl.col("stimulus") == "c1") & (pl.col("role") == "video:A")).row(0, named=True)
    assert row["path"] == str(outside.resolve()) and row["present"]


def test_a_second_models_outputs_are_added_alone(release, tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, plan(release, dataset_name="FB"))
    before = counts(store)
    preds = release / "validation/ratings/model_predictions.csv"
    write_csv(preds, ["model", "clip_id", "modality", "raw_output"],
              [["m2", clip, "audio", "strangers"] for clip, _ in CLIPS])
    (release / "validation/ratings/human_ratings.csv").unlink()
    (release / "validation/baselines/results.csv").unlink()
    write_plan(store, plan(release, dataset_name="FB"))
    after = counts(store)
    assert after["prediction"] == before["prediction"] + 4 and after["model"] == before["model"] + 1
    assert after["human_rating"] == before["human_rating"] and after["stimulus"] == before["stimulus"]


def test_free_text_answers_are_read_with_their_negations():
    cases = {
        '{"answer": "familiar", "confidence": 0.7}': "familiar",
        '{"answer": "stranger", "reason": "neither seems familiar with the other"}': "stranger",
        "They are not familiar with each other.": "stranger",
        "They do not seem familiar with each other.": "stranger",
        "They are not strangers.": "familiar",
        "They are clearly not strangers; they know each other well.": "familiar",
        "These two are not friends; they just met.": "stranger",
        "They aren't really friends.": "stranger",
        "They don't know each other.": "stranger",
        "They are not unfamiliar with each other.": "familiar",
        "Not just friends: they finish each other's sentences.": "familiar",
        "I'm not sure, but they seem like friends.": "familiar",
        "I don't know. They are strangers.": "stranger",
        "Final answer: not strangers": "familiar",
        "Could be friends or strangers.": None,
        "I cannot tell.": None,
    }
    assert {text: parse_familiarity(text) for text in cases} == cases


CORRUPTIONS = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 400)),
    st.tuples(st.just("insert"), st.integers(0, 400), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("replace"), st.sampled_from(["familiar", "stranger", "c2", ",", "\n", "text", "audio", "2.5"]),
              st.sampled_from(["", "??", ",,", '"', "\n", "-1", "x" * 3, "é", "\x00"])),
)


@pytest.fixture(scope="module")
def shared_store(release_template, tmp_path_factory) -> Store:
    store = Store.open(tmp_path_factory.mktemp("store") / "t.duckdb")
    write_plan(store, plan(release_template, dataset_name="FB"))
    return store


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(["data/metadata.csv", "ratings/human_ratings.csv", "ratings/model_predictions.csv",
                               "media/c1/transcript.json"]), corruption=CORRUPTIONS)
def test_malformed_files_either_import_or_fail_naming_the_file_leaving_the_store_unchanged(
        release_template, shared_store, target, corruption):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "release"
        shutil.copytree(release_template, root)
        path = root / "validation" / target
        data = path.read_bytes()
        if corruption[0] == "truncate":
            data = data[: corruption[1]]
        elif corruption[0] == "insert":
            data = data[: corruption[1]] + corruption[2] + data[corruption[1]:]
        else:
            data = data.replace(corruption[1].encode(), corruption[2].encode(), 1)
        path.write_bytes(data)
        before = counts(shared_store)
        try:
            write_plan(shared_store, plan(root, dataset_name="FB"))
        except ImportFailed as exc:
            # the message names the damaged file, or the file whose rows no longer match it
            assert any(name in str(exc) for name in (Path(target).name, "human_ratings.csv",
                                                     "model_predictions.csv", "import"))
            assert counts(shared_store) == before
