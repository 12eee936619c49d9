"""A generated ExploreToM release for the dashboard's tests (this module holds no tests): the CSV in the
release's column names and two models' answers to it, imported into a real store the way a user does it: the
CSV with the ExploreToM importer, then the answers attached to that dataset with the generic importer.

Every story is the tracker's own sentences (one person moves a thing while the other is away), so the engine
reads each one; its questions are first order (true and false belief), second order and factual, and each
story has one of three story types. Each model answers every question, right or wrong by a fixed pattern,
sometimes in a full sentence ("The basket.") that the benchmark's rule reads down to its answer.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from app.import_service import run_import
from storage.importers.common import ImportOptions
from storage.store import Store

DATASET = "ExploreToM generated"
MODELS = ("Lantern 9B", "Quire 2")
STORY_TYPES = ("tomi", "tomi+object-state", "fantom-private")
PEOPLE = (("Anne", "Beth"), ("Carl", "Dana"), ("Eli", "Fern"), ("Gus", "Hana"), ("Ivo", "Jade"), ("Kai", "Lena"),
          ("Milo", "Nora"))
THINGS = (("ball", "box", "basket", "kitchen"), ("key", "drawer", "tin", "study"), ("apple", "bowl", "crate", "pantry"))
HEADER = ["story_structure", "infilled_story", "question", "expected_answer", "qprop=params", "qprop=nth_order",
          "is_false_belief", "param=story_type", "param=num_people"]


@dataclass(frozen=True)
class Question:
    external_id: str      # the row number, as the importer names a row without an id column
    story: int
    question: str
    expected: str
    wrong: str            # a plausible wrong answer
    order: int
    false_belief: bool
    story_type: str


def _story(index: int) -> tuple[str, list[tuple[str, str, str, str, int, bool]]]:
    """The structure of story `index` and its questions (question, expected, wrong, params, order, false)."""
    a, b = PEOPLE[index % len(PEOPLE)]
    thing, first, second, room = THINGS[index % len(THINGS)]
    structure = (f"{a} entered the {room}. {b} entered the {room}. {a} moved the {thing} to the {first}, which is "
                 f"also located in the {room}. {b} left the {room}. {a} moved the {thing} to the {second}, which "
                 f"is also located in the {room}.")
    questions = [
        (f"In which container will {a} search for the {thing}?", second, first,
         f"(['{a}'], '{thing}', 'container_location-True')", 1, False),
        (f"In which container will {b} search for the {thing}?", first, second,
         f"(['{b}'], '{thing}', 'container_location-False')", 1, True),
        (f"In which container does {a} think that {b} will search for the {thing}?", first, second,
         f"(['{a}', '{b}'], '{thing}', 'container_location-False')", 2, True),
        (f"In which room is the {thing} now?", room, "hall", f"([], '{thing}', 'room_location-True')", -1, False),
    ]
    return structure, questions


def write_release(folder: Path, n_stories: int = 7) -> tuple[Path, list[Question]]:
    """The CSV of `n_stories` stories and the questions in it, in row order."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "exploretom.csv"
    questions: list[Question] = []
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for index in range(n_stories):
            structure, rows = _story(index)
            story_type = STORY_TYPES[index % len(STORY_TYPES)]
            for question, expected, wrong, params, order, false_belief in rows:
                writer.writerow([structure, f"Story {index} told in prose.", question, expected, params, order,
                                 false_belief, story_type, 2])
                questions.append(Question(f"{len(questions) + 1:06d}", index, question, expected, wrong, order,
                                          false_belief, story_type))
    return path, questions


def model_answers(questions: list[Question]) -> list[tuple[str, str, str, bool]]:
    """(question id, model, answer as written, whether it is right) for every model and question."""
    out = []
    for m, model in enumerate(MODELS):
        for i, q in enumerate(questions):
            right = (i * 7 + 3 * m) % (4 + m) != 0 and (i + q.story) % 5 != m
            answer = q.expected if right else q.wrong
            if (i + m) % 4 == 0:
                answer = f"The {answer.capitalize()}."   # a full sentence, read down to its answer
            out.append((q.external_id, model, answer, right))
    return out


def import_release(store: Store, folder: Path, n_stories: int = 7) -> tuple[int, list[Question],
                                                                             list[tuple[str, str, str, bool]]]:
    """Import the generated release and attach the models' answers; (dataset id, questions, answers)."""
    path, questions = write_release(folder, n_stories)
    run_import(store, "exploretom", path, ImportOptions(dataset_name=DATASET))
    answers = model_answers(questions)
    answers_path = folder / "answers.csv"
    with answers_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "model", "answer"])
        writer.writerows((qid, model, answer) for qid, model, answer, _right in answers)
    run_import(store, "generic", answers_path, ImportOptions(
        dataset_name=DATASET, mapping={"stimulus": "question_id", "model": "model", "answer": "answer"},
        extra={"stimuli_exist": True}))
    dataset_id = store.cursor().execute("SELECT id FROM dataset WHERE name = ?", [DATASET]).fetchone()[0]
    return int(dataset_id), questions, answers
