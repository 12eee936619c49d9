"""EchoMind importer: the bundled sample, fixtures in the release's shape, real reference files, re-imports."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.benchmarks.echomind import choice_letter
from app.import_service import plan_import
from resources.sample_build.echomind import build
from storage.importers.common import ImportOptions
from storage.importers.echomind import EchoMindImporter, parse_options
from storage.importers.writer import write_plan
from storage.store import Store

TABLES = ("dataset", "stimulus", "media", "model", "run", "prediction", "judgment", "label_set", "label",
          "annotation", "aggregate_result")
SPOKEN = ["sad-toned expressive voice", "sound of wind blowing", "elderly", "whisper"]


def table_counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def tiny_wav(path: Path, seconds: float = 0.25) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), np.zeros(int(24000 * seconds), dtype=np.float32), 24000, subtype="PCM_16")


def dump(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")


def make_release(root: Path, cases: int = 3, key_field: str = "gt", audio: bool = True) -> dict:
    """A release folder in the real shape: script_info, MCQs (answer key under `key_field`), some audio."""
    data = root / "data_synthesis"
    scripts, understanding, reasoning = [], [], []
    for n in range(1, cases + 1):
        spoken = SPOKEN[(n - 1) % len(SPOKEN)]
        code = spoken.split()[0].split("-")[0]
        files = {v: f"{code}/id_{n}_{code}_work_{v}.wav" for v in ("target", "neutral", "alternative")}
        scripts.append({"case_id": f"id_{n}", "spoken_info": spoken, "topic": "work",
                        "speak_A": f"This is script number {n}.",
                        **{f"{v}_audio_info": {f"{v}_input_audio_file": f} for v, f in files.items()}})
        if audio:
            for f in files.values():
                tiny_wav(data / "audio" / f)
        options = ["The speaker is male.", "The speaker is elderly.", "The speaker sounds sad."]
        understanding.append({"question_id": n, "audio_dir": code, "audio_name": f"id_{n}_{code}_work_target.wav",
                              "question": "Which best describes the voice?", "options_text": options,
                              key_field: "C. The speaker sounds sad.", "task_type": "Voice Style Detection"})
        reasoning.append({"question_id": n, "audio_dir": code, "audio_name": f"id_{n}_{code}_work_target.wav",
                          "question": "What response fits?", "options_text": "A. Praise\nB. Comfort",
                          key_field: "B"})
    dump(data / "script_info_synthesis.json", scripts)
    dump(data / "MCQ" / "understanding.json", understanding)
    dump(data / "MCQ" / "reasoning.json", reasoning)
    return {"scripts": scripts, "understanding": understanding, "reasoning": reasoning}


def add_model_outputs(root: Path, release: dict, model: str, layout: str = "outputs") -> int:
    """Outputs of one model: ASR, both MCQ files, basic conversation and its judge file. Returns the
    number of predictions written."""
    asr = [{**s, "model": model, "predicted_answer": s["speak_A"].lower()} for s in release["scripts"]]
    mcq = {task: [{**q, "predicted_text_answer": "The answer is: C" if task == "understanding" else "A",
                   "predicted_audio_answer": "", "prediected_audio_file": f"{q['question_id']}.wav"}
                  for q in release[task]] for task in ("understanding", "reasoning")}
    conversation = [{**s, "model": model, "ouput_prompt": "basic", "output_content": {
        v: {"file": f"{s['case_id']}_{model}_response_{v}.wav", "response_audio_transcript": f"said {v}",
            "response_text": f"reply to the {v} voice"} for v in ("target", "neutral", "alternative")}}
        for s in release["scripts"]]
    judge = [{"case_id": s["case_id"], "model": model, "ouput_prompt": "basic", "voice_type": "target",
              "context_fit_score": 4, "context_fit_resaon": "fits", "response_naturalness_score": "5",
              "response_naturalness_resaon": "natural", "colloquialism_degree_score": 3,
              "colloquialism_degree_resaon": "mixed", "speech_information_relevance_score": 2,
              "speech_information_relevance_reason": "ignores the voice", "VES_score": 3, "explanation": "flat"}
             for s in release["scripts"]]
    if layout == "outputs":
        base = root / "outputs" / model
        dump(base / "asr.json", asr)
        dump(base / "mcq_understanding.json", mcq["understanding"])
        dump(base / "mcq_reasoning.json", mcq["reasoning"])
        dump(base / "conversation_basic.json", conversation)
    else:  # the tree the benchmark's own scripts write
        out = root / "output" / "output_synthesis"
        dump(out / "asr_output" / model / f"{model}_asr.json", asr)
        for task in ("understanding", "reasoning"):
            dump(out / "mcq_output" / model / "audio_output_false" / f"{model}_mcq_{task}.json", mcq[task])
        dump(out / "response_output" / model / "basic" / f"{model}_basic_output_responses.json", conversation)
        base = root / "outputs" / model
    dump(base / "judge_basic.json", judge)
    n = len(release["scripts"])
    return n + len(release["understanding"]) + len(release["reasoning"]) + 3 * n


def plan_of(path: Path, **options):
    return plan_import("echomind", path, ImportOptions(**options))


# -- the bundled sample ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "echomind"
    build(out)
    return out


def test_sample_imports_with_its_counts(sample_dir, tmp_path):
    plan = plan_of(sample_dir, dataset_name="EchoMind (sample)")
    counts = plan.counts()
    assert counts["stimuli"] == 6 + 11 and counts["media"] == 6 * 3 + 11
    assert counts["predictions"] == 3 * 6 + 3 * 11 + 6 * 18  # ASR, MCQ, six prompt runs x 3 voices
    assert counts["judgments"] == 6 * 18 * 4 + 2 * 6
    assert counts["aggregate_results"] == 3 * 8 + 3 * 8 and counts["annotations"] == 12
    assert plan.dataset.synthetic and not plan.notes
    assert plan.frame("media")["present"].all()
    assert set(plan.frame("media")["sample_rate"].to_list()) == {24000}
    assert all(2 * 0.8 <= d <= 4 for d in plan.frame("media")["duration_s"].to_list())
    summary = write_plan(Store.open(tmp_path / "t.duckdb"), plan)
    assert summary.written["models"] == 3 and summary.written["runs"] == 27
    prompts = plan.frame("predictions").filter(plan.frame("predictions")["modality"] == "conversation:target")
    assert set(zip(prompts["model"], prompts["prompt_setting"])) == {
        ("atlas-7b", "no"), ("atlas-7b", "basic"), ("corvid-pro", "no"), ("corvid-pro", "basic"),
        ("corvid-pro", "enhance"), ("nimbus-omni", "basic")}


def test_sample_is_small_and_deterministic(sample_dir, tmp_path):
    size = sum(p.stat().st_size for p in sample_dir.rglob("*") if p.is_file())
    assert size < 3.5 * 1024 * 1024
    assert (sample_dir / "SYNTHETIC.md").read_text().lower().count("synthetic") >= 1
    again = tmp_path / "again"
    build(again)
    digest = lambda d: {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
                        for p in sorted(d.rglob("*")) if p.is_file()}
    assert digest(again) == digest(sample_dir)


def test_sample_mcq_answers_are_scored_and_unreadable_ones_count_as_wrong(sample_dir):
    predictions = plan_of(sample_dir).frame("predictions")
    mcq = predictions.filter(predictions["modality"].str.starts_with("mcq_"))
    assert mcq["correct"].null_count() == 0
    unparsed = mcq.filter(mcq["answer"].is_null())
    assert unparsed.height == 2 and not unparsed["correct"].any()
    assert set(unparsed["model"]) == {"nimbus-omni"}


def test_reimport_changes_nothing(sample_dir, tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, plan_of(sample_dir))
    first = table_counts(store)
    write_plan(store, plan_of(sample_dir))
    assert table_counts(store) == first


# -- fixtures in the release's shape -----------------------------------------------------------------

def test_release_tree_from_the_benchmark_scripts_is_read(tmp_path):
    release = make_release(tmp_path, key_field="correct_answer")
    expected = add_model_outputs(tmp_path, release, "gpt4o", layout="release")
    plan = plan_of(tmp_path)
    assert plan.mapping["text"] == "speak_A" and plan.mapping["label"] == "correct_answer"
    predictions = plan.frame("predictions")
    assert predictions.height == expected and set(predictions["model"]) == {"gpt4o"}
    mcq = predictions.filter(predictions["modality"] == "mcq_understanding")
    assert mcq["answer"].to_list() == ["C"] * 3 and mcq["correct"].all()
    reasoning = predictions.filter(predictions["modality"] == "mcq_reasoning")
    assert not reasoning["correct"].any()
    stimuli = plan.frame("stimuli")
    script = stimuli.filter(stimuli["external_id"] == "synthesis/id_1").row(0, named=True)
    meta = json.loads(script["meta"])
    assert script["text"] == "This is script number 1." and meta["dimension_fine"] == "emotion"
    assert meta["dimension_coarse"] == "paralinguistic" and meta["target_label"] == "sad voice"
    judgments = plan.frame("judgments")
    assert sorted(set(judgments["criterion"])) == ["C1", "C2", "C3", "C4", "VES"]
    assert set(judgments["scale_max"]) == {5.0} and judgments.filter(judgments["criterion"] == "C4")[
        "rationale"].to_list() == ["ignores the voice"] * 3


def test_missing_audio_is_recorded_not_fatal(tmp_path):
    make_release(tmp_path, audio=False)
    plan = plan_of(tmp_path)
    assert not plan.frame("media")["present"].any()
    assert f"{plan.frame('media').height} media files missing" in plan.notes


def test_a_new_models_outputs_are_added_alone(tmp_path):
    release = make_release(tmp_path)
    first = add_model_outputs(tmp_path, release, "model-a")
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, plan_of(tmp_path, dataset_name="EchoMind test"))
    ids_before = store.cursor().execute("SELECT id, answer FROM prediction ORDER BY id").fetchall()
    assert len(ids_before) == first

    second = add_model_outputs(tmp_path, release, "model-b")
    write_plan(store, plan_of(tmp_path, dataset_name="EchoMind test"))
    rows = store.cursor().execute("SELECT id, answer FROM prediction ORDER BY id").fetchall()
    assert rows[: len(ids_before)] == ids_before and len(rows) == first + second

    # a folder with only a third model's files, added to the same dataset
    only = tmp_path / "delivery"
    third = add_model_outputs(only, release, "model-c")
    plan = plan_of(only, dataset_name="EchoMind test")
    assert plan.frame("stimuli").height == 0
    write_plan(store, plan)
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM prediction").fetchone()[0] == first + second + third
    scored = cur.execute("SELECT count(*) FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m"
                         " ON m.id = r.model_id WHERE m.name = 'model-c' AND p.correct").fetchone()[0]
    assert scored == 3  # the understanding answers, scored from the key repeated in the output records


def test_detect_scores(tmp_path, sample_dir):
    importer = EchoMindImporter()
    assert importer.detect(sample_dir) >= 0.9
    assert importer.detect(sample_dir / "leaderboard" / "leaderboard_data_1.json") >= 0.8
    assert importer.detect(tmp_path) == 0.0


@pytest.mark.parametrize("value, expected", [
    ("The answer is: C", "C"), ("C", "C"), ("c", "C"), ("(B)", "B"), ("**A**", "A"),
    ("B. The speaker is elderly.", "B"), ("The speaker is elderly.", "B"), ("The answer is a guess", None),
    ("A speaker talks", None), ("", None), (None, None), ("E", None),
])
def test_option_letters(value, expected):
    options = parse_options("A. The speaker is male.\nB. The speaker is elderly.\nC. Sad voice.")
    assert choice_letter(value, options) == expected


# -- real reference files ------------------------------------------------------------------------

def test_real_leaderboards_and_id_854_voices(reference_data, tmp_path):
    source = reference_data / "echomind"
    data = tmp_path / "data_synthesis"
    files = {v: f"sad/id_854_sad_school_{v}.wav" for v in ("target", "neutral", "alternative")}
    for f in files.values():
        (data / "audio" / "sad").mkdir(parents=True, exist_ok=True)
        shutil.copy(source / Path(f).name, data / "audio" / f)
    demo = json.loads((source / "echomind_demo_examples.json").read_text())
    example = next(m for m in demo["mcq_examples"] if "id_854" in m["audio"])
    dump(data / "script_info_synthesis.json", [{
        "case_id": "id_854", "spoken_info": "sad-toned expressive voice", "topic": "school",
        "script": example["script"], **{f"{v}_audio_info": {f"{v}_input_audio_file": f} for v, f in files.items()}}])
    dump(data / "MCQ" / "reasoning.json", [{
        "question_id": 1, "audio_dir": "sad", "audio_name": Path(example["audio"]).name,
        "question": example["question"], "options_text": "\n".join(example["options"]),
        "answer": example["answer_bolded_on_page"], "question_type": example["question_type"]}])
    for name in ("leaderboard_data_1.json", "leaderboard_data_2.json"):
        shutil.copy(source / name, tmp_path / name)

    plan = plan_of(tmp_path)
    media = {r["role"]: r for r in plan.frame("media").iter_rows(named=True)}
    assert {k: round(v["duration_s"], 2) for k, v in media.items() if k != "audio"} == {
        "audio:target": 3.15, "audio:neutral": 2.93, "audio:alternative": 2.45}
    assert {v["sample_rate"] for v in media.values()} == {24000}
    assert plan.frame("stimuli").filter(plan.frame("stimuli")["kind"] == "echomind_mcq")["ground_truth"][0] == "C"

    aggregates = plan.frame("aggregate_results")
    boards = [json.loads((source / n).read_text())["leaderboardData"] for n in
              ("leaderboard_data_1.json", "leaderboard_data_2.json")]
    assert aggregates.height == sum(len(m) for b in boards for e in b for g, m in e.items() if g != "info")
    dashes = aggregates.filter(aggregates["value_text"] == "-")
    assert dashes.height > 0 and dashes["value"].null_count() == dashes.height
    wer = aggregates.filter((aggregates["model"] == "GPT-4o-Audio") & (aggregates["metric"] == "WER"))
    assert wer["value"].to_list() == [10.74] and wer["metric_group"].to_list() == ["Understanding"]

    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, plan)
    stored = store.cursor().execute(
        "SELECT value, value_text FROM aggregate_result a JOIN model m ON m.id = a.model_id"
        " WHERE m.name = 'Audio-Flamingo3' AND a.metric_group = 'Reasoning(Audio)' AND a.metric = 'VES'").fetchall()
    assert stored == [(None, "-")]


def test_a_leaderboard_file_alone(reference_data, tmp_path):
    shutil.copy(reference_data / "echomind" / "leaderboard_data_2.json", tmp_path / "board.json")
    plan = plan_of(tmp_path / "board.json", dataset_name="EchoMind boards")
    assert plan.frame("stimuli").height == 0
    assert set(plan.frame("aggregate_results")["metric_group"]) == {"Response(Text)"}
    write_plan(Store.open(tmp_path / "t.duckdb"), plan)
