"""Run an NCP-ExploreToM episode against a live model, as the benchmark does.

The model gets the goal and a description of the world, and the six state-changing actions
of ExploreToM's belief tracker as tools. Every tool call goes through an injected executor
``execute(action, args, kwargs) -> (ok, message)`` (the belief engine in the app; anything
with that shape in tests), and the result goes back to the model, until the model stops
calling tools, the step limit is reached, or the user cancels.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.beliefs.actions import action_parameters
from app.benchmarks.ncp import NCP_ACTIONS
from app.live.client import LiveAnswer, LiveClient, ToolCall
from app.live.errors import LiveCancelled
from app.live.messages import ncp_messages
from app.prompts import NCP_TASK, PromptTemplate

Executor = Callable[[str, list[Any], dict[str, Any]], tuple[bool, str]]

_STRING = {"type": "string"}
_PEOPLE = {"type": "array", "items": {"type": "string"}}
_WATCHERS = ("people_peeking", "people_distracted")
# What the model reads about each action and parameter. The actions offered are NCP's six
# (`app.benchmarks.ncp.NCP_ACTIONS`) and their parameters, in order, are the engine's own
# (`app.beliefs.actions.action_parameters`); a required parameter is sent as a positional argument.
_ACTION_TEXT = {
    "enter_room": "A person enters a room; everyone in that room sees it.",
    "leave_room": "A person leaves the room they are in; everyone in that room sees it.",
    "move_object_container": "A person puts an object (in their room) into a container.",
    "leave_container": "An object is taken out of the container it is in.",
    "move_object_room": "A person carries an object from their room to another room.",
    "update_object_state": "A person changes a property of an object in their room.",
}
# engine parameter -> (name the model uses, JSON schema, description); a description per action overrides
_PARAMETER_TEXT: dict[str, tuple[str, dict[str, Any], str]] = {
    "person": ("person", _STRING, "who acts"),
    "room": ("room", _STRING, "the room"),
    "obj": ("obj", _STRING, "the object"),
    "container": ("container", _STRING, "the container"),
    "new_room": ("new_room", _STRING, "the room to go to"),
    "state_value": ("value", _STRING, "the new value, e.g. 'peeled'"),
    "state_type": ("state_type", _STRING, "the property, e.g. '<is_peeled>'"),
    "story_text": ("text", _STRING, "a sentence telling what happened"),
    "visible": ("visible", {"type": "boolean"}, "whether people entering later can see the change"),
    "people_peeking": ("people_peeking", _PEOPLE, "people outside the room who secretly see this"),
    "people_distracted": ("people_distracted", _PEOPLE, "people in the room who miss this"),
}
_DESCRIPTIONS = {
    ("enter_room", "person"): "who enters", ("enter_room", "room"): "the room entered",
    ("leave_room", "person"): "who leaves", ("leave_room", "room"): "the room left",
    ("move_object_container", "person"): "who moves it",
    ("leave_container", "container"): "the container it leaves",
    ("move_object_room", "person"): "who carries it", ("update_object_state", "person"): "who changes it",
}
# The model moves people and things in a story that is already set up: it never declares who can think,
# and only the actions that can happen unseen take watchers.
_NOT_OFFERED = {"is_thinking_entity"}
_WATCHED = {"move_object_container", "update_object_state"}
_Parameter = tuple[str, dict[str, Any], str]  # name the model uses, JSON schema, description


def _parameters(action: str) -> tuple[list[_Parameter], list[_Parameter]]:
    """(required, optional) tool parameters of an action, in the engine's order."""
    required: list[_Parameter] = []
    optional: list[_Parameter] = []
    for name in action_parameters(action):
        if name in _NOT_OFFERED or (name in _WATCHERS and action not in _WATCHED):
            continue
        shown, schema, text = _PARAMETER_TEXT[name]
        (optional if name in _WATCHERS else required).append((shown, schema, _DESCRIPTIONS.get((action, name), text)))
    return required, optional


