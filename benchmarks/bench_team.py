"""Team figures: 50 annotator processes editing at once against a local PostgreSQL server, beside the same
session into local DuckDB stores.

Each process is a member at work: its own local store joined to the team, an `AnnotationModel` and a
`TeamSession` on its one connection, as the command line runs it (an edit returns once the server has
answered it). Before the clock starts each process makes a few edits on another stimulus, so what is timed
is a member at work, not a program loading its modules. It then makes its edits (add a label, move it,
relabel it, in turn), each timed from the call to its return (written locally, queued, sent and answered),
with a pause between one edit's return and the next: 0.5 to 1.5 times THINSLICE_BENCH_TEAM_PACE_S (default
1.0 s, uniformly drawn), so 50 members offer about 50 edits a second, several times what a team of 50
people labelling makes. With the pace set to 0 every member edits flat out, which measures how many edits
a second the machine can take, not what a member waits for.

The figures are the median and 99th-percentile edit latency over all edits, edits per second over the
session, and how many acknowledged edits the server lacks (events per member on the timed stimulus,
counted on the server). The baseline is the same session by the same number of processes into local
stores with no team, in the same run; the ratios compare the two. Each member labels their own share of
the release (a dataset of its own), so a client spends its time on its own edits, not on copying everyone's
labels into its store.

THINSLICE_BENCH_TEAM_MEMBERS (default 50) and THINSLICE_BENCH_TEAM_EDITS (edits per member, default 60:
3,000 timed edits, 30 of them above the 99th percentile)
size the session; the figures' names say the number of members. The local baseline runs at the same pace
with THINSLICE_BENCH_TEAM_BASELINE_EDITS edits per member (default 30: the same load, a smaller sample, so
the whole of `benchmarks/run.py` stays within ten minutes). The cluster is `benchmarks.pg_cluster`, so
this runs without pytest. Skipped without PostgreSQL.
"""
from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import pg_cluster  # noqa: E402  (the project root is on the path from here on)

MEMBERS = int(os.environ.get("THINSLICE_BENCH_TEAM_MEMBERS", "50"))
EDITS = int(os.environ.get("THINSLICE_BENCH_TEAM_EDITS", "60"))
PACE_S = float(os.environ.get("THINSLICE_BENCH_TEAM_PACE_S", "1.0"))
BASELINE_EDITS = int(os.environ.get("THINSLICE_BENCH_TEAM_BASELINE_EDITS", "30"))
WARM_UP_EDITS = 3


def _edits(model, count: int, pace_s: float = 0.0, rng: random.Random | None = None) -> list[float]:
    """Make `count` edits through `model` (stimulus shown already), pausing 0.5-1.5 x `pace_s` after each;
    each one's latency in ms."""
    latencies, label = [], None
    for i in range(count):
        if pace_s and i:
            time.sleep(pace_s * (rng or random).uniform(0.5, 1.5))
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


def _stimulus(store, name: str) -> int:
    return store.cursor().execute("SELECT id FROM stimulus WHERE external_id = ?", [name]).fetchone()[0]


def worker(folder: str, url: str, member: str, count: int, mode: str) -> None:
    """One annotator process (`mode` team or local): ready its store, wait for the start signal, edit, wait
    for every member to have edited, write its latencies to a file."""
    from app.annotation_model import AnnotationModel
    from app.changes import ChangeChannel
    from app.team import TeamSession, join_team
    from storage.annotations import AnnotationStore
    here = Path(folder)
    store = pg_cluster.member_store(here / f"{mode}-{member}.duckdb", f"share-{member}")
    model = AnnotationModel(AnnotationStore(store), ChangeChannel(), annotator=member)
    session = None
    if mode == "team":
        join_team(store, url, member)
        session = TeamSession(store, model)
        session.start()
    model.load(_stimulus(store, pg_cluster.STIMULI[-1]))
    _edits(model, WARM_UP_EDITS)
    if session is not None:
        session.wait_idle()
    model.load(_stimulus(store, pg_cluster.STIMULI[0]))
    (here / f"{mode}-{member}.ready").touch()
    while not (here / f"go-{mode}").exists():
        time.sleep(0.01)
    rng = random.Random(member)
    time.sleep(PACE_S * rng.uniform(0, 1))   # members at work are not in step: each begins somewhere in a pause
    began = time.time()
    latencies = _edits(model, count, PACE_S, rng)
    ended = time.time()
    waiting = session.status().waiting if session is not None else 0
    # stopped only once every member has made their edits: a process winding down (its session stopped, its
    # store closed) takes the two cores from the members still editing, and their last edits would measure that
    (here / f"{mode}-{member}.edited").touch()
    while not (here / f"done-{mode}").exists():
        time.sleep(0.01)
    if session is not None:
        session.stop()
    store.close()
    (here / f"{mode}-{member}.json").write_text(json.dumps({"latencies": latencies, "began": began,
                                                             "ended": ended, "waiting": waiting}))


