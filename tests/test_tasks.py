"""The one worker API: results and streamed progress on the GUI thread, latest request wins, one error sink."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QThread

from storage.errors import ThinsliceError
from widgets.tasks import TaskRunner


@pytest.fixture
def runner(qtbot):
    errors: list[BaseException] = []
    tasks = TaskRunner(on_error=errors.append)
    tasks.errors = errors
    yield tasks
    tasks.close()
    tasks.wait(5000)


def test_results_and_streamed_progress_arrive_on_the_gui_thread_in_order(qtbot, runner):
    seen: list = []
    threads: set = set()
    gui = QThread.currentThread()

    def work(token, progress):
        for piece in ("The ", "answer ", "is B"):
            progress(0.5, piece)
        return "done"

    def on_progress(fraction, piece):
        threads.add(QThread.currentThread() is gui)
        seen.append(piece)

    done: list = []
    runner.submit("ask", work, done.append, on_progress=on_progress, with_progress=True)
    qtbot.waitUntil(lambda: done == ["done"], timeout=5000)
    assert "".join(seen) == "The answer is B" and threads == {True}


def test_a_newer_request_with_the_same_key_wins_and_the_older_one_is_cancelled(qtbot, runner):
    started, release = threading.Event(), threading.Event()
    first_token_seen = []

    def slow(token, _progress):
        started.set()
        release.wait(5)
        first_token_seen.append(token.cancelled)
        return "old"

    done: list = []
    old = runner.submit("detail", slow, done.append, with_progress=True)
    assert started.wait(5)
    runner.submit("detail", lambda: "new", done.append)
    release.set()
    qtbot.waitUntil(lambda: runner.running() == 0, timeout=5000)
    assert done == ["new"] and old.cancelled and first_token_seen == [True]
    assert runner.cancelled == 1


def test_an_error_is_reported_once_to_the_one_sink_unless_the_caller_handles_it(qtbot, runner):
    def fail():
        raise ThinsliceError("data.csv line 3: found 'x', expected a number")

    runner.submit("import", fail, lambda _r: None)
    qtbot.waitUntil(lambda: runner.running() == 0, timeout=5000)
    assert [str(e) for e in runner.errors] == ["data.csv line 3: found 'x', expected a number"]
    own: list = []
    runner.submit("import", fail, lambda _r: None, own.append)
    qtbot.waitUntil(lambda: runner.running() == 0, timeout=5000)
    assert len(own) == 1 and len(runner.errors) == 1


def test_synchronous_mode_runs_at_once_on_the_calling_thread(qtbot):
    errors: list = []
    tasks = TaskRunner(on_error=errors.append, synchronous=True)
    done: list = []
    tasks.submit("k", lambda token, progress: (progress(1.0, "half"), threading.get_ident())[1], done.append,
                 with_progress=True)
    assert done == [threading.get_ident()]
    tasks.submit("k", lambda: 1 / 0, done.append)
    assert len(errors) == 1 and isinstance(errors[0], ZeroDivisionError)


def test_finished_work_leaves_nothing_of_its_callbacks_alive(qtbot, runner):
    import gc
    import weakref

    from PySide6.QtCore import QCoreApplication, QEvent

    class Owner:  # stands for a view whose method a result was handed to
        def __init__(self) -> None:
            self.got = []

        def show(self, value) -> None:
            self.got.append(value)

    owners = [Owner() for _ in range(5)]
    refs = [weakref.ref(o) for o in owners]
    for i, owner in enumerate(owners):
        runner.submit(f"job-{i}", lambda i=i: i, owner.show, on_progress=owner.show, with_progress=False)
    qtbot.waitUntil(lambda: not runner.busy() and all(o.got for o in owners), timeout=5000)
    assert [o.got for o in owners] == [[0], [1], [2], [3], [4]]
    del owner, owners
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    assert [r() for r in refs] == [None] * 5