_ACTIONS: dict[str, tuple[str, list[_Parameter], list[_Parameter]]] = {
    action: (_ACTION_TEXT[action], *_parameters(action)) for action in NCP_ACTIONS}


def _tool(name: str) -> dict[str, Any]:
    description, required, optional = _ACTIONS[name]
    properties = {p: {**schema, "description": text} for p, schema, text in (*required, *optional)}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": [p for p, _, _ in required]},
        },
    }


NCP_TOOLS: tuple[dict[str, Any], ...] = tuple(_tool(name) for name in NCP_ACTIONS)


@dataclass(frozen=True)
class NcpStep:
    """One action the model asked for and what the executor said."""

    action: str
    args: list[Any]
    kwargs: dict[str, Any]
    returned: bool
    message: str
    tool_call_id: str = ""

    def as_trace(self) -> dict[str, Any]:
        """The golden-trace shape: {action, args, kwargs, returned}."""
        return {"action": self.action, "args": self.args, "kwargs": self.kwargs, "returned": self.returned}


@dataclass
class NcpEpisode:
    steps: list[NcpStep] = field(default_factory=list)
    final_text: str = ""
    stopped: str = ""  # "model_stopped", "step_limit" or "cancelled"
    answers: list[LiveAnswer] = field(default_factory=list)


def call_to_action(call: ToolCall) -> tuple[list[Any], dict[str, Any]] | str:
    """(args, kwargs) for a tool call, or a message saying why it cannot be run.

    Required parameters become positional arguments in the tracker's order; the optional
    peeking/distracted lists become keyword arguments when given.
    """
    if call.name not in _ACTIONS:
        return f"unknown action {call.name!r}; available: {', '.join(NCP_ACTIONS)}"
    try:
        given = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as error:
        return f"arguments are not valid JSON ({error.msg})"
    if not isinstance(given, dict):
        return "arguments must be a JSON object"
    _, required, optional = _ACTIONS[call.name]
    missing = [p for p, _, _ in required if p not in given]
    if missing:
        return f"{call.name} is missing: {', '.join(missing)}"
    args = [given[p] for p, _, _ in required]
    kwargs = {p: given[p] for p, _, _ in optional if p in given}
    return args, kwargs


def run_ncp_episode(
    client: LiveClient,
    goal: str,
    state: str,
    execute: Executor,
    max_steps: int = 30,
    template: PromptTemplate = NCP_TASK,
    on_step: Callable[[NcpStep], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    **options: Any,
) -> NcpEpisode:
    """Let the model act until it stops calling tools or ``max_steps`` actions have been tried.

    Every tool call counts as a step, including rejected ones (unknown action, bad arguments:
    these are not sent to the executor and come back to the model as failures). Live errors
    other than cancellation propagate (:class:`app.live.errors.LiveError`).
    """
    messages = ncp_messages(goal, state, template)
    episode = NcpEpisode()
    while True:
        try:
            answer = client.ask(messages, tools=NCP_TOOLS, cancel=cancel, **options)
        except LiveCancelled:
            episode.stopped = "cancelled"
            return episode
        episode.answers.append(answer)
        episode.final_text = answer.text
        if not answer.tool_calls:
            episode.stopped = "model_stopped"
            return episode
        messages.append(answer.assistant_message())
        for call in answer.tool_calls:
            if len(episode.steps) >= max_steps:
                episode.stopped = "step_limit"
                return episode
            parsed = call_to_action(call)
            if isinstance(parsed, str):
                step = NcpStep(call.name, [], {}, False, parsed, call.id)
            else:
                args, kwargs = parsed
                ok, message = execute(call.name, args, kwargs)
                step = NcpStep(call.name, args, kwargs, bool(ok), message, call.id)
            episode.steps.append(step)
            if on_step is not None:
                on_step(step)
            result = json.dumps({"ok": step.returned, "message": step.message})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        if len(episode.steps) >= max_steps:
            episode.stopped = "step_limit"
            return episode
