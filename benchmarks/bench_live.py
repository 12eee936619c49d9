"""Live answer figures: the longest event-loop stall while a 4 MB or 16 MB answer streams into the live panel
from a local server in its own process (target under 100 ms).

`live_stream_4mb_longest_stall` is what a user gets by default: the answer streams until the size limit
(256 KB) stops it. `live_stream_4mb_whole_longest_stall` and `live_stream_16mb_whole_longest_stall` raise the
limit so the whole answer is read, scored and kept (the view shows its end); `live_stream_16mb_end_shown_s` is
the time from the answer's last piece reaching the panel to the view showing the answer's end (target under
2 s). The idle event loop's own longest gap is the baseline, measured in the same run.
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

from event_loop import longest_gap_ms  # noqa: E402  (benchmarks/ is on the path)

ANSWER_BYTES = 4 * 1024 * 1024
LARGE_ANSWER_BYTES = 16 * 1024 * 1024
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


def _server(size: int) -> tuple[subprocess.Popen, str]:
    """A local endpoint in its own process, as a real one is: it streams an answer of `size` bytes on every
    request."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT / "tests"), str(size), LINE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()  # type: ignore[union-attr]


def _stream(panel, limit_kb: int, whole: bool, size: int = ANSWER_BYTES) -> tuple[float, float]:
    """Send once; the longest stall until the answer (or what the limit let in) is all shown, and the seconds
    from the answer's last piece arriving to the view showing its end."""
    panel.max_answer_kb.setValue(limit_kb)
    finished: list[float] = []
    results: list[object] = []

    def done(result: object) -> None:
        finished.append(time.perf_counter())
        results.append(result)

    panel.answerFinished.connect(done)
    panel.send()
    stall = longest_gap_ms(lambda: bool(finished) and panel.answer_complete())
    shown_at = time.perf_counter()
    panel.answerFinished.disconnect(done)
    expected = size // len(LINE) * len(LINE)
    whole_kept = len(panel.answer_text()) == expected and panel.answer.toPlainText().endswith(LINE)
    if (results[0] is not None) != whole or whole_kept != whole:
        raise RuntimeError(f"unexpected end of the answer ({len(panel.answer_text())} characters): "
                           f"{panel.message.text()}")
    return stall, shown_at - finished[0]


def run() -> list[tuple[str, float, str]]:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.live import LiveSettings
    from app.live.client import DEFAULT_MAX_ANSWER_BYTES
    from app.live.service import LiveService
    from fixtures_store import friendbench_like_plan, make_store
    from storage import queries
    from widgets.live_panel import LivePanel
    from widgets.settings_store import SettingsStore

    app = QApplication.instance() or QApplication([])
    limited, whole, large, large_end, idle = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = make_store(root / "bench.duckdb", friendbench_like_plan(root, n_stimuli=2, models=("alpha",)))
        panel = LivePanel(LiveService(store),
                          settings=SettingsStore(QSettings(str(root / "live.ini"), QSettings.Format.IniFormat)))
        panel.resize(700, 900)
        panel.show()
        panel.modality.setCurrentText("text")
        panel.stream.setChecked(True)
        sid = store.cursor().execute("SELECT min(id) FROM stimulus").fetchall()[0][0]
        panel.set_detail(queries.stimulus_detail(store.cursor(), sid))
        servers = {size: _server(size) for size in (ANSWER_BYTES, LARGE_ANSWER_BYTES)}
        panel.timeout.setValue(120)
        import openai  # noqa: F401  (imported once per process on the first ask; not part of streaming)
        try:
            for _ in range(RUNS):
                for size, (_proc, url) in servers.items():
                    panel.set_live_settings(LiveSettings(base_url=url, model="bench-model",
                                                         api_key_env="THINSLICE_BENCH_NO_KEY"))
                    if size == ANSWER_BYTES:
                        limited.append(_stream(panel, DEFAULT_MAX_ANSWER_BYTES // 1024, whole=False)[0])
                        whole.append(_stream(panel, 8 * 1024, whole=True)[0])
                    else:
                        stall, end_shown = _stream(panel, 32 * 1024, whole=True, size=size)
                        large.append(stall)
                        large_end.append(end_shown)
                quiet_until = time.perf_counter() + 2.0
                idle.append(longest_gap_ms(lambda: time.perf_counter() > quiet_until))
        finally:
            for proc, _url in servers.values():
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(10)
            panel.runner.wait()
            panel.close()
            panel.deleteLater()
            app.processEvents()
            store.close()
    return [("live_stream_4mb_longest_stall", statistics.median(limited), "ms"),
            ("live_stream_4mb_whole_longest_stall", statistics.median(whole), "ms"),
            ("live_stream_16mb_whole_longest_stall", statistics.median(large), "ms"),
            ("live_stream_16mb_end_shown_s", statistics.median(large_end), "s"),
            ("live_idle_loop_longest_gap_baseline", statistics.median(idle), "ms")]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.4g} {unit}")
