"""Release readers on what real releases hold: ragged CSV rows, an EchoMind attribute outside the taxonomy, a
clone of the EchoMind repository, Seamless metadata whose session ids repeat across vendors, and a
Seamless metadata table given alone. Every command runs through the CLI on a real store."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.cli import dispatch
from tests.conftest import REFERENCE_DATA
from fixtures_store import friendbench_like_plan, make_store
from storage.errors import ImportFailed
from storage.importers.echomind import EchoMindImporter
from storage.tables import read_table
from storage.store import Store
from test_import_echomind import add_model_outputs, dump, make_release

SCRIPTS = "data_synthesis/script_info_synthesis.json"
PARTICIPANT_FILES = "V<vendor>_S<session>_I<interaction>_P<participant>.json"


def info(db: Path, capsys) -> dict:
    capsys.readouterr()
    assert dispatch(["info", "--db", str(db)]) == 0
    return json.loads(capsys.readouterr().out)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = dispatch(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("thinslice:")]


@pytest.fixture
def dyads_store(tmp_path) -> Path:
    db = tmp_path / "s.duckdb"
    make_store(db, friendbench_like_plan(tmp_path, n_stimuli=6)).close()
    return db


# -- the one table reader: a row with fewer or more fields than the header -----------------------------

RESULTS_HEADER = "clip,system,pred,latency_s\n"
MAPPING = ("--map", "stimulus=clip", "--map", "model=system", "--map", "answer=pred", "--map", "latency=latency_s")


@pytest.mark.parametrize("bad_row, found", [("clip-003,newbie,familiar\n", "<3 fields>"),
                                            ("clip-003,newbie,familiar,0.5,extra\n", "<5 fields>")])
def test_a_ragged_results_row_is_refused_with_file_and_line_and_the_store_is_unchanged(
        tmp_path, dyads_store, capsys, bad_row, found):
    results = tmp_path / "results.csv"
    results.write_text(RESULTS_HEADER + "clip-000,newbie,familiar,0.4\nclip-001,newbie,stranger,0.6\n"
                       "clip-002,newbie,familiar,0.7\n" + bad_row + "clip-004,newbie,stranger,0.2\n")
    before = info(dyads_store, capsys)
    code, _, err = run(capsys, "import", "generic", str(results), "--db", str(dyads_store), "--dataset", "Dyads",
                       *MAPPING)
    assert code == 1 and "Traceback" not in err
    assert error_lines(err) == [f"thinslice: Import failed, nothing was written: results.csv:5: found {found}; "
                                "expected 4 fields as in the header"]
    assert info(dyads_store, capsys) == before

    code, out, err = run(capsys, "import", "generic", str(results), "--db", str(dyads_store), "--dataset", "Dyads",
                         *MAPPING, "--skip-bad")
    assert code == 0, err
    report = json.loads(out)
    assert report["skipped"] == [f"results.csv:5: found {found}; expected 4 fields as in the header"]
    counts = info(dyads_store, capsys)["datasets"][0]["counts"]
    assert counts["predictions"] == before["datasets"][0]["counts"]["predictions"] + 4


def test_an_empty_last_field_is_not_a_short_row(tmp_path, dyads_store, capsys):
    results = tmp_path / "results.csv"
    results.write_text(RESULTS_HEADER + "clip-000,newbie,familiar,\nclip-001,newbie,\"stranger, sure\",0.6\n")
    code, out, err = run(capsys, "import", "generic", str(results), "--db", str(dyads_store), "--dataset", "Dyads",
                         *MAPPING)
    assert code == 0, err
    assert json.loads(out)["skipped"] == [] and json.loads(out)["written"]["predictions"] == 2


# -- EchoMind: an attribute the taxonomy lacks ----------------------------------------------------------

def test_an_attribute_outside_the_taxonomy_is_imported_flagged_and_listed(tmp_path, capsys):
    release = tmp_path / "release"
    make_release(release, audio=False)
    scripts = json.loads((release / SCRIPTS).read_text())
    scripts[1]["spoken_info"] = "sound of a cat purring"
    dump(release / SCRIPTS, scripts)
    db = tmp_path / "e.duckdb"
    code, out, err = run(capsys, "import", "echomind", str(release), "--db", str(db), "--create")
    assert code == 0, err
    report = json.loads(out)
    listed = [n for n in report["notes"] if "not in the taxonomy" in n]
    assert len(listed) == 1 and "'sound of a cat purring' (1 script, first at " \
        f"{SCRIPTS}:" in listed[0]
    assert report["written"]["stimuli"] >= 3

    store = Store.open(db, read_only=True)
    try:
        cur = store.cursor()
        label = cur.execute("SELECT l.description, l.parent FROM label l JOIN label_set s ON s.id = l.label_set_id"
                            " WHERE s.name = 'EchoMind vocal attributes' AND l.name = 'sound of a cat purring'"
                            ).fetchall()
        stimulus = cur.execute("SELECT ground_truth, meta FROM stimulus WHERE external_id = 'synthesis/id_2'"
                               ).fetchone()
        known = cur.execute("SELECT description FROM label WHERE name = 'sad voice'").fetchone()[0]
        labels_before = cur.execute("SELECT count(*) FROM label").fetchone()[0]
    finally:
        store.close()
    assert len(label) == 1 and label[0][0].startswith("not in the taxonomy") and label[0][1] is None
    assert stimulus[0] == "sound of a cat purring" and json.loads(stimulus[1])["in_taxonomy"] is False
    assert "not in the taxonomy" not in (known or "")

    # a second import of the same release adds no second label
    before = info(db, capsys)
    code, _, err = run(capsys, "import", "echomind", str(release), "--db", str(db))
    assert code == 0, err
    assert info(db, capsys) == before
    store = Store.open(db, read_only=True)
    try:
        assert store.cursor().execute("SELECT count(*) FROM label").fetchone()[0] == labels_before
    finally:
        store.close()


# -- EchoMind: a clone of the release repository ---------------------------------------------------------

def leaderboard(models: list[str]) -> dict:
    """A leaderboard in the shape of the project page's Demo/Data files (missing values as "-")."""
    return {"leaderboardData": [{"info": {"name": m, "size": "7B", "type": "open", "link": ""},
                                 "Understanding": {"WER": 10.5 + i, "SemSim": "-", "Acc": 60.0 + i}}
                                for i, m in enumerate(models)]}


