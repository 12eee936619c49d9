"""A thin, cancellable wrapper around the ``openai`` chat client.

``openai`` is imported on first use (it costs about 0.6 s). Every failure comes out as one of
the :mod:`app.live.errors` types with a message for the user, credentials scrubbed. Streaming runs
the network read on a helper thread and polls ``cancel`` every 50 ms, so Cancel returns at once even
while the server is silent.

An answer is only returned when it finished normally: a stream that ends (or breaks) before the
server gave a finish reason raises :class:`StreamCutOff`, and an answer longer than
``max_answer_bytes`` (UTF-8) raises :class:`AnswerTooLarge` as soon as it passes the limit; both
carry the text that arrived.
"""
from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.live.errors import (AnswerTooLarge, EndpointUnreachable, LiveCancelled, LiveError, LiveTimeout,
                             MalformedAnswer, ServerError, StreamCutOff, remember_secret)
from app.live.settings import NO_KEY_PLACEHOLDER, LiveSettings, resolve_api_key
from app.settings import DEFAULT_MAX_ANSWER_KB

Message = dict[str, Any]
_CANCEL_POLL_S = 0.05
_END_OF_STREAM = object()
DEFAULT_MAX_ANSWER_BYTES = DEFAULT_MAX_ANSWER_KB * 1024
_TLS_LOCK = threading.Lock()
_TLS: Any = None


def _shared_tls() -> Any:
    """The one TLS context every client uses, made as the HTTP library makes its own (system certificates,
    SSL_CERT_FILE). Making one reads every CA certificate, tens of milliseconds of CPU: several models asked
    at once (a race) would each make theirs at the same moment, and the window would wait for the cores."""
    global _TLS
    with _TLS_LOCK:
        if _TLS is None:
            import httpx2

            _TLS = httpx2.create_ssl_context()
        return _TLS


