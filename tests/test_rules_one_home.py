"""Each benchmark rule has one home: the same text gives the same result whichever road it took.

A reply imported from a release file into a real store and the same reply coming back from a live model are
read by the same parser and scored the same; every goal sentence form survives a round trip through the
parser and back to a sentence; an NCP attempt gets one verdict at import, on the dashboard and live.
"""
from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile

from app.beliefs.goals import atom_sentence, parse_goal_sentence, vocabulary_from_steps
from app.benchmarks import score_reply
from app.benchmarks.ncp import score_attempt
from app.dashboard import ncp_outcome
from app.import_service import dry_run_report, run_import
from app.live import LiveClient, LiveSettings, parse_forced_choice, parse_multiple_choice
from app.live.ncp import NCP_TOOLS
from app.live.service import AskOptions, LiveService
from app.ncp import dataset_attempts
from app.ncp_live import NcpTask, run_live_ncp_task
from live_server import Reply, ScriptedServer, tool_call
from resources.sample_build import ncp as ncp_sample
from storage.importers.common import ImportOptions
from storage.tables import read_table
from storage.queries import stimulus_detail
from storage.store import Store

OPTIONS = {"A": "The speaker sounds happy", "B": "The speaker sounds sad", "C": "The speaker is whispering",
           "D": "Wind noise in the background"}
KEY = "B"
MCQ_REPLIES = {
    "Answer: b": "B",
    "I choose (B)": "B",
    "(c)": "C",
    "The answer is D.": "D",
    '{"answer": "B"}': "B",
    "B": "B",
    "**A**": "A",
    "Final answer: C": "C",
    "I would pick option d here": "D",
    "The answer is a guess, really": None,
    "A speaker talks quietly": None,
    "The speaker sounds sad.": "B",
    "It is the wind noise in the background, I think": "D",
    "Something else entirely.": None,
}
FRIENDBENCH_REPLIES = {
    "They are not strangers at all.": "familiar",
    "They don't know each other; the small talk is stiff.": "stranger",
    "They are clearly not friends.": "stranger",
    "They seem unfamiliar with one another.": "stranger",
    "Hard to say: could be familiar, could be strangers. Final answer: stranger": "stranger",
    "I think these two already know each other well.": "familiar",
    "Could be familiar, could be strangers.": None,
    "They have never met before.": "stranger",
}


def _dump(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def _echomind_release(root: Path) -> list[str]:
    """A release with one understanding question per reply text and one model answering each; returns the
    question ids in reply order."""
    audio = root / "data_synthesis" / "audio"
    audio.mkdir(parents=True)
    soundfile.write(str(audio / "id_1_q.wav"), np.zeros(800, np.float32), 8000)
    options_text = "\n".join(f"{letter}. {text}" for letter, text in OPTIONS.items())
    ids = [f"q{i}" for i in range(len(MCQ_REPLIES))]
    _dump(root / "data_synthesis" / "MCQ" / "understanding.json",
          [{"question_id": qid, "audio_dir": "", "audio_name": "id_1_q.wav", "question": "How does it sound?",
            "options_text": options_text, "answer": f"{KEY}. {OPTIONS[KEY]}"} for qid in ids])
    _dump(root / "outputs" / "model-x" / "model-x_mcq_understanding.json",
          [{"question_id": qid, "predicted_text_answer": reply} for qid, reply in zip(ids, MCQ_REPLIES)])
    return ids


def _stored_answers(store: Store) -> dict[str, tuple[int, str | None, bool | None]]:
    """external id -> (stimulus id, stored answer, stored correctness) of every prediction."""
    rows = store.cursor().execute(
        "SELECT s.external_id, s.id, p.answer, p.correct FROM prediction p JOIN stimulus s ON s.id = p.stimulus_id"
    ).fetchall()
    return {external: (sid, answer, correct) for external, sid, answer, correct in rows}


def _live_answers(store: Store, stimulus_ids: list[int], replies: list[str], monkeypatch) -> list[tuple]:
    """(answer, correct) of each stimulus asked once through the live service, the model replying in turn."""
    monkeypatch.setenv("THINSLICE_TEST_KEY", "sk-test")
    service = LiveService(store)
    options = AskOptions(LiveSettings(base_url="", model="scripted-model", api_key_env="THINSLICE_TEST_KEY"),
                         timeout_s=5.0, stream=False, modality="text")
    with ScriptedServer([Reply(text=reply) for reply in replies]) as server:
        options = dataclasses.replace(options, settings=dataclasses.replace(options.settings,
                                                                            base_url=server.base_url))
        results = [service.ask(service.detail(sid), options) for sid in stimulus_ids]
    return [(r.answer, r.correct) for r in results]


def test_mcq_replies_read_the_same_imported_and_live(tmp_path, monkeypatch):
    root = tmp_path / "release"
    ids = _echomind_release(root)
    store = Store.open(tmp_path / "t.duckdb")
    try:
        run_import(store, "echomind", root, ImportOptions(dataset_name="EchoMind rules"))
        stored = _stored_answers(store)
        cur = store.cursor()
        rows = [stored[f"synthesis/mcq/understanding/{qid}"] for qid in ids]
        live = _live_answers(store, [sid for sid, _a, _c in rows], list(MCQ_REPLIES), monkeypatch)
        for (sid, answer, correct), (reply, expected), asked in zip(rows, MCQ_REPLIES.items(), live):
            detail = stimulus_detail(cur, sid)
            assert detail.ground_truth == KEY
            truth = None if expected is None else expected == KEY
            assert (answer, correct) == (expected, expected == KEY), reply      # imported
            assert asked == score_reply(detail, reply) == (expected, truth), reply   # asked live
            options = [f"{k}. {v}" for k, v in sorted(detail.meta["options"].items())]
            assert parse_multiple_choice(reply, options) == expected, reply
    finally:
        store.close()


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])


