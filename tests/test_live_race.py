"""A race against several local OpenAI-compatible servers at once (Qt-free, through the service the window uses):
one quick, one slow, one refusing the key, one cutting its stream. Each lane ends on its own, the same prompt
goes to every contender, the answers are scored by the benchmark's rule and kept as live runs, and a second race
on the same stimulus asks again only when told to; an NCP task is acted out by each contender with tools."""
from __future__ import annotations

import json
import threading

import polars as pl
import pytest

from app.changes import Change, Topic
from app.contenders import Contender, contenders_from_stored, contenders_to_stored, lineup_problem
from app.dashboard import failure_frame, load_frames
from app.import_service import run_import
from app.live.race import run_race
from app.live.service import ANSWER_TOPICS, LiveService
from app.race_state import ANSWERED, ASKING, CANCELLED, FAILED, KEPT, RaceEvent, RaceState
from fixtures_store import friendbench_like_plan, make_store
from live_server import Reply, ScriptedServer, tool_call, unreachable_url
from storage.importers.common import ImportOptions
from storage.store import Store
from store_rows import changed_rows, store_rows

SECRET = "sk-race-test-0123456789abcdef"
FAMILIAR = "They finish each other's sentences and tease each other, so I would say they are familiar."
STRANGER = "They are polite and careful, ask each other's names and keep a distance: strangers."
LIVE = ("SELECT m.name, r.modality, p.stimulus_id, p.raw_output, p.answer, p.correct FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id WHERE r.is_live ORDER BY m.name")


@pytest.fixture
def race_store(tmp_path, monkeypatch):
    monkeypatch.setenv("RACE_TEST_KEY", SECRET)
    store = make_store(tmp_path / "race.duckdb", friendbench_like_plan(tmp_path, n_stimuli=2, models=("alpha",)))
    service = LiveService(store)
    detail = service.detail(store.cursor().execute("SELECT min(id) FROM stimulus").fetchall()[0][0])
    assert detail.ground_truth == "familiar"
    yield service, store, detail
    store.close()


def contender(name: str, server_or_url, model: str, key: str = "RACE_TEST_KEY") -> Contender:
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    return Contender(name, url, model, "text", key)


class Recorder:
    """Collects a race's events from its threads, in the order they arrived."""

    def __init__(self) -> None:
        self.events: list[RaceEvent] = []
        self._lock = threading.Lock()

    def __call__(self, event: RaceEvent) -> None:
        with self._lock:
            self.events.append(event)

    def ends(self) -> list[RaceEvent]:
        return [e for e in self.events if e.kind in (ANSWERED, KEPT, FAILED, CANCELLED)]

    def end_of(self, lane: int) -> RaceEvent:
        [end] = [e for e in self.ends() if e.lane == lane]
        return end


