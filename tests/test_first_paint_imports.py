"""What loads before the window first paints: the analysis stack (Praat, the cue definitions, the worker
processes) is loaded by the first analysis, and polars with the dashboards and the rules by the first dataset
read, not by the start, so they cost the start nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import PySide6  # noqa: F401  (a window test: the window starts in a child process)

from storage.store import Store

ROOT = Path(__file__).resolve().parents[1]
# what the first paint does not need
DEFERRED = ("parselmouth", "app.cues.acoustics", "app.cues.tracks", "app.cues.measures", "app.cues.workers",
            "concurrent.futures.process", "storage.importers.label_sets", "polars", "app.dashboard", "app.metrics",
            # the benchmarks' rules (their registry and profile types are light and load with the window)
            "app.benchmarks.friendbench", "app.benchmarks.echomind", "app.benchmarks.agentviss",
            "app.benchmarks.ncp", "app.benchmarks.generic")

FIRST_PAINT = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from widgets.main_window import MainWindow
from app.session import Session
from storage.store import Store
store = Store.open(sys.argv[1])
win = MainWindow(store, Session(), QSettings())
win.show()
def painted():
    print(json.dumps(sorted(sys.modules)))
    app.quit()
QTimer.singleShot(0, painted)
app.exec()
"""


def test_the_analysis_stack_is_not_loaded_before_the_window_shows(tmp_path):
    db = tmp_path / "store.duckdb"
    Store.open(db).close()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", FIRST_PAINT, str(db), str(ROOT)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "widgets.analysis_tracks" in loaded  # the window with its tracks view did show
    assert sorted(loaded & set(DEFERRED)) == []
