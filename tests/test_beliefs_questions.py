"""ExploreToM questions answered by the engine: the sample's CSV, the reference's own questions, the command."""
from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from app.beliefs.questions import QuestionError, answer_question, answers_match, parse_question
from app.beliefs.replay import replay_steps
from app.beliefs.story import parse_story
from tests.conftest import REFERENCE_DATA, ROOT

SAMPLE_CSV = ROOT / "resources" / "sample" / "ncp" / "exploretom" / "questions.csv"


def _story(text: str):
    return replay_steps(parse_story(text))


def test_every_sample_question_gets_the_expected_answer():
    with SAMPLE_CSV.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows
    for row in rows:
        answer = answer_question(_story(row["story_structure"]), row["question"], row["qprop=params"])
        assert answers_match(answer.answer, row["expected_answer"]), row["question"]
        if row["is_false_belief"] in ("True", "False") and answer.question.order > 0:
            assert answer.false_belief == (row["is_false_belief"] == "True"), row["question"]


def _reference_questions() -> list[tuple[str, dict, dict]]:
    out = []
    for name, groups in (("exploretom_golden_traces.json", ("upstream", "helper_authored")),
                         ("exploretom_golden_comm_traces.json", ("communication",))):
        path = REFERENCE_DATA / "exploretom" / name
        if path.exists():
            data = json.loads(path.read_text())
            out += [(f"{g}.{n}", s, q) for g in groups for n, s in data[g].items() for q in s.get("questions") or []]
    return out


def test_every_reference_question_gets_the_reference_answer(reference_data):
    questions = _reference_questions()
    assert len(questions) > 100
    replays: dict[str, object] = {}
    for name, scenario, question in questions:
        replay = replays.setdefault(name, replay_steps(scenario))
        answer = answer_question(replay, question["question"], question["params"])
        assert answers_match(answer.answer, question["expected_answer"]), (name, question["question"])
        suffix = question["params"][2].rsplit("-", 1)[-1]
        if suffix in ("True", "False"):
            # The reference marks a question whose answer differs from the world's "-False".
            assert answer.false_belief == (suffix == "False"), (name, question["question"])


def test_answers_say_what_they_read_and_where_it_was_set():
    replay = _story("Anne entered the kitchen. Beth entered the kitchen. "
                    "Anne moved the ball to the box, which is also located in the kitchen. Beth left the kitchen. "
                    "Anne moved the ball to the basket, which is also located in the kitchen. "
                    "Anne told privately to Carl about the party. Beth entered the kitchen.")
    beth = answer_question(replay, "In which container will Beth search for the ball?")
    assert (beth.answer, beth.false_belief, beth.set_at_step) == ("box", True, 2)
    assert beth.to_json()["belief"] == {"holders": ["Beth"], "entity": "ball", "property": "container_location",
                                        "value": "box"}
    anne = answer_question(replay, "In which room does Anne think that Beth will search for the ball?")
    assert (anne.answer, anne.question.order) == ("kitchen", 2)
    knows = answer_question(replay, "Does Beth know about party? Answer yes or no.")
    assert knows.answer == "no"
    told = answer_question(replay, "Does Anne know about party? Answer yes or no.")
    assert (told.answer, told.set_at_step) == ("yes", 5)
    second = answer_question(replay, "What does Beth think about Anne's belief on party? "
                                     "(knows about it / does not know about it)")
    assert second.answer == "does not know about it" and second.false_belief is True
    assert answer_question(replay, "In which container was the ball at the beginning?").answer == "box"
    assert answer_question(replay, "In which container is the ball now?").answer == "basket"
    before = answer_question(replay, "In which container was the ball before Anne moved the ball to the basket?")
    assert before.answer == "box"


def test_state_questions_first_and_second_order():
    replay = _story("Ines entered the study. Kofi entered the study. Kofi left the study. Ines peeled the orange.")
    assert answer_question(replay, "Does Ines believe that the orange peeled? Answer yes or no.").answer == "yes"
    kofi = answer_question(replay, "Does Kofi believe that the orange peeled? Answer yes or no.")
    assert kofi.answer == "no"
    assert answer_question(replay, "Does Ines think that Kofi believes that the orange peeled? "
                                   "Answer yes or no.").answer == "no"


def test_a_question_of_no_template_is_an_error():
    with pytest.raises(QuestionError) as info:
        parse_question("Why did Anne leave?")
    assert "Why did Anne leave?" in str(info.value)


def test_ncp_answer_command(tmp_path):
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"steps": parse_story(
        "Anne entered the kitchen. Beth entered the kitchen. Anne moved the ball to the box, which is also "
        "located in the kitchen. Beth left the kitchen. Anne moved the ball to the basket, which is also located "
        "in the kitchen.")}))
    run = [sys.executable, str(ROOT / "main.py"), "ncp", "answer", str(trace)]
    done = subprocess.run([*run, "In which container will Beth search for the ball?"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["answer"] == "box" and output["order"] == 1 and output["false_belief"] is True
    assert output["belief"]["value"] == "box" and output["world"] == "basket"
    bad = subprocess.run([*run, "Why?"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Why?" in bad.stderr and "Traceback" not in bad.stderr
