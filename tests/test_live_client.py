"""The live client with the real openai package against a scripted local server."""
from __future__ import annotations

import threading

import pytest

from app.live import (
    EndpointUnreachable,
    LiveCancelled,
    LiveClient,
    LiveSettings,
    LiveTimeout,
    MalformedAnswer,
    ServerError,
)
from live_server import Reply, ScriptedServer, tool_call, unreachable_url

QUESTION = [{"role": "user", "content": "Familiar or stranger?"}]


def _client(url: str, timeout_s: float = 2.0) -> LiveClient:
    return LiveClient(LiveSettings(base_url=url, model="scripted-model"), timeout_s=timeout_s, max_retries=0, api_key="test-key")


def test_plain_answer_has_text_latency_and_token_counts():
    with ScriptedServer([Reply(text="They are strangers.", usage=(31, 4))]) as server:
        answer = _client(server.base_url).ask(QUESTION, temperature=0)
    assert answer.text == "They are strangers."
    assert answer.prompt_tokens == 31 and answer.completion_tokens == 4
    assert answer.latency_s > 0 and answer.finish_reason == "stop"
    assert answer.raw["choices"][0]["message"]["content"] == "They are strangers."
    sent = server.requests[0]
    assert sent["model"] == "scripted-model" and sent["messages"] == QUESTION and sent["temperature"] == 0


def test_streamed_answer_arrives_in_pieces_and_adds_up():
    pieces: list[str] = []
    text = "I think these two people are familiar with each other."
    with ScriptedServer([Reply(text=text, chunk_size=5)]) as server:
        answer = _client(server.base_url).ask(QUESTION, stream=True, on_delta=pieces.append)
    assert len(pieces) == len(range(0, len(text), 5)) and "".join(pieces) == text
    assert answer.text == text and answer.completion_tokens == 7 and answer.first_delta_s is not None
    assert server.requests[0]["stream"] is True


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_are_returned_whole(stream):
    calls = [tool_call("enter_room", "call_1", person="Anne", room="kitchen"), tool_call("leave_room", "call_2", person="Bob", room="hall")]
    with ScriptedServer([Reply(tool_calls=calls)]) as server:
        answer = _client(server.base_url).ask(QUESTION, stream=stream, tools=[{"type": "function", "function": {"name": "enter_room"}}])
    assert [(c.id, c.name) for c in answer.tool_calls] == [("call_1", "enter_room"), ("call_2", "leave_room")]
    assert '"kitchen"' in answer.tool_calls[0].arguments and answer.finish_reason == "tool_calls"
    assert server.requests[0]["tools"][0]["function"]["name"] == "enter_room"


def test_http_500_is_a_server_error_with_its_status():
    with ScriptedServer([Reply(kind="http_error", status=500, text="model crashed")]) as server:
        with pytest.raises(ServerError) as caught:
            _client(server.base_url).ask(QUESTION)
    assert caught.value.status == 500
    assert str(caught.value) == f"{server.base_url} answered HTTP 500: model crashed"


@pytest.mark.parametrize("stream", [False, True])
def test_a_server_slower_than_the_timeout_is_a_timeout(stream):
    with ScriptedServer([Reply(text="too late", delay_s=2.0)]) as server:
        with pytest.raises(LiveTimeout, match=r"No answer from http://127\.0\.0\.1:\d+/v1 within 0\.5 s"):
            _client(server.base_url, timeout_s=0.5).ask(QUESTION, stream=stream)


@pytest.mark.parametrize("body", [b'{"unexpected": true}', b"<html>gateway says hello</html>"])
def test_malformed_answers_are_reported_as_such(body):
    with ScriptedServer([Reply(kind="malformed", body=body)]) as server:
        with pytest.raises(MalformedAnswer, match="not an OpenAI chat completion|without a chat message"):
            _client(server.base_url).ask(QUESTION)


def test_endpoint_down_says_connection_refused():
    url = unreachable_url()
    with pytest.raises(EndpointUnreachable) as caught:
        _client(url).ask(QUESTION)
    assert str(caught.value) == f"Cannot reach {url}: connection refused"


def test_cancel_mid_stream_stops_with_the_partial_text():
    pieces: list[str] = []
    with ScriptedServer([Reply(text="word " * 200, chunk_size=5, chunk_delay_s=0.02)]) as server:
        with pytest.raises(LiveCancelled) as caught:
            _client(server.base_url).ask(QUESTION, stream=True, on_delta=pieces.append, cancel=lambda: len(pieces) >= 3)
    assert caught.value.partial_text == "word word word "
    assert len(pieces) == 3


def test_cancel_while_the_server_is_silent_returns_promptly():
    flag = threading.Event()
    pieces: list[str] = []

    def on_delta(piece: str) -> None:
        pieces.append(piece)
        threading.Timer(0.1, flag.set).start()

    with ScriptedServer([Reply(text="first then nothing", chunk_size=6, stall_after=1)]) as server:
        # The server goes silent after one piece; without a prompt Cancel this would end in a
        # LiveTimeout after 10 s instead.
        with pytest.raises(LiveCancelled) as caught:
            _client(server.base_url, timeout_s=10.0).ask(QUESTION, stream=True, on_delta=on_delta, cancel=flag.is_set)
    assert caught.value.partial_text == "first "


def test_cancel_before_sending_sends_nothing():
    with ScriptedServer([Reply(text="unused")]) as server:
        with pytest.raises(LiveCancelled):
            _client(server.base_url).ask(QUESTION, cancel=lambda: True)
    assert server.requests == []


def test_client_never_shows_its_key():
    client = _client("http://127.0.0.1:9/v1")
    assert "test-key" not in repr(client)
    assert "test-key" not in repr(client.settings) and "test-key" not in str(client.settings.to_dict())
