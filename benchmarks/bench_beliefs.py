"""Figures for the belief engine and the stepper: replay of a 1,000-step story, and repaint per step."""
from __future__ import annotations

import copy
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.beliefs.engine import ROOM, BeliefTracker, is_positive  # noqa: E402
from app.beliefs.replay import replay_steps  # noqa: E402

RUNS = 7


def synthetic_trace(steps: int = 1000, people: int = 10, objects: int = 10, rooms: int = 5, containers: int = 5,
                    seed: int = 0) -> list[dict]:
    """A plausible story: people wander between rooms and move, carry and change objects (most steps succeed)."""
    rng = random.Random(seed)
    names = [f"P{i}" for i in range(people)]
    things = [f"object {i}" for i in range(objects)]
    places = [f"room {i}" for i in range(rooms)]
    boxes = [f"box {i}" for i in range(containers)]
    tracker = BeliefTracker()
    trace: list[dict] = []
    while len(trace) < steps:
        person = rng.choice(names)
        here = tracker.world(person, ROOM)
        if not is_positive(here) or rng.random() < 0.25:
            step = {"action": "enter_room", "args": [person, rng.choice(places)]}
        else:
            obj = rng.choice(things)
            roll = rng.random()
            if roll < 0.45:
                step = {"action": "move_object_container", "args": [person, obj, rng.choice(boxes)]}
            elif roll < 0.6:
                step = {"action": "leave_room", "args": [person, here]}
            elif roll < 0.75:
                step = {"action": "move_object_room", "args": [person, obj, rng.choice(places)]}
            elif roll < 0.9:
                step = {"action": "update_object_state",
                        "args": [person, obj, rng.choice(["wet", "dry", "broken"]), "<condition>",
                                 f"{person} changed the {obj}.", rng.random() < 0.5]}
            else:
                step = {"action": "broadcast_communication", "args": [person, rng.choice(["news", "plans"])]}
        tracker.apply(step["action"], step["args"], step.get("kwargs", {}))
        trace.append(step)
    return trace


def _replay_ms(trace: list[dict]) -> float:
    start = time.perf_counter()
    replay = replay_steps(trace)
    for index in range(len(replay)):  # every step's state made ready, in order, as a viewer steps
        replay.state_at(index, shared=True)
    return (time.perf_counter() - start) * 1000


def _deepcopy_replay_ms(trace: list[dict]) -> float:
    start = time.perf_counter()
    tracker = BeliefTracker()
    snapshots = []
    for step in trace:
        tracker.apply(step["action"], step["args"], step.get("kwargs", {}))
        snapshots.append(copy.deepcopy(tracker.cells))
    return (time.perf_counter() - start) * 1000


def _stepper_repaint_ms(trace: list[dict]) -> float:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from widgets.belief_stepper import BeliefStepperView

    app = QApplication.instance() or QApplication([])
    view = BeliefStepperView()
    view.resize(1400, 900)
    view.set_trace(trace, ["P1 believes that object 1 is in the box 1"], "synthetic")
    view.show()
    app.processEvents()
    rng = random.Random(1)
    timings = []
    for _ in range(40):
        target = rng.randrange(len(trace))
        start = time.perf_counter()
        view.set_step(target)
        app.processEvents()
        timings.append((time.perf_counter() - start) * 1000)
    view.close()
    view.deleteLater()
    app.processEvents()
    return statistics.median(timings)


def run() -> list[tuple[str, float, str]]:
    trace = synthetic_trace()
    ours = statistics.median(_replay_ms(trace) for _ in range(RUNS))
    naive = statistics.median(_deepcopy_replay_ms(trace) for _ in range(3))
    repaint = _stepper_repaint_ms(trace)
    return [
        ("ncp_replay_1000_steps_ms", ours, "ms"),
        # Our replay's time over a replay that deep-copies the state after every step; lower is faster.
        ("ncp_replay_vs_deepcopy_ratio", ours / naive, "x"),
        ("ncp_stepper_repaint_ms", repaint, "ms"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.3f} {unit}")
