"""AgentViSS scenes through the mapping preset: the sample, a user's own preset, bad records."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from resources.sample_build import agentviss as sample_build
from storage.errors import ImportFailed
from storage.importers.agentviss import AgentVissImporter
from storage.importers.common import ImportOptions
from storage.importers.writer import write_plan
from storage.store import Store

TABLES = ["dataset", "stimulus", "media", "segment", "model", "run", "prediction", "judgment", "annotation",
          "label_set", "label"]


def counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("agentviss")
    sample_build.build(folder)
    return folder


def do_import(store: Store, path: Path, **options):
    plan = AgentVissImporter().plan(path, ImportOptions(dataset_name="AgentViSS test", **options))
    return plan, write_plan(store, plan)


def test_the_sample_becomes_scenes_turns_images_and_judged_roles(sample, tmp_path):
    assert AgentVissImporter().detect(sample) >= 0.9
    store = Store.open(tmp_path / "t.duckdb")
    plan, _ = do_import(store, sample)
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM stimulus WHERE kind = 'agentviss_scene'").fetchone()[0] == 2
    meta = json.loads(cur.execute("SELECT meta FROM stimulus WHERE external_id = 'flat-s01-e05-sc3'").fetchone()[0])
    assert meta["dialogue_type"] == "deliberation" and meta["conflict_intensity"] == "high"
    assert meta["characters"] == ["Casimir", "Yusra", "Odile"]
    assert meta["roles"]["Yusra"] == {
        "gender": "female", "age": 27, "occupation": "bicycle courier", "expression_style": "suppression",
        "conflict_trait": "accommodating", "initial_emotion": "uneasy", "facial_expression": "frown",
        "body_action": "stands by the open window"}
    turns = cur.execute("SELECT ord, speaker, start_s FROM segment s JOIN stimulus t ON t.id = s.stimulus_id"
                        " WHERE t.external_id = 'flat-s01-e05-sc3' ORDER BY ord").fetchall()
    assert len(turns) == 9 and turns[0] == (0, "Casimir", None)
    roles = {r for (r,) in cur.execute("SELECT role FROM media").fetchall()}
    assert "image:group" in roles and "image:portrait:Casimir:0" in roles and "image:portrait:Yusra:1" in roles
    assert cur.execute("SELECT bool_and(present) FROM media").fetchone()[0]
    # 6 roles x 2 models x 2 vision modes, each judged on four tasks
    assert cur.execute("SELECT count(*) FROM prediction").fetchone()[0] == 24
    assert sorted(c for (c,) in cur.execute("SELECT DISTINCT criterion FROM judgment").fetchall()) == \
        ["Char", "Expr", "Int-Out", "Int-Reg"]
    assert cur.execute("SELECT DISTINCT vision_mode FROM run ORDER BY 1").fetchall() == [("DV",), ("VV",)]
    assert cur.execute("SELECT count(*) FROM annotation").fetchone()[0] == 10
    assert cur.execute("SELECT count(*) FROM label l JOIN label_set s ON s.id = l.label_set_id"
                       " WHERE s.name = 'AgentViSS conflict trait'").fetchone()[0] == 5


def test_train_jsonl_alone_gives_the_same_plan(sample, tmp_path):
    from_json = AgentVissImporter().plan(sample, ImportOptions())
    from_lines = AgentVissImporter().plan(sample / "train.jsonl", ImportOptions())
    for table in ("stimuli", "segments", "media", "predictions", "judgments"):
        assert from_json.frame(table).equals(from_lines.frame(table)), table


def test_reimport_is_idempotent(sample, tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    do_import(store, sample)
    once = counts(store)
    do_import(store, sample)
    assert counts(store) == once


def _custom_release(folder: Path, model: str = "Model X") -> Path:
    """A release whose field names differ from the default preset's: roles keyed by name, scores per task."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "images").mkdir(exist_ok=True)
    (folder / "images" / "g.png").write_bytes(b"\x89PNG")
    scenes = [{"sid": 7, "info": {"text": "A row about dishes.", "kind": "Eristic", "heat": 3},
               "pic": "g.png",
               "people": {"Ada": {"bio": {"sex": "female"}, "how": "Deception", "clash": "competing"},
                          "Bo": {"bio": {"sex": "male"}, "how": "honest", "clash": "avoiding"}},
               "lines": [{"who": "Ada", "say": "Not my plate."}, {"who": "Bo", "say": "It has your name on."}],
               "evals": [{"char": "Ada", "dim": task, "view": mode, "llm": model, "pts": "6"}
                         for task in ("expression", "character", "Int_Reg", "int-out") for mode in ("VV", "DV")]}]
    (folder / "data.json").write_text(json.dumps(scenes), encoding="utf-8")
    preset = {"fields": {"scenes": "[]", "scene_id": "sid", "description": "info.text", "dialogue_type": "info.kind",
                         "conflict_intensity": "info.heat", "group_image": "pic", "roles": "people{}",
                         "role_name": "@key", "gender": "bio.sex", "expression_style": "how",
                         "conflict_trait": "clash", "turns": "lines[]", "turn_speaker": "who", "turn_text": "say",
                         "results": "evals[]", "result_role": "char", "task_name": "dim", "vision_mode": "view",
                         "model": "llm", "score": "pts"},
              "constants": {"judge": "gpt-judge", "scale_max": 10}}
    (folder / "preset.json").write_text(json.dumps(preset), encoding="utf-8")
    return folder