def test_four_contenders_at_once_each_end_on_their_own_and_are_kept(race_store):
    service, store, detail = race_store
    before = store_rows(store)
    slow_may_answer = threading.Event()
    with ScriptedServer([Reply(text=FAMILIAR, chunk_size=6)]) as quick, \
            ScriptedServer(lambda _body: Reply(text=STRANGER, chunk_size=6) if slow_may_answer.wait(15)
                           else Reply(kind="http_error", status=500)) as slow, \
            ScriptedServer([Reply(kind="http_error", status=401, text="Incorrect API key provided",
                                  echo_authorization=True)]) as refusing, \
            ScriptedServer([Reply(text=FAMILIAR, chunk_size=6, cut_after=4)]) as cutting:
        contenders = [contender("Quick", quick, "quick-1"), contender("Slow", slow, "slow-1"),
                      contender("Refused", refusing, "refused-1"), contender("Cut", cutting, "cut-1")]
        recorder = Recorder()
        published: list[Change] = []
        service.channel.subscribe(list(Topic), published.append)

        def emit(event: RaceEvent) -> None:
            recorder(event)
            assert not published   # nothing is announced while models still answer
            # the slow one answers only once every other lane has ended: they cannot have waited for it
            if len({e.lane for e in recorder.ends()} - {1}) == 3:
                slow_may_answer.set()

        run_race(service, detail, contenders, emit)
    ends = recorder.ends()
    assert [e.lane for e in ends][-1] == 1 and {e.lane for e in ends} == {0, 1, 2, 3}
    quick_end, slow_end, refused_end, cut_end = (recorder.end_of(i) for i in range(4))
    assert (quick_end.kind, quick_end.answer, quick_end.correct) == (ANSWERED, "familiar", True)
    assert (slow_end.kind, slow_end.answer, slow_end.correct) == (ANSWERED, "stranger", False)
    assert refused_end.kind == FAILED and refused_end.message == "key refused (HTTP 401)"
    assert "Incorrect API key" in refused_end.full_message and SECRET not in refused_end.full_message
    assert cut_end.kind == FAILED and cut_end.message == "cut off before the end (kept as a failed attempt)"
    assert cut_end.text == FAMILIAR[:24]
    # streamed text arrived in pieces, after the lane said it was asking
    quick_texts = [e.text for e in recorder.events if e.lane == 0 and e.kind == "text"]
    assert "".join(quick_texts) == FAMILIAR
    assert [e.kind for e in recorder.events if e.lane == 0][0] == ASKING
    # the prompt was built once and sent identically to every contender, each with its own key
    sent = [server.requests[0]["messages"] for server in (quick, slow, refusing, cutting)]
    assert all(messages == sent[0] for messages in sent) and "turn 0 of clip-000" in str(sent[0])
    assert [s.requests[0]["model"] for s in (quick, slow, refusing, cutting)] == [c.model for c in contenders]
    assert quick.headers[0]["authorization"] == f"Bearer {SECRET}"
    # kept like any live run: two answers scored by FriendBench's rule, the cut one as a failed attempt
    cur = store.cursor()
    assert cur.execute(LIVE).fetchall() == [("quick-1", "text", detail.id, FAMILIAR, "familiar", True),
                                            ("slow-1", "text", detail.id, STRANGER, "stranger", False)]
    assert cur.execute("SELECT model, status, partial_output FROM live_failure").fetchall() == [
        ("cut-1", "cut_off", FAMILIAR[:24])]
    # the window hears once, when the race is over, of every answer and failed attempt it stored
    assert [(c.topics, c.stimulus_ids) for c in published] == [(frozenset(ANSWER_TOPICS), {detail.id})]
    changed = changed_rows(before, store_rows(store))
    assert set(changed) == {"model", "run", "prediction", "live_failure"}
    assert all(not gone for gone, _came in changed.values())
    assert SECRET not in repr(store_rows(store))
    # the dashboard and failure mining read them as they read any live run
    frames = load_frames(store, detail.dataset_id)
    live = frames.predictions.filter(pl.col("model").str.starts_with("quick-1") | pl.col("model").str.starts_with(
        "slow-1")).sort("model")
    assert live.select("stimulus_id", "correct").rows() == [(detail.id, True), (detail.id, False)]
    wide = failure_frame(frames)
    assert {c for c in wide.columns if "quick-1" in c or "slow-1" in c}


def test_a_second_race_shows_the_kept_answers_and_asks_again_only_when_told(race_store):
    service, store, detail = race_store
    with ScriptedServer([Reply(text=FAMILIAR)] * 3) as first, ScriptedServer([Reply(text=STRANGER)] * 3) as second:
        lineup = [contender("One", first, "one-1"), contender("Two", second, "two-1")]
        run_race(service, detail, lineup, Recorder())
        after_first = store_rows(store)
        # the same stimulus again: nothing is asked, the kept answers are shown
        again = Recorder()
        run_race(service, detail, lineup, again)
        assert [(e.lane, e.kind, e.answer, e.correct) for e in again.events] == [
            (0, KEPT, "familiar", True), (1, KEPT, "stranger", False)]
        assert again.end_of(0).text == FAMILIAR and again.end_of(0).latency_s is not None
        assert len(first.requests) == len(second.requests) == 1
        assert store_rows(store) == after_first
        # a third contender joins: only it is asked
        with ScriptedServer([Reply(text=STRANGER)]) as third:
            joined = Recorder()
            run_race(service, detail, [*lineup, contender("Three", third, "three-1")], joined)
            assert [e.kind for e in joined.ends()][:2] == [KEPT, KEPT] and joined.end_of(2).kind == ANSWERED
            assert len(third.requests) == 1 and len(first.requests) == 1
        # told to ask again: every contender is asked, and the new answer replaces the kept one
        run_race(service, detail, lineup, Recorder(), ask_again=True)
        assert len(first.requests) == len(second.requests) == 2
    assert store.cursor().execute("SELECT count(*) FROM prediction p JOIN run r ON r.id = p.run_id"
                                  " WHERE r.is_live").fetchall() == [(3,)]


