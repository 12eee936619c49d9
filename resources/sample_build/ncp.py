"""Builds the synthetic NCP-ExploreToM sample: six tasks, two models' action traces, and a small story CSV.

Each task places people and objects with `location_declaration` steps, then asks for belief-state goals
(first and second order, true and false belief, one to three atoms, all four goal types). "Lantern 9B"
usually reaches the goal; "Quire 2" sometimes fails and sometimes calls an action whose preconditions do
not hold. What each trace achieves, under the semantics in docs/BELIEFS (the ExploreToM tracker), is noted
beside it in `EXPECTED` and checked by the tests. All names, stories and models are invented.

Layout: `tasks/<task_id>.json`, `traces/lantern-9b/<task_id>.json` (one file per trace) and
`traces/quire-2.jsonl` (one trace per line), `exploretom/questions.csv` (ExploreToM's column names).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

LANTERN = "Lantern 9B"
QUIRE = "Quire 2"


def _step(action: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    return {"action": action, "args": list(args), "kwargs": kwargs}


def _place(entity: str, room: str, thinking: bool = True) -> dict[str, Any]:
    return _step("location_declaration", entity, room) if thinking else \
        _step("location_declaration", entity, room, is_thinking_entity=False)


PEEL = ("peeled", "<is_peeled>", "Maren peeled the apple.", True)

TASKS: list[dict[str, Any]] = [
    {
        "task_id": "ncp-01", "context_id": "kitchen-key",
        "context": "Maren is in the kitchen with the spare key; Tobias is out in the garden.",
        "goal": ["Maren believes that key is in the drawer"], "false_belief": False,
        "goal_type": "object in container",
        "initial_steps": [_place("Maren", "kitchen"), _place("Tobias", "garden"), _place("key", "kitchen", False)],
    },
    {
        "task_id": "ncp-02", "context_id": "living-room-scarf",
        "context": "Ines and Kofi are tidying the living room; a scarf lies on the sofa.",
        "goal": ["Kofi believes that scarf is in the basket"], "false_belief": True,
        "goal_type": "object in container",
        "initial_steps": [_place("Ines", "living room"), _place("Kofi", "living room"),
                          _place("scarf", "living room", False)],
    },
    {
        "task_id": "ncp-03", "context_id": "kitchen-apple",
        "context": "Maren and Tobias are in the kitchen with an apple on the table.",
        "goal": ["Maren believes that Tobias believes that apple is in the cupboard",
                 {"holders": [], "entity": "Tobias", "property": "room_location", "value": "garden"}],
        "false_belief": True,
        "initial_steps": [_place("Maren", "kitchen"), _place("Tobias", "kitchen"), _place("apple", "kitchen", False)],
    },
    {
        "task_id": "ncp-04", "context_id": "study-letter",
        "context": "Ines is writing in the study, where a letter waits to be posted; Kofi is in the garden.",
        "goal": [{"holders": ["Kofi"], "entity": "letter", "property": "room_location", "value": "living room"},
                 {"holders": ["Kofi"], "entity": "Ines", "property": "room_location", "value": "living room"}],
        "false_belief": False,
        "initial_steps": [_place("Ines", "study"), _place("Kofi", "garden"), _place("letter", "study", False)],
    },
    {
        "task_id": "ncp-05", "context_id": "kitchen-apple-peeled",
        "context": "Maren and Kofi are cooking in the kitchen; Tobias is weeding in the garden.",
        "goal": [{"holders": ["Kofi", "Maren"], "entity": "apple", "property": "<is_peeled>", "value": "peeled"},
                 {"holders": ["Kofi"], "entity": "apple", "property": "container", "value": "basket"},
                 {"holders": [], "entity": "Tobias", "property": "room", "value": "kitchen"}],
        "false_belief": False,
        "initial_steps": [_place("Maren", "kitchen"), _place("Kofi", "kitchen"), _place("Tobias", "garden"),
                          _place("apple", "kitchen", False)],
    },
    {
        "task_id": "ncp-06", "context_id": "kitchen-leaving",
        "context": "Ines and Tobias are both in the kitchen after dinner.",
        "goal": ["Tobias believes that Ines is in the kitchen."], "false_belief": True,
        "goal_type": "person in room",
        "initial_steps": [_place("Ines", "kitchen"), _place("Tobias", "kitchen")],
    },
]

TRACES: dict[str, dict[str, list[dict[str, Any]]]] = {
    LANTERN: {
        "ncp-01": [_step("move_object_container", "Maren", "key", "drawer")],
        "ncp-02": [_step("move_object_container", "Ines", "scarf", "basket"),
                   _step("leave_room", "Kofi", "living room"),
                   _step("move_object_container", "Ines", "scarf", "box")],
        "ncp-03": [_step("move_object_container", "Tobias", "apple", "cupboard"),
                   _step("leave_room", "Tobias", "kitchen"),
                   _step("enter_room", "Tobias", "garden"),
                   _step("move_object_container", "Maren", "apple", "basket")],
        "ncp-04": [_step("move_object_room", "Ines", "letter", "living room"),
                   _step("enter_room", "Kofi", "living room")],
        "ncp-05": [_step("update_object_state", "Maren", "apple", *PEEL),
                   _step("move_object_container", "Kofi", "apple", "basket"),
                   _step("enter_room", "Tobias", "kitchen")],
        "ncp-06": [_step("leave_room", "Tobias", "kitchen"),
                   _step("leave_room", "Ines", "kitchen"),
                   _step("enter_room", "Ines", "garden")],
    },
    QUIRE: {
        "ncp-01": [_step("leave_room", "Maren", "kitchen"),
                   _step("enter_room", "Tobias", "kitchen"),
                   _step("move_object_container", "Tobias", "key", "drawer")],
        "ncp-02": [_step("move_object_container", "Kofi", "scarf", "basket"),
                   _step("move_object_container", "Kofi", "scarf", "box")],
        "ncp-03": [_step("enter_room", "Maren", "kitchen"),
                   _step("move_object_container", "Tobias", "apple", "cupboard"),
                   _step("move_object_container", "Maren", "apple", "basket"),
                   _step("enter_room", "Tobias", "garden")],
        "ncp-04": [_step("enter_room", "Kofi", "living room"),
                   _step("move_object_room", "Kofi", "letter", "living room"),
                   _step("move_object_room", "Ines", "letter", "living room")],
        "ncp-05": [_step("update_object_state", "Tobias", "apple", *PEEL),
                   _step("move_object_container", "Kofi", "apple", "basket"),
                   _step("leave_room", "Kofi", "kitchen"),
                   _step("update_object_state", "Maren", "apple", *PEEL),
                   _step("enter_room", "Tobias", "kitchen")],
        "ncp-06": [_step("leave_room", "Tobias", "garden"),
                   _step("leave_room", "Ines", "kitchen"),
                   _step("leave_room", "Tobias", "kitchen")],
    },
}

# (model, task) -> (goal reached after the whole trace, indices of steps whose preconditions fail)
EXPECTED: dict[tuple[str, str], tuple[bool, tuple[int, ...]]] = {
    (LANTERN, "ncp-01"): (True, ()),
    (LANTERN, "ncp-02"): (True, ()),      # Kofi left before the scarf moved on to the box
    (LANTERN, "ncp-03"): (True, ()),      # Tobias saw the cupboard, not the basket
    (LANTERN, "ncp-04"): (True, ()),      # Kofi sees Ines and the letter on entering
    (LANTERN, "ncp-05"): (True, ()),
    (LANTERN, "ncp-06"): (True, ()),      # Tobias left first, so he missed Ines leaving
    (QUIRE, "ncp-01"): (False, ()),       # Maren had left: she never sees the key go into the drawer
    (QUIRE, "ncp-02"): (False, ()),       # Kofi watched the scarf go on to the box
    (QUIRE, "ncp-03"): (False, (0,)),     # Maren is already in the kitchen; Tobias saw the basket
    (QUIRE, "ncp-04"): (True, (1,)),      # Kofi is not where the letter is; then Ines brings it to him
    (QUIRE, "ncp-05"): (False, (0,)),     # Tobias is not in the kitchen; Kofi misses the peeling
    (QUIRE, "ncp-06"): (False, (0,)),     # Tobias is not in the garden; he sees Ines leave
}

RAW = {True: "Plan complete: the goal beliefs should now hold.", False: "Done."}

# A small ExploreToM-style question table (our own stories, in the released CSV's column names).
_STORY = ("Maren entered the kitchen. Tobias entered the kitchen. Maren moved the key to the drawer, which is "
          "also located in the kitchen. Tobias left the kitchen. Maren moved the key to the tin, which is also "
          "located in the kitchen.")
_INFILLED = ("Maren came in from the rain and hung up her coat in the kitchen. Tobias followed her, shaking his "
             "umbrella. Maren slipped the spare key into the drawer. Tobias went off to answer the door. While he "
             "was gone, Maren changed her mind and hid the key in the biscuit tin.")
_STORY2 = ("Ines entered the study. Kofi entered the study. Ines peeled the orange. Kofi left the study. Ines "
           "moved the orange to the bowl, which is also located in the study.")
_INFILLED2 = ("Ines settled into the study with an orange. Kofi wandered in to borrow a pen. Ines peeled the "
              "orange while they chatted. Kofi went back to his room. Ines dropped the orange into the glass "
              "bowl on the shelf.")
QUESTIONS = [
    (_STORY, _INFILLED, "In which container will Maren search for the key?", "tin", "(['Maren'], 'key', "
     "'container_location-True')", 1, False),
    (_STORY, _INFILLED, "In which container will Tobias search for the key?", "drawer", "(['Tobias'], 'key', "
     "'container_location-False')", 1, True),
    (_STORY, _INFILLED, "In which container does Maren think that Tobias will search for the key?", "drawer",
     "(['Maren', 'Tobias'], 'key', 'container_location-False')", 2, True),
    (_STORY, _INFILLED, "In which container does Tobias think that Maren will search for the key?", "drawer",
     "(['Tobias', 'Maren'], 'key', 'container_location-False')", 2, True),
    (_STORY, _INFILLED, "In which room is the key now?", "kitchen", "([], 'key', 'room_location-True')", -1,
     False),
    (_STORY2, _INFILLED2, "In which room will Kofi search for the orange?", "study",
     "(['Kofi'], 'orange', 'room_location-True')", 1, False),
    (_STORY2, _INFILLED2, "Does Kofi believe that the orange peeled? Answer yes or no.", "yes",
     "(['Kofi'], 'orange', '<state_update> <is_peeled>')", 1, False),
    (_STORY2, _INFILLED2, "In which container will Ines search for the orange?", "bowl",
     "(['Ines'], 'orange', 'container_location-True')", 1, False),
    (_STORY2, _INFILLED2, "Does Ines think that Kofi believes that the orange peeled? Answer yes or no.", "yes",
     "(['Ines', 'Kofi'], 'orange', '<state_update> <is_peeled>')", 2, False),
    (_STORY2, _INFILLED2, "In which room does Ines think that Kofi will search for the orange?", "study",
     "(['Ines', 'Kofi'], 'orange', 'room_location-True')", 2, False),
]

SYNTHETIC = """# Synthetic NCP-ExploreToM sample

