"""A scripted OpenAI-compatible chat server for tests (stdlib only).

``ScriptedServer(replies)`` listens on 127.0.0.1 on a free port and answers
``POST /v1/chat/completions`` with the next ``Reply`` of the script (or with what a callable
``replies(request_body)`` returns): plain JSON or, when the request asks for ``stream``, a
``text/event-stream`` of ``data: {...}`` frames ending in ``data: [DONE]``. A reply can also be
an HTTP error, a delay longer than the client's timeout, a malformed answer, or tool calls.
It is bounded: it stops itself after ``lifetime_s`` or ``max_requests`` requests, and every
sleep wakes up when the server stops, so a test never hangs on it.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def unreachable_url() -> str:
    """An endpoint on 127.0.0.1 where nothing listens: a port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@dataclass
class Reply:
    """One scripted answer.

    ``kind``: "text", "tool_calls", "http_error" (``status`` with an OpenAI error body),
    "malformed" (``body`` sent as-is with a JSON content type). ``delay_s`` waits before
    answering; ``chunk_delay_s`` waits between streamed frames; ``stall_after`` stops sending
    frames (keeping the connection open) after that many content frames; ``cut_after`` closes the
    connection after that many content frames, before any finish reason. ``echo_authorization``
    puts the request's Authorization header into an error body, as some proxies do.
    """

    kind: str = "text"
    text: str = ""
    tool_calls: Sequence[dict[str, Any]] = ()
    status: int = 500
    body: bytes = b""
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    chunk_size: int = 4
    stall_after: int | None = None
    cut_after: int | None = None
    echo_authorization: bool = False
    usage: tuple[int, int] = (12, 7)


def tool_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """A tool call as the model sends it."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@dataclass
class ScriptedServer:
    replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply]
    lifetime_s: float = 20.0
    max_requests: int = 100
    model: str = "scripted-model"
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # names lower-cased

    def __post_init__(self) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._script = list(self.replies) if not callable(self.replies) else None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._deadline = threading.Timer(self.lifetime_s, self.stop)
        self._deadline.daemon = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        self._deadline.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._thread.join(timeout=5)

    def stop(self) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            self._deadline.cancel()
            threading.Thread(target=self._shutdown, daemon=True).start()

    def _shutdown(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when it is still running."""
        return not self._stopped.wait(seconds)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if len(self.requests) >= self.max_requests:
                self.stop()
            if self._script is None:
                return self.replies(body)  # type: ignore[operator]
            if not self._script:
                return Reply(kind="http_error", status=500, text="script exhausted")
            return self._script.pop(0)


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = server.next_reply(body)
            if reply.delay_s and not server.sleep(reply.delay_s):
                return
            if reply.kind == "http_error":
                message = reply.text or "scripted failure"
                if reply.echo_authorization:
                    message += f" (request header Authorization: {self.headers.get('Authorization')})"
                self._send_json(reply.status, {"error": {"message": message, "type": "server_error"},
                                               "request": {"headers": dict(self.headers.items())}})
            elif reply.kind == "malformed":
                self._send_raw(200, reply.body, "application/json")
            elif body.get("stream"):
                self._stream(reply, body)
            else:
                self._send_json(200, _completion(reply, server.model))

        def _send_raw(self, status: int, payload: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            self._send_raw(status, json.dumps(payload).encode(), "application/json")

        def _frame(self, payload: dict[str, Any] | str) -> None:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            self.wfile.write(f"data: {data}\n\n".encode())
            self.wfile.flush()

        def _stream(self, reply: Reply, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            try:
                self._frame(_chunk(server.model, {"role": "assistant", "content": ""}))
                pieces = [reply.text[i : i + reply.chunk_size] for i in range(0, len(reply.text), reply.chunk_size)]
                for sent, piece in enumerate(pieces):
                    if reply.stall_after is not None and sent >= reply.stall_after:
                        server.sleep(server.lifetime_s)
                        return
                    if reply.cut_after is not None and sent >= reply.cut_after:
                        self.close_connection = True   # the body ends here: no finish reason, no [DONE]
                        return
                    if reply.chunk_delay_s and not server.sleep(reply.chunk_delay_s):
                        return
                    self._frame(_chunk(server.model, {"content": piece}))
                for index, call in enumerate(reply.tool_calls):
                    self._frame(_chunk(server.model, {"tool_calls": [{"index": index, **call}]}))
                self._frame(_chunk(server.model, {}, "tool_calls" if reply.tool_calls else "stop"))
                if (body.get("stream_options") or {}).get("include_usage"):
                    usage = _usage(reply)
                    final = _chunk(server.model, {}, None)
                    self._frame({**final, "choices": [], "usage": usage})
                self._frame("[DONE]")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up (cancel): nothing more to send

    return Handler


def _usage(reply: Reply) -> dict[str, int]:
    prompt, completion = reply.usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = list(reply.tool_calls)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": _usage(reply),
    }
