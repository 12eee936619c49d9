"""Team figures: 20 annotator processes editing at once against a local PostgreSQL server.

Each process is a member at work: its own local store joined to the team, an `AnnotationModel` and a
`TeamSession` listening on the channel; it makes its edits (add a label, move it, relabel it, in turn) one
after another as fast as it can, each timed from the call to its return (written locally, queued, sent and
answered by the server). The figures are the median and 99th-percentile edit latency over all edits, edits
per second over the burst, and how many were lost, counted on the server (events per member). The same
number of edits made through the model into one local DuckDB store, with no team, is the baseline, in the
same run. Each member labels their own share of the release (a dataset of its own), so a client spends
its time on its own edits and on hearing of the others', not on copying 9,500 labels into its store.

THINSLICE_BENCH_TEAM_EDITS sets the edits per process. The default is 100 (2,000 edits in all), which keeps
the run under a minute on a two-core machine, where twenty client processes share the cores with the server;
THINSLICE_BENCH_TEAM_EDITS=500 gives the full 10,000 (six minutes there, measured while the machine was busy
with other work). The figures' names say which was run.
Skipped without PostgreSQL.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROCESSES = 20
EDITS = int(os.environ.get("THINSLICE_BENCH_TEAM_EDITS", "100"))


def _edits(model, count: int) -> list[float]:
    """Make `count` edits through `model` (stimulus shown already); each one's latency in ms."""
    latencies, label = [], None
    for i in range(count):
        start = time.perf_counter()
        step = i % 3
        if step == 0 or label is None:
            label = model.add_label("vocal", "laugh", float(i % 400), float(i % 400) + 0.5)
        elif step == 1:
            model.move(label.id, (float(i % 400) + 0.1, float(i % 400) + 0.7))
        else:
            model.relabel([label.id], "sigh")
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def _member_store(path: Path, dataset: str):
    from tests.pg_server import member_store
    return member_store(path, dataset)


def worker(folder: str, url: str, member: str, count: int) -> None:
    """One annotator process: join, wait for the start signal, edit, write latencies to a file."""
    from app.annotation_model import AnnotationModel
    from app.changes import ChangeChannel
    from app.team import TeamSession, join_team
    from storage.annotations import AnnotationStore
    here = Path(folder)
    store = _member_store(here / f"{member}.duckdb", f"share-{member}")
    join_team(store, url, member)
    model = AnnotationModel(AnnotationStore(store), ChangeChannel(), annotator=member)
    session = TeamSession(store, model)
    session.start()
    model.load(store.cursor().execute("SELECT min(id) FROM stimulus").fetchone()[0])
    (here / f"{member}.ready").touch()
    while not (here / "go").exists():
        time.sleep(0.01)
    began = time.time()
    latencies = _edits(model, count)
    ended = time.time()
    waiting = session.status().waiting
    session.stop()
    store.close()
    (here / f"{member}.json").write_text(json.dumps({"latencies": latencies, "began": began, "ended": ended,
                                                      "waiting": waiting}))


def _baseline_ms(folder: Path, total: int) -> list[float]:
    from app.annotation_model import AnnotationModel
    from storage.annotations import AnnotationStore
    store = _member_store(folder / "alone.duckdb", "alone")
    model = AnnotationModel(AnnotationStore(store), annotator="ana")
    model.load(store.cursor().execute("SELECT min(id) FROM stimulus").fetchone()[0])
    latencies = _edits(model, total)
    store.close()
    return latencies


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def run() -> list[tuple[str, float, str]]:
    from storage import team_server
    from tests import pg_server
    if not pg_server.available():
        print("# bench_team skipped: PostgreSQL server binaries not found", file=sys.stderr)
        return []
    total = PROCESSES * EDITS
    server, root = pg_server.start_server()
    try:
        url = server.new_database()
        members = [f"annotator{i:02d}" for i in range(PROCESSES)]
        urls = {m: server.add_member(url, m) for m in members}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            children = [subprocess.Popen([sys.executable, __file__, "worker", tmp, urls[m], m, str(EDITS)],
                                         cwd=str(ROOT)) for m in members]
            while len(list(folder.glob("*.ready"))) < PROCESSES:
                if any(c.poll() not in (None, 0) for c in children):
                    raise RuntimeError("an annotator process failed to start")
                time.sleep(0.05)
            (folder / "go").touch()
            for child in children:
                if child.wait() != 0:
                    raise RuntimeError("an annotator process failed")
            results = [json.loads((folder / f"{m}.json").read_text()) for m in members]
            baseline = _baseline_ms(folder, total)
        with team_server.connect(url) as con:
            counts = dict(con.execute("SELECT member, count(*) FROM thinslice.annotation_event GROUP BY member")
                          .fetchall())
    finally:
        pg_server.shut_down(server, root)
    latencies = [v for r in results for v in r["latencies"]]
    span_s = max(r["ended"] for r in results) - min(r["began"] for r in results)
    lost = sum(max(0, EDITS - counts.get(m, 0)) for m in members)
    return [
        (f"team_edit_median_ms_{PROCESSES}x{EDITS}", statistics.median(latencies), "ms"),
        (f"team_edit_p99_ms_{PROCESSES}x{EDITS}", _p99(latencies), "ms"),
        (f"team_edits_per_s_{PROCESSES}x{EDITS}", total / span_s, "edits/s"),
        (f"team_edits_lost_{PROCESSES}x{EDITS}", float(lost), "edits"),
        (f"team_baseline_local_edit_median_ms_{total}", statistics.median(baseline), "ms"),
        (f"team_baseline_local_edit_p99_ms_{total}", _p99(baseline), "ms"),
        (f"team_baseline_local_edits_per_s_{total}", total / (sum(baseline) / 1000), "edits/s"),
    ]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        sys.path.insert(0, str(ROOT))
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.path.insert(0, str(ROOT))
        for name, value, unit in run():
            print(f"{name} {value:.4g} {unit}")
