"""Chat messages for each benchmark and modality, from inputs already decoded to bytes: the content parts
(`app.benchmarks.chat`) and each built-in benchmark's messages (kept in its module in `app.benchmarks`, beside
its prompt), gathered for `app.live`'s callers.

The store and media layers hand over bytes (WAV audio, JPEG frames) and text; the parts encode them as
OpenAI content parts: text, ``input_audio`` (WAV, base64) and ``image_url`` (JPEG data URL). A video is sent
the way benchmarks send it to chat models: a few frames sampled evenly over the clip, plus its audio track.
"""
from __future__ import annotations

from app.benchmarks.agentviss import agentviss_messages
from app.benchmarks.chat import Message, audio_part, image_part, text_part, wav_bytes
from app.benchmarks.echomind import echomind_mcq_messages, echomind_open_messages, format_options
from app.benchmarks.friendbench import MODALITIES, friendbench_messages
from app.benchmarks.ncp import ncp_messages
from storage.frames import frame_times

__all__ = ["MODALITIES", "Message", "agentviss_messages", "audio_part", "echomind_mcq_messages",
           "echomind_open_messages", "format_options", "frame_times", "friendbench_messages", "image_part",
           "ncp_messages", "text_part", "wav_bytes"]
