"""EchoMind importer on broken input: every failure names the file (and line) and leaves the store as it was."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from storage.errors import ImportFailed
from app.import_service import plan_import
from storage.importers.common import ImportOptions
from storage.importers.effect import StimuliWouldChange
from storage.importers.writer import write_plan
from storage.store import Store
from test_import_echomind import add_model_outputs, dump, make_release, table_counts

SCRIPTS = "data_synthesis/script_info_synthesis.json"
UNDERSTANDING = "data_synthesis/MCQ/understanding.json"


def plan_of(path: Path, **options):
    return plan_import("echomind", path, ImportOptions(**options))


def rewrite(root: Path, rel: str, change) -> None:
    path = root / rel
    records = json.loads(path.read_text())
    change(records)
    dump(path, records)


def failure(root: Path) -> str:
    with pytest.raises(ImportFailed) as caught:
        plan_of(root)
    return str(caught.value)


def test_truncated_json_names_file_and_line(tmp_path):
    make_release(tmp_path, audio=False)
    text = (tmp_path / SCRIPTS).read_text()
    (tmp_path / SCRIPTS).write_text(text[: len(text) * 2 // 3])
    message = failure(tmp_path)
    assert f"{SCRIPTS}:" in message and "invalid JSON" in message
    line = int(message.split(f"{SCRIPTS}:")[1].split(":")[0])
    assert line == text[: len(text) * 2 // 3].count("\n") + 1


def test_non_utf8_bytes_name_the_file(tmp_path):
    make_release(tmp_path, audio=False)
    raw = (tmp_path / UNDERSTANDING).read_bytes().replace(b"Which best", b"Which b\xe9st", 1)
    (tmp_path / UNDERSTANDING).write_bytes(raw)
    message = failure(tmp_path)
    assert UNDERSTANDING in message and "not UTF-8" in message


@pytest.mark.parametrize("rel, change, field, expected", [
    (SCRIPTS, lambda r: r[1].update(spoken_info=5), "spoken_info", "an attribute of the label set"),
    (SCRIPTS, lambda r: r[1].update(spoken_info=""), "spoken_info", "EchoMind vocal attributes"),
    (SCRIPTS, lambda r: r[0].update(topic=["work"]), "topic", "a string"),
    (SCRIPTS, lambda r: r[2].pop("target_audio_info"), "target_audio_info", "this record has: alternative_audio_info"),
    (SCRIPTS, lambda r: r[2]["neutral_audio_info"].update(neutral_input_audio_file=3),
     "neutral_audio_info.neutral_input_audio_file", "an audio file name"),
    (SCRIPTS, lambda r: r[2].update(case_id="id_1"), "case_id", "not already used on line 2"),
    (SCRIPTS, lambda r: r[0].update(case_id=True), "case_id", "a non-empty string or integer id"),
    (UNDERSTANDING, lambda r: r[0].update(gt="E"), "gt", "one of the options A, B, C"),
    (UNDERSTANDING, lambda r: r[1].update(options_text=7), "options_text", "at least two options"),
    (UNDERSTANDING, lambda r: r[1].pop("question"), "question", "this record has: audio_dir"),
    (UNDERSTANDING, lambda r: r[2].update(question_id=1), "question_id", "not already used"),
])
def test_bad_records_fail_with_file_line_and_field(tmp_path, rel, change, field, expected):
    make_release(tmp_path, audio=False)
    rewrite(tmp_path, rel, change)
    message = failure(tmp_path)
    assert f"{rel}:" in message and f"field '{field}'" in message and expected in message


@pytest.mark.parametrize("rel, change, field, expected", [
    ("outputs/m/asr.json", lambda r: r[0].update(predicted_answer=["x"]), "predicted_answer", "a string"),
    ("outputs/m/asr.json", lambda r: r[0].update(case_id="id_99"), "case_id", "a case id of the synthesis"),
    ("outputs/m/judge_basic.json", lambda r: r[0].update(context_fit_score="great"), "context_fit_score",
     "a score from 1 to 5"),
    ("outputs/m/judge_basic.json", lambda r: r[0].update(voice_type="loud"), "voice_type", "target, neutral"),
    ("outputs/m/conversation_basic.json", lambda r: r[0].pop("ouput_prompt") and r[0].update(model="x"),
     None, None),
    ("outputs/m/mcq_understanding.json", lambda r: r[0].update(question_id=42), "question_id",
     "a question id of MCQ/understanding.json"),
])
def test_bad_output_records_fail_clearly(tmp_path, rel, change, field, expected):
    release = make_release(tmp_path, audio=False)
    add_model_outputs(tmp_path, release, "m")
    rewrite(tmp_path, rel, change)
    if field is None:  # no prompt field, but the file name says 'basic': still imports
        assert plan_of(tmp_path).frame("predictions").height > 0
        return
    message = failure(tmp_path)
    assert f"{rel}:" in message and f"field '{field}'" in message and expected in message


def test_the_same_answers_in_two_files_are_refused(tmp_path):
    release = make_release(tmp_path, audio=False)
    add_model_outputs(tmp_path, release, "m")
    (tmp_path / "outputs" / "m" / "asr_copy.json").write_text((tmp_path / "outputs/m/asr.json").read_text())
    message = failure(tmp_path)
    assert "outputs/m/asr_copy.json:" in message and "already given at outputs/m/asr.json" in message


def test_skip_bad_imports_the_rest_and_lists_what_was_skipped(tmp_path):
    make_release(tmp_path, audio=False)
    rewrite(tmp_path, SCRIPTS, lambda r: r[1].update(spoken_info=["purple voice"]))
    plan = plan_of(tmp_path, skip_bad=True)
    assert plan.frame("stimuli").filter(plan.frame("stimuli")["kind"] == "echomind_script").height == 2
    assert [p.field for p in plan.problems] == ["spoken_info"]


def test_mapped_key_field_must_exist(tmp_path):
    make_release(tmp_path, audio=False)
    with pytest.raises(ImportFailed, match=r"the mapped answer key field \(columns present: audio_dir, audio_name, gt"):
        plan_of(tmp_path, mapping={"label": "solution"})


# -- property: whatever the damage, import correctly or fail clearly, and never half-write -----------------

values = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=4),
                   st.lists(st.integers(), max_size=2), st.sampled_from(["A", "Z", "C. The speaker sounds sad.",
                                                                        "sad-toned expressive voice"]))
record_damage = st.tuples(st.integers(0, 2), st.sampled_from(
    ["case_id", "spoken_info", "topic", "speak_A", "target_audio_info", "question_id", "audio_name",
     "options_text", "gt", "question"]), st.one_of(st.just("<drop>"), values))
file_damage = st.one_of(st.none(), st.tuples(st.sampled_from(["truncate", "byte"]), st.floats(0.05, 0.95)))


_shared: dict[str, object] = {}


def shared_store() -> Store:
    """One store for all examples (opening one per example would dominate the run time), holding the
    undamaged release imported once, so 'unchanged' is checked against a store with content."""
    if "store" not in _shared:
        folder = tempfile.TemporaryDirectory()
        root = Path(folder.name) / "release"
        add_model_outputs(root, make_release(root, audio=False), "m")
        store = Store.open(Path(folder.name) / "t.duckdb")
        write_plan(store, plan_of(root))
        _shared.update(folder=folder, store=store)
    return _shared["store"]  # type: ignore[return-value]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from([SCRIPTS, UNDERSTANDING, "outputs/m/asr.json", "outputs/m/judge_basic.json"]),
       damage=st.lists(record_damage, max_size=3), broken=file_damage)
@example(target=SCRIPTS, damage=[(0, "topic", "<drop>")], broken=None)   # a stored script's title would change
def test_any_damage_imports_or_fails_naming_the_file(target, damage, broken):
    store = shared_store()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "release"
        add_model_outputs(root, make_release(root, audio=False), "m")
        path = root / target
        records = json.loads(path.read_text())
        for index, key, value in damage:
            if value == "<drop>":
                records[index].pop(key, None)
            else:
                records[index][key] = value
        raw = json.dumps(records, indent=2).encode()
        if broken:
            how, where = broken
            cut = int(len(raw) * where)
            raw = raw[:cut] if how == "truncate" else raw[:cut] + b"\xff" + raw[cut:]
        path.write_bytes(raw)

        before = table_counts(store)
        try:
            plan = plan_of(root)  # same folder name, so the same dataset as the undamaged import
            write_plan(store, plan)
        except StimuliWouldChange as exc:
            # the damage changed what a stored script says (its topic is in its title): refused, naming the
            # stimulus and each value it would change, as any import that would rewrite stored stimuli is
            assert target == SCRIPTS and "synthesis/" in str(exc) and "->" in str(exc), str(exc)
            assert table_counts(store) == before
            return
        except ImportFailed as exc:
            # a damaged script id is reported where it is missed: in the outputs that refer to it
            orphaned = target == SCRIPTS and any(key == "case_id" for _i, key, _v in damage)
            assert target in str(exc) or (orphaned and "case_id" in str(exc)), str(exc)
            assert table_counts(store) == before
            return
        assert plan.frame("stimuli").height <= 9
        # a record whose id was changed to another valid id is, rightly, a new stimulus
        renamed = any(key in ("case_id", "question_id") and value != "<drop>" for _i, key, value in damage)
        after = table_counts(store)["stimulus"]
        assert after == before["stimulus"] or (renamed and after > before["stimulus"])
