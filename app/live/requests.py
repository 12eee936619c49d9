"""What to ask a live model about one stimulus, and how its reply is read: the prompt template, the chat
messages (media decoded: call on a worker), the run condition the answer is stored under, and the
benchmark's own scoring of the reply. Qt-free, shared by the live panel, batches and the CLI.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.beliefs.stories import STORY_KIND   # an ExploreToM question: the story is the text, the question the title
from app.benchmarks import score_reply
from app.live.messages import (agentviss_messages, echomind_mcq_messages, echomind_open_messages,
                               friendbench_messages, wav_bytes)
from app.prompts import (AGENTVISS_ROLE_PLAY, ECHOMIND_MCQ, ECHOMIND_OPEN_RESPONSE, EXPLORETOM_QUESTION,
                         FRIENDBENCH_FORCED_CHOICE, NCP_TASK, PromptTemplate)
from storage.records import StimulusDetail

FRAMES_PER_CLIP = 4
NCP_KIND = "ncp_task"
ROLE_PLAY_KIND = "agentviss_scene"
ROLE_PLAY_TASK = "Say your next line in this conversation, as your character would say it."
TEMPLATES = (FRIENDBENCH_FORCED_CHOICE, ECHOMIND_MCQ, ECHOMIND_OPEN_RESPONSE, NCP_TASK, AGENTVISS_ROLE_PLAY,
             EXPLORETOM_QUESTION)
Condition = dict[str, str]


def template_for(detail: StimulusDetail) -> PromptTemplate:
    """The prompt template this stimulus is asked with."""
    if detail.kind == "echomind_mcq":
        return ECHOMIND_MCQ
    if detail.kind == "echomind_script":
        return ECHOMIND_OPEN_RESPONSE
    if detail.kind == NCP_KIND:
        return NCP_TASK
    if detail.kind == ROLE_PLAY_KIND:
        return AGENTVISS_ROLE_PLAY
    if detail.kind == STORY_KIND:
        return EXPLORETOM_QUESTION
    return FRIENDBENCH_FORCED_CHOICE


def transcript_of(detail: StimulusDetail) -> str:
    lines = [f"{s.speaker}: {s.text}" if s.speaker else s.text for s in detail.segments if s.text]
    return "\n".join(lines) or (detail.text or "")


def clip_audio_wav(detail: StimulusDetail) -> bytes:
    """The stimulus' audio as WAV: its participants' tracks mixed (dyads), or its one audio file."""
    from storage.media import decode_segment

    roles = ("audio:target", "audio") if detail.kind == "echomind_script" else ("audio",)
    refs = [m for prefix in roles for m in detail.media_by_role(prefix) if m.present]
    if detail.kind == "echomind_script":
        refs = refs[:1]
    if not refs:
        raise ValueError(f"no audio file present for {detail.external_id}")
    tracks, rate = [], None
    for ref in refs:
        end = ref.offset_s + ref.duration_s if ref.duration_s else None
        samples = decode_segment(ref.path, ref.offset_s, end)
        if rate is not None and samples.sample_rate != rate:
            continue  # mixing needs one rate; the first track's wins
        rate = samples.sample_rate
        tracks.append(samples.samples)
    length = max(len(t) for t in tracks)
    mix = np.zeros(length, dtype=np.float32)
    for t in tracks:
        mix[: len(t)] += t
    return wav_bytes(mix / max(1, len(tracks)), int(rate or 16000))


def clip_frames(detail: StimulusDetail, count: int = FRAMES_PER_CLIP) -> list[bytes]:
    from storage.frames import sample_frames_jpeg

    refs = [m for m in detail.media_by_role("video") if m.present]
    if not refs:
        raise ValueError(f"no video file present for {detail.external_id}")
    per_video = max(1, count // len(refs))
    frames: list[bytes] = []
    for ref in refs:
        end = ref.offset_s + ref.duration_s if ref.duration_s else None
        frames += sample_frames_jpeg(ref.path, per_video, ref.offset_s, end)
    return frames


def options_of(detail: StimulusDetail) -> list[str]:
    options = detail.meta.get("options") or {}
    return [options[k] for k in sorted(options)] if isinstance(options, dict) else list(options)


def characters_of(detail: StimulusDetail) -> list[str]:
    """An AgentViSS scene's characters in order (the importer's list, else the dialogue's speakers)."""
    named = detail.meta.get("characters")
    if isinstance(named, list) and named:
        return [str(c) for c in named]
    return list(dict.fromkeys(s.speaker for s in detail.segments if s.speaker))


def _phrase(parts: Sequence[tuple[str, Any]]) -> str:
    return "; ".join(f"{label}{value}" for label, value in parts if value not in (None, ""))


