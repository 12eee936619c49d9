"""The live panel against a scripted local server: answers appear and are stored; failures are messages."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QSettings, QTimer

from app.live import LiveSettings
from app.live.service import LiveService
from fixtures_store import friendbench_like_plan, make_store
from live_server import Reply, ScriptedServer, unreachable_url
from storage import queries
from storage.live_failures import live_answered
from widgets.live_panel import LivePanel
from widgets.settings_store import SettingsStore

SECRET = "sk-test-never-stored-0123456789"


@pytest.fixture
def env(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("THINSLICE_TEST_KEY", SECRET)
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4, models=("alpha",)))
    cur = store.cursor()
    ids = [r[0] for r in cur.execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    panel = LivePanel(LiveService(store))
    qtbot.addWidget(panel)
    panel.modality.setCurrentText("text")
    panel.set_detail(queries.stimulus_detail(cur, ids[0]))
    yield panel, store, ids
    panel.runner.wait()
    store.close()


def _point(panel, url, model="scripted-model", timeout=5.0):
    panel.set_live_settings(LiveSettings(base_url=url, model=model, api_key_env="THINSLICE_TEST_KEY"))
    panel.timeout.setValue(timeout)


def _ask(qtbot, panel, timeout_ms=15000):
    with qtbot.waitSignal(panel.answerFinished, timeout=timeout_ms) as caught:
        panel.send_button.click()
    return caught.args[0]


def test_plain_answer_is_shown_and_stored_as_a_live_run(qtbot, env):
    panel, store, ids = env
    panel.stream.setChecked(False)
    with ScriptedServer([Reply(text="I think they are strangers.", usage=(41, 6))]) as server:
        _point(panel, server.base_url)
        result = _ask(qtbot, panel)
    assert panel.answer.toPlainText() == "I think they are strangers."
    assert result.answer == "stranger" and "stranger" in panel.message.text()
    rows = store.cursor().execute(
        "SELECT r.is_live, r.modality, r.params, p.prompt, p.latency_s, p.tokens_in, p.tokens_out, p.answer,"
        " p.correct, m.name FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " WHERE r.is_live").fetchall()
    assert len(rows) == 1
    is_live, modality, params, prompt, latency, t_in, t_out, answer, correct, model = rows[0]
    assert is_live and modality == "text" and model == "scripted-model"
    assert (t_in, t_out, answer) == (41, 6, "stranger") and latency > 0
    detail = queries.stimulus_detail(store.cursor(), ids[0])
    assert correct == (detail.ground_truth == "stranger")
    assert "turn 0 of clip-000" in prompt          # the transcript went into the prompt
    assert json.loads(params)["api_key_env"] == "THINSLICE_TEST_KEY"
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    # the key itself is nowhere: not in the store, not in the settings
    dump = store.cursor().execute("SELECT string_agg(coalesce(params::VARCHAR, ''), '') FROM run").fetchall()[0][0]
    assert SECRET not in (dump or "") and SECRET not in prompt
    settings = QSettings()
    assert all(SECRET not in str(settings.value(k)) for k in settings.allKeys())
    assert SettingsStore(settings).load().live_base_url == server.base_url


def test_streamed_answer_arrives_piece_by_piece(qtbot, env):
    panel, store, ids = env
    panel.stream.setChecked(True)
    text = "These two are familiar with each other, they finish each other's sentences."
    with ScriptedServer([Reply(text=text, chunk_size=6, chunk_delay_s=0.05)]) as server:
        _point(panel, server.base_url)
        with qtbot.waitSignal(panel.answerFinished, timeout=15000):
            panel.send_button.click()
            qtbot.waitUntil(lambda: 0 < len(panel.answer.toPlainText()) < len(text), timeout=10000)
    assert panel.answer.toPlainText() == text
    assert panel.last_result.answer == "familiar"
    answered = live_answered(store.cursor(), list(ids), "scripted-model")
    assert {sid for sid, modality, *_ in answered if modality == "text"} == {ids[0]}


@pytest.mark.parametrize("reply, expected", [
    (Reply(kind="http_error", status=500, text="model crashed"), "answered HTTP 500: model crashed"),
    (Reply(kind="malformed", body=b'{"unexpected": true}'), "chat"),
])
def test_server_failures_are_messages(qtbot, env, reply, expected):
    panel, store, _ids = env
    panel.stream.setChecked(False)
    with ScriptedServer([reply]) as server:
        _point(panel, server.base_url)
        assert _ask(qtbot, panel) is None
    assert expected in panel.message.text() and panel.send_button.isEnabled()
    assert store.cursor().execute("SELECT count(*) FROM run WHERE is_live").fetchall()[0][0] == 0


def test_endpoint_down_is_a_message(qtbot, env):
    panel, _store, _ids = env
    _point(panel, unreachable_url())
    assert _ask(qtbot, panel) is None
    assert "connection refused" in panel.message.text()


def test_timeout_keeps_the_gui_responsive(qtbot, env):
    panel, _store, _ids = env
    panel.stream.setChecked(False)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    with ScriptedServer([Reply(text="too late", delay_s=5.0)]) as server:
        _point(panel, server.base_url, timeout=1.0)
        with qtbot.waitSignal(panel.answerFinished, timeout=15000):
            panel.send_button.click()
            assert panel.busy() and panel.cancel_button.isEnabled()
            qtbot.waitUntil(lambda: len(ticks) >= 10, timeout=5000)   # the event loop runs while the call waits
    timer.stop()
    assert "within 1 s" in panel.message.text() or "No answer" in panel.message.text()


def test_cancel_stops_a_slow_stream(qtbot, env):
    panel, store, _ids = env
    panel.stream.setChecked(True)
    with ScriptedServer([Reply(text="word " * 300, chunk_size=5, chunk_delay_s=0.05)]) as server:
        _point(panel, server.base_url)
        panel.send_button.click()
        qtbot.waitUntil(lambda: len(panel.answer.toPlainText()) > 10, timeout=10000)
        panel.cancel_button.click()
        assert panel.message.text() == "Cancelled." and panel.send_button.isEnabled()
        panel.runner.wait(10000)
    assert store.cursor().execute("SELECT count(*) FROM run WHERE is_live").fetchall()[0][0] == 0


def test_batch_answers_every_listed_stimulus_and_resumes(qtbot, env):
    panel, store, ids = env
    with ScriptedServer(lambda body: Reply(text="familiar"), max_requests=50) as server:
        _point(panel, server.base_url)
        panel.set_batch_ids(ids)
        panel.concurrency.setValue(2)
        with qtbot.waitSignal(panel.batchFinished, timeout=20000) as caught:
            panel.batch_button.click()
        report = caught.args[0]
        assert len(report.results) == len(ids) and not report.errors
        assert panel.batch_progress.value() == len(ids)
        with qtbot.waitSignal(panel.batchFinished, timeout=20000) as again:
            panel.batch_button.click()
        assert again.args[0].skipped == len(ids) and len(server.requests) == len(ids)
    rows = store.cursor().execute("SELECT count(*), count(DISTINCT p.stimulus_id) FROM prediction p"
                                  " JOIN run r ON r.id = p.run_id WHERE r.is_live").fetchall()[0]
    assert rows == (len(ids), len(ids))
