"""The pieces a benchmark's live request is built of: OpenAI content parts (text, ``input_audio`` as base64
WAV, ``image_url`` as a JPEG data URL), a conversation of a system and a user turn, and a stimulus's media
decoded to the bytes they carry (a clip's audio mixed, frames sampled evenly over its video).

Below every benchmark module, so each builds its own messages from them; media are decoded here, so call
the clip functions on a worker.
"""
from __future__ import annotations

import base64
import io
import wave
from collections.abc import Sequence
from typing import Any

import numpy as np

from storage.records import StimulusDetail

Message = dict[str, Any]
FRAMES_PER_CLIP = 4


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


def conversation(system: str, parts: list[dict[str, Any]]) -> list[Message]:
    """A system turn (when there is one) and a user turn of these parts."""
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    # A text-only user turn is sent as a plain string: the widest-supported form.
    content: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
    messages.append({"role": "user", "content": content})
    return messages


def clip_audio_wav(detail: StimulusDetail, roles: Sequence[str] = ("audio",), first_only: bool = False) -> bytes:
    """The stimulus' audio of these roles as WAV: its tracks mixed (a dyad's participants), or the first one
    present when `first_only`."""
    from storage.media import decode_segment

    refs = [m for prefix in roles for m in detail.media_by_role(prefix) if m.present]
    if first_only:
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
    """`count` JPEG frames sampled evenly over the stimulus's videos (shared among them)."""
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
