"""Errors a live model call can end in, each with a message fit to show the user."""
from __future__ import annotations


class LiveError(Exception):
    """A live call failed; ``str(error)`` is the user-facing message."""


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


class LiveCancelled(LiveError):
    """The user cancelled; ``partial_text`` holds what had streamed in by then."""

    def __init__(self, partial_text: str = "") -> None:
        super().__init__("Cancelled")
        self.partial_text = partial_text