def make_clone(root: Path, with_dataset: bool = True, reference: Path | None = None) -> int:
    """A clone laid out as the benchmark's scripts expect: dataset/data_synthesis, output/output_synthesis,
    Demo/Data leaderboards, plus code and web assets that are not results. Returns the predictions count."""
    expected = 0
    if with_dataset:
        release = make_release(root / "dataset")
        expected = add_model_outputs(root, release, "gpt4o", layout="release")
    boards = root / "Demo" / "Data"
    boards.mkdir(parents=True)
    if reference is not None:
        for name in ("leaderboard_data_1.json", "leaderboard_data_2.json"):
            shutil.copy(reference / name, boards / name)
    else:
        dump(boards / "leaderboard_data_1.json", leaderboard(["GPT-4o-Audio", "Qwen2.5-Omni"]))
    dump(root / "src" / "eval-slm" / "model" / "some-model" / "config.json", {"hidden_size": 8})
    dump(root / "Demo" / "Static" / "settings.json", {"theme": "light"})
    (root / "Demo" / "Audio").mkdir(parents=True)
    soundfile.write(str(root / "Demo" / "Audio" / "id_1_sad_work_target.wav"), np.zeros(240, np.float32), 24000)
    return expected


def test_a_clone_root_is_found_by_its_parts_and_the_report_says_what_was_found(tmp_path, capsys):
    clone = tmp_path / "EchoMind"
    expected = make_clone(clone)
    db = tmp_path / "e.duckdb"
    code, out, err = run(capsys, "import", "auto", str(clone), "--db", str(db), "--create")
    assert code == 0, err
    report = json.loads(out)
    assert report["kind"] == "echomind"
    assert report["written"]["predictions"] == expected and report["written"]["aggregate_results"] == 6
    found = [n for n in report["notes"] if n.startswith("release clone EchoMind:")]
    assert found == ["release clone EchoMind: found dataset/data_synthesis (3 scripts, 6 MCQs); 5 output files in "
                     "output/ and outputs/; 1 leaderboard in Demo/Data/"]
    # the code and web assets of the clone are not read as results, so nothing was skipped with a note
    assert not [n for n in report["notes"] if "skipped" in n]


