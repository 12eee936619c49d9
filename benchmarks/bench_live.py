"""Live answer figures: the longest event-loop stall while a 4 MB answer streams into the live panel from a
local server in its own process (target under 100 ms).

`live_stream_4mb_longest_stall` is what a user gets by default: the answer streams until the size limit
(256 KB) stops it. `live_stream_4mb_whole_longest_stall` raises the limit to 8 MB so the whole answer is
shown and scored. The idle event loop's own longest gap is the baseline, measured in the same run.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

ANSWER_BYTES = 4 * 1024 * 1024
RUNS = 3
LINE = "The two speakers overlap and laugh, which strangers rarely do; I say familiar.\n"

SERVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from live_server import Reply, ScriptedServer
text = sys.argv[3] * (int(sys.argv[2]) // len(sys.argv[3]))
with ScriptedServer(lambda body: Reply(text=text, chunk_size=1024), lifetime_s=600, max_requests=1000) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()   # until the benchmark closes our stdin
"""


def _server() -> tuple[subprocess.Popen, str]:
    """A local endpoint in its own process, as a real one is: it streams the 4 MB answer on every request."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT / "tests"), str(ANSWER_BYTES), LINE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()  # type: ignore[union-attr]


def _longest_gap_ms(until, timeout_s: float = 120.0) -> float:
    """Run the event loop (as the window runs it) with a 1 ms timer until `until()` holds; the longest gap
    between the timer's ticks."""
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


def _stream(panel, limit_kb: int, whole: bool) -> float:
    """Send once and return the longest stall until the answer (or what the limit let in) is all shown."""
    panel.max_answer_kb.setValue(limit_kb)
    finished: list[object] = []
    panel.answerFinished.connect(finished.append)
    panel.send()
    stall = _longest_gap_ms(lambda: bool(finished) and panel.answer_complete())
    panel.answerFinished.disconnect(finished.append)
    shown = len(panel.answer.toPlainText())
    if (finished[0] is not None) != whole or (shown == ANSWER_BYTES // len(LINE) * len(LINE)) != whole:
        raise RuntimeError(f"unexpected end of the 4 MB answer ({shown} characters shown): {panel.message.text()}")
    return stall


def run() -> list[tuple[str, float, str]]:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.live import LiveSettings
    from app.live.client import DEFAULT_MAX_ANSWER_BYTES
    from app.live.service import LiveService
    from fixtures_store import friendbench_like_plan, make_store
    from storage import queries
    from widgets.live_panel import LivePanel

    app = QApplication.instance() or QApplication([])
    limited, whole, idle = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = make_store(root / "bench.duckdb", friendbench_like_plan(root, n_stimuli=2, models=("alpha",)))
        panel = LivePanel(LiveService(store), settings=QSettings(str(root / "live.ini"), QSettings.Format.IniFormat))
        panel.resize(700, 900)
        panel.show()
        panel.modality.setCurrentText("text")
        panel.stream.setChecked(True)
        sid = store.cursor().execute("SELECT min(id) FROM stimulus").fetchall()[0][0]
        panel.set_detail(queries.stimulus_detail(store.cursor(), sid))
        server, url = _server()
        panel.set_live_settings(LiveSettings(base_url=url, model="bench-model", api_key_env="THINSLICE_BENCH_NO_KEY"))
        panel.timeout.setValue(120)
        import openai  # noqa: F401  (imported once per process on the first ask; not part of streaming)
        try:
            for _ in range(RUNS):
                limited.append(_stream(panel, DEFAULT_MAX_ANSWER_BYTES // 1024, whole=False))
                whole.append(_stream(panel, 8 * 1024, whole=True))
                quiet_until = time.perf_counter() + 2.0
                idle.append(_longest_gap_ms(lambda: time.perf_counter() > quiet_until))
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait(10)
            panel.runner.wait()
            panel.close()
            panel.deleteLater()
            app.processEvents()
            store.close()
    return [("live_stream_4mb_longest_stall", statistics.median(limited), "ms"),
            ("live_stream_4mb_whole_longest_stall", statistics.median(whole), "ms"),
            ("live_idle_loop_longest_gap_baseline", statistics.median(idle), "ms")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