@dataclass(frozen=True)
class ToolCall:
    """A function call the model asked for; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class LiveAnswer:
    """A finished answer. Token counts are None when the server does not report them."""

    text: str
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None
    raw: Any
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    first_delta_s: float | None = None

    def assistant_message(self) -> Message:
        """The answer as a message to send back in a conversation (tool calls included)."""
        message: Message = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


@dataclass
class _StreamState:
    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    chunks: int = 0
    size: int = 0
    full: bool = False   # the size limit was reached: the text holds exactly what fits


class LiveClient:
    """Ask an OpenAI-compatible endpoint for chat completions.

    ``timeout_s`` bounds each request (and each silent gap in a stream); ``max_retries`` is the
    ``openai`` client's retry count for connection errors and 5xx/429 answers; ``max_answer_bytes``
    bounds one answer's text.
    """

    def __init__(
        self, settings: LiveSettings, timeout_s: float = 60.0, max_retries: int = 2, api_key: str | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_answer_bytes = max_answer_bytes
        self._api_key = api_key
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never show the key
        return f"LiveClient({self.settings.base_url!r}, model={self.settings.model!r})"

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                key = self._api_key or resolve_api_key(self.settings)[0] or NO_KEY_PLACEHOLDER
                remember_secret(key if key != NO_KEY_PLACEHOLDER else None)
                self._client = openai.OpenAI(
                    base_url=self.settings.base_url, api_key=key, timeout=self.timeout_s, max_retries=self.max_retries,
                    http_client=openai.DefaultHttpxClient(verify=_shared_tls()),
                )
            return self._client

    def prepare(self) -> None:
        """Make the underlying client and load what its chat calls need, asking nothing: the first ask of a
        process then starts at once (the `openai` package loads about half a second of modules on first use)."""
        self._openai().chat.completions  # noqa: B018 (the attribute loads the chat resources)

    def close(self) -> None:
        """Release the connection pool."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def ask(
        self,
        messages: Sequence[Message],
        stream: bool = False,
        on_delta: Callable[[str], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> LiveAnswer:
        """Send ``messages`` and return the whole answer.

        With ``stream`` the text arrives piece by piece through ``on_delta`` (called on this
        thread). ``cancel`` is polled; when it returns True the call raises
        :class:`LiveCancelled` carrying the text so far. ``options`` go to the API unchanged
        (temperature, max_tokens, ...). Raises a :class:`LiveError` subclass on any failure.
        """
        if cancel is not None and cancel():
            raise LiveCancelled("")
        request: dict[str, Any] = {"model": self.settings.model, "messages": list(messages), **options}
        if tools:
            request["tools"] = list(tools)
        start = time.perf_counter()
        if stream:
            return self._ask_streamed(request, start, on_delta, cancel)
        try:
            response = self._openai().chat.completions.create(**request)
        except Exception as error:
            raise self._translate(error) from None  # the cause may echo the key: keep it out of tracebacks
        return self._answer_from(response, time.perf_counter() - start)

    # -- plain answers -------------------------------------------------------------------------

    def _answer_from(self, response: Any, latency_s: float) -> LiveAnswer:
        choices = getattr(response, "choices", None)
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            raise MalformedAnswer(f"{self.settings.base_url} answered without a chat message (no 'choices').")
        calls = tuple(
            ToolCall(c.id or "", c.function.name, c.function.arguments or "{}")
            for c in (message.tool_calls or ())
            if getattr(c, "function", None) is not None
        )
        usage = getattr(response, "usage", None)
        text = message.content or ""
        if len(text.encode("utf-8", "surrogatepass")) > self.max_answer_bytes:
            raise AnswerTooLarge(self._too_large(), _head(text, self.max_answer_bytes))
        return LiveAnswer(
            text=text,
            latency_s=latency_s,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            raw=response.model_dump(),
            tool_calls=calls,
            finish_reason=choices[0].finish_reason,
        )

    # -- streamed answers ----------------------------------------------------------------------

    def _ask_streamed(
        self,
        request: dict[str, Any],
        start: float,
        on_delta: Callable[[str], None] | None,
        cancel: Callable[[], bool] | None,
    ) -> LiveAnswer:
        try:
            stream = self._openai().chat.completions.create(
                **request, stream=True, stream_options={"include_usage": True}
            )
        except Exception as error:
            raise self._translate(error) from None  # the cause may echo the key: keep it out of tracebacks
        chunks: queue.Queue = queue.Queue()

        def read() -> None:
            try:
                for chunk in stream:
                    chunks.put(chunk)
                chunks.put(_END_OF_STREAM)
            except Exception as error:  # handed to the asking thread, which decides what it means
                chunks.put(error)

        threading.Thread(target=read, name="live-stream-reader", daemon=True).start()
        state = _StreamState()
        first_delta_s: float | None = None
        try:
            while True:
                if cancel is not None and cancel():
                    raise LiveCancelled("".join(state.text))
                try:
                    item = chunks.get(timeout=_CANCEL_POLL_S)
                except queue.Empty:
                    continue
                if item is _END_OF_STREAM:
                    break
                if isinstance(item, Exception):
                    if state.chunks and state.finish_reason is None:
                        reason = self._translate(item)
                        raise StreamCutOff(self._cut_off(state, f" ({reason})"), "".join(state.text)) from None
                    raise self._translate(item) from None
                delta = self._absorb(item, state)
                if delta:
                    first_delta_s = first_delta_s if first_delta_s is not None else time.perf_counter() - start
                    if on_delta is not None:
                        on_delta(delta)
                if state.full:  # what was shown is exactly what is kept
                    raise AnswerTooLarge(self._too_large(), "".join(state.text))
        finally:
            # Closing also ends the reader thread, which is blocked on the socket when cancelled.
            try:
                stream.close()
            except Exception:  # closing a half-read stream may complain; it is closed either way
                pass
        if state.finish_reason is None:
            raise StreamCutOff(self._cut_off(state, ""), "".join(state.text))
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"] or "{}") for _, c in sorted(state.calls.items()))
        return LiveAnswer(
            text="".join(state.text),
            latency_s=time.perf_counter() - start,
            prompt_tokens=state.prompt_tokens,
            completion_tokens=state.completion_tokens,
            raw={"chunks": state.chunks, "finish_reason": state.finish_reason},
            tool_calls=calls,
            finish_reason=state.finish_reason,
            first_delta_s=first_delta_s,
        )

    def _absorb(self, chunk: Any, state: _StreamState) -> str:
        """Fold one stream chunk into ``state``; returns its new text."""
        state.chunks += 1
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            state.prompt_tokens, state.completion_tokens = usage.prompt_tokens, usage.completion_tokens
        choices = getattr(chunk, "choices", None)
        if choices is None:
            raise MalformedAnswer(f"{self.settings.base_url} streamed a frame that is not a chat completion chunk.")
        if not choices:
            return ""
        choice = choices[0]
        state.finish_reason = choice.finish_reason or state.finish_reason
        delta = choice.delta
        if delta is None:
            return ""
        for call in delta.tool_calls or ():
            slot = state.calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            slot["id"] = call.id or slot["id"]
            if call.function is not None:
                slot["name"] += call.function.name or ""
                slot["arguments"] += call.function.arguments or ""
        if delta.content:
            content = delta.content
            size = len(content.encode("utf-8", "surrogatepass"))
            if state.size + size > self.max_answer_bytes:
                content, state.full = _head(content, self.max_answer_bytes - state.size), True
                size = len(content.encode("utf-8", "surrogatepass"))
            state.size += size
            state.text.append(content)
            return content
        return ""

    def _too_large(self) -> str:
        return (f"The answer from {self.settings.base_url} passed the size limit of "
                f"{self.max_answer_bytes // 1024} KB; reading stopped there and it is kept as a failed attempt.")

    def _cut_off(self, state: _StreamState, why: str) -> str:
        return (f"{self.settings.base_url} closed the stream before the answer was finished{why}; the "
                f"{len(''.join(state.text))} characters that arrived are kept as a failed attempt, not as an answer.")

    # -- errors --------------------------------------------------------------------------------

    def _translate(self, error: Exception) -> LiveError:
        """The user-facing error for anything the client raised."""
        import openai

        url = self.settings.base_url
        if isinstance(error, LiveError):
            return error
        if isinstance(error, openai.APITimeoutError):
            return LiveTimeout(f"No answer from {url} within {self.timeout_s:g} s (timeout).")
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__
            reason = str(cause) if cause is not None else str(error)
            if "refused" in reason.lower():
                reason = "connection refused"
            return EndpointUnreachable(f"Cannot reach {url}: {reason}")
        if isinstance(error, openai.APIStatusError):
            detail = _error_detail(error)
            return ServerError(f"{url} answered HTTP {error.status_code}: {detail}", error.status_code)
        if isinstance(error, (openai.APIResponseValidationError, ValueError, KeyError, TypeError, AttributeError)):
            return MalformedAnswer(f"{url} sent an answer that is not an OpenAI chat completion ({error}).")
        if isinstance(error, openai.APIError):
            return ServerError(f"{url} reported an error: {error}", 0)
        return LiveError(f"Asking {url} failed: {type(error).__name__}: {error}")


def _head(text: str, max_bytes: int) -> str:
    """The longest start of `text` within `max_bytes` of UTF-8."""
    return text.encode("utf-8", "surrogatepass")[:max_bytes].decode("utf-8", "ignore")


def _error_detail(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        return json.dumps(body)[:200]
    return str(getattr(error, "message", error))[:200]
