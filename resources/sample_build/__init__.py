"""The scripts that build the bundled sample, and what they share."""
from __future__ import annotations

import os


def espeak_env() -> dict[str, str]:
    """The environment espeak-ng runs in: kept away from any sound server. espeak-ng starts the sound
    server's client even when it writes to a file or to standard output, and that client's first start on a
    machine (no ~/.config/pulse yet) changes the noise of espeak's voice variants, so a fresh machine would
    build a different sample."""
    return {**os.environ, "PULSE_SERVER": "none"}
