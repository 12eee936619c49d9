"""A machine without a sound card: ALSA's complaints stay off the terminal once audio output is looked for."""
from __future__ import annotations

import ctypes.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OPEN_MISSING_DEVICE = """
import ctypes, sys
sys.path.insert(0, {root!r})
if {quiet}:
    from app.audio import quiet_alsa
    assert quiet_alsa()
lib = ctypes.CDLL("libasound.so.2")
handle = ctypes.c_void_p()
print(lib.snd_pcm_open(ctypes.byref(handle), b"no_such_device", 0, 0))
"""


@pytest.mark.skipif(ctypes.util.find_library("asound") is None, reason="no ALSA on this machine")
@pytest.mark.parametrize("quiet", [False, True])
def test_alsa_says_nothing_on_the_terminal_once_quieted(quiet):
    code = OPEN_MISSING_DEVICE.format(root=str(ROOT), quiet=quiet)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) < 0  # the device really is missing
    if quiet:
        assert "ALSA" not in result.stderr
    else:  # the noise the quieting removes
        assert "ALSA lib" in result.stderr
