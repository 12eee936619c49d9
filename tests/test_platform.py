"""Guards for the platform pieces we pin: a regression here crashes the app, not a test."""
from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication


def test_processing_events_does_not_leak_references_to_none(qapp):
    # PySide6 6.12.0 drops one reference to None per call; the interpreter aborts once None's count hits zero.
    before = sys.getrefcount(None)
    for _ in range(2000):
        QCoreApplication.processEvents()
        QCoreApplication.sendPostedEvents()
    assert sys.getrefcount(None) >= before - 50
