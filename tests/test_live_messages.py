"""Prompt templates, message building per benchmark and modality, and answer parsing."""
from __future__ import annotations

import base64
import io
import wave

import numpy as np
import pytest

from app.live import (
    agentviss_messages,
    echomind_mcq_messages,
    echomind_open_messages,
    frame_times,
    friendbench_messages,
    ncp_messages,
    parse_forced_choice,
    parse_multiple_choice,
    parse_open_response,
    wav_bytes,
)
from app.prompts import FRIENDBENCH_FORCED_CHOICE, default_templates

JPEG = b"\xff\xd8\xff\xe0fake-jpeg"


def _tone() -> bytes:
    t = np.arange(1600) / 16000
    return wav_bytes(0.5 * np.sin(2 * np.pi * 440 * t), 16000)


def test_wav_bytes_round_trip_through_the_wave_module():
    with wave.open(io.BytesIO(_tone())) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth(), wav.getnframes()) == (16000, 1, 2, 1600)
        samples = np.frombuffer(wav.readframes(1600), dtype="<i2")
    assert abs(int(samples.max()) - 16384) <= 2


def test_frame_times_spread_evenly_over_the_clip():
    assert frame_times(10.0, 30.0, 4) == [12.5, 17.5, 22.5, 27.5]
    assert frame_times(0.0, 0.0, 3) == []


def test_friendbench_text_puts_the_transcript_in_the_prompt():
    messages = friendbench_messages("text", transcript="A: Cats or dogs?\nB: Dogs, always.")
    assert messages[0]["role"] == "system"
    assert "B: Dogs, always." in messages[1]["content"] and "familiar or stranger" in messages[1]["content"]


def test_friendbench_audio_and_video_send_media_parts():
    audio = friendbench_messages("audio", audio_wav=_tone())[1]["content"]
    assert [p["type"] for p in audio] == ["text", "input_audio"]
    assert audio[1]["input_audio"]["format"] == "wav" and base64.b64decode(audio[1]["input_audio"]["data"])[:4] == b"RIFF"
    video = friendbench_messages("video", audio_wav=_tone(), frames_jpeg=[JPEG, JPEG, JPEG])[1]["content"]
    assert [p["type"] for p in video] == ["text", "image_url", "image_url", "image_url", "input_audio"]
    assert video[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert "Transcript" not in video[0]["text"]
    with pytest.raises(ValueError, match="frame"):
        friendbench_messages("video", audio_wav=_tone())
    with pytest.raises(ValueError, match="transcript"):
        friendbench_messages("text")


def test_echomind_agentviss_and_ncp_messages():
    mcq = echomind_mcq_messages("How does the speaker feel?", ["happy", "sad", "angry"], _tone())
    assert "B. sad" in mcq[1]["content"][0]["text"] and mcq[1]["content"][1]["type"] == "input_audio"
    plain, enhanced = echomind_open_messages(_tone(), "no"), echomind_open_messages(_tone(), "enhance")
    assert len(enhanced[0]["content"]) > len(plain[0]["content"])
    with pytest.raises(ValueError, match="basic"):
        echomind_open_messages(_tone(), "extreme")
    role = agentviss_messages("Ross", "paleontologist, honest", "nervous", "Central Perk", "Rachel: Hi.", "Int-Out", [JPEG])
    assert "You are Ross" in role[0]["content"] and role[1]["content"][1]["type"] == "image_url"
    ncp = ncp_messages("Beth believes the apple is in the box", "Anne and Beth are in the kitchen.")
    assert "Goal: Beth believes" in ncp[1]["content"]


def test_templates_list_their_fields_and_name_what_is_missing():
    assert set(default_templates()) == {
        "friendbench.forced_choice", "echomind.mcq", "echomind.open_response", "agentviss.role_play", "ncp.task",
        "exploretom.question",
    }
    assert FRIENDBENCH_FORCED_CHOICE.fields == ("modality", "transcript_block")
    with pytest.raises(KeyError, match="transcript_block"):
        FRIENDBENCH_FORCED_CHOICE.render(modality="text")
    edited = FRIENDBENCH_FORCED_CHOICE.edited(user="Clip ({modality}). {transcript_block} Reply {{familiar}} or {{stranger}}.")
    assert edited.render(modality="audio", transcript_block="")[1] == "Clip (audio).  Reply {familiar} or {stranger}."
    custom = friendbench_messages("audio", audio_wav=_tone(), template=edited)
    assert custom[1]["content"][0]["text"].startswith("Clip (audio)")
    with pytest.raises(ValueError, match="braces"):
        FRIENDBENCH_FORCED_CHOICE.edited(user="Answer {familiar")


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("familiar", "familiar"),
        ("Stranger.", "stranger"),
        ("**Strangers**", "stranger"),
        ("I think these two already know each other well.", "familiar"),
        ("They don't know each other; the small talk is stiff.", "stranger"),
        ("They seem unfamiliar with one another.", "stranger"),
        ("They are not strangers at all.", "familiar"),
        ("They act like friends.", "familiar"),
        ("Hard to say: could be familiar, could be strangers. Final answer: stranger", "stranger"),
        ("Could be familiar, could be strangers.", None),
        ("I cannot tell from this clip.", None),
        ("", None),
        (None, None),
    ],
)
def test_forced_choice_parsing_tolerates_prose(reply, expected):
    assert parse_forced_choice(reply) == expected


OPTIONS = ["A. The speaker sounds happy", "B. The speaker sounds sad", "C. The speaker sounds very sad", "D. Wind noise"]


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("B", "B"),
        ("(C)", "C"),
        ("D.", "D"),
        ("Answer: C", "C"),
        ("The answer is **B**.", "B"),
        ("I would pick option d here", "D"),
        ("C) the speaker sounds very sad", "C"),
        ("A sad voice, definitely: the speaker sounds very sad", "C"),
        ("The speaker sounds happy.", "A"),
        ("Something else entirely.", None),
        ("E", None),
    ],
)
def test_multiple_choice_parsing_by_letter_or_option_text(reply, expected):
    assert parse_multiple_choice(reply, OPTIONS) == expected


def test_open_response_is_kept_as_is():
    assert parse_open_response("  Oh no, I'm sorry you're feeling down.\n") == "Oh no, I'm sorry you're feeling down."
    assert parse_open_response(None) == ""
