"""A few video frames as JPEG bytes, for sending a clip to a model that takes images.

Frames are sampled evenly over a window of the file (the middle of each share, `frame_times`) by seeking
with PyAV, and encoded with Pillow.
"""
from __future__ import annotations

import io
from pathlib import Path

import av
from PIL import Image

from storage.errors import ThinsliceError


class FrameError(ThinsliceError):
    """The video cannot be read; the message names the file and the reason."""


def frame_times(start_s: float, end_s: float, count: int) -> list[float]:
    """`count` times spread evenly over [start_s, end_s], each at the middle of its share."""
    if count <= 0 or end_s <= start_s:
        return []
    step = (end_s - start_s) / count
    return [start_s + step * (i + 0.5) for i in range(count)]


def _jpeg(image: Image.Image, max_side: int, quality: int) -> bytes:
    image = image.convert("RGB")
    image.thumbnail((max_side, max_side))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def sample_frames_jpeg(path: Path | str, count: int = 4, start_s: float = 0.0, end_s: float | None = None,
                       max_side: int = 512, quality: int = 80) -> list[bytes]:
    """`count` frames of [start_s, end_s) (file time; end None: the whole file), as JPEG bytes no larger
    than `max_side` pixels on their long side. Raises FrameError for a missing or unreadable video."""
    path = Path(path)
    if not path.is_file():
        raise FrameError(f"{path.name}: file not found")
    try:
        container = av.open(str(path))
    except av.FFmpegError as exc:
        raise FrameError(f"{path.name}: cannot open ({exc})") from exc
    try:
        if not container.streams.video:
            raise FrameError(f"{path.name}: no video track")
        stream = container.streams.video[0]
        if end_s is None:
            duration = (float(stream.duration * stream.time_base) if stream.duration is not None
                        else (container.duration or 0) / av.time_base)
            end_s = start_s + duration if duration > 0 else start_s + 1.0
        frames: list[bytes] = []
        for t in frame_times(start_s, end_s, count):
            container.seek(int(t / stream.time_base), stream=stream, backward=True, any_frame=False)
            chosen = None
            for frame in container.decode(stream):
                chosen = frame
                if frame.time is not None and frame.time >= t:
                    break
            if chosen is not None:
                frames.append(_jpeg(chosen.to_image(), max_side, quality))
        return frames
    except av.FFmpegError as exc:
        raise FrameError(f"{path.name}: decoding failed ({exc})") from exc
    finally:
        container.close()
