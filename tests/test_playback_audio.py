"""sounddevice playback in child processes, so that the ALSA configuration set before sounddevice is
imported cannot leak into other tests: a null ALSA device (the stream runs) and no usable device at all
(the app says "no audio output" and the clock, waveform and transcript keep working)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NULL_DEVICE_SCRIPT = """
import json, sys, time
import numpy as np
from app.clock import PlaybackClock
from app.audio import AudioOutput
from storage.media import ArraySource, AudioSamples
clock = PlaybackClock()
clock.set_duration(2.0)
statuses = []
output = AudioOutput(clock, statuses.append)
output.set_source(ArraySource(AudioSamples(np.sin(np.arange(32000) / 10).astype(np.float32), 16000)))
clock.play()
deadline = time.monotonic() + 5
while output.frames_played < 16000 and time.monotonic() < deadline:
    clock.tick()
    time.sleep(0.01)
clock.pause()
played = output.frames_played
output.close()
print(json.dumps({"statuses": statuses, "available": output.available, "frames": played}))
"""

NO_DEVICE_SCRIPT = """
import json, os, sys, time
sys.path.insert(0, "tests")
from PySide6.QtWidgets import QApplication
app = QApplication([])
from playback_media import tone, write_wav
from storage.records import MediaRef, Segment
from widgets.player_panel import PlayerPanel
from pathlib import Path
wav = write_wav(Path(sys.argv[1]) / "voice.wav", tone(3.0, 16000), 16000)
panel = PlayerPanel(vlc_args=["--vout=dummy", "--aout=dummy", "--no-xlib", "--quiet"])
messages = []
panel.statusMessage.connect(messages.append)
panel.set_stimulus([MediaRef("audio", wav, True)], [Segment(0, "A", 0.0, 3.0, "hello there")], "audio")
panel.show()
def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)
spin(0.5)
panel.clock.play()
spin(0.6)
result = {
    "messages": messages,
    "status": panel.audio_status,
    "label": panel.audio_label.text(),
    "position": panel.clock.position,
    "playhead": panel.waveform.playhead,
    "playing": panel.clock.playing,
    "transcript": list(panel.transcript.active[0]),
}
panel.shutdown()
print(json.dumps(result))
"""


def run_child(script: str, alsa_config: str, tmp_path: Path, *args: str) -> dict:
    config = tmp_path / "asoundrc"
    config.write_text(alsa_config)
    env = dict(os.environ, ALSA_CONFIG_PATH=str(config), QT_QPA_PLATFORM="offscreen",
               THINSLICE_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_null_alsa_device_runs_the_output_stream(tmp_path):
    result = run_child(NULL_DEVICE_SCRIPT, "pcm.!default { type null }\n", tmp_path)
    assert result["available"] is True
    assert result["frames"] >= 16000  # the callback read samples following the clock
    assert result["statuses"] and result["statuses"][0].startswith("audio output")


def test_without_a_device_the_app_says_so_and_keeps_time(tmp_path):
    # A default PCM on a card that does not exist: PortAudio finds no output device.
    missing_card = "pcm.!default { type hw card 99 }\nctl.!default { type hw card 99 }\n"
    result = run_child(NO_DEVICE_SCRIPT, missing_card, tmp_path, str(tmp_path))
    assert "no audio output" in result["status"]
    assert any("no audio output" in m for m in result["messages"])
    assert "no audio output" in result["label"]
    assert result["playing"] and result["position"] > 0.3  # the clock runs silently
    assert abs(result["playhead"] - result["position"]) < 0.1  # and the waveform follows it
    assert result["transcript"] == [0]
