"""How long an ExploreToM CSV of 13,000 question rows (600 stories) takes to import, story parsing and replay
included, against a bare load of the same file (polars read plus a DuckDB insert) in the same run: the ratio
of the medians of five runs each, and its processor-time twin (every thread's CPU seconds), steady on a
machine others share."""
from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.beliefs.engine import BeliefTracker  # noqa: E402
from app.beliefs.questions import answer_question  # noqa: E402
from app.beliefs.replay import replay_steps  # noqa: E402
from app.beliefs.story import parse_story  # noqa: E402
from app.import_service import run_import  # noqa: E402
from storage.importers.common import ImportOptions  # noqa: E402
from storage.store import Store  # noqa: E402

STORIES = 600
ROWS = 13_000
RUNS = 5
PEOPLE = ["Anne", "Beth", "Carl", "Dana"]
OBJECTS = ["apple", "ball", "key"]
ROOMS = ["kitchen", "hall"]
CONTAINERS = ["box", "basket", "drawer"]


def _story(rng: random.Random, steps: int = 14) -> str:
    """A story the tracker could have written: only actions that succeed leave sentences."""
    tracker = BeliefTracker()
    sentences: list[str] = []
    room = rng.choice(ROOMS)
    for person in rng.sample(PEOPLE, 3):
        sentences += tracker.apply("enter_room", [person, room]).story_sentences
    while len(sentences) < steps:
        person = rng.choice(PEOPLE)
        roll = rng.random()
        if roll < 0.4:
            action = ("move_object_container", [person, rng.choice(OBJECTS), rng.choice(CONTAINERS)], {})
        elif roll < 0.6:
            action = ("leave_room", [person, room], {})
        elif roll < 0.8:
            action = ("enter_room", [person, room], {})
        elif roll < 0.9:
            value = rng.choice(["peeled", "washed"])
            obj = rng.choice(OBJECTS)
            action = ("update_object_state", [person, obj, value, f"<is_{value}>", f"{person} {value} the {obj}."], {})
        else:
            action = ("broadcast_communication", [person, rng.choice(["plan", "party"])], {})
        sentences += tracker.apply(*action).story_sentences
    return " ".join(sentences)


def _questions(story: str) -> list[tuple[str, str]]:
    replay = replay_steps(parse_story(story))
    asked = []
    for a in PEOPLE:
        for obj in OBJECTS:
            asked.append(f"In which container will {a} search for the {obj}?")
            asked.append(f"In which room will {a} search for the {obj}?")
            asked += [f"In which container does {a} think that {b} will search for the {obj}?" for b in PEOPLE if b != a]
    out = []
    for question in asked:
        answer = answer_question(replay, question).answer
        if answer:
            out.append((question, answer))
    return out


def write_csv(path: Path, stories: int = STORIES, rows: int = ROWS, seed: int = 3) -> int:
    """The released CSV's columns, `rows` questions spread over about `stories` stories; returns how many."""
    rng = random.Random(seed)
    records: list[dict[str, str]] = []
    per_story = -(-rows // stories)
    while len(records) < rows:
        story = _story(rng)
        for question, answer in _questions(story)[:per_story]:
            records.append({"story_structure": story, "infilled_story": "(prose)", "question": question,
                            "expected_answer": answer, "qprop=params": "", "qprop=nth_order": "1",
                            "is_false_belief": "False", "param=story_type": "tomi"})
    pl.DataFrame(records[:rows]).write_csv(path)
    return len({r["story_structure"] for r in records[:rows]})


def _import_s(csv: Path, folder: Path, run: int) -> tuple[float, float]:
    """(seconds, CPU seconds) of one import into a new store."""
    store = Store.open(folder / f"import-{run}.duckdb")
    start, cpu = time.perf_counter(), time.process_time()
    run_import(store, "exploretom", csv, ImportOptions(dataset_name="bench"))
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    store.close()
    return elapsed


def _bare_s(csv: Path, folder: Path, run: int) -> tuple[float, float]:
    """(seconds, CPU seconds) of the bare load."""
    start, cpu = time.perf_counter(), time.process_time()
    frame = pl.read_csv(csv)
    con = duckdb.connect(str(folder / f"bare-{run}.duckdb"))
    con.register("frame", frame)
    con.execute("CREATE TABLE t AS SELECT * FROM frame")
    con.close()
    return time.perf_counter() - start, time.process_time() - cpu


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = folder / "exploretom.csv"
        stories = write_csv(csv)
        assert abs(stories - STORIES) <= STORIES // 5, stories
        # taken in turns, so that a change in the machine's load falls on both alike
        times = [(_import_s(csv, folder, i), _bare_s(csv, folder, i)) for i in range(RUNS)]
        ours, ours_cpu = (statistics.median(t[0][k] for t in times) for k in (0, 1))
        bare, bare_cpu = (statistics.median(t[1][k] for t in times) for k in (0, 1))
    return [
        ("exploretom_import_13000_rows_s", ours, "s"),
        # Import time (parsing every story, replaying it, answering every question) over a bare load.
        ("exploretom_import_vs_bare_load_ratio", ours / bare, "x"),
        ("exploretom_import_cpu_vs_bare_load_ratio", ours_cpu / bare_cpu, "x"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.3f} {unit}")
