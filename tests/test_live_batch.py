"""Batch runs: concurrency limit, progress, errors, cancel and resume; and where the key comes from."""
from __future__ import annotations

import threading

from app.live import LiveClient, LiveSettings, resolve_api_key, run_batch
from live_server import Reply, ScriptedServer


def test_batch_respects_the_concurrency_limit_and_reports_progress():
    lock = threading.Lock()
    active, peak = [0], [0]
    gate = threading.Barrier(3, timeout=5)

    def work(item: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        if item < 3:
            gate.wait()  # the first three run together: proves three at a time is reached
        with lock:
            active[0] -= 1
        return item * item

    progress = []
    report = run_batch(range(10), work, item_id=lambda i: i, max_workers=3, on_progress=progress.append)
    assert report.results == {i: i * i for i in range(10)} and not report.errors and not report.cancelled
    assert peak[0] == 3
    assert progress[0].done == 0 and progress[-1].done == 10 and progress[-1].total == 10


def test_failures_are_recorded_and_the_batch_goes_on():
    def work(item: str) -> str:
        if item == "bad":
            raise RuntimeError("model refused")
        return item.upper()

    seen = []
    report = run_batch(["a", "bad", "c"], work, item_id=str, max_workers=2, on_result=lambda *r: seen.append(r))
    assert report.results == {"a": "A", "c": "C"} and report.errors == {"bad": "model refused"}
    assert sorted(seen, key=lambda r: r[0]) == [("a", "A", None), ("bad", None, "model refused"), ("c", "C", None)]


def test_cancel_stops_new_work_and_resume_skips_what_is_done():
    stop = threading.Event()

    def work(item: int) -> int:
        if item == 2:
            stop.set()
        return item

    first = run_batch(range(20), work, item_id=lambda i: i, max_workers=1, cancel=stop.is_set)
    assert first.cancelled and 0 < len(first.results) < 20
    second = run_batch(range(20), work, item_id=lambda i: i, done_ids=first.results.keys(), max_workers=2)
    assert second.skipped == len(first.results)
    assert set(first.results) | set(second.results) == set(range(20))
    assert not set(first.results) & set(second.results)


def test_live_calls_in_a_batch_against_the_local_server():
    with ScriptedServer(lambda body: Reply(text=f"stranger for {body['messages'][-1]['content']}")) as server:
        client = LiveClient(LiveSettings(base_url=server.base_url, model="m"), timeout_s=2.0, max_retries=0, api_key="k")
        report = run_batch(
            [f"dyad{i}" for i in range(6)],
            lambda sid: client.ask([{"role": "user", "content": sid}]).text,
            item_id=str,
            max_workers=3,
        )
    assert report.results == {f"dyad{i}": f"stranger for dyad{i}" for i in range(6)}


def test_key_comes_from_the_named_environment_variable_and_is_not_stored(monkeypatch):
    settings = LiveSettings(base_url="http://127.0.0.1:1/v1", model="m", api_key_env="THINSLICE_TEST_KEY")
    monkeypatch.delenv("THINSLICE_TEST_KEY", raising=False)
    key, source = resolve_api_key(settings)
    assert key is None or source.startswith("system keyring")
    monkeypatch.setenv("THINSLICE_TEST_KEY", "sk-secret")
    assert resolve_api_key(settings) == ("sk-secret", "environment variable THINSLICE_TEST_KEY")
    stored = settings.to_dict()
    assert "sk-secret" not in str(stored) and LiveSettings.from_dict({**stored, "extra": 1}) == settings


def test_the_resolved_key_is_what_the_server_receives(monkeypatch):
    monkeypatch.setenv("THINSLICE_TEST_KEY", "sk-from-env")
    with ScriptedServer([Reply(text="ok")]) as server:
        settings = LiveSettings(base_url=server.base_url, model="m", api_key_env="THINSLICE_TEST_KEY")
        client = LiveClient(settings, timeout_s=2.0, max_retries=0)
        assert client.ask([{"role": "user", "content": "hi"}]).text == "ok"
    assert server.headers[0]["authorization"] == "Bearer sk-from-env"
    assert "sk-from-env" not in repr(client)
