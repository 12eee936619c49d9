"""A live model answering ExploreToM story questions through the real client against a local server: it is
asked the story and the question, its replies are scored by the benchmark's rule, and the dashboard shows its
run beside the imported ones."""
from __future__ import annotations

import pytest

from app.dashboard import compute_dashboard, load_frames
from app.live import LiveSettings
from app.live.service import AskOptions, LiveService
from live_server import Reply, ScriptedServer
from storage.store import Store
from test_dashboard_exploretom_release import import_release

KEY = "sk-local-test"


@pytest.fixture
def release(tmp_path, monkeypatch):
    monkeypatch.setenv("THINSLICE_TEST_KEY", KEY)
    store = Store.open(tmp_path / "exploretom.duckdb")
    dataset_id, questions, _answers = import_release(store, tmp_path / "release", n_stories=2)
    ids = dict(store.cursor().execute("SELECT external_id, id FROM stimulus").fetchall())
    yield store, dataset_id, questions, ids
    store.close()


def test_live_answers_are_asked_scored_and_counted(release):
    store, dataset_id, questions, ids = release
    asked = [q for q in questions if q.order == 1]          # first-order questions of both stories
    replies = {q.question: (f"In the {q.expected}." if q.false_belief else q.wrong) for q in asked}

    def reply(body):
        user = body["messages"][-1]["content"]
        return Reply(text=next(text for question, text in replies.items() if question in user))

    service = LiveService(store)
    with ScriptedServer(reply) as server:
        options = AskOptions(LiveSettings(base_url=server.base_url, model="Tern 3",
                                          api_key_env="THINSLICE_TEST_KEY"), timeout_s=10.0, stream=False)
        results = [service.ask(service.detail(ids[q.external_id]), options) for q in asked]
    assert [(r.answer, r.correct) for r in results] == [
        (q.expected, True) if q.false_belief else (q.wrong, False) for q in asked]
    table = compute_dashboard(load_frames(store, dataset_id)).table("exploretom.belief").frame
    live = {r["belief"]: (r["n_correct"], r["n"]) for r in table.iter_rows(named=True) if r["model"] == "Tern 3 (live)"}
    assert live == {"false belief": (2, 2), "true belief": (0, 2)}
