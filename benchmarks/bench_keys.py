"""Key dispatch figures: what the window's application-wide key filter adds to every event Qt delivers, and
how long one key takes from press to action. `run()` returns (name, median, unit) rows; the baseline (the
same events with no filter installed) is measured in the same run.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EVENTS = 100_000
ROUNDS = 5


def _per_event_us(target) -> float:
    from PySide6.QtCore import QCoreApplication, QEvent
    start = time.perf_counter()
    for _ in range(EVENTS):
        QCoreApplication.sendEvent(target, QEvent(QEvent.Type.User))
    return (time.perf_counter() - start) / EVENTS * 1e6


def run() -> list[tuple[str, float, str]]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication, QWidget

    from app.keymap import MEDIA, PLAY_PAUSE, default_keymap
    from widgets.keys import KeyDispatcher

    app = QApplication.instance() or QApplication([])
    target = QObject()
    baseline = statistics.median(_per_event_us(target) for _ in range(ROUNDS))
    root = QWidget()
    root.show()
    app.processEvents()
    dispatcher = KeyDispatcher(root, default_keymap(), lambda: (MEDIA,))
    pressed = []
    dispatcher.register_all({PLAY_PAUSE: lambda: pressed.append(1)})
    filtered = statistics.median(_per_event_us(target) for _ in range(ROUNDS))
    key_times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(1000):
            QCoreApplication.sendEvent(root, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Space,
                                                       Qt.KeyboardModifier.NoModifier, " "))
        key_times.append((time.perf_counter() - start) / 1000 * 1e6)
    assert len(pressed) == 1000 * ROUNDS, "the key did not reach its action"
    root.close()
    return [("event_delivery_without_key_filter", baseline, "us"),
            ("event_delivery_with_key_filter", filtered, "us"),
            ("key_filter_cost_per_event", filtered - baseline, "us"),
            ("key_press_to_action", statistics.median(key_times), "us")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.3f} {unit}")
