"""What the live benchmarks measure of the window's event loop: the longest gap between a 1 ms timer's ticks
while some work goes on, the same measure for every figure and for its idle baseline."""
from __future__ import annotations

import time
from collections.abc import Callable


def longest_gap_ms(until: Callable[[], bool], timeout_s: float = 120.0) -> float:
    """Run the event loop (as the window runs it) with a 1 ms timer until `until()` holds; the longest gap
    between the timer's ticks, in milliseconds."""
    from PySide6.QtCore import QEventLoop, QTimer

    ticks: list[float] = []
    loop = QEventLoop()

    def tick() -> None:
        ticks.append(time.perf_counter())
        if until() or ticks[-1] - ticks[0] > timeout_s:
            loop.quit()

    timer = QTimer()
    timer.setInterval(1)
    timer.timeout.connect(tick)
    timer.start()
    loop.exec()
    timer.stop()
    return max((b - a for a, b in zip(ticks, ticks[1:])), default=0.0) * 1000
