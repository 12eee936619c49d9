"""Live answers that are never half-true, against a local server: a cut-off stream, a huge answer, an
endpoint that echoes the key, and a batch for a second model (Qt-free, through the service the panel uses)."""
from __future__ import annotations

import traceback

import pytest

from app.changes import Topic
from app.live import AnswerTooLarge, LiveSettings, ServerError, StreamCutOff, scrub_secrets
from app.live.service import AskOptions, LiveService
from fixtures_store import friendbench_like_plan, make_store
from live_server import Reply, ScriptedServer
from storage import queries

SECRET = "sk-live-test-0123456789abcdef"
COMPLETE = ("They laugh at each other's jokes and finish each other's sentences, so I am sure that they are "
            "familiar with each other.")  # 144 characters, as in the report
LIVE_PREDICTIONS = ("SELECT p.stimulus_id, p.raw_output, p.answer, p.correct FROM prediction p"
                    " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id WHERE r.is_live"
                    " AND m.name = ? ORDER BY p.stimulus_id")


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("THINSLICE_TEST_KEY", SECRET)
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4, models=("alpha",)))
    ids = [r[0] for r in store.cursor().execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    service = LiveService(store)
    changes = []
    service.channel.subscribe(list(Topic), changes.append)
    yield service, store, ids, changes
    store.close()


def _options(url: str, model: str = "scripted-model", **kw) -> AskOptions:
    return AskOptions(LiveSettings(base_url=url, model=model, api_key_env="THINSLICE_TEST_KEY"), timeout_s=5.0,
                      modality="text", **kw)


def _all_text(store) -> str:
    """Every text value in every table, to look for a leaked key."""
    cur = store.cursor()
    tables = [r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
    return "\n".join(str(row) for t in tables for row in cur.execute(f"SELECT * FROM {t}").fetchall())


def test_a_cut_off_stream_is_a_failed_attempt_and_the_complete_answer_stays(env):
    service, store, ids, changes = env
    detail = service.detail(ids[0])
    script = [Reply(text=COMPLETE, chunk_size=8), Reply(text=COMPLETE, chunk_size=8, cut_after=8)]
    with ScriptedServer(script) as server:
        first = service.ask(detail, _options(server.base_url))
        assert first.answer == "familiar" and first.prediction_id is not None
        with pytest.raises(StreamCutOff) as cut:
            service.ask(detail, _options(server.base_url))
    assert cut.value.partial_text == COMPLETE[:64] and "closed the stream before the answer was finished" in str(cut.value)
    cur = store.cursor()
    # the complete answer is still the one stored and scored for this stimulus and model
    assert cur.execute(LIVE_PREDICTIONS, ["scripted-model"]).fetchall() == [
        (ids[0], COMPLETE, "familiar", detail.ground_truth == "familiar")]
    [(status, partial, reason, model)] = cur.execute(
        "SELECT status, partial_output, reason, model FROM live_failure").fetchall()
    assert (status, partial, model) == ("cut_off", COMPLETE[:64], "scripted-model") and "64 characters" in reason
    # an answer was published for the table and the dashboard; the failed attempt only for the detail
    assert changes[0].topics == {Topic.ROWS, Topic.FACETS, Topic.METRICS, Topic.DETAIL}
    assert changes[-1].topics == {Topic.DETAIL} and changes[-1].stimulus_ids == {ids[0]}


def test_a_cut_off_first_answer_is_not_stored_or_scored(env):
    service, store, ids, _changes = env
    with ScriptedServer([Reply(text=COMPLETE, chunk_size=8, cut_after=3)]) as server:
        with pytest.raises(StreamCutOff):
            service.ask(service.detail(ids[1]), _options(server.base_url))
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM run WHERE is_live").fetchall() == [(0,)]
    assert cur.execute("SELECT status, length(partial_output) FROM live_failure").fetchall() == [("cut_off", 24)]


def test_a_4_mb_answer_stops_at_the_size_limit(env):
    service, store, ids, _changes = env
    huge = ("word " * 13 + "\n") * (4 * 1024 * 1024 // 66)
    pieces = []
    with ScriptedServer([Reply(text=huge, chunk_size=4096)] * 2) as server:
        with pytest.raises(AnswerTooLarge) as too_large:
            service.ask(service.detail(ids[0]), _options(server.base_url), on_delta=pieces.append)
        # the stream was left at the limit: far fewer frames were read than the server had to send
        assert len("".join(pieces)) <= 256 * 1024 and len(too_large.value.partial_text) == 256 * 1024
        with pytest.raises(AnswerTooLarge):
            service.ask(service.detail(ids[0]), _options(server.base_url, stream=False))
    assert "256 KB" in str(too_large.value)
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM prediction p JOIN run r ON r.id = p.run_id WHERE r.is_live"
                       ).fetchall() == [(0,)]
    assert cur.execute("SELECT status, length(partial_output) FROM live_failure ORDER BY id").fetchall() == [
        ("too_large", 256 * 1024), ("too_large", 256 * 1024)]


def test_the_size_limit_is_settable(env):
    service, store, ids, _changes = env
    text = "familiar " * 40_000   # 360 KB
    with ScriptedServer([Reply(text=text, chunk_size=8192)]) as server:
        result = service.ask(service.detail(ids[0]), _options(server.base_url, max_answer_bytes=1024 * 1024))
    assert result.text == text and result.prediction_id is not None


def test_an_echoed_authorization_header_never_shows_the_key(env):
    service, store, ids, _changes = env
    with ScriptedServer([Reply(kind="http_error", status=401, text="Incorrect API key provided",
                               echo_authorization=True)] * 2) as server:
        for stream in (False, True):
            with pytest.raises(ServerError) as refused:
                service.ask(service.detail(ids[0]), _options(server.base_url, stream=stream))
            message = str(refused.value)
            assert "HTTP 401" in message and "Incorrect API key" in message
            assert SECRET not in message and "sk-live" not in message and "[hidden]" in message
            # nor in a traceback someone might log: the client's own error (which echoes it) is not chained
            assert SECRET not in "".join(traceback.format_exception(refused.value))
        assert server.headers[0]["authorization"] == f"Bearer {SECRET}"   # the key was sent, only never shown
    assert SECRET not in _all_text(store)


def test_the_scrubber_hides_every_credential_shape():
    text = ('Authorization: Bearer sk-abc123456789 / {"api_key": "k-987654321"} / x-api-key=zzzzzzzz / '
            'token sk-proj-ABCDEFGH12345678 / Basic dXNlcjpwYXNz')
    shown = scrub_secrets(text)
    for secret in ("sk-abc123456789", "k-987654321", "zzzzzzzz", "ABCDEFGH12345678", "dXNlcjpwYXNz"):
        assert secret not in shown
    assert scrub_secrets("HTTP 500: model crashed after 4096 tokens") == "HTTP 500: model crashed after 4096 tokens"


def test_a_batch_for_a_second_model_answers_every_stimulus(env):
    service, store, ids, _changes = env
    with ScriptedServer(lambda body: Reply(text="familiar"), max_requests=100) as server:
        first = service.run_batch(ids, _options(server.base_url, model="model-a"), workers=2)
        assert len(first.results) == len(ids) and first.skipped == 0
        second = service.run_batch(ids, _options(server.base_url, model="model-b"), workers=2)
        assert len(second.results) == len(ids) and second.skipped == 0 and not second.errors
        again = service.run_batch(ids, _options(server.base_url, model="model-b"), workers=2)
        assert again.skipped == len(ids) and not again.results
        assert len(server.requests) == 2 * len(ids)
    cur = store.cursor()
    for model in ("model-a", "model-b"):
        assert [r[0] for r in cur.execute(LIVE_PREDICTIONS, [model]).fetchall()] == ids


def test_a_batch_skips_only_complete_answers(env):
    service, store, ids, _changes = env
    script = [Reply(text=COMPLETE, chunk_size=8, cut_after=2)]
    with ScriptedServer(script) as server:
        with pytest.raises(StreamCutOff):
            service.ask(service.detail(ids[0]), _options(server.base_url))
    with ScriptedServer(lambda body: Reply(text="stranger")) as server:
        report = service.run_batch(ids, _options(server.base_url))
    assert len(report.results) == len(ids) and report.skipped == 0   # the failed attempt is not an answer
    assert queries.stimulus_detail(store.cursor(), ids[0]).predictions


def test_an_ncp_attempt_whose_stream_is_cut_off_is_kept_as_failed(tmp_path):
    import json

    from app.import_service import run_import
    from live_server import tool_call
    from storage.importers.common import ImportOptions
    from storage.store import Store

    root = tmp_path / "ncp"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "sally.json").write_text(json.dumps({
        "task_id": "sally", "goal": ["Beth believes that ball is in the basket"], "false_belief": True,
        "context": "Anne and Beth are in the kitchen with a ball.",
        "initial_steps": [{"action": "location_declaration", "args": ["Anne", "kitchen"], "kwargs": {}},
                          {"action": "location_declaration", "args": ["ball", "kitchen"],
                           "kwargs": {"is_thinking_entity": False}}]}))
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "ncp", root, ImportOptions(dataset_name="NCP live"))
    service = LiveService(store)
    sid = store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'sally'").fetchall()[0][0]
    script = [Reply(tool_calls=[tool_call("move_object_container", "c1", person="Anne", obj="ball",
                                          container="basket")]),
              Reply(text="Now I will make Beth leave the kitchen and then", chunk_size=4, cut_after=3)]
    with ScriptedServer(script) as server:
        with pytest.raises(StreamCutOff):
            service.ask(service.detail(sid), _options(server.base_url, stream=True))
    cur = store.cursor()
    assert cur.execute("SELECT count(*) FROM run WHERE is_live").fetchall() == [(0,)]
    assert cur.execute("SELECT status, partial_output FROM live_failure").fetchall() == [("cut_off", "Now I will m")]
    store.close()
