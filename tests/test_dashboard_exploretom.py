"""ExploreToM's dashboard: model accuracy on the story questions by order, by true or false belief and by story
type, counted by hand and against statsmodels' Wilson interval, with the stimuli behind every row; the same
figures in `thinslice metrics --json`; a live model asked the question, its reply scored by the benchmark's
one rule."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest
from statsmodels.stats.proportion import proportion_confint

from app.benchmarks import score_reply
from app.benchmarks.ncp import score_story, story_answer
from app.cli_metrics import metrics_main
from app.dashboard import compute_dashboard, load_frames
from app.live.requests import build_messages
from storage.queries import stimulus_detail
from storage.story_questions import story_questions
from storage.store import Store
from test_dashboard_exploretom_release import DATASET, MODELS, STORY_TYPES, import_release

ORDER = {-1: "factual", 1: "first order", 2: "second order"}


@pytest.fixture
def release(tmp_path):
    store = Store.open(tmp_path / "exploretom.duckdb")
    dataset_id, questions, answers = import_release(store, tmp_path / "release")
    ids = dict(store.cursor().execute("SELECT external_id, id FROM stimulus WHERE dataset_id = ?",
                                      [dataset_id]).fetchall())
    yield store, dataset_id, questions, answers, ids
    store.close()


def _hand_counts(questions, answers, level_of):
    """(model, level) -> (right, asked, stimulus ids) counted in plain Python."""
    by_id = {q.external_id: q for q in questions}
    counts: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0, set()])
    for qid, model, _answer, right in answers:
        level = level_of(by_id[qid])
        if level is None:
            continue
        cell = counts[(model, level)]
        cell[0] += right
        cell[1] += 1
        cell[2].add(qid)
    return counts


LEVELS = {
    "exploretom.order": ("order", lambda q: ORDER[q.order]),
    "exploretom.belief": ("belief", lambda q: None if q.order == -1 else
                          "false belief" if q.false_belief else "true belief"),
    "exploretom.story_type": ("story_type", lambda q: q.story_type),
}


@pytest.mark.parametrize("key", sorted(LEVELS))
def test_accuracy_and_wilson_intervals_match_a_hand_count(release, key):
    store, dataset_id, questions, answers, ids = release
    column, level_of = LEVELS[key]
    expected = _hand_counts(questions, answers, level_of)
    table = compute_dashboard(load_frames(store, dataset_id)).table(key)
    assert table.frame.height == len(expected)
    assert {(r["model"], r[column]) for r in table.frame.iter_rows(named=True)} == set(expected)
    for i, row in enumerate(table.frame.iter_rows(named=True)):
        right, asked, qids = expected[(row["model"], row[column])]
        assert (row["n_correct"], row["n"]) == (right, asked)
        assert row["accuracy"] == pytest.approx(right / asked)
        low, high = proportion_confint(right, asked, alpha=0.05, method="wilson")
        assert row["ci_low"] == pytest.approx(low, abs=1e-9)
        assert row["ci_high"] == pytest.approx(high, abs=1e-9)
        # a click on the bar lists exactly the questions behind it
        assert table.stimulus_ids[i] == sorted(ids[q] for q in qids)
        assert table.stimulus_count(i) == len(qids)


def test_every_level_of_the_release_has_its_bar(release):
    store, dataset_id, *_ = release
    dashboard = compute_dashboard(load_frames(store, dataset_id))
    assert "No scored predictions" not in " ".join(dashboard.notes)
    order = dashboard.table("exploretom.order").frame
    assert order.filter(order["model"] == MODELS[0])["order"].to_list() == ["factual", "first order", "second order"]
    assert set(dashboard.table("exploretom.story_type").frame["story_type"]) == set(STORY_TYPES)
    assert set(dashboard.table("exploretom.belief").frame["belief"]) == {"true belief", "false belief"}


def test_metrics_json_prints_the_same_figures(release, capsys):
    store, dataset_id, *_ = release
    in_process = compute_dashboard(load_frames(store, dataset_id))
    path = store.path
    store.close()
    assert metrics_main(["--db", str(path), "--dataset", DATASET, "--json"]) == 0
    (dataset,) = json.loads(capsys.readouterr().out)["datasets"]
    printed = {t["key"]: t["rows"] for t in dataset["tables"]}
    for key in LEVELS:
        rows = in_process.table(key).frame.to_dicts()
        assert len(printed[key]) == len(rows)
        for shown, row in zip(printed[key], rows):
            assert shown["model"] == row["model"] and shown[LEVELS[key][0]] == row[LEVELS[key][0]]
            assert (shown["n"], shown["n_correct"]) == (row["n"], row["n_correct"])
            assert shown["ci_low"] == pytest.approx(row["ci_low"]) and shown["ci_high"] == pytest.approx(row["ci_high"])
    assert dataset["engine_answers"]["expected_reproduced"] == dataset["engine_answers"]["questions"]


def test_metrics_text_names_the_tables_and_the_engine_agreement(release, capsys):
    store, *_ = release
    path = store.path
    store.close()
    assert metrics_main(["--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the belief engine reproduces 28 of 28 expected answers" in out
    for title in ("by order", "by true or false belief", "by story type"):
        assert f"ExploreToM question accuracy {title}" in out


def test_attached_answers_are_stored_scored_and_the_story_page_shows_it(release):
    store, _dataset_id, questions, answers, ids = release
    stored = {(sid, model): correct for sid, model, correct in store.cursor().execute(
        "SELECT p.stimulus_id, m.name, p.correct FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id").fetchall()}
    assert stored == {(ids[qid], model): right for qid, model, _answer, right in answers}
    sentence = next(a for a in answers if a[2].startswith("The "))   # "The Basket." is read as "basket"
    page = {q.stimulus_id: q for q in story_questions(store.cursor(), ids[sentence[0]])}
    assert (sentence[1], sentence[2], sentence[3]) in page[ids[sentence[0]]].model_answers


def test_answers_of_an_older_store_without_verdicts_are_scored_when_shown(release):
    store, dataset_id, questions, answers, _ids = release
    before = compute_dashboard(load_frames(store, dataset_id)).table("exploretom.order").frame
    store.cursor().execute("UPDATE prediction SET correct = NULL")
    after = compute_dashboard(load_frames(store, dataset_id)).table("exploretom.order").frame
    assert after.equals(before)


def test_a_live_reply_to_a_story_question_is_scored_by_the_same_rule(release):
    store, _dataset_id, questions, _answers, ids = release
    first = next(q for q in questions if q.false_belief)
    detail = stimulus_detail(store.cursor(), ids[first.external_id])
    # a live model is told the story and asked the question
    system, user = (m["content"] for m in build_messages(detail, "text"))
    assert f"Story:\nStory {first.story} told in prose." in user and f"Question: {first.question}" in user
    assert "believe" in system
    assert score_reply(detail, f"**Answer:** In the {first.expected}.") == (first.expected, True)
    assert score_reply(detail, f"{first.wrong}\nbecause it was moved") == (first.wrong, False)
    assert score_reply(detail, "") == (None, None)


@pytest.mark.parametrize("reply, expected, right", [
    ("Yes, she does.", "yes", True), ("no", "yes", False), ("The Drawer.", "drawer", True),
    ("Answer: kitchen", "kitchen", True), ("in a box", "box", True), ("drawer", "tin", False),
    ("knows about it", "knows about it", True), ("", "tin", None), ("tin", None, None),
])
def test_story_replies_are_read_down_to_their_answer(reply, expected, right):
    assert score_story(reply, expected) is right
    assert story_answer(story_answer(reply)) == story_answer(reply)   # an answer read again stays as it is