def _burst(folder: Path, url: str, urls: dict[str, str], mode: str, edits: int) -> list[dict]:
    """Start one process per member, let them all edit at once, and collect what each measured."""
    children = [subprocess.Popen([sys.executable, __file__, "worker", str(folder), urls.get(m, url), m,
                                  str(edits), mode], cwd=str(ROOT)) for m in urls]
    try:
        while len(list(folder.glob(f"{mode}-*.ready"))) < len(urls):
            if any(c.poll() not in (None, 0) for c in children):
                raise RuntimeError(f"an annotator process ({mode}) failed to start")
            time.sleep(0.05)
        (folder / f"go-{mode}").touch()
        while len(list(folder.glob(f"{mode}-*.edited"))) < len(urls):
            if any(c.poll() not in (None, 0) for c in children):
                raise RuntimeError(f"an annotator process ({mode}) failed")
            time.sleep(0.05)
        (folder / f"done-{mode}").touch()
        for child in children:
            if child.wait() != 0:
                raise RuntimeError(f"an annotator process ({mode}) failed")
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    return [json.loads((folder / f"{mode}-{m}.json").read_text()) for m in urls]


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def _rate(results: list[dict]) -> float:
    total = sum(len(r["latencies"]) for r in results)
    return total / (max(r["ended"] for r in results) - min(r["began"] for r in results))


def run() -> list[tuple[str, float, str]]:
    from storage import team_server
    if not pg_cluster.available():
        print("# bench_team skipped: PostgreSQL server binaries not found", file=sys.stderr)
        return []
    # durable commits and PostgreSQL's default of 100 connections, which a team of 50 fits in
    server, root = pg_cluster.start_server(durable=True, max_connections=100)
    try:
        url = server.new_database()
        members = [f"annotator{i:02d}" for i in range(MEMBERS)]
        urls = {m: server.add_member(url, m) for m in members}
        with tempfile.TemporaryDirectory() as tmp:
            team = _burst(Path(tmp), url, urls, "team", EDITS)
            local = _burst(Path(tmp), url, urls, "local", BASELINE_EDITS)
        with team_server.connect(url) as con:
            counts = dict(con.execute("SELECT member, count(*) FROM thinslice.annotation_event WHERE stimulus = %s"
                                      " GROUP BY member", [pg_cluster.STIMULI[0]]).fetchall())
    finally:
        pg_cluster.shut_down(server, root)
    team_ms = [v for r in team for v in r["latencies"]]
    local_ms = [v for r in local for v in r["latencies"]]
    lost = sum(max(0, EDITS - counts.get(m, 0)) for m in members)
    extra = sum(max(0, counts.get(m, 0) - EDITS) for m in members)
    n = MEMBERS
    offered = [(f"team_offered_edits_per_s_{n}_members", n / PACE_S, "edits/s")] if PACE_S else []
    return [*offered,
        (f"team_edit_median_{n}_members_ms", statistics.median(team_ms), "ms"),
        (f"team_edit_p99_{n}_members_ms", _p99(team_ms), "ms"),
        (f"team_edits_per_s_{n}_members", _rate(team), "edits/s"),
        (f"team_edits_lost_{n}_members", float(lost), "edits"),
        (f"team_edits_twice_on_server_{n}_members", float(extra), "edits"),
        (f"team_edits_waiting_at_stop_{n}_members", float(sum(r["waiting"] for r in team)), "edits"),
        (f"local_edit_median_{n}_processes_ms", statistics.median(local_ms), "ms"),
        (f"local_edit_p99_{n}_processes_ms", _p99(local_ms), "ms"),
        (f"local_edits_per_s_{n}_processes", _rate(local), "edits/s"),
        (f"team_to_local_throughput_ratio_{n}_members", _rate(team) / _rate(local), "x"),
        (f"team_to_local_p99_ratio_{n}_members", _p99(team_ms) / _p99(local_ms), "x"),
    ]


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    else:
        for name, value, unit in run():
            print(f"{name} {value:.4g} {unit}")
