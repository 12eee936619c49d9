"""An NCP-like task solved end to end through tool calls, with a small world as executor."""
from __future__ import annotations

import json
from typing import Any

from app.live import NCP_ACTIONS, NCP_TOOLS, LiveClient, LiveSettings, run_ncp_episode
from live_server import Reply, ScriptedServer, tool_call


class RoomWorld:
    """Who and what is in which room, and which container holds what; enough to check a goal."""

    def __init__(self) -> None:
        self.room: dict[str, str] = {"apple": "kitchen"}
        self.container: dict[str, str] = {}

    def execute(self, action: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[bool, str]:
        if action == "enter_room":
            person, room = args
            if self.room.get(person) == room:
                return False, f"{person} is already in the {room}"
            self.room[person] = room
            return True, f"{person} entered the {room}."
        if action == "leave_room":
            person, room = args
            if self.room.get(person) != room:
                return False, f"{person} is not in the {room}"
            del self.room[person]
            return True, f"{person} left the {room}."
        if action == "move_object_container":
            person, obj, container = args
            if self.room.get(person) != self.room.get(obj):
                return False, f"{person} is not where the {obj} is"
            self.container[obj] = container
            return True, f"{person} moved the {obj} to the {container}."
        return False, f"{action} is not modelled here"


def _client(url: str) -> LiveClient:
    return LiveClient(LiveSettings(base_url=url, model="scripted-model"), timeout_s=2.0, max_retries=0, api_key="k")


def test_tools_offer_the_six_actions_with_required_parameters():
    names = [t["function"]["name"] for t in NCP_TOOLS]
    assert names == list(NCP_ACTIONS) == [
        "enter_room", "leave_room", "move_object_container", "leave_container", "move_object_room", "update_object_state",
    ]
    update = NCP_TOOLS[-1]["function"]["parameters"]
    assert update["required"] == ["person", "obj", "value", "state_type", "text", "visible"]
    assert "people_peeking" in update["properties"] and "people_peeking" not in update["required"]


def test_an_episode_reaches_the_goal_through_the_executor():
    script = [
        Reply(tool_calls=[tool_call("enter_room", "c1", person="Anne", room="kitchen")]),
        Reply(
            tool_calls=[
                tool_call("move_object_container", "c2", person="Anne", obj="apple", container="box", people_distracted=[]),
                tool_call("leave_room", "c3", person="Anne", room="garden"),
                tool_call("fly", "c4", person="Anne"),
            ]
        ),
        Reply(tool_calls=[tool_call("leave_room", "c5", person="Anne", room="kitchen")]),
        Reply(text="Done: the apple is in the box and Anne has left."),
    ]
    world = RoomWorld()
    seen = []
    with ScriptedServer(script) as server:
        episode = run_ncp_episode(
            _client(server.base_url), "apple is in the box", "Anne is in the garden. The apple is in the kitchen.",
            world.execute, on_step=seen.append,
        )
    assert episode.stopped == "model_stopped" and episode.final_text.startswith("Done")
    assert world.container == {"apple": "box"} and "Anne" not in world.room
    assert [s.as_trace() for s in episode.steps] == [
        {"action": "enter_room", "args": ["Anne", "kitchen"], "kwargs": {}, "returned": True},
        {"action": "move_object_container", "args": ["Anne", "apple", "box"], "kwargs": {"people_distracted": []}, "returned": True},
        {"action": "leave_room", "args": ["Anne", "garden"], "kwargs": {}, "returned": False},
        {"action": "fly", "args": [], "kwargs": {}, "returned": False},
        {"action": "leave_room", "args": ["Anne", "kitchen"], "kwargs": {}, "returned": True},
    ]
    assert seen == episode.steps and "unknown action 'fly'" in episode.steps[3].message
    # The model saw each result, answered to the right call, with the goal and state up front.
    first, last = server.requests[0], server.requests[-1]
    assert "apple is in the box" in first["messages"][-1]["content"] and len(first["tools"]) == 6
    tool_messages = [m for m in last["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["c1", "c2", "c3", "c4", "c5"]
    assert json.loads(tool_messages[2]["content"]) == {"ok": False, "message": "Anne is not in the garden"}


def test_the_step_limit_stops_a_model_that_never_stops():
    def always_enter(body: dict[str, Any]) -> Reply:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return Reply(tool_calls=[tool_call("enter_room", f"c{turn}", person="Bob", room=f"room{turn}")])

    world = RoomWorld()
    with ScriptedServer(always_enter) as server:
        episode = run_ncp_episode(_client(server.base_url), "goal", "state", world.execute, max_steps=3)
    assert episode.stopped == "step_limit" and len(episode.steps) == 3
    assert len(server.requests) == 3 and world.room["Bob"] == "room2"


def test_bad_arguments_are_refused_without_calling_the_executor():
    calls = []
    script = [
        Reply(tool_calls=[{"id": "x", "type": "function", "function": {"name": "enter_room", "arguments": "{not json"}}]),
        Reply(tool_calls=[tool_call("enter_room", "y", person="Anne")]),
        Reply(text="I give up."),
    ]
    with ScriptedServer(script) as server:
        episode = run_ncp_episode(_client(server.base_url), "g", "s", lambda *a: calls.append(a) or (True, "ok"))
    assert calls == [] and [s.returned for s in episode.steps] == [False, False]
    assert "not valid JSON" in episode.steps[0].message and "missing: room" in episode.steps[1].message


def test_cancel_ends_the_episode():
    with ScriptedServer([Reply(text="unused")]) as server:
        episode = run_ncp_episode(_client(server.base_url), "g", "s", RoomWorld().execute, cancel=lambda: True)
    assert episode.stopped == "cancelled" and episode.steps == []
