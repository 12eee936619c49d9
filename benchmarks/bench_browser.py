"""Start-up and browsing figures: cold start to first painted window, first start on an empty home (the
window as `thinslice` starts it, before the sample's import), each beside a bare PySide6 window started the
same way, and stimulus switch latency."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

COLD_START = r"""
import sys, time
t0 = float(sys.argv[2])
sys.path.insert(0, sys.argv[3])
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
    print(time.time() - t0)
    app.quit()
QTimer.singleShot(0, painted)
app.exec()
"""


# the window as `thinslice` starts it on a fresh home: the default store is made, and the sample waits for
# the window's first paint
FIRST_START = r"""
import sys, time
t0 = float(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.cli import gui_parser
from widgets import gui
store = gui.open_window_store(None)
win = gui.show_window(store, gui_parser().parse_args([]), QSettings(sys.argv[3], QSettings.Format.IniFormat))
def painted():
    print(time.time() - t0)
    app.quit()
QTimer.singleShot(0, painted)
app.exec()
"""


def first_start_empty_home_s(runs: int = 5) -> float:
    """Seconds from starting the interpreter to the window's first paint, on a home with no store yet."""
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "THINSLICE_HOME": home}
            out = subprocess.run([sys.executable, "-c", FIRST_START, repr(time.time()), str(ROOT),
                                  str(Path(home) / "settings.ini")], capture_output=True, text=True, env=env,
                                 timeout=120)
            times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def cold_start_s(db: Path, runs: int = 5) -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", COLD_START, str(db), repr(time.time()), str(ROOT)],
                             capture_output=True, text=True, env=env, timeout=120)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def bare_qt_start_s(runs: int = 5) -> float:
    code = ("import sys,time; t0=float(sys.argv[1]); from PySide6.QtWidgets import QApplication, QMainWindow;"
            "from PySide6.QtCore import QTimer; a=QApplication([]); w=QMainWindow(); w.show();"
            "QTimer.singleShot(0, lambda: (print(time.time()-t0), a.quit())); a.exec()")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    times = [float(subprocess.run([sys.executable, "-c", code, repr(time.time())], capture_output=True, text=True,
                                  env=env, timeout=60).stdout.strip()) for _ in range(runs)]
    return statistics.median(times)


def switch_latency_ms(db: Path, switches: int = 15) -> float:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance() or QApplication([])
    from widgets.main_window import MainWindow, wait_until_idle
    from app.session import Session
    from storage.store import Store
    store = Store.open(db)
    win = MainWindow(store, Session(), QSettings())
    win.show()
    wait_until_idle(win)
    shown: list[int] = []
    win.detailShown.connect(shown.append)
    times = []
    for i in range(switches):
        row = 1 + (i % (win.table_model.rowCount() - 1))
        before = len(shown)
        t0 = time.perf_counter()
        win.table.selectRow(row)
        while len(shown) == before:
            QCoreApplication.processEvents()
        win.repaint()
        times.append((time.perf_counter() - t0) * 1000)
    win.close()
    store.close()
    del app
    return statistics.median(times)


def run() -> list[tuple[str, float, str]]:
    from fixtures_store import friendbench_like_plan, make_store
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        make_store(db, friendbench_like_plan(Path(tmp), n_stimuli=200)).close()
        cold = cold_start_s(db)
        first = first_start_empty_home_s()
        bare = bare_qt_start_s()
        switch = switch_latency_ms(db)
    return [("cold_start_to_first_paint", cold, "s"),
            ("cold_start_vs_bare_qt_window_ratio", cold / bare, "x"),
            ("first_start_empty_home_s", first, "s"),
            ("first_start_vs_bare_qt_window_ratio", first / bare, "x"),
            ("bare_qt_window_start_s", bare, "s"),
            ("stimulus_switch_to_detail_painted", switch, "ms")]
