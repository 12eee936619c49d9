"""What to ask a live model about one stimulus, and how its reply is read: the prompt template, the chat
messages (media decoded: call on a worker), the run condition the answer is stored under, and the
benchmark's own scoring of the reply. Qt-free, shared by the live panel, batches and the CLI.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from app.benchmarks import kind_profile, kinds, score_reply
from app.benchmarks.profile import ROLE_PLAY_TASK, Asking, Condition, KindProfile, LiveChoice, chosen_modality
from app.prompt_template import PromptTemplate
from storage.records import StimulusDetail

__all__ = ["ROLE_PLAY_TASK", "Asking", "Condition", "build_messages", "condition_for", "condition_key",
           "cost_text", "goal_summary", "kind_of", "parse_answer", "prompt_record", "roles_of", "template_for",
           "templates"]


def kind_of(detail: StimulusDetail) -> KindProfile:
    """The profile of the stimulus's kind (in its benchmark, for a kind no benchmark declares)."""
    return kind_profile(detail.kind, detail.benchmark)


def templates() -> tuple[PromptTemplate, ...]:
    """Every template a stimulus may be asked with, each once."""
    return tuple(dict.fromkeys(k.template for k in kinds() if k.template is not None))


def template_for(detail: StimulusDetail) -> PromptTemplate:
    """The prompt template this stimulus is asked with."""
    template = kind_of(detail).template or kind_profile(None).template
    assert template is not None, "the generic stimulus has a template"
    return template


def roles_of(detail: StimulusDetail) -> list[str]:
    """The characters a role-play about `detail` may be played as (none for other kinds)."""
    roles = kind_of(detail).roles
    return roles(detail) if roles is not None else []


def build_messages(detail: StimulusDetail, modality: str, template: PromptTemplate | None = None,
                   prompt_setting: str = "no", role: str | None = None,
                   role_task: str = ROLE_PLAY_TASK) -> list[dict[str, Any]]:
    """The chat messages for this stimulus in this modality (decodes media: call it on a worker), as its
    kind builds them. A role-play scene is played as ``role`` (default: its first character)."""
    choice = LiveChoice(modality, prompt_setting, role, role_task)
    return kind_of(detail).messages(detail, template or template_for(detail), choice)


def parse_answer(detail: StimulusDetail, text: str) -> tuple[str | None, bool | None]:
    """(answer, correct) as the benchmark scores it (`app.benchmarks.score_reply`, the rules an imported
    answer is read by); correct is None without a ground truth or answer."""
    return score_reply(detail, text)


def goal_summary(detail: StimulusDetail) -> str:
    """One line naming what an NCP task asks for (shown above the list of calls)."""
    atoms = "; ".join(a.text for a in detail.goal_atoms) or "no goal atoms"
    kind = {True: " (a false belief)", False: " (a true belief)"}.get(detail.meta.get("false_belief"), "")
    return f"Goal{kind}: {atoms}"


def prompt_record(messages: Sequence[dict[str, Any]]) -> str:
    """What was sent, as JSON text, with media replaced by a placeholder (the store keeps the words)."""
    def strip(part: Any) -> Any:
        if isinstance(part, dict) and part.get("type") == "input_audio":
            return {"type": "input_audio", "input_audio": "<wav>"}
        if isinstance(part, dict) and part.get("type") == "image_url":
            return {"type": "image_url", "image_url": "<jpeg>"}
        return part

    shown = [{**m, "content": [strip(p) for p in m["content"]] if isinstance(m.get("content"), list)
              else m.get("content")} for m in messages]
    return json.dumps(shown, ensure_ascii=False)


def condition_for(detail: StimulusDetail | None, chosen: Mapping[str, str | None]) -> Condition:
    """The run condition (modality, prompt_setting, vision_mode, context) an answer about `detail` is stored
    under, given the choices made in the panel (modality, prompt_setting, role), as its kind states it."""
    return chosen_modality(None, chosen) if detail is None else kind_of(detail).condition(detail, chosen)


def condition_key(stimulus_id: int, condition: Condition) -> tuple[int, str, str, str, str]:
    """The key a stored live answer is found by (see `storage.live_failures.live_answered`)."""
    return (stimulus_id, condition["modality"], condition["prompt_setting"], condition["vision_mode"],
            condition["context"])


def cost_text(latency_s: float, tokens_in: int | None, tokens_out: int | None) -> str:
    """What an answer took: "1.23 s" and, when the endpoint reports them, the tokens in and out."""
    tokens = f", {tokens_in} tokens in / {tokens_out} out" if tokens_in is not None else ""
    return f"{latency_s:.2f} s{tokens}"