Everything here is invented for Thinslice and generated by `resources/sample_build/ncp.py` (run
`resources/make_sample.py`): the tasks, people (Maren, Tobias, Ines, Kofi), contexts, the two models
("Lantern 9B", "Quire 2") and their action traces, and the story questions. Nothing is taken from the
NCP-ExploreToM or ExploreToM releases; the CSV only borrows ExploreToM's column names.

- `tasks/<task_id>.json`: task id, context, goal (sentences in the ExploreToM tracker's surface form, or
  structured atoms {holders, entity, property, value}), true/false-belief flag and the set-up steps
  (`location_declaration`).
- `traces/lantern-9b/<task_id>.json` and `traces/quire-2.jsonl`: each model's actions {action, args, kwargs},
  played after the set-up. Quire 2 sometimes calls an action whose preconditions fail.
- `exploretom/questions.csv`: ten ExploreToM-style story questions (import it with the `exploretom` kind).
"""


def _questions_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["story_structure", "infilled_story", "question", "expected_answer", "qprop=params",
                     "qprop=nth_order", "is_false_belief", "param=story_type", "param=num_people"])
    for structure, infilled, question, answer, params, order, false_belief in QUESTIONS:
        writer.writerow([structure, infilled, question, answer, params, order, false_belief,
                         "tomi+object-state" if "peeled" in structure else "tomi", 2])
    return buffer.getvalue()


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1) + "\n"


def build(out_dir: Path, seed: int = 7) -> None:
    """Write the NCP sample into `out_dir`. Nothing is random, so `seed` changes nothing; it is accepted
    for the common builder signature."""
    out_dir = Path(out_dir)
    (out_dir / "tasks").mkdir(parents=True, exist_ok=True)
    for task in TASKS:
        (out_dir / "tasks" / f"{task['task_id']}.json").write_text(_dump(task), encoding="utf-8")
    lantern_dir = out_dir / "traces" / "lantern-9b"
    lantern_dir.mkdir(parents=True, exist_ok=True)
    for task_id, steps in TRACES[LANTERN].items():
        record = {"model": LANTERN, "task_id": task_id, "steps": steps,
                  "raw_output": RAW[EXPECTED[(LANTERN, task_id)][0]]}
        (lantern_dir / f"{task_id}.json").write_text(_dump(record), encoding="utf-8")
    with (out_dir / "traces" / "quire-2.jsonl").open("w", encoding="utf-8") as fh:
        for task_id, steps in TRACES[QUIRE].items():
            fh.write(json.dumps({"model": QUIRE, "task_id": task_id, "steps": steps, "raw_output": RAW[False]},
                                ensure_ascii=False) + "\n")
    (out_dir / "exploretom").mkdir(exist_ok=True)
    (out_dir / "exploretom" / "questions.csv").write_text(_questions_csv(), encoding="utf-8")
    (out_dir / "SYNTHETIC.md").write_text(SYNTHETIC, encoding="utf-8")
    (out_dir / "exploretom" / "SYNTHETIC.md").write_text(
        "# Synthetic ExploreToM-style questions\n\nInvented stories and questions in ExploreToM's column "
        "names, generated by `resources/sample_build/ncp.py`. Nothing is taken from the ExploreToM release.\n",
        encoding="utf-8")


if __name__ == "__main__":
    import sys

    build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "sample" / "ncp")
