"""Media fixtures for the playback tests, generated in code.

Videos carry their frame number twice: as large digits (for people looking at a snapshot) and as a row of
eight black/white bars (bit 7 on the left) that a test decodes from a PNG without OCR.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import soundfile as sf
from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 320, 240
BAR_TOP, BAR_BOTTOM = 170, 230
BITS = 8


def frame_image(number: int) -> np.ndarray:
    """An RGB frame showing `number` as digits and as an 8-bit bar code."""
    image = Image.new("RGB", (WIDTH, HEIGHT), (40, 40, 40))
    draw = ImageDraw.Draw(image)
    draw.text((20, 20), f"{number:03d}", fill=(255, 255, 255), font=ImageFont.load_default(size=110))
    bar_width = WIDTH // BITS
    for bit in range(BITS):
        on = (number >> (BITS - 1 - bit)) & 1
        colour = (255, 255, 255) if on else (0, 0, 0)
        draw.rectangle([bit * bar_width, BAR_TOP, (bit + 1) * bar_width - 1, BAR_BOTTOM], fill=colour)
    return np.asarray(image)


def decode_frame_number(png_path: Path) -> int:
    """Read the bar code back from a snapshot (any size: bars are sampled at their centres)."""
    image = np.asarray(Image.open(png_path).convert("L").resize((WIDTH, HEIGHT)), dtype=np.float32)
    row = (BAR_TOP + BAR_BOTTOM) // 2
    bar_width = WIDTH // BITS
    number = 0
    for bit in range(BITS):
        centre = bit * bar_width + bar_width // 2
        level = image[row - 5 : row + 5, centre - 5 : centre + 5].mean()
        number = (number << 1) | int(level > 128)
    return number


def tone(seconds: float, sample_rate: int, frequency: float = 220.0, amplitude: float = 0.5) -> np.ndarray:
    """A float32 sine with a slow amplitude envelope, so every peak bucket differs."""
    t = np.arange(int(round(seconds * sample_rate)), dtype=np.float64) / sample_rate
    envelope = 0.25 + 0.75 * np.abs(np.sin(2 * np.pi * 0.5 * t))
    return (amplitude * envelope * np.sin(2 * np.pi * frequency * t)).astype(np.float32)


def write_wav(path: Path, samples: np.ndarray, sample_rate: int, subtype: str = "PCM_16") -> Path:
    sf.write(str(path), samples, sample_rate, subtype=subtype)
    return path


def write_numbered_mp4(
    path: Path, seconds: float = 3.0, fps: int = 25, audio_rate: int | None = 16000
) -> Path:
    """An H.264 MP4 whose frame n shows n; with an AAC mono tone track when `audio_rate` is given."""
    n_frames = int(round(seconds * fps))
    with av.open(str(path), "w") as container:
        video = container.add_stream("libx264", rate=fps)
        video.width, video.height, video.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        # Every frame a key frame keeps seeks cheap and exact for the decoder under test.
        video.options = {"g": "1", "preset": "ultrafast", "crf": "18"}
        audio = None
        if audio_rate:
            audio = container.add_stream("aac", rate=audio_rate, layout="mono")
        for number in range(n_frames):
            frame = av.VideoFrame.from_ndarray(frame_image(number), format="rgb24")
            frame.pts = number
            frame.time_base = Fraction(1, fps)
            for packet in video.encode(frame):
                container.mux(packet)
        for packet in video.encode():
            container.mux(packet)
        if audio is not None:
            _encode_audio(container, audio, tone(seconds, audio_rate), audio_rate)
    return path


def write_audio_mp4(path: Path, samples: np.ndarray, sample_rate: int, bitrate: int = 64000) -> Path:
    """An audio-only MP4 (AAC mono) holding `samples`."""
    with av.open(str(path), "w") as container:
        audio = container.add_stream("aac", rate=sample_rate, layout="mono")
        audio.bit_rate = bitrate
        _encode_audio(container, audio, samples, sample_rate)
    return path


def _encode_audio(container, stream, samples: np.ndarray, sample_rate: int) -> None:
    frame_size = 1024
    for start in range(0, len(samples), frame_size):
        chunk = samples[start : start + frame_size]
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1).astype(np.float32), format="fltp", layout="mono")
        frame.sample_rate = sample_rate
        frame.pts = start
        frame.time_base = Fraction(1, sample_rate)
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