def role_play_messages(detail: StimulusDetail, character: str, task: str = ROLE_PLAY_TASK,
                       template: PromptTemplate = AGENTVISS_ROLE_PLAY) -> list[dict[str, Any]]:
    """An AgentViSS role-play turn in verbalised vision (VV): the scene and dialogue as text, no images."""
    roles = detail.meta.get("roles") if isinstance(detail.meta.get("roles"), dict) else {}
    role = roles.get(character) if isinstance(roles.get(character), dict) else {}
    profile = _phrase([("", role.get("gender")), ("age ", role.get("age")), ("", role.get("occupation")),
                       ("expression style: ", role.get("expression_style")),
                       ("conflict style: ", role.get("conflict_trait"))]) or "not given"
    emotional_state = _phrase([("feels ", role.get("initial_emotion")), ("face: ", role.get("facial_expression")),
                               ("body: ", role.get("body_action"))]) or "not given"
    setting = _phrase([("dialogue type: ", detail.meta.get("dialogue_type")),
                       ("conflict intensity: ", detail.meta.get("conflict_intensity"))])
    others = [c for c in characters_of(detail) if c != character]
    scene = "\n".join(part for part in (detail.text or "", f"({setting})" if setting else "",
                                        f"With you: {', '.join(others)}." if others else "") if part)
    return agentviss_messages(character, profile, emotional_state, scene or "not described",
                              transcript_of(detail) or "(no one has spoken yet)", task, (), template)


def build_messages(detail: StimulusDetail, modality: str, template: PromptTemplate | None = None,
                   prompt_setting: str = "no", role: str | None = None,
                   role_task: str = ROLE_PLAY_TASK) -> list[dict[str, Any]]:
    """The chat messages for this stimulus in this modality (decodes media: call it on a worker).

    An AgentViSS scene is role-played as ``role`` (default: its first character)."""
    template = template or template_for(detail)
    if detail.kind == ROLE_PLAY_KIND:
        characters = characters_of(detail)
        character = role or (characters[0] if characters else "")
        if not character:
            raise ValueError(f"{detail.external_id} names no character to play")
        return role_play_messages(detail, character, role_task, template)
    if detail.kind == "echomind_mcq":
        question = (detail.text or "").split("\n", 1)[0]
        return echomind_mcq_messages(question, options_of(detail), clip_audio_wav(detail), template)
    if detail.kind == "echomind_script":
        return echomind_open_messages(clip_audio_wav(detail), prompt_setting, template)
    if detail.benchmark == "friendbench" or detail.kind == "dyad":
        transcript = transcript_of(detail) if modality == "text" else None
        audio = clip_audio_wav(detail) if modality in ("audio", "video") else None
        frames = clip_frames(detail) if modality == "video" else ()
        return friendbench_messages(modality, transcript, audio, frames, template)
    if detail.kind == STORY_KIND:
        system, user = template.render(story=detail.text or "", question=detail.title or "")
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
    system, user = template.system, f"{template.user}\n\n{detail.text or transcript_of(detail)}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


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


def condition_for(detail: StimulusDetail | None, chosen: dict[str, str]) -> Condition:
    """The run condition (modality, prompt_setting, vision_mode, context) an answer about `detail` is stored
    under, given the choices made in the panel (modality, prompt_setting, role)."""
    if detail is not None and detail.kind == NCP_KIND:
        # as imported NCP attempts are stored: the task is the condition
        return {"modality": "", "prompt_setting": "", "vision_mode": "", "context": ""}
    if detail is not None and detail.kind == ROLE_PLAY_KIND:
        characters = characters_of(detail)
        role = chosen.get("role") if chosen.get("role") in characters else (characters[0] if characters else "")
        return {"modality": "", "prompt_setting": "", "vision_mode": "VV", "context": role or ""}
    if detail is not None and detail.kind == "echomind_mcq":
        task = detail.meta.get("task") or "understanding"
        return {"modality": f"mcq_{task}", "prompt_setting": "", "vision_mode": "", "context": ""}
    if detail is not None and detail.kind == "echomind_script":
        return {"modality": "conversation:target", "prompt_setting": chosen.get("prompt_setting") or "no",
                "vision_mode": "", "context": ""}
    return {"modality": chosen.get("modality") or "text", "prompt_setting": "", "vision_mode": "", "context": ""}


def condition_key(stimulus_id: int, condition: Condition) -> tuple[int, str, str, str, str]:
    """The key a stored live answer is found by (see `storage.live_failures.live_answered`)."""
    return (stimulus_id, condition["modality"], condition["prompt_setting"], condition["vision_mode"],
            condition["context"])


def cost_text(latency_s: float, tokens_in: int | None, tokens_out: int | None) -> str:
    """What an answer took: "1.23 s" and, when the endpoint reports them, the tokens in and out."""
    tokens = f", {tokens_in} tokens in / {tokens_out} out" if tokens_in is not None else ""
    return f"{latency_s:.2f} s{tokens}"
