"""Running slow work off the GUI thread, with results applied back on it and stale requests dropped."""
from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


def _alive(callback: Callable[..., Any] | None) -> bool:
    """False once the widget a bound-method callback belongs to has been deleted (its window closed)."""
    owner = getattr(callback, "__self__", None)
    return not isinstance(owner, QObject) or shiboken6.isValid(owner)


class CancelToken:
    """Checked by long work between chunks; `cancel()` may be called from any thread."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:
        return self._event.is_set()


class _Relay(QObject):
    done = Signal(object)
    failed = Signal(object)
    progress = Signal(float, str)


class _Job(QRunnable):
    def __init__(self, fn: Callable[..., Any], relay: _Relay, token: CancelToken, with_progress: bool) -> None:
        super().__init__()
        self.fn = fn
        self.relay = relay
        self.token = token
        self.with_progress = with_progress
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            if self.with_progress:
                result = self.fn(self.token, lambda f, m="": self.relay.progress.emit(float(f), str(m)))
            else:
                result = self.fn()
        except BaseException as exc:  # reported to the GUI, never lost in a worker
            exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            self.relay.failed.emit(exc)
            return
        self.relay.done.emit(result)


class TaskRunner(QObject):
    """Runs callables on a thread pool. For each key only the latest request's result is delivered."""

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self.pool = pool or QThreadPool.globalInstance()
        self._generation: dict[str, int] = {}
        self._tokens: dict[str, CancelToken] = {}
        self._relays: set[_Relay] = set()
        self._closed = False

    def submit(self, key: str, fn: Callable[..., Any], on_done: Callable[[Any], None],
               on_error: Callable[[BaseException], None] | None = None,
               on_progress: Callable[[float, str], None] | None = None, with_progress: bool = False) -> CancelToken:
        """Run `fn` (or `fn(token, progress)` when `with_progress`) and call `on_done` on the GUI thread.

        A newer submit with the same key cancels the older one's token and drops its result.
        """
        if self._closed:  # the views this work would feed are going away
            token = CancelToken()
            token.cancel()
            return token
        generation = self._generation.get(key, 0) + 1
        self._generation[key] = generation
        old = self._tokens.get(key)
        if old is not None:
            old.cancel()
        token = CancelToken()
        self._tokens[key] = token
        relay = _Relay()
        self._relays.add(relay)

        def finish() -> None:
            self._relays.discard(relay)
            if self._tokens.get(key) is token:
                del self._tokens[key]

        def deliver(result: Any) -> None:
            finish()
            if (self._generation.get(key) == generation and not token.cancelled and not self._closed
                    and _alive(on_done)):
                on_done(result)

        def fail(exc: BaseException) -> None:
            finish()
            if (self._generation.get(key) == generation and on_error is not None and not self._closed
                    and _alive(on_error)):
                on_error(exc)

        relay.done.connect(deliver)
        relay.failed.connect(fail)
        if on_progress is not None:
            relay.progress.connect(
                lambda f, m: on_progress(f, m) if self._generation.get(key) == generation and _alive(on_progress)
                else None)
        self.pool.start(_Job(fn, relay, token, with_progress))
        return token

    def cancel(self, key: str) -> None:
        token = self._tokens.get(key)
        if token is not None:
            token.cancel()
        self._generation[key] = self._generation.get(key, 0) + 1

    def close(self) -> None:
        """Cancel everything; results that still arrive are dropped (their views are going away)."""
        self._closed = True
        for token in list(self._tokens.values()):
            token.cancel()

    def busy(self) -> bool:
        return bool(self._relays)

    def wait(self, msecs: int = 30000) -> bool:
        return self.pool.waitForDone(msecs)