def test_an_unreachable_endpoint_a_timeout_an_oversized_answer_and_a_missing_clip_fail_alone(race_store):
    service, store, detail = race_store
    with ScriptedServer([Reply(text=FAMILIAR, delay_s=15)]) as silent, ScriptedServer([Reply(text=FAMILIAR)]) as ok, \
            ScriptedServer([Reply(text="familiar " * 1000, chunk_size=512)]) as huge:
        lineup = [contender("Down", unreachable_url(), "down-1"), contender("Silent", silent, "silent-1"),
                  Contender("Deaf", ok.base_url, "deaf-1", "audio", "RACE_TEST_KEY"),
                  contender("Fine", ok, "fine-1"), contender("Huge", huge, "huge-1")]
        recorder = Recorder()
        run_race(service, detail, lineup, recorder, timeout_s=2.0, max_answer_bytes=4096)
    assert recorder.end_of(0).message == "cannot reach the endpoint"
    assert recorder.end_of(1).message == "no answer within 2 s"
    # the clip's audio files are not on disk: the audio contender cannot be asked, the text ones can
    assert recorder.end_of(2).kind == FAILED and "no audio file present" in recorder.end_of(2).full_message
    assert (recorder.end_of(3).kind, recorder.end_of(3).answer) == (ANSWERED, "familiar")
    assert recorder.end_of(4).message == "over the 4 KB limit (kept as a failed attempt)"
    assert len(recorder.end_of(4).text) == 4096
    assert len(ok.requests) == 1
    assert store.cursor().execute("SELECT model, status, length(partial_output) FROM live_failure").fetchall() == [
        ("huge-1", "too_large", 4096)]


def test_cancel_stops_every_lane_and_keeps_nothing(race_store):
    service, store, detail = race_store
    before = store_rows(store)
    stop = threading.Event()
    recorder = Recorder()

    def emit(event: RaceEvent) -> None:
        recorder(event)
        if sum(1 for e in recorder.events if e.kind == "text") >= 2:
            stop.set()   # the presenter pressed Escape while both were streaming

    slow = Reply(text=FAMILIAR * 20, chunk_size=4, chunk_delay_s=0.05)
    with ScriptedServer([slow]) as one, ScriptedServer([slow]) as two:
        run_race(service, detail, [contender("One", one, "one-1"), contender("Two", two, "two-1")], emit,
                 stop.is_set)
    assert [e.kind for e in recorder.ends()] == [CANCELLED, CANCELLED]
    assert store_rows(store) == before


def test_the_stage_reveals_verdicts_in_finishing_order_and_the_truth_last():
    lineup = [Contender(n, "http://127.0.0.1:1/v1", f"{n}-1") for n in ("A", "B", "C")]
    state = RaceState(lineup, "familiar", now=100.0)
    state.apply(RaceEvent(0, ASKING), now=100.1)
    state.apply(RaceEvent(0, "text", "They fin"), now=100.2)
    state.apply(RaceEvent(0, "text", "ish each other's"), now=100.3)
    assert state.lanes[0].tail(9) == "h other's" and state.elapsed(0, now=101.5) == pytest.approx(1.5)
    state.apply(RaceEvent(2, ANSWERED, STRANGER, "stranger", False, 2.0), now=102.0)
    assert state.reveal_next() == 2 and state.verdict_shown(2)
    assert state.reveal_next() is None          # lane 0 still streams: nothing else, and not the truth
    state.apply(RaceEvent(1, FAILED, message="key refused (HTTP 401)"), now=102.5)
    state.apply(RaceEvent(0, ANSWERED, FAMILIAR, "familiar", True, 3.25), now=103.3)
    assert state.lanes[0].text() == FAMILIAR and state.elapsed(0) == 3.25 and state.elapsed(1) == pytest.approx(2.5)
    assert not state.truth_shown()
    assert state.reveal_next() == 0 and state.reveal_next() == -1 and state.truth_shown()
    assert state.reveal_next() is None and state.all_revealed()
    # text that arrives after a lane ended changes nothing
    state.apply(RaceEvent(1, "text", "late"))
    assert state.lanes[1].text() == "" and state.lanes[1].status == FAILED