def test_friendbench_replies_read_the_same_imported_and_live(tmp_path, monkeypatch):
    root = tmp_path / "release"
    clips = [f"c{i}" for i in range(len(FRIENDBENCH_REPLIES))]
    _write_csv(root / "validation" / "data" / "metadata.csv", ["clip_id", "label"],
               [[clip, "familiar"] for clip in clips])
    for clip in clips:   # the text condition shows a model the transcript
        _dump(root / "validation" / "media" / clip / "transcript.json",
              {"segments": [{"speaker": "A", "start": 0.1, "end": 0.9, "transcript": "Cats or dogs?"},
                            {"speaker": "B", "start": 1.0, "end": 1.4, "transcript": "Dogs."}]})
    _write_csv(root / "validation" / "ratings" / "model_predictions.csv", ["model", "clip_id", "raw_output"],
               [["m1", clip, reply] for clip, reply in zip(clips, FRIENDBENCH_REPLIES)])
    report = dry_run_report("friendbench", root, ImportOptions(dataset_name="FriendBench rules"))
    unread = sum(expected is None for expected in FRIENDBENCH_REPLIES.values())
    assert f"{unread} predictions without a familiar/stranger answer" in report["notes"]   # a dry run parses too
    store = Store.open(tmp_path / "t.duckdb")
    try:
        run_import(store, "friendbench", root, ImportOptions(dataset_name="FriendBench rules"))
        stored = _stored_answers(store)
        cur = store.cursor()
        rows = [stored[clip] for clip in clips]
        live = _live_answers(store, [sid for sid, _a, _c in rows], list(FRIENDBENCH_REPLIES), monkeypatch)
        for (sid, answer, correct), (reply, expected), asked in zip(rows, FRIENDBENCH_REPLIES.items(), live):
            assert (answer, parse_forced_choice(reply)) == (expected, expected), reply
            truth_correct = None if expected is None else expected == "familiar"
            assert correct == truth_correct, reply
            assert asked == score_reply(stimulus_detail(cur, sid), reply) == (expected, truth_correct), reply
    finally:
        store.close()


GOAL_SENTENCES = [
    "ball is in the basket",
    "Beth is in the kitchen",
    "Beth believes that ball is in the box",
    "Anne believes that Beth believes that ball is in the box",
    "Anne thinks that ball is in the box",
    "Anne believes ball is in the kitchen",
    "Beth heard about the party",
    "Anne believes that Beth heard about the party",
    "apple peeled",
    "apple is peeled",
    "Beth believes that apple covered in chocolate",
    "Beth believes that Anne is in the not(living room)",
    "the ball is in the drawer.",
]
STEPS = [("enter_room", ["Anne", "kitchen"], {}), ("enter_room", ["Beth", "living room"], {}),
         ("move_object_container", ["Anne", "ball", "box"], {}),
         ("update_object_state", ["Anne", "apple", "peeled", "<is_peeled>", "Anne peels the apple."], {})]


