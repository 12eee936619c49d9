"""The one way to run slow work off the GUI thread: results, streamed progress and errors come back on it.

    token = runner.submit("detail", lambda: read(...), show)                      # plain work
    runner.submit("import", lambda token, progress: work(token, progress), done,  # cancellable, streamed
                  on_progress=lambda fraction, payload: ..., with_progress=True)

- Latest request wins per key: a newer submit with the same key cancels the older one's token and drops
  its result, progress and error (`cancel(key)` and `cancel_prefix(prefix)` do the same without a newer one).
- `progress(fraction, payload)` may be called from the worker any number of times: the payload is any
  object (a message, a streamed piece of text, one result of a batch) and reaches `on_progress` in order.
- An error is reported exactly once: to the submit's `on_error` when given, else to the runner's
  `on_error` (the window shows it in its status bar). Work that stops because its token was cancelled
  reports nothing and is counted in `cancelled`.
- `synchronous=True` runs every submit at once on the calling thread (tests that need no event loop).
"""
from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

Progress = Callable[[float, object], None]


def _alive(callback: Callable[..., Any] | None) -> bool:
    """False once the widget a bound-method callback belongs to has been deleted (its window closed)."""
    owner = getattr(callback, "__self__", None)
    return not isinstance(owner, QObject) or shiboken6.isValid(owner)


class CancelToken:
    """Checked by long work between chunks; `cancel()` may be called from any thread. Calling the token
    answers "should I stop?", so it can be handed to readers that take a `should_cancel` callable."""

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
    progress = Signal(float, object)
    stopped = Signal()


def _emit(signal, *args) -> None:
    try:
        signal.emit(*args)
    except RuntimeError:
        pass  # the runner was deleted while the work ran: nobody is left to tell


class _Job(QRunnable):
    def __init__(self, fn: Callable[..., Any], relay: _Relay, token: CancelToken, with_progress: bool) -> None:
        super().__init__()
        self.fn = fn
        self.relay = relay
        self.token = token
        self.with_progress = with_progress
        self.setAutoDelete(True)

    def run(self) -> None:
        if self.token.cancelled:  # superseded before a thread was free: never started
            _emit(self.relay.stopped)
            return
        try:
            if self.with_progress:
                result = self.fn(self.token, lambda f, payload="": _emit(self.relay.progress, float(f), payload))
            else:
                result = self.fn()
        except BaseException as exc:  # reported to the GUI, never lost in a worker
            if self.token.cancelled:
                _emit(self.relay.stopped)
                return
            exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            _emit(self.relay.failed, exc)
            return
        _emit(self.relay.done, result)


class TaskRunner(QObject):
    """Runs callables on a thread pool; see the module docstring for what comes back and when."""

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None,
                 on_error: Callable[[BaseException], None] | None = None, synchronous: bool = False) -> None:
        super().__init__(parent)
        self.pool = pool or QThreadPool.globalInstance()
        self.on_error = on_error
        self.on_success: Callable[[str], None] | None = None  # told the key of each result delivered
        self.synchronous = synchronous
        self.cancelled = 0  # work that stopped early or never started because it was superseded
        self._generation: dict[str, int] = {}
        self._tokens: dict[str, CancelToken] = {}
        self._relays: set[_Relay] = set()
        self._closed = False

    def submit(self, key: str, fn: Callable[..., Any], on_done: Callable[[Any], None],
               on_error: Callable[[BaseException], None] | None = None,
               on_progress: Callable[[float, Any], None] | None = None, with_progress: bool = False) -> CancelToken:
        """Run `fn()` (or `fn(token, progress)` when `with_progress`) and call `on_done(result)` on the GUI thread."""
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

        def current() -> bool:
            return self._generation.get(key) == generation and not token.cancelled and not self._closed

        def finish() -> None:
            self._relays.discard(relay)
            if self._tokens.get(key) is token:
                del self._tokens[key]
            # The relay's connections hold these closures and the closures hold the relay: a cycle through C++
            # that Python's collector cannot see. Deleting the relay once it has said its last word frees both,
            # and with them the callbacks (and the widgets they name) of finished work.
            relay.deleteLater()

        def deliver(result: Any) -> None:
            finish()
            if current() and _alive(on_done):
                on_done(result)
                if self.on_success is not None:
                    self.on_success(key)
            elif token.cancelled or self._generation.get(key) != generation:
                self.cancelled += 1

        def fail(exc: BaseException) -> None:
            finish()
            if not current():
                self.cancelled += 1
                return
            handler = on_error if on_error is not None else self.on_error
            if handler is not None and _alive(handler):
                handler(exc)

        def stopped() -> None:
            finish()
            self.cancelled += 1

        def progressed(fraction: float, payload: Any) -> None:
            if current() and _alive(on_progress):
                on_progress(fraction, payload)

        relay.done.connect(deliver)
        relay.failed.connect(fail)
        relay.stopped.connect(stopped)
        if on_progress is not None:
            relay.progress.connect(progressed)
        job = _Job(fn, relay, token, with_progress)
        if self.synchronous:
            job.run()  # signals of an object on this thread are delivered at once
            return token
        self._relays.add(relay)
        self.pool.start(job)
        return token

    def cancel(self, key: str) -> None:
        """Stop the work under `key`; whatever it still reports is dropped."""
        token = self._tokens.get(key)
        if token is not None:
            token.cancel()
        self._generation[key] = self._generation.get(key, 0) + 1

    def cancel_prefix(self, prefix: str) -> None:
        """Cancel every key that starts with `prefix` (all lanes of a stimulus, say)."""
        for key in [k for k in self._generation if k.startswith(prefix)]:
            self.cancel(key)

    def close(self) -> None:
        """Cancel everything; results that still arrive are dropped (their views are going away)."""
        self._closed = True
        for token in list(self._tokens.values()):
            token.cancel()

    def busy(self) -> bool:
        return bool(self._relays)

    def running(self) -> int:
        """How many submitted jobs have not reported back yet."""
        return len(self._relays)

    def wait(self, msecs: int = 30000) -> bool:
        return self.pool.waitForDone(msecs)
