"""Asking a live model: settings, the client, messages per benchmark, answer parsing, NCP
episodes with tools, and a batch runner. Qt-free; ``openai`` is imported on first call. What to ask
about a stimulus is in :mod:`app.live.requests`; asking and keeping the answers (the one write path
for live results) is :class:`app.live.service.LiveService`."""
from app.live.batch import BatchProgress, BatchReport, Skipped, run_batch
from app.live.client import LiveAnswer, LiveClient, ToolCall
from app.live.errors import (AnswerTooLarge, EndpointUnreachable, IncompleteAnswer, LiveCancelled, LiveError, LiveTimeout,
                             MalformedAnswer, ServerError, StreamCutOff, scrub_secrets)
from app.live.messages import (
    agentviss_messages,
    audio_part,
    echomind_mcq_messages,
    echomind_open_messages,
    format_options,
    frame_times,
    friendbench_messages,
    image_part,
    ncp_messages,
    text_part,
    wav_bytes,
)
from app.live.ncp import NCP_ACTIONS, NCP_TOOLS, NcpEpisode, NcpStep, call_to_action, run_ncp_episode
from app.live.parsing import parse_forced_choice, parse_multiple_choice, parse_open_response
from app.live.settings import LiveSettings, resolve_api_key

__all__ = [
    "AnswerTooLarge",
    "IncompleteAnswer",
    "Skipped",
    "StreamCutOff",
    "scrub_secrets",
    "NCP_ACTIONS",
    "NCP_TOOLS",
    "BatchProgress",
    "BatchReport",
    "EndpointUnreachable",
    "LiveAnswer",
    "LiveCancelled",
    "LiveClient",
    "LiveError",
    "LiveSettings",
    "LiveTimeout",
    "MalformedAnswer",
    "NcpEpisode",
    "NcpStep",
    "ServerError",
    "ToolCall",
    "agentviss_messages",
    "audio_part",
    "call_to_action",
    "echomind_mcq_messages",
    "echomind_open_messages",
    "format_options",
    "frame_times",
    "friendbench_messages",
    "image_part",
    "ncp_messages",
    "parse_forced_choice",
    "parse_multiple_choice",
    "parse_open_response",
    "resolve_api_key",
    "run_batch",
    "text_part",
    "wav_bytes",
]
