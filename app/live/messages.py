"""Chat messages for each benchmark and modality, from inputs already decoded to bytes.

The store and media layers hand over bytes (WAV audio, JPEG frames) and text; this module only
encodes them as OpenAI content parts: text, ``input_audio`` (WAV, base64) and ``image_url``
(JPEG data URL). A video is sent the way benchmarks send it to chat models: a few frames
sampled evenly over the clip, plus its audio track.
"""
from __future__ import annotations

import base64
import io
import wave
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.benchmarks.echomind import format_options
from app.prompts import (
    AGENTVISS_ROLE_PLAY,
    ECHOMIND_MCQ,
    ECHOMIND_OPEN_RESPONSE,
    ECHOMIND_SETTING_HINTS,
    FRIENDBENCH_FORCED_CHOICE,
    NCP_TASK,
    PromptTemplate,
)
from storage.frames import frame_times  # noqa: F401 (the frames a clip is sampled at, for app.live)

Message = dict[str, Any]
MODALITIES = ("text", "audio", "video")


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def audio_part(wav: bytes) -> dict[str, Any]:
    """WAV bytes as an ``input_audio`` content part."""
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav).decode("ascii"), "format": "wav"}}


def image_part(jpeg: bytes, detail: str = "low") -> dict[str, Any]:
    """JPEG bytes as an ``image_url`` content part (a data URL)."""
    url = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url, "detail": detail}}


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """16-bit PCM WAV from float samples in [-1, 1] (mono, or frames x channels)."""
    data = np.asarray(samples, dtype=np.float64)
    channels = 1 if data.ndim == 1 else data.shape[1]
    pcm = (np.clip(data, -1.0, 1.0) * 32767.0).round().astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def _conversation(system: str, parts: list[dict[str, Any]]) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    # A text-only user turn is sent as a plain string: the widest-supported form.
    content: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
    messages.append({"role": "user", "content": content})
    return messages


def friendbench_messages(
    modality: str,
    transcript: str | None = None,
    audio_wav: bytes | None = None,
    frames_jpeg: Sequence[bytes] = (),
    template: PromptTemplate = FRIENDBENCH_FORCED_CHOICE,
) -> list[Message]:
    """The forced-choice question for one dyad clip.

    text: the transcript inside the prompt; audio: the clip's audio; video: sampled frames plus
    the audio (video keeps its sound in FriendBench). Raises ValueError when the modality's
    input is missing.
    """
    if modality not in MODALITIES:
        raise ValueError(f"modality must be one of {', '.join(MODALITIES)}, got {modality!r}")
    if modality == "text" and not transcript:
        raise ValueError("the text condition needs a transcript")
    if modality in ("audio", "video") and audio_wav is None:
        raise ValueError(f"the {modality} condition needs the clip's audio")
    if modality == "video" and not frames_jpeg:
        raise ValueError("the video condition needs at least one frame")
    block = f"\nTranscript:\n{transcript}\n\n" if modality == "text" else "\n"
    system, user = template.render(modality=modality, transcript_block=block)
    parts = [text_part(user)]
    if modality == "video":
        parts += [image_part(jpeg) for jpeg in frames_jpeg]
    if modality in ("audio", "video"):
        parts.append(audio_part(audio_wav))  # type: ignore[arg-type]
    return _conversation(system, parts)


def echomind_mcq_messages(
    question: str, options: Sequence[str], audio_wav: bytes, template: PromptTemplate = ECHOMIND_MCQ
) -> list[Message]:
    """An EchoMind multiple-choice question about the given audio."""
    system, user = template.render(question=question, options=format_options(options))
    return _conversation(system, [text_part(user), audio_part(audio_wav)])


def echomind_open_messages(
    audio_wav: bytes, setting: str = "no", template: PromptTemplate = ECHOMIND_OPEN_RESPONSE
) -> list[Message]:
    """An EchoMind conversation turn: reply to speaker A's audio under prompt setting no/basic/enhance."""
    if setting not in ECHOMIND_SETTING_HINTS:
        raise ValueError(f"prompt setting must be one of {', '.join(ECHOMIND_SETTING_HINTS)}, got {setting!r}")
    system, user = template.render(setting_hint=ECHOMIND_SETTING_HINTS[setting])
    return _conversation(system, [text_part(user), audio_part(audio_wav)])


def agentviss_messages(
    character: str,
    profile: str,
    emotional_state: str,
    scene: str,
    dialogue: str,
    task: str,
    images_jpeg: Sequence[bytes] = (),
    template: PromptTemplate = AGENTVISS_ROLE_PLAY,
) -> list[Message]:
    """An AgentViSS role-play turn. Direct vision (DV) passes the scene images; verbalized vision
    (VV) passes none and describes them in ``scene``."""
    system, user = template.render(
        character=character, profile=profile, emotional_state=emotional_state, scene=scene, dialogue=dialogue, task=task
    )
    return _conversation(system, [text_part(user), *[image_part(jpeg) for jpeg in images_jpeg]])


def ncp_messages(goal: str, state: str, template: PromptTemplate = NCP_TASK) -> list[Message]:
    """The opening of an NCP episode: the goal and a description of the world."""
    system, user = template.render(goal=goal, state=state)
    return _conversation(system, [text_part(user)])
