"""Run a callable over many items with a concurrency limit, progress, cancel and resume.

Qt-free: callbacks run on the thread that called :func:`run_batch` (the GUI wraps it in a
worker and forwards the callbacks as signals). Items whose id is in ``done_ids`` are skipped,
so a stopped batch resumes where it left off; ``work`` may also raise :class:`Skipped` for an item it
finds already done. Cancel stops new work at once; the items already running finish (a live call polls
the same cancel flag and stops promptly).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class Skipped(Exception):
    """Raised by a batch's work for an item that needs no work (it is counted as skipped)."""


@dataclass(frozen=True)
class BatchProgress:
    done: int
    failed: int
    skipped: int
    total: int


@dataclass
class BatchReport(Generic[Result]):
    results: dict[Hashable, Result] = field(default_factory=dict)
    errors: dict[Hashable, str] = field(default_factory=dict)
    skipped: int = 0
    cancelled: bool = False


def run_batch(
    items: Iterable[Item],
    work: Callable[[Item], Result],
    item_id: Callable[[Item], Hashable],
    done_ids: Iterable[Hashable] = (),
    max_workers: int = 4,
    on_progress: Callable[[BatchProgress], None] | None = None,
    on_result: Callable[[Hashable, Result | None, str | None], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> BatchReport[Result]:
    """Apply ``work`` to every item not already done, at most ``max_workers`` at a time.

    ``on_result(id, result, error)`` is called once per finished item (``error`` is the
    exception's message when ``work`` raised; the batch goes on). Returns every result and error
    by id, how many were skipped, and whether it was cancelled.
    """
    if max_workers < 1:
        raise ValueError("max_workers must be at least 1")
    finished = set(done_ids)
    pending = list(items)
    todo = [item for item in pending if item_id(item) not in finished]
    report: BatchReport[Result] = BatchReport(skipped=len(pending) - len(todo))
    total = len(pending)

    def progress() -> None:
        if on_progress is not None:
            on_progress(BatchProgress(len(report.results), len(report.errors), report.skipped, total))

    progress()
    queue = iter(todo)
    running: dict[Future, Hashable] = {}
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="batch") as pool:

        def submit_next() -> None:
            for item in queue:
                running[pool.submit(work, item)] = item_id(item)
                return

        report.cancelled = cancel is not None and cancel()
        if not report.cancelled:
            for _ in range(max_workers):
                submit_next()
        while running:
            finished_now, _ = wait(list(running), timeout=0.05, return_when=FIRST_COMPLETED)
            if cancel is not None and cancel():
                report.cancelled = True
            for future in finished_now:
                key = running.pop(future)
                error = future.exception()
                if isinstance(error, Skipped):
                    report.skipped += 1
                elif error is None:
                    report.results[key] = future.result()
                    if on_result is not None:
                        on_result(key, report.results[key], None)
                else:
                    report.errors[key] = str(error) or type(error).__name__
                    if on_result is not None:
                        on_result(key, None, report.errors[key])
                progress()
                if not report.cancelled:
                    submit_next()
    return report
