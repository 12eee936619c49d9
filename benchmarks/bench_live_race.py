"""A race on stage: the longest event-loop stall while four contenders stream 256 KB answers at once into the
presentation's race columns of the real window, from a local server in its own process (target under 50 ms).

`live_race_4_models_longest_stall_ms` is the longest gap between the ticks of a 1 ms timer from pressing R until
every column has its answer (the live client's modules are loaded before, once per process, as the stage does
when it opens); `live_race_window_refresh_longest_stall_ms` the longest gap after that, while the window
refreshes its table, facets, detail and dashboard for what the race stored (one change for the whole race);
`live_race_idle_loop_longest_gap_ms` is the same loop's longest gap while idle, measured in the same run as
the baseline.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from event_loop import longest_gap_ms  # noqa: E402  (benchmarks/ is on the path)

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


def _race(show, settled) -> tuple[float, float]:
    """Press R's action (asking every contender afresh) inside the measured loop; the longest stall until the
    race is over, and then until `settled()` (the window has refreshed what the answers changed)."""
    from PySide6.QtCore import QTimer

    views: list[object] = []

    def press() -> None:
        show.start_race(ask_again=True)
        views.append(show.race_view)

    QTimer.singleShot(0, press)
    stall = longest_gap_ms(lambda: bool(views) and not show.race_running())
    refresh = longest_gap_ms(settled)
    lanes = views[0].state.lanes
    if not all(lane.status == "answered" and lane.chars == ANSWER_BYTES for lane in lanes):
        raise RuntimeError(f"unexpected end of the race: {[(lane.status, lane.chars, lane.message) for lane in lanes]}")
    return stall, refresh


def run() -> list[tuple[str, float, str]]:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.contenders import Contender
    from app.session import Session
    from fixtures_store import friendbench_like_plan, make_store
    from widgets.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    raced, refreshed, idle = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = make_store(root / "bench.duckdb", friendbench_like_plan(root, n_stimuli=2, models=("alpha",)))
        server, url = _server()
        # the whole window, so each stored answer also refreshes the table, facets, detail and dashboard
        window = MainWindow(store, Session(), QSettings(str(root / "race.ini"), QSettings.Format.IniFormat))
        window.settings_store.update(contenders=tuple(
            Contender(f"Model {i + 1}", url, f"bench-model-{i + 1}", "text", "THINSLICE_BENCH_NO_KEY")
            for i in range(CONTENDERS)))
        window.show()
        window.select_stimulus_id(store.cursor().execute("SELECT min(id) FROM stimulus").fetchall()[0][0])
        longest_gap_ms(lambda: window.compare.detail is not None, timeout_s=30)
        show = window.compare.enter_presentation(full_screen=False, player=window.media_page.player)
        show.resize(1920, 1080)
        # what the stage loads on a worker as it opens, once per process (`prepare_race`); not part of racing
        longest_gap_ms(lambda: not window.runner.busy(), timeout_s=30)
        try:
            for _ in range(RUNS):
                stall, refresh = _race(show, lambda: not window.runner.busy())
                raced.append(stall)
                refreshed.append(refresh)
                quiet_until = time.perf_counter() + 2.0
                idle.append(longest_gap_ms(lambda: time.perf_counter() > quiet_until))
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait(10)
            show.leave()
            window.close()
            window.runner.wait()
            window.deleteLater()
            app.processEvents()
            store.close()
    return [("live_race_4_models_longest_stall_ms", statistics.median(raced), "ms"),
            ("live_race_window_refresh_longest_stall_ms", statistics.median(refreshed), "ms"),
            ("live_race_idle_loop_longest_gap_ms", statistics.median(idle), "ms")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
