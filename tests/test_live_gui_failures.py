"""The live panel when an answer goes wrong: a cut-off stream, a huge answer, an endpoint that echoes the key,
and a batch after switching models, driven through the panel's own buttons."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from app.live import LiveSettings
from app.live.service import LiveService
from fixtures_store import friendbench_like_plan, make_store
from live_server import Reply, ScriptedServer
from storage import queries
from widgets.live_panel import LivePanel

SECRET = "sk-panel-test-0123456789abcdef"
COMPLETE = "These two are familiar with each other; they finish each other's sentences and laugh together."


@pytest.fixture
def env(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("THINSLICE_TEST_KEY", SECRET)
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4, models=("alpha",)))
    ids = [r[0] for r in store.cursor().execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    panel = LivePanel(LiveService(store))
    qtbot.addWidget(panel)
    panel.modality.setCurrentText("text")
    panel.set_detail(queries.stimulus_detail(store.cursor(), ids[0]))
    statuses: list[str] = []
    panel.statusMessage.connect(statuses.append)
    yield panel, store, ids, statuses
    panel.runner.wait()
    store.close()


def _point(panel, url, model="scripted-model"):
    panel.set_live_settings(LiveSettings(base_url=url, model=model, api_key_env="THINSLICE_TEST_KEY"))
    panel.timeout.setValue(10)


def _ask(qtbot, panel):
    with qtbot.waitSignal(panel.answerFinished, timeout=20000) as caught:
        panel.send_button.click()
    return caught.args[0]


def _live_rows(store):
    return store.cursor().execute("SELECT p.raw_output, p.answer FROM prediction p JOIN run r ON r.id = p.run_id"
                                  " WHERE r.is_live").fetchall()


def test_a_cut_off_stream_is_shown_as_failed_and_the_earlier_answer_stays(qtbot, env):
    panel, store, _ids, statuses = env
    panel.stream.setChecked(True)
    with ScriptedServer([Reply(text=COMPLETE, chunk_size=6), Reply(text=COMPLETE, chunk_size=6, cut_after=5)]) as server:
        _point(panel, server.base_url)
        assert _ask(qtbot, panel).answer == "familiar"
        assert _ask(qtbot, panel) is None
    assert panel.answer.toPlainText() == COMPLETE[:30]          # what arrived stays readable
    assert "closed the stream before the answer was finished" in panel.message.text()
    assert statuses[-1] == panel.message.text() and panel.send_button.isEnabled()
    assert _live_rows(store) == [(COMPLETE, "familiar")]
    assert store.cursor().execute("SELECT status, partial_output FROM live_failure").fetchall() == [
        ("cut_off", COMPLETE[:30])]


def test_a_4_mb_stream_stops_at_the_limit_while_the_window_keeps_running(qtbot, env):
    panel, store, _ids, _statuses = env
    panel.stream.setChecked(True)
    assert panel.max_answer_kb.value() == 256
    huge = ("a long line of the answer that goes on and on " * 2 + "\n") * (4 * 1024 * 1024 // 95)
    ticks_while_busy = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks_while_busy.append(1) if panel.busy() else None)
    timer.start(5)
    with ScriptedServer([Reply(text=huge, chunk_size=2048, chunk_delay_s=0.001)]) as server:
        _point(panel, server.base_url)
        assert _ask(qtbot, panel) is None
    timer.stop()
    assert len(ticks_while_busy) >= 5       # the event loop kept turning while the answer streamed in
    assert "size limit of 256 KB" in panel.message.text()
    qtbot.waitUntil(panel.answer_complete, timeout=10000)
    shown = panel.answer.toPlainText()
    assert 0 < len(shown) <= 256 * 1024 and huge.startswith(shown)
    assert _live_rows(store) == []


def test_a_raised_limit_takes_a_long_answer_whole(qtbot, env):
    panel, store, _ids, _statuses = env
    panel.stream.setChecked(True)
    panel.max_answer_kb.setValue(1024)
    text = "familiar, I would say.\n" * 20_000     # 460 KB
    with ScriptedServer([Reply(text=text, chunk_size=4096)]) as server:
        _point(panel, server.base_url)
        result = _ask(qtbot, panel)
    qtbot.waitUntil(panel.answer_complete, timeout=10000)   # the view takes a long answer in slices
    assert result.text == text and panel.answer_text() == text
    # the view shows the answer's end, whole lines of it, and says it shows only its end
    shown = panel.answer.toPlainText()
    assert text.endswith(shown) and len(shown) <= 256 * 1024 + 16 * 1024 and shown.startswith("familiar")
    assert panel.answer_note.isVisibleTo(panel) and f"of {len(text):,} characters" in panel.answer_note.text()
    assert len(_live_rows(store)) == 1


def test_an_answer_without_line_breaks_shows_its_end_and_saves_whole(qtbot, env, tmp_path):
    panel, store, _ids, _statuses = env
    panel.stream.setChecked(True)
    panel.max_answer_kb.setValue(2048)
    text = "".join(f"{{\"turn\": {i}, \"cue\": \"laugh\"}}, " for i in range(40_000)) + "familiar"  # 1.3 MB
    with ScriptedServer([Reply(text=text, chunk_size=8192)]) as server:
        _point(panel, server.base_url)
        result = _ask(qtbot, panel)
    qtbot.waitUntil(panel.answer_complete, timeout=20000)
    assert result.text == text
    shown = panel.answer.toPlainText()
    # one unbroken line is shown as lines of at most 2,048 characters (the text itself is not changed)
    assert max(len(line) for line in shown.split("\n")) <= 2048
    assert text.endswith(shown.replace("\n", "")) and shown.endswith("familiar")
    assert len(shown) <= 256 * 1024 + 16 * 1024 + len(shown) // 2048 + 1
    assert panel.save_answer_button.isVisibleTo(panel)
    saved = tmp_path / "answer.txt"
    panel.save_answer_to(str(saved))
    assert saved.read_text(encoding="utf-8") == text


def test_an_echoed_key_is_never_on_screen(qtbot, env):
    panel, store, _ids, statuses = env
    panel.stream.setChecked(False)
    with ScriptedServer([Reply(kind="http_error", status=401, text="Incorrect API key provided",
                               echo_authorization=True)]) as server:
        _point(panel, server.base_url)
        assert _ask(qtbot, panel) is None
    shown = [panel.message.text(), panel.answer.toPlainText(), *statuses]
    assert "HTTP 401" in panel.message.text()
    assert all(SECRET not in text and "Bearer sk-" not in text for text in shown)
    assert _live_rows(store) == []


def test_run_batch_after_switching_models_answers_every_stimulus(qtbot, env):
    panel, store, ids, _statuses = env
    with ScriptedServer(lambda body: Reply(text="stranger"), max_requests=100) as server:
        panel.set_batch_ids(ids)
        for model in ("first-model", "second-model"):
            _point(panel, server.base_url, model)
            with qtbot.waitSignal(panel.batchFinished, timeout=20000) as caught:
                panel.batch_button.click()
            assert len(caught.args[0].results) == len(ids) and caught.args[0].skipped == 0
            assert panel.batch_progress.value() == len(ids)
        assert len(server.requests) == 2 * len(ids)
    per_model = store.cursor().execute(
        "SELECT m.name, count(DISTINCT p.stimulus_id) FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.is_live GROUP BY m.name ORDER BY m.name").fetchall()
    assert per_model == [("first-model", len(ids)), ("second-model", len(ids))]


def test_cancel_batch_reports_what_was_done_and_a_rerun_resumes(qtbot, env):
    panel, store, ids, _statuses = env
    with ScriptedServer(lambda body: Reply(text="familiar", delay_s=0.3), max_requests=100) as server:
        _point(panel, server.base_url)
        panel.set_batch_ids(ids)
        panel.concurrency.setValue(1)
        with qtbot.waitSignal(panel.batchFinished, timeout=20000) as caught:
            panel.batch_button.click()
            qtbot.waitUntil(lambda: len(server.requests) >= 1, timeout=10000)
            panel.batch_cancel.click()
        report = caught.args[0]
        assert report.cancelled and len(report.results) < len(ids)
        assert panel.batch_button.isEnabled() and not panel.batch_cancel.isEnabled()
        assert panel.message.text().startswith("Batch cancelled")
        with qtbot.waitSignal(panel.batchFinished, timeout=20000) as resumed:
            panel.batch_button.click()
        assert resumed.args[0].skipped == len(report.results)
        assert len(resumed.args[0].results) == len(ids) - len(report.results)
