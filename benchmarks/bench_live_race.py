"""A race on stage: the longest event-loop stall while four contenders stream 256 KB answers at once into the
presentation's race columns, from a local server in its own process (target under 50 ms).

`live_race_4_models_longest_stall_ms` is the longest gap between the ticks of a 1 ms timer from pressing R until
every column has its answer (the live client's modules are loaded before, once per process, as the stage
does when it opens); `live_race_idle_loop_longest_gap_ms` is the same loop's longest gap while idle, measured
in the same run as the baseline.
"""
from __future__ import annotations

import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

ANSWER_BYTES = 256 * 1024   # the default size limit: each answer is complete and kept
CONTENDERS = 4
RUNS = 3
LINE = "They tease each other about a trip they took together, which strangers would not know: familiar.\n"

SERVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from live_server import Reply, ScriptedServer
text = (sys.argv[3] * (int(sys.argv[2]) // len(sys.argv[3]) + 1))[: int(sys.argv[2])]
with ScriptedServer(lambda body: Reply(text=text, chunk_size=1024), lifetime_s=600, max_requests=1000) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()   # until the benchmark closes our stdin
"""


def _server() -> tuple[subprocess.Popen, str]:
    """A local endpoint in its own process, as a real one is; it answers every request with 256 KB."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT / "tests"), str(ANSWER_BYTES), LINE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()  # type: ignore[union-attr]


def _longest_gap_ms(until, timeout_s: float = 120.0) -> float:
    """Run the event loop with a 1 ms timer until `until()` holds; the longest gap between its ticks."""
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


def _race(show) -> float:
    """Press R's action (asking every contender afresh) inside the measured loop and return the longest stall
    until the race is over."""
    from PySide6.QtCore import QTimer

    views: list[object] = []

    def press() -> None:
        show.start_race(ask_again=True)
        views.append(show.race_view)

    QTimer.singleShot(0, press)
    stall = _longest_gap_ms(lambda: bool(views) and not show.race_running())
    lanes = views[0].state.lanes
    if not all(lane.status == "answered" and lane.chars == ANSWER_BYTES for lane in lanes):
        raise RuntimeError(f"unexpected end of the race: {[(lane.status, lane.chars, lane.message) for lane in lanes]}")
    return stall


def run() -> list[tuple[str, float, str]]:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.changes import ChangeChannel
    from app.contenders import Contender
    from app.live.service import LiveService
    from fixtures_store import friendbench_like_plan, make_store
    from storage import queries
    from widgets.presentation_view import PresentationView, RaceDesk
    from widgets.settings_store import SettingsStore
    from widgets.tasks import TaskRunner

    app = QApplication.instance() or QApplication([])
    raced, idle = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = make_store(root / "bench.duckdb", friendbench_like_plan(root, n_stimuli=2, models=("alpha",)))
        settings = SettingsStore(QSettings(str(root / "race.ini"), QSettings.Format.IniFormat))
        server, url = _server()
        settings.update(contenders=tuple(Contender(f"Model {i + 1}", url, f"bench-model-{i + 1}", "text",
                                                   "THINSLICE_BENCH_NO_KEY") for i in range(CONTENDERS)))
        runner = TaskRunner()
        show = PresentationView()
        show.enable_race(RaceDesk(lambda: LiveService(store, ChangeChannel()), settings, runner))
        sid = store.cursor().execute("SELECT min(id) FROM stimulus").fetchall()[0][0]
        show.set_content(queries.stimulus_detail(store.cursor(), sid), ["alpha"])
        show.resize(1920, 1080)
        show.show()
        # what the stage loads on a worker when it opens, once per process (`prepare_race`); not part of racing
        importlib.import_module("app.live.race").prepare_race()
        try:
            for _ in range(RUNS):
                raced.append(_race(show))
                quiet_until = time.perf_counter() + 2.0
                idle.append(_longest_gap_ms(lambda: time.perf_counter() > quiet_until))
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait(10)
            runner.wait()
            show.close()
            show.deleteLater()
            app.processEvents()
            store.close()
    return [("live_race_4_models_longest_stall_ms", statistics.median(raced), "ms"),
            ("live_race_idle_loop_longest_gap_ms", statistics.median(idle), "ms")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
