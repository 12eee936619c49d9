"""Errors a live model call can end in, each with a message fit to show the user, and the one scrubber that
keeps credentials out of every such message.

Every `LiveError` message passes through :func:`scrub_secrets` when the error is made, so an endpoint that
echoes the request's ``Authorization: Bearer sk-…`` header in its error body can never put the key on
screen, in the status bar, in a log or in the store. Code that shows any other exception's text from a live
call scrubs it with the same function.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from storage.errors import ThinsliceError

HIDDEN = "[hidden]"
_PATTERNS = [
    # a header or field naming a credential, with or without a scheme word: keep the name, hide the value
    re.compile(r"(?i)\b((?:proxy-)?authorization|x-api-key|api[_-]?key|access[_-]?token|auth[_-]?token|secret|"
               r"password)(\"?\s*[:=]\s*\"?)(?:(?:bearer|basic|token)\s+)?[^\s\"',;}\]]+"),
    re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}"),
    re.compile(r"\b(sk|pk|rk)(-)[A-Za-z0-9_-]{6,}"),
]
_known_lock = threading.Lock()
_known: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Hide this exact value (a key just read from the environment or keyring) wherever it appears."""
    if value and len(value) >= 4:
        with _known_lock:
            _known.add(value)


def scrub_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every credential-looking value replaced by "[hidden]": values after Authorization,
    api_key, token or password names, Bearer/Basic tokens, `sk-…` keys, and any key Thinslice has read."""
    with _known_lock:
        exact = sorted({*_known, *(s for s in secrets if s and len(s) >= 4)}, key=len, reverse=True)
    for value in exact:
        text = text.replace(value, HIDDEN)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{HIDDEN}", text)
    return text


class LiveError(ThinsliceError):
    """A live call failed; ``str(error)`` is the user-facing message (credentials already scrubbed)."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(scrub_secrets(str(message)), *args)


class EndpointUnreachable(LiveError):
    """Nothing answered at the base URL (server down, wrong port, connection lost)."""


class ServerError(LiveError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class LiveTimeout(LiveError):
    """No (complete) answer within the client's timeout."""


class MalformedAnswer(LiveError):
    """The server answered, but not with an OpenAI chat completion."""


class IncompleteAnswer(LiveError):
    """An answer that did not finish normally; ``partial_text`` is what arrived. It is kept as a failed
    attempt, never stored or scored as an answer. ``status`` names why, as the store records it."""

    status = "incomplete"

    def __init__(self, message: str, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class StreamCutOff(IncompleteAnswer):
    """The endpoint closed the stream before saying the answer was finished (no finish reason)."""

    status = "cut_off"


class AnswerTooLarge(IncompleteAnswer):
    """The answer passed the size limit; reading stopped there."""

    status = "too_large"


class LiveCancelled(LiveError):
    """The user cancelled; ``partial_text`` holds what had streamed in by then."""

    def __init__(self, partial_text: str = "") -> None:
        super().__init__("Cancelled")
        self.partial_text = partial_text
