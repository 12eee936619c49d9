"""A live NCP attempt with the belief engine as the world: what the model is told, what each call does, and
the verdict (the same one an imported attempt with these steps gets)."""
from __future__ import annotations

import json

import pytest

from app.live import LiveCancelled, LiveClient, LiveSettings
from app.benchmarks.ncp import score_attempt
from app.ncp_live import BeliefExecutor, NcpTask, run_live_ncp_task
from live_server import Reply, ScriptedServer, tool_call

SETUP = ({"action": "location_declaration", "args": ["Anne", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["Beth", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["ball", "kitchen"], "kwargs": {"is_thinking_entity": False}})
# Sally-Anne: Beth must end up believing the ball is in the basket while it is really elsewhere.
TASK = NcpTask(goal={"atoms": ["Beth believes that ball is in the basket"], "false_belief": True},
               context="Anne and Beth are in the kitchen with a ball.", setup=SETUP)
SOLVING = [
    Reply(tool_calls=[tool_call("move_object_container", "c1", person="Anne", obj="ball", container="basket")],
          usage=(100, 10)),
    Reply(tool_calls=[tool_call("leave_room", "c2", person="Beth", room="kitchen"),
                      tool_call("move_object_container", "c3", person="Anne", obj="ball", container="box")],
          usage=(150, 20)),
    Reply(text="Beth left before the ball was moved to the box, so she still thinks it is in the basket.",
          usage=(200, 30)),
]


def _client(url: str) -> LiveClient:
    return LiveClient(LiveSettings(base_url=url, model="scripted-model"), timeout_s=5.0, max_retries=0, api_key="k")


def test_the_executor_tells_what_happened_or_which_precondition_failed():
    world = BeliefExecutor(SETUP)
    assert world.setup_sentences == ("Anne is in the kitchen.", "Beth is in the kitchen.", "ball is in the kitchen.")
    ok, message = world("move_object_container", ["Anne", "ball", "basket"], {})
    assert ok and message == "Anne moved the ball to the basket, which is also located in the kitchen."
    ok, message = world("leave_room", ["Beth", "garden"], {})
    assert not ok and message == "Not done: Beth is not in the garden."
    ok, message = world("location_declaration", ["Carl", "kitchen"], {})
    assert not ok and "not an action you can take" in message
    ok, message = world("move_object_container", ["Anne", "ball", "box"], {"people_peeking": "Beth"})
    assert not ok and "must be a list" in message
    # what the engine ran (done or refused) is the trace; what it could not run at all is not
    assert [s["action"] for s in world.trace] == ["move_object_container", "leave_room"]


def test_a_solved_task_is_a_success_with_steps_tokens_and_the_prompt_built_from_the_task():
    seen = []
    with ScriptedServer(SOLVING) as server:
        result = run_live_ncp_task(_client(server.base_url), TASK, max_steps=10, on_step=seen.append)
    assert result.success and result.stopped == "model_stopped"
    assert [(s.action, s.returned) for s in result.steps] == [
        ("move_object_container", True), ("leave_room", True), ("move_object_container", True)]
    assert seen == list(result.steps)
    assert result.steps[1].message == "Beth left the kitchen."
    assert result.final_text.startswith("Beth left before")
    assert (result.tokens_in, result.tokens_out) == (450, 60) and result.latency_s > 0
    assert result.atoms == (("Beth believes that ball is in the basket", True),)
    assert score_attempt([*SETUP, *result.trace], TASK.goal).reached is True
    opening = server.requests[0]["messages"][-1]["content"]
    assert "Beth believes that ball is in the basket" in opening and "must be false" in opening
    assert "Anne and Beth are in the kitchen with a ball." in opening and "Beth is in the kitchen." in opening
    tool_messages = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[1]["content"]) == {"ok": True, "message": "Beth left the kitchen."}


def test_a_failed_precondition_then_stopping_misses_the_goal():
    script = [Reply(tool_calls=[tool_call("leave_room", "c1", person="Beth", room="garden")]),
              Reply(text="I cannot do more.")]
    with ScriptedServer(script) as server:
        result = run_live_ncp_task(_client(server.base_url), TASK)
    assert not result.success and [s.returned for s in result.steps] == [False]
    assert "Beth is not in the garden" in result.steps[0].message
    assert result.atoms == (("Beth believes that ball is in the basket", False),)
    assert score_attempt([*SETUP, *result.trace], TASK.goal).reached is False


def test_a_true_belief_is_not_enough_for_a_false_belief_goal():
    script = [Reply(tool_calls=[tool_call("move_object_container", "c1", person="Anne", obj="ball",
                                          container="basket")]),
              Reply(text="Done.")]
    with ScriptedServer(script) as server:
        result = run_live_ncp_task(_client(server.base_url), TASK)
    # Beth believes it is in the basket, but so it is: the goal asks for a false belief
    assert result.atoms == (("Beth believes that ball is in the basket", True),) and not result.success


def test_cancel_raises_and_gives_no_verdict():
    with ScriptedServer(SOLVING) as server, pytest.raises(LiveCancelled):
        run_live_ncp_task(_client(server.base_url), TASK, cancel=lambda: True)