@pytest.mark.parametrize("vocabulary", [None, vocabulary_from_steps(STEPS)], ids=["no vocabulary", "from steps"])
@pytest.mark.parametrize("sentence", GOAL_SENTENCES)
def test_every_goal_sentence_round_trips_through_the_one_parser(sentence, vocabulary):
    atom = parse_goal_sentence(sentence, vocabulary)
    again = parse_goal_sentence(atom_sentence(atom.holders, atom.entity, atom.property, atom.value), vocabulary)
    assert (again.holders, again.entity, again.property, again.value) == (
        atom.holders, atom.entity, atom.property, atom.value)


def _tool_calls(steps: list[dict]) -> list[dict]:
    """A model's stored steps as the tool calls a live model would make (positional arguments named)."""
    names = {tool["function"]["name"]: list(tool["function"]["parameters"]["properties"]) for tool in NCP_TOOLS}
    return [tool_call(step["action"], f"c{i}", **dict(zip(names[step["action"]], step["args"])), **step["kwargs"])
            for i, step in enumerate(steps)]


def test_an_ncp_attempt_gets_one_verdict_at_import_on_the_dashboard_and_live(tmp_path):
    folder = tmp_path / "ncp"
    ncp_sample.build(folder)
    store = Store.open(tmp_path / "t.duckdb")
    try:
        summary = run_import(store, "ncp", folder, ImportOptions(dataset_name="NCP rules"))
        cur = store.cursor()
        attempts = dataset_attempts(cur, summary.dataset_id)
        assert attempts and {a.correct for a in attempts} == {True, False}
        compared = 0
        for attempt in attempts:
            replayed, _why = ncp_outcome(dataclasses.replace(attempt, correct=None))
            assert replayed == attempt.correct == score_attempt(attempt.steps, attempt.goal).reached
            detail = stimulus_detail(cur, attempt.stimulus_id)
            task = NcpTask.from_detail(detail)
            own = attempt.steps[len(task.setup):]
            if not own or any(step["action"] not in {t["function"]["name"] for t in NCP_TOOLS} for step in own):
                continue
            script = [Reply(tool_calls=[call]) for call in _tool_calls(own)] + [Reply(text="Done.")]
            with ScriptedServer(script) as server:
                client = LiveClient(LiveSettings(base_url=server.base_url, model="scripted"), timeout_s=5.0,
                                    max_retries=0, api_key="k")
                live = run_live_ncp_task(client, task, max_steps=len(own) + 1)
            assert live.success == attempt.correct
            compared += 1
        assert compared >= 2
    finally:
        store.close()


def test_one_table_reader_gives_the_same_text_on_its_fast_and_its_row_by_row_path(tmp_path):
    rows = 'clip,answer,score\nc1,"familiar, surely",1\nc2,,2.5\n'
    plain, spaced = tmp_path / "plain.csv", tmp_path / "spaced.csv"
    plain.write_text(rows, encoding="utf-8")
    spaced.write_text(rows.replace("\nc2", "\n\nc2"), encoding="utf-8")   # a blank line: read row by row
    fast, by_row = read_table(plain), read_table(spaced)
    assert fast.data.to_dicts() == by_row.data.to_dicts() == [
        {"clip": "c1", "answer": "familiar, surely", "score": "1"}, {"clip": "c2", "answer": None, "score": "2.5"}]
    assert (fast.lines, by_row.lines) == ([2, 3], [2, 4])


def test_a_quoted_line_break_keeps_every_later_row_on_its_own_line(tmp_path):
    path = tmp_path / "multi.csv"
    path.write_text('clip,answer\nc1,"two\nlines"\nc2,x\n', encoding="utf-8")
    table = read_table(path)
    assert table.data.to_dicts() == [{"clip": "c1", "answer": "two\nlines"}, {"clip": "c2", "answer": "x"}]
    assert table.lines == [2, 4]