def test_verdicts_at_once_and_a_cancelled_race():
    lineup = [Contender(n, "http://127.0.0.1:1/v1", f"{n}-1") for n in ("A", "B")]
    state = RaceState(lineup, "stranger", verdicts_at_once=True, now=0.0)
    state.apply(RaceEvent(0, ANSWERED, STRANGER, "stranger", True, 1.0))
    assert state.verdict_shown(0) and not state.truth_shown()
    assert state.cancel_all() == [1] and state.over() and state.truth_shown() and state.all_revealed()
    # an answer stored just as the race was cancelled still shows: the store has it
    state.apply(RaceEvent(1, ANSWERED, FAMILIAR, "familiar", False, 4.0))
    assert state.lanes[1].status == ANSWERED and state.finish_order == [0, 1]


def test_contenders_keep_the_name_of_the_key_variable_and_refuse_a_bad_lineup():
    lineup = (Contender("GPT", "https://api.example.org/v1", "gpt-x", "text", "OPENAI_API_KEY"),
              Contender("Qwen", "http://127.0.0.1:8000/v1", "qwen", "audio"))
    assert contenders_from_stored(contenders_to_stored(lineup)) == lineup
    assert "OPENAI_API_KEY" in contenders_to_stored(lineup) and "sk-" not in contenders_to_stored(lineup)
    assert contenders_from_stored("not json") == () and contenders_from_stored('[{"name": 3}, 7]') == ()
    assert lineup_problem(lineup) is None
    assert lineup_problem([*lineup, Contender("GPT", "http://h/v1", "other")]) == "two contenders are named GPT"
    assert "two contenders ask gpt-x in text" in lineup_problem([*lineup, Contender("G2", "http://h/v1", "gpt-x")])
    assert "base URL must start with http" in lineup_problem([Contender("X", "ftp://h", "m")])
    assert "modality must be one of" in lineup_problem([Contender("X", "http://h/v1", "m", "smell")])


NCP_SETUP = [{"action": "location_declaration", "args": ["Anne", "kitchen"], "kwargs": {}},
             {"action": "location_declaration", "args": ["Beth", "kitchen"], "kwargs": {}},
             {"action": "location_declaration", "args": ["ball", "kitchen"], "kwargs": {"is_thinking_entity": False}}]


def test_an_ncp_task_is_acted_out_by_every_contender_and_each_attempt_is_kept_with_its_trace(tmp_path):
    root = tmp_path / "ncp"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "sally.json").write_text(json.dumps({
        "task_id": "sally", "goal": ["Beth believes that ball is in the basket"], "false_belief": True,
        "context": "Anne and Beth are in the kitchen with a ball.", "initial_steps": NCP_SETUP}))
    store = Store.open(tmp_path / "ncp.duckdb")
    run_import(store, "ncp", root, ImportOptions(dataset_name="NCP race"))
    service = LiveService(store)
    detail = service.detail(store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'sally'"
                                                   ).fetchall()[0][0])
    solving = [Reply(tool_calls=[tool_call("move_object_container", "c1", person="Anne", obj="ball",
                                           container="basket")]),
               Reply(tool_calls=[tool_call("leave_room", "c2", person="Beth", room="kitchen")]),
               Reply(tool_calls=[tool_call("move_object_container", "c3", person="Anne", obj="ball",
                                           container="box")]),
               Reply(text="Beth left before the ball went into the box.")]
    giving_up = [Reply(text="I would rather not move anything.")]
    try:
        with ScriptedServer(solving) as solver, ScriptedServer(giving_up) as idle:
            recorder = Recorder()
            run_race(service, detail, [contender("Solver", solver, "solver-1"), contender("Idle", idle, "idle-1")],
                     recorder)
        assert (recorder.end_of(0).kind, recorder.end_of(0).correct) == (ANSWERED, True)
        assert (recorder.end_of(1).kind, recorder.end_of(1).correct) == (ANSWERED, False)
        # each tool call streamed into the solver's column as a line
        steps = "".join(e.text for e in recorder.events if e.lane == 0 and e.kind == "text")
        assert steps.count("\n") == 3 and "leave_room" in steps and "— ok" in steps
        rows = store.cursor().execute(
            "SELECT m.name, p.correct, count(t.step_index) FROM prediction p JOIN run r ON r.id = p.run_id"
            " JOIN model m ON m.id = r.model_id LEFT JOIN trace_step t ON t.prediction_id = p.id WHERE r.is_live"
            " GROUP BY m.name, p.correct ORDER BY m.name").fetchall()
        assert rows == [("idle-1", False, 0), ("solver-1", True, 3)]
    finally:
        store.close()