def test_a_users_own_preset_and_single_field_overrides(tmp_path):
    release = _custom_release(tmp_path / "rel")
    store = Store.open(tmp_path / "t.duckdb")
    plan, _ = do_import(store, release, extra={"preset": str(release / "preset.json")},
                        mapping={"occupation": "bio.sex"})
    assert plan.mapping["roles"] == "people{}" and plan.mapping["occupation"] == "bio.sex"
    cur = store.cursor()
    meta = json.loads(cur.execute("SELECT meta FROM stimulus").fetchone()[0])
    assert meta["dialogue_type"] == "eristic" and meta["roles"]["Ada"]["expression_style"] == "deception"
    assert meta["roles"]["Bo"]["occupation"] == "male"
    assert cur.execute("SELECT path, present FROM media").fetchall() == [("images/g.png", True)]
    assert cur.execute("SELECT count(*), min(judge), max(scale_max) FROM judgment").fetchone() == (8, "gpt-judge", 10)
    assert cur.execute("SELECT DISTINCT context FROM run").fetchall() == [("Ada",)]


def test_a_second_models_results_are_added_alone(tmp_path):
    store = Store.open(tmp_path / "t.duckdb")
    first = _custom_release(tmp_path / "one")
    do_import(store, first, extra={"preset": str(first / "preset.json")})
    before = counts(store)
    second = _custom_release(tmp_path / "two", model="Model Y")
    do_import(store, second, extra={"preset": str(second / "preset.json")})
    after = counts(store)
    assert after["stimulus"] == before["stimulus"] and after["model"] == 2
    assert after["judgment"] == 2 * before["judgment"]


@pytest.mark.parametrize("change, message", [
    (lambda s: s["results"][0].update(vision_mode="XV"), "data.json:1: field 'results[0].vision_mode"),
    (lambda s: s["results"][3].update(score="high"), "expected a number"),
    (lambda s: s["roles"][1].update(conflict_trait="sulking"), "roles[1].conflict_trait"),
    (lambda s: s.update(dialogue_type="gossip"), "one of persuasion"),
    (lambda s: s["results"][1].update(task="Expr", vision_mode="VV"), "a second Expr result"),
])
def test_bad_records_fail_with_file_and_record(sample, tmp_path, change, message):
    release = tmp_path / "bad"
    release.mkdir()
    document = json.loads((sample / "data.json").read_text(encoding="utf-8"))
    change(document["scenes"][0])
    (release / "data.json").write_text(json.dumps(document), encoding="utf-8")
    store = Store.open(tmp_path / "t.duckdb")
    before = counts(store)
    with pytest.raises(ImportFailed) as failure:
        do_import(store, release)
    assert message in str(failure.value)
    assert counts(store) == before


def test_a_duplicate_scene_and_a_truncated_file(sample, tmp_path):
    release = tmp_path / "dup"
    release.mkdir()
    document = json.loads((sample / "data.json").read_text(encoding="utf-8"))
    document["scenes"][1]["scene_id"] = document["scenes"][0]["scene_id"]
    (release / "data.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ImportFailed, match=r"data.json:2: field 'scene_id'.*first used in record 1"):
        AgentVissImporter().plan(release, ImportOptions())
    (release / "data.json").write_text(json.dumps(document)[:500], encoding="utf-8")
    with pytest.raises(ImportFailed, match=r"data.json:1.*invalid JSON"):
        AgentVissImporter().plan(release, ImportOptions())


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Store:
    """One store for every example of a property test (opening one per example would dominate its time)."""
    store = Store.open(tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb")
    yield store
    store.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["vision_mode", "task", "score", "model", "role"]),
                       st.one_of(st.none(), st.integers(-3, 12), st.text(max_size=8), st.lists(st.integers(),
                                                                                                max_size=2)),
                       max_size=3))
def test_any_result_record_imports_or_fails_clearly(sample, shared_store, tmp_path, patch):
    release = tmp_path / "fuzz"
    release.mkdir(exist_ok=True)
    document = json.loads((sample / "data.json").read_text(encoding="utf-8"))
    document["scenes"][1]["results"][5].update(patch)
    (release / "data.json").write_text(json.dumps(document), encoding="utf-8")
    before = counts(shared_store)
    try:
        plan = AgentVissImporter().plan(release, ImportOptions(dataset_name="fuzz"))
        write_plan(shared_store, plan)
        assert counts(shared_store)["judgment"] >= 95
    except ImportFailed as exc:
        assert "data.json:2" in str(exc)
        assert counts(shared_store) == before