def test_a_clone_without_its_data_says_where_the_data_goes(tmp_path, capsys):
    clone = tmp_path / "EchoMind"
    make_clone(clone, with_dataset=False)
    code, out, err = run(capsys, "import", "echomind", str(clone), "--dry-run")
    assert code == 0, err
    report = json.loads(out)
    assert report["counts"]["aggregate_results"] == 6 and report["counts"]["stimuli"] == 0
    note = next(n for n in report["notes"] if n.startswith("release clone"))
    assert "no data_* folder in dataset/" in note and "data_synthesis/ folders in dataset/" in note


def test_a_clone_with_the_real_leaderboards(reference_data, tmp_path, capsys):
    clone = tmp_path / "EchoMind"
    make_clone(clone, reference=reference_data / "echomind")
    code, out, err = run(capsys, "import", "auto", str(clone), "--dry-run")
    assert code == 0, err
    report = json.loads(out)
    assert report["kind"] == "echomind"
    boards = [json.loads((reference_data / "echomind" / n).read_text())["leaderboardData"]
              for n in ("leaderboard_data_1.json", "leaderboard_data_2.json")]
    assert report["counts"]["aggregate_results"] == sum(
        len(m) for b in boards for e in b for g, m in e.items() if g != "info")
    assert any("2 leaderboards in Demo/Data/" in n for n in report["notes"])


# -- Seamless Interaction: vendor and session together, and a metadata table alone -------------------------

def seamless_participant(folder: Path, pid: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(folder / f"{pid}.wav"), np.zeros(2000, np.int16), 1000, subtype="PCM_16")
    words = [{"word": "hello", "start": 0.1, "end": 0.5, "score": 0.9}]
    (folder / f"{pid}.json").write_text(json.dumps({
        "id": pid, "metadata:transcript": [{"transcript": "hello", "start": 0.1, "end": 0.5, "words": words}],
        "metadata:vad": [{"start": 0.1, "end": 0.5}]}), encoding="utf-8")


def seamless_corpus(root: Path, relationships: str, session: str) -> dict[str, str]:
    """Two conversations with the same session id at two vendors; returns interaction key -> vendor."""
    pairs = {f"V00_S{session}_I00000001": "V00", f"V03_S{session}_I00000002": "V03"}
    for key in pairs:
        for participant in ("P0001", "P0002A"):
            seamless_participant(root / "improvised", f"{key}_{participant}")
    (root / "relationships.csv").write_text(relationships, encoding="utf-8")
    (root / "participants.csv").write_text(
        "extraversion_raw,agreeableness_raw,conscientiousness_raw,neuroticism_raw,openness_raw,vendor_id,"
        "participant_id\n4.5,4.0,3.5,2.0,4.0,00,0001\n1.5,2.0,2.5,3.0,3.5,03,0001\n", encoding="utf-8")
    return pairs


def stimuli_of(db: Path) -> dict[str, tuple[str, dict]]:
    store = Store.open(db, read_only=True)
    try:
        rows = store.cursor().execute("SELECT external_id, ground_truth, meta FROM stimulus").fetchall()
    finally:
        store.close()
    return {r[0]: (r[1], json.loads(r[2])) for r in rows}


