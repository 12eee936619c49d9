"""Computing, storing and comparing cue measures on a real store of generated dyads and on the sample."""
from __future__ import annotations

import json

import parselmouth
import pytest
import scipy.stats

from app.cli_cues import cues_main
from app.cues.acoustics import PARSELMOUTH_VERSION, PraatSettings
from app.cues.compare import compare_dataset
from app.cues.measures import CueSettings
from app.cues.service import CuesCancelled, compute_cues
from app.cues.stats import cliffs_delta
from storage import cues as cue_store
from storage.importers.writer import write_plan
from storage.store import Store
from tests.cues_dyads import dyad_plan, f0_of

SETTINGS = CueSettings(egemaps=False)


@pytest.fixture
def dyad_store(tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    store = Store.open(tmp_path / "cues.duckdb")
    write_plan(store, dyad_plan(root))
    yield store
    store.close()


def stored(store: Store, external_id: str, subject: str, cue: str) -> float | None:
    rows = store.cursor().execute(
        "SELECT c.value FROM cue_measure c JOIN stimulus s ON s.id = c.stimulus_id WHERE s.external_id = ?"
        " AND c.subject = ? AND c.cue = ?", [external_id, subject, cue]).fetchall()
    assert len(rows) == 1, (external_id, subject, cue, rows)
    return rows[0][0]


def test_compute_stores_each_participants_cues_with_parameters_and_versions(dyad_store):
    [summary] = compute_cues(dyad_store, "Generated dyads", SETTINGS)
    assert summary.measured == 4 and summary.failed == ()
    for i in range(4):
        f0_a, f0_b = f0_of(i)
        assert abs(stored(dyad_store, f"d{i}", "A", "pitch_median_hz") - f0_a) < 0.01 * f0_a
        assert abs(stored(dyad_store, f"d{i}", "B", "pitch_median_hz") - f0_b) < 0.01 * f0_b
        assert stored(dyad_store, f"d{i}", "all", "gap_mean_s") == pytest.approx(0.4, abs=1e-9)
        assert stored(dyad_store, f"d{i}", "B", "gap_count") == 2
        assert stored(dyad_store, f"d{i}", "A", "overlap_mean_s") == pytest.approx(0.2, abs=1e-9)
        assert stored(dyad_store, f"d{i}", "all", "backchannel_count") == 2
    # two annotators each marked i laughs on A's track: i laughs, not 2i
    assert stored(dyad_store, "d3", "A", "label:vocal cues/laugh") == 3
    assert stored(dyad_store, "d3", "all", "label:vocal cues/laugh") == 3
    assert stored(dyad_store, "d0", "A", "gap_mean_s") is None  # undefined is NULL, not NaN
    run = cue_store.latest_run(dyad_store.cursor(), 1)
    assert run.params["praat"]["pitch_floor_hz"] == 75.0 and run.params["conversation"]["min_pause_s"] == 0.2
    assert run.versions["praat-parselmouth"] == PARSELMOUTH_VERSION == parselmouth.VERSION


def test_the_same_settings_measure_once_new_settings_start_a_new_run(dyad_store):
    compute_cues(dyad_store, settings=SETTINGS)
    [again] = compute_cues(dyad_store, settings=SETTINGS)
    assert again.measured == 0 and again.skipped == 4
    other = CueSettings(PraatSettings(pitch_floor_hz=100.0), egemaps=False)
    [changed] = compute_cues(dyad_store, settings=other)
    assert changed.measured == 4
    runs = dyad_store.cursor().execute("SELECT id, params FROM cue_run").fetchall()
    assert len(runs) == 1 and json.loads(runs[0][1])["praat"]["pitch_floor_hz"] == 100.0


def test_cancel_keeps_what_was_measured_and_the_next_run_goes_on(dyad_store):
    seen = []

    def progress(fraction, message):
        seen.append(message)

    with pytest.raises(CuesCancelled, match="1 stimuli measured"):
        compute_cues(dyad_store, settings=SETTINGS, progress=progress, should_cancel=lambda: len(seen) >= 2)
    assert dyad_store.cursor().execute("SELECT count(DISTINCT stimulus_id) FROM cue_measure").fetchall()[0][0] == 1
    [rest] = compute_cues(dyad_store, settings=SETTINGS)
    assert rest.measured == 3 and rest.skipped == 1


def test_compare_sets_cues_against_who_got_it_right(dyad_store):
    compute_cues(dyad_store, settings=SETTINGS)
    result = compare_dataset(dyad_store, 1)
    rows = {(c.who, c.condition, c.cue): c for c in result.comparisons}
    humans = rows[("humans", "pooled", "pitch_mean_hz")]
    # humans got d0 and d1 right (store ids 1 and 2), the model d2 and d3
    assert sorted(humans.right_stimuli) == [1, 2] and sorted(humans.wrong_stimuli) == [3, 4]
    assert humans.delta == pytest.approx(cliffs_delta(humans.right, humans.wrong), abs=1e-12)
    model = rows[("m", "audio", "label:vocal cues/laugh")]
    assert model.right == [2.0, 3.0] and model.wrong == [0.0, 1.0] and model.delta == 1.0
    assert model.rho == pytest.approx(scipy.stats.spearmanr([0, 1, 2, 3], [0, 0, 1, 1]).statistic, abs=1e-9)


def test_the_command_computes_then_compares_as_json(dyad_store, capsys):
    path = str(dyad_store.path)
    dyad_store.close()
    assert cues_main(["compute", "--db", path, "--no-egemaps"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["computed"][0]["measured"] == 4
    assert cues_main(["compare", "--db", path, "--dataset", "Generated dyads", "--json", "--correction", "bh"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [ds] = doc["datasets"]
    assert "Benjamini-Hochberg" in ds["methods"]["correction"] and "Cliff's delta" in ds["methods"]["effect_size"]
    laugh = next(c for c in ds["comparisons"] if c["judge"] == "m · audio" and c["cue"] == "label:vocal cues/laugh")
    assert laugh["right_stimuli"] == ["d2", "d3"] and laugh["delta"] == 1.0
    methods = ds["methods"]
    assert methods["n"]["comparisons"] == len(ds["comparisons"]) and methods["n"]["stimuli"] == 4
    assert methods["n"]["with_a_group_under_5"] == sum(1 for c in ds["comparisons"] if c["flag"] == "group under 5")
    assert methods["parameters"]["conversation"]["min_pause_s"] == 0.2
    assert "mhm" in methods["parameters"]["conversation"]["backchannel_tokens"]
    assert methods["versions"]["praat"] == parselmouth.PRAAT_VERSION and methods["versions"]["thinslice"]
    assert "Newcombe" in methods["effect_size"] and "exact" in methods["test"]
    assert "first word" in methods["turn_taking"] and "pitch_range_st" in methods["cues"]
    assert "channels kept" in methods["audio"]
    assert cues_main(["compare", "--db", path, "--dataset", "Generated dyads", "--methods"]) == 0
    paragraph = capsys.readouterr().out.strip()
    assert "\n" not in paragraph and paragraph.startswith("Cues of Generated dyads (friendbench) were measured with")
    assert f"praat {parselmouth.PRAAT_VERSION}" in paragraph and "min_pause_s 0.2" in paragraph
    assert "Audio: each audio file analysed with its channels kept" in paragraph
    assert f"{methods['n']['comparisons']} comparisons of {methods['n']['cues']} cues" in paragraph
    assert cues_main(["compare", "--db", path, "--dataset", "nope"]) == 1
    assert "no dataset named 'nope'" in capsys.readouterr().err


def test_an_old_store_gains_the_cue_tables_without_loss(tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    # the rows an import writes today, kept in the columns a store of version 6 has
    new = Store.open(tmp_path / "new.duckdb")
    write_plan(new, dyad_plan(root, n=2))
    new.close()
    old = Store.open(tmp_path / "old.duckdb", migrate_to=6)
    cur = old.cursor()
    cur.execute(f"ATTACH '{tmp_path / 'new.duckdb'}' AS new (READ_ONLY)")
    tables = [t for (t,) in cur.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog ="
                                        " current_database() AND table_type = 'BASE TABLE'"
                                        " AND table_name <> 'schema_version'").fetchall()]
    for table in tables:
        columns = ", ".join(c for (c,) in cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database()"
            " AND table_name = ? ORDER BY ordinal_position", [table]).fetchall())
        cur.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM new.{table}")
    cur.execute("DETACH new")
    old.close()
    store = Store.open(tmp_path / "old.duckdb")
    try:
        assert store.cursor().execute("SELECT count(*) FROM stimulus").fetchall()[0][0] == 2
        assert compute_cues(store, settings=SETTINGS)[0].measured == 2
    finally:
        store.close()


def test_the_sample_is_measured_in_seconds_and_echomind_voices_are_contrasted(tmp_path):
    from app.sample import import_sample
    from storage.resources import SAMPLE_DIR
    if not SAMPLE_DIR.exists():
        pytest.skip("bundled sample not present")
    store = Store.open(tmp_path / "sample.duckdb")
    try:
        import_sample(store)
        summaries = compute_cues(store, settings=SETTINGS)
        assert {s.dataset for s in summaries} >= {"FriendBench (sample)", "EchoMind (sample)"}
        assert all(s.failed == () for s in summaries)
        echomind = next(d for d in summaries if d.dataset.startswith("EchoMind"))
        dataset_id = store.cursor().execute("SELECT id FROM dataset WHERE name = ?",
                                            [echomind.dataset]).fetchall()[0][0]
        result = compare_dataset(store, dataset_id)
        whisper = next(v for v in result.voices if v.attribute == "whisper" and v.cue == "voiced_fraction")
        assert whisper.expected == -1 and whisper.as_expected is True
        assert result.recognition and all(c.cue in {v.cue for v in result.voices} for c in result.recognition)
    finally:
        store.close()
