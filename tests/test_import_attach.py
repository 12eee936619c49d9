"""A table of one model's answers added to a published benchmark adds those answers and moves nothing else.

Each test compares the whole store (every table, every row) before and after the import: only the rows the
import was asked to add may appear, and nothing stored may change unless the user asked to replace it.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.dashboard import dashboard_json
from app.import_service import run_import
from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.effect import StimuliWouldChange
from storage.store import Store
from store_rows import changed_rows, store_rows

ROOT = Path(__file__).resolve().parents[1]
FRIENDBENCH = "FriendBench (sample)"
STORIES = "ExploreToM stories (sample)"
ANSWERS_MAP = {"stimulus": "clip", "model": "model", "answer": "answer"}


def write_csv(path: Path, header: list[str], rows: list[tuple]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def thinslice(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          timeout=180)


def stimulus(store: Store, dataset: str, external_id: str) -> tuple:
    return store.cursor().execute(
        "SELECT s.kind, s.ground_truth, s.title, s.text, CAST(s.meta AS VARCHAR),"
        " (SELECT count(*) FROM media m WHERE m.stimulus_id = s.id) FROM stimulus s JOIN dataset d"
        " ON d.id = s.dataset_id WHERE d.name = ? AND s.external_id = ?", [dataset, external_id]).fetchone()


def accuracy(store: Store, dataset: str, model: str, modality: str) -> tuple[int, int]:
    return store.cursor().execute(
        "SELECT count(*) FILTER (WHERE p.correct), count(p.correct) FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id JOIN dataset d ON d.id = r.dataset_id"
        " WHERE d.name = ? AND m.name = ? AND r.modality = ?", [dataset, model, modality]).fetchone()


def test_a_models_answers_attach_to_stored_clips_and_change_nothing_else(sample_store_copy, tmp_path):
    store = sample_store_copy
    answers = write_csv(tmp_path / "answers.csv", ["clip", "model", "answer"],
                        [("fb_001", "newmodel", "familiar"), ("fb_002", "newmodel", "stranger")])
    clips = {c: stimulus(store, FRIENDBENCH, c) for c in ("fb_001", "fb_002")}
    atlas = accuracy(store, FRIENDBENCH, "atlas-7b", "audio")
    dashboard = dashboard_json(store, FRIENDBENCH)["datasets"][0]
    before = store_rows(store)

    summary = run_import(store, "generic", answers, ImportOptions(dataset_name=FRIENDBENCH, mapping=ANSWERS_MAP))

    assert summary.effect.sentence() == "2 predictions added to 2 existing stimuli, 0 new stimuli, 0 stimuli changed"
    assert {c: stimulus(store, FRIENDBENCH, c) for c in clips} == clips
    assert clips["fb_001"][0] == "dyad" and clips["fb_001"][5] > 0
    assert accuracy(store, FRIENDBENCH, "atlas-7b", "audio") == atlas
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"model", "run", "prediction"}
    assert all(not gone for gone, _came in changes.values())   # only added rows, none changed or removed
    assert [row[1] for row in changes["model"][1]] == ["newmodel"]
    # the answers are the benchmark's: scored by FriendBench's rule against the stored truth (fb_001 is
    # familiar, fb_002 stranger), not left unscored as a generic table's would be
    assert sorted((row[4], row[5]) for row in changes["prediction"][1]) == [("familiar", True), ("stranger", True)]
    after = dashboard_json(store, FRIENDBENCH)["datasets"][0]
    # every figure of the models that were there is as it was (atlas-7b audio: 3 of 8 right)
    assert next(r for r in dashboard["tables"][0]["rows"] if r["model"] == "atlas-7b"
                and r["modality"] == "audio")["accuracy"] == 3 / 8
    for table in dashboard["tables"]:
        new = next(t for t in after["tables"] if t["title"] == table["title"])
        assert [r for r in new["rows"] if r.get("model") != "newmodel"] == table["rows"]
    assert [r["accuracy"] for r in after["tables"][0]["rows"] if r["model"] == "newmodel"] == [1.0]


def test_answers_to_stored_story_questions_keep_their_truth_and_are_scored(sample_store_copy, tmp_path):
    store = sample_store_copy
    questions = store.cursor().execute(
        "SELECT s.external_id, s.ground_truth FROM stimulus s JOIN dataset d ON d.id = s.dataset_id"
        " WHERE d.name = ? ORDER BY 1", [STORIES]).fetchall()
    assert len(questions) == 10
    rows = [(qid, "newmodel", truth if i % 2 == 0 else "nowhere") for i, (qid, truth) in enumerate(questions)]
    answers = write_csv(tmp_path / "story_answers.csv", ["clip", "model", "answer"], rows)
    before = store_rows(store)

    summary = run_import(store, "generic", answers, ImportOptions(dataset_name=STORIES, mapping=ANSWERS_MAP))

    assert summary.effect.existing_stimuli == 10 and summary.effect.new_stimuli == 0
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"model", "run", "prediction"}
    assert all(not gone for gone, _came in changes.values())
    assert store.cursor().execute(
        "SELECT s.external_id, s.ground_truth FROM stimulus s JOIN dataset d ON d.id = s.dataset_id"
        " WHERE d.name = ? ORDER BY 1", [STORIES]).fetchall() == questions
    verdicts = sorted(row[5] for row in changes["prediction"][1])
    assert verdicts == [False] * 5 + [True] * 5


def test_a_table_stating_a_different_truth_is_refused_with_the_differences_unless_asked(sample_store_copy,
                                                                                         tmp_path):
    store = sample_store_copy
    truths = write_csv(tmp_path / "truths.csv", ["clip", "truth"],
                       [("fb_001", "stranger"), ("fb_002", "familiar"), ("fb_003", "familiar")])
    options = dict(dataset_name=FRIENDBENCH, mapping={"stimulus": "clip", "label": "truth"})
    before = store_rows(store)
    with pytest.raises(StimuliWouldChange) as refused:
        run_import(store, "generic", truths, ImportOptions(**options))
    message = str(refused.value)
    assert "\n" not in message
    assert "fb_001 (truths.csv) ground_truth: 'familiar' -> 'stranger'" in message
    assert "fb_002 (truths.csv) ground_truth: 'stranger' -> 'familiar'" in message
    assert "fb_003" not in message   # stated, but equal to what is stored
    assert "--replace-stimuli" in message
    assert changed_rows(before, store_rows(store)) == {}

    run_import(store, "generic", truths, ImportOptions(**options, replace_stimuli=True))
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"stimulus"}
    gone, came = changes["stimulus"]
    assert sorted(r[2] for r in gone) == sorted(r[2] for r in came) == ["fb_001", "fb_002"]
    # only the stated field changed; kind, title, text and metadata are as they were
    for old in gone:
        new = next(r for r in came if r[0] == old[0])
        assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [4]


def test_more_than_ten_differences_are_shown_as_ten_and_a_count(tmp_path):
    store = Store.open(tmp_path / "s.duckdb")
    first = write_csv(tmp_path / "a.csv", ["clip", "truth"], [(f"c{i:02d}", "yes") for i in range(14)])
    second = write_csv(tmp_path / "b.csv", ["clip", "truth"], [(f"c{i:02d}", "no") for i in range(14)])
    mapping = {"stimulus": "clip", "label": "truth"}
    run_import(store, "generic", first, ImportOptions(dataset_name="d", mapping=mapping))
    with pytest.raises(StimuliWouldChange, match=r"14 stored stimuli \(14 values\).*c09 .*; and 4 more\. "):
        run_import(store, "generic", second, ImportOptions(dataset_name="d", mapping=mapping))


def test_new_ids_become_generic_stimuli_and_stimuli_exist_refuses_them(sample_store_copy, tmp_path):
    store = sample_store_copy
    answers = write_csv(tmp_path / "answers.csv", ["clip", "model", "answer"],
                        [("fb_001", "newmodel", "familiar"), ("fb_999", "newmodel", "stranger")])
    before = store_rows(store)
    with pytest.raises(ImportFailed, match=r"answers.csv: field 'stimulus' found 1 ids not in the dataset \('fb_999'\)"):
        run_import(store, "generic", answers, ImportOptions(dataset_name=FRIENDBENCH, mapping=ANSWERS_MAP,
                                                            extra={"stimuli_exist": True}))
    assert changed_rows(before, store_rows(store)) == {}
    summary = run_import(store, "generic", answers, ImportOptions(dataset_name=FRIENDBENCH, mapping=ANSWERS_MAP))
    assert summary.effect.sentence() == "2 predictions added to 1 existing stimuli, 1 new stimuli, 0 stimuli changed"
    assert stimulus(store, FRIENDBENCH, "fb_999")[:3] == ("generic", None, None)
    changes = changed_rows(before, store_rows(store))
    assert set(changes) == {"model", "run", "prediction", "stimulus"}
    assert all(not gone for gone, _came in changes.values())


def test_reimporting_every_release_of_the_sample_changes_no_row(sample_store_copy):
    from app.sample import import_sample
    store = sample_store_copy
    before = store_rows(store)
    import_sample(store)
    assert changed_rows(before, store_rows(store)) == {}


def test_the_command_line_documents_the_options_and_its_dry_run_says_what_would_change(sample_store_file, tmp_path):
    helped = thinslice("import", "--help")
    assert "--replace-stimuli" in helped.stdout and "stimuli_exist=true" in helped.stdout
    answers = write_csv(tmp_path / "answers.csv", ["clip", "model", "answer"],
                        [("fb_001", "newmodel", "familiar"), ("fb_002", "newmodel", "stranger")])
    dry = thinslice("import", "generic", str(answers), "--db", str(sample_store_file), "--dataset", FRIENDBENCH,
                    "--map", "stimulus=clip", "--map", "model=model", "--map", "answer=answer", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert report["written"] is False
    assert report["effect"]["summary"] == "2 predictions added to 2 existing stimuli, 0 new stimuli, 0 stimuli changed"
    assert report["effect"]["summary"] in dry.stderr


def test_a_release_reimported_with_a_changed_truth_is_refused_then_replaces_only_that_clip(tmp_path):
    import shutil
    from storage.resources import SAMPLE_DIR
    release = tmp_path / "friendbench"
    shutil.copytree(SAMPLE_DIR / "friendbench", release)
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "friendbench", release, ImportOptions(dataset_name="FB"))
    metadata = release / "validation" / "data" / "metadata.csv"
    lines = metadata.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[1].startswith("fb_001,familiar,")
    lines[1] = lines[1].replace("fb_001,familiar,", "fb_001,stranger,", 1)
    metadata.write_text("".join(lines), encoding="utf-8")
    before = store_rows(store)

    with pytest.raises(StimuliWouldChange, match=r"fb_001 \(validation/data/metadata.csv:2\) ground_truth: 'familiar' -> 'stranger'"):
        run_import(store, "friendbench", release, ImportOptions(dataset_name="FB"))
    assert changed_rows(before, store_rows(store)) == {}

    summary = run_import(store, "friendbench", release, ImportOptions(dataset_name="FB", replace_stimuli=True))
    assert summary.effect.changed_stimuli == ["fb_001"]
    changes = changed_rows(before, store_rows(store))
    gone, came = changes.pop("stimulus")
    assert [row[2] for row in gone] == [row[2] for row in came] == ["fb_001"]
    # the clip's answers and ratings are scored again against its new truth; nothing of another clip moves
    fb_001 = gone[0][0]
    for table in ("prediction", "human_rating", "model_outcome"):
        if table in changes:
            column = 2 if table == "prediction" else 1
            assert {row[column] for side in changes.pop(table) for row in side} == {fb_001}
    assert changes == {}


def test_an_import_says_on_the_change_channel_that_the_datasets_changed(sample_store_copy, tmp_path):
    from app.changes import ChangeChannel, Topic
    channel = ChangeChannel()
    heard = []
    channel.subscribe([Topic.DATASETS], heard.append)
    answers = write_csv(tmp_path / "answers.csv", ["clip", "model", "answer"], [("fb_001", "newmodel", "familiar")])
    summary = run_import(sample_store_copy, "generic", answers,
                         ImportOptions(dataset_name=FRIENDBENCH, mapping=ANSWERS_MAP), changes=channel)
    assert [(c.topics, c.dataset_id) for c in heard] == [(frozenset({Topic.DATASETS}), summary.dataset_id)]