def test_seamless_metadata_joins_on_vendor_and_session_together(tmp_path, capsys):
    root = tmp_path / "seamless"
    pairs = seamless_corpus(root, "vendor_id,session_id,relationship,relationship_detail\n"
                                  "V00,1805,stranger,stranger\nV03,1805,familiar,coworkers\n", "1805")
    db = tmp_path / "s.duckdb"
    code, _, err = run(capsys, "import", "auto", str(root), "--db", str(db), "--create")
    assert code == 0, err
    stimuli = stimuli_of(db)
    assert set(stimuli) == set(pairs)
    assert stimuli["V00_S1805_I00000001"][0] == "stranger" and stimuli["V03_S1805_I00000002"][0] == "familiar"
    assert stimuli["V03_S1805_I00000002"][1]["relationship_detail"] == "coworkers"
    # participants.csv writes the vendor without its V; participant 0001 is a different person at each vendor
    assert stimuli["V00_S1805_I00000001"][1]["traits"]["A"]["extraversion"] == 4.5
    assert stimuli["V03_S1805_I00000002"][1]["traits"]["A"]["extraversion"] == 1.5


def test_seamless_join_with_the_real_relationships(reference_data, tmp_path, capsys):
    lines = (reference_data / "seamless-interaction" / "relationships.csv").read_text().splitlines()
    by_session: dict[str, dict[str, str]] = {}
    for line in lines[1:]:
        vendor, session, relation, _detail = line.split(",")
        by_session.setdefault(session, {})[vendor] = relation
    session = next(s for s, v in sorted(by_session.items())
                   if {"V00", "V03"} <= set(v) and v["V00"] != v["V03"])
    root = tmp_path / "seamless"
    seamless_corpus(root, "\n".join(lines) + "\n", session)
    db = tmp_path / "s.duckdb"
    code, _, err = run(capsys, "import", "seamless", str(root), "--db", str(db), "--create")
    assert code == 0, err
    stimuli = stimuli_of(db)
    assert stimuli[f"V00_S{session}_I00000001"][0] == by_session[session]["V00"]
    assert stimuli[f"V03_S{session}_I00000002"][0] == by_session[session]["V03"]


@pytest.mark.parametrize("kind", ["auto", "seamless"])
def test_relationships_alone_says_in_one_line_what_else_is_needed(tmp_path, dyads_store, capsys, kind):
    folder = tmp_path / "metadata"
    folder.mkdir()
    source = REFERENCE_DATA / "seamless-interaction"
    if (source / "relationships.csv").is_file():  # the real file where present, else one in its shape
        shutil.copy(source / "relationships.csv", folder / "relationships.csv")
    else:
        (folder / "relationships.csv").write_text("vendor_id,session_id,relationship,relationship_detail\n"
                                                  "V03,1805,familiar,coworkers\nV00,1805,stranger,stranger\n")
    before = info(dyads_store, capsys)
    for target in (folder / "relationships.csv", folder):
        code, _, err = run(capsys, "import", kind, str(target), "--db", str(dyads_store))
        assert code == 1 and "Traceback" not in err
        (line,) = error_lines(err)
        assert "only the metadata (relationships.csv)" in line and PARTICIPANT_FILES in line and ".wav" in line
        assert info(dyads_store, capsys) == before


def test_a_folder_merely_named_output_is_no_clone(tmp_path):
    dump(tmp_path / "output" / "results.json", [{"clip": "a", "answer": "familiar"}])
    dump(tmp_path / "dataset" / "train.json", [{"clip": "a"}])
    assert EchoMindImporter().detect(tmp_path) == 0.0
    clone = tmp_path / "EchoMind"
    make_clone(clone, with_dataset=False)
    assert EchoMindImporter().detect(clone) >= 0.9


def test_a_short_row_with_a_quoted_delimiter_is_still_short(tmp_path):
    path = tmp_path / "metadata.csv"
    path.write_text('clip,site,note\nc1,V00,"fine, thanks"\nc2,"V03, Texas"\nc3,V01,\n')
    with pytest.raises(ImportFailed, match=r"metadata\.csv:3: found <2 fields>; expected 3 fields as in the header"):
        read_table(path)
