"""The window's typed, versioned settings, without Qt: old files open with nothing lost, bad values fall back."""
from __future__ import annotations

from app.settings import SETTINGS_VERSION, Settings, as_stored, upgrade


def test_settings_written_before_versions_existed_open_with_nothing_lost():
    old = {"annotator": "ana", "last_dataset": "FriendBench (sample)", "geometry": b"\x01\x02",
           "window_state": b"\x03", "recent_stores": "/data/one.duckdb"}
    settings = upgrade(old)
    assert settings == Settings("ana", "FriendBench (sample)", b"\x01\x02", b"\x03", ("/data/one.duckdb",),
                                SETTINGS_VERSION)


def test_stored_settings_round_trip_and_malformed_values_take_the_default():
    settings = Settings(annotator="ben", last_dataset="EchoMind", geometry=b"g", recent_stores=("/a", "/b"))
    assert upgrade(as_stored(settings)) == settings
    assert as_stored(settings)["version"] == SETTINGS_VERSION and as_stored(settings)["window_state"] is None
    broken = upgrade({"version": "not a number", "annotator": 7, "geometry": "text", "window_state": b""})
    assert broken == Settings()
    # a file from a newer release still gives this release's fields
    assert upgrade({"version": SETTINGS_VERSION + 3, "annotator": "cy"}).annotator == "cy"
    assert settings.with_(annotator="dee").annotator == "dee" and settings.annotator == "ben"


def test_race_contenders_round_trip_as_text_without_any_key():
    from app.contenders import Contender

    lineup = (Contender("GPT", "https://api.example.org/v1", "gpt-x", "text", "OPENAI_API_KEY"),
              Contender("Local Qwen", "http://127.0.0.1:8000/v1", "qwen2-audio", "audio"))
    settings = Settings(annotator="ana", contenders=lineup, race_verdicts_at_once=True)
    stored = as_stored(settings)
    assert isinstance(stored["contenders"], str) and "OPENAI_API_KEY" in stored["contenders"]
    assert upgrade(stored) == settings
    # an INI file gives the flag back as text; a file without them races no one and holds verdicts back
    assert upgrade({**stored, "race_verdicts_at_once": "true"}).race_verdicts_at_once
    assert upgrade({"annotator": "ana"}).contenders == () and not upgrade({}).race_verdicts_at_once


def test_version_1_keys_of_the_views_become_version_2_fields_and_round_trip():
    old = {"version": "1", "annotator": "ana", "live/base_url": "https://api.example.org/v1", "live/model": "m",
           "live/max_answer_kb": "512", "live/templates/t/user": "Say {x}.", "labels/key_mode": "hold",
           "analysis_tracks/band": "narrow", "analysis_tracks/pitch_floor": "100.0",
           "analysis_tracks/B/intensity": "true", "analysis_tracks/conversation": "false"}
    settings = upgrade(old)
    assert settings == Settings(annotator="ana", live_base_url="https://api.example.org/v1", live_model="m",
                                live_max_answer_kb=512, live_templates={"t": {"user": "Say {x}."}},
                                label_key_mode="hold", spectrogram_band="narrow", pitch_floor_hz=100,
                                tracks_shown={"B/intensity": True, "conversation": False})
    assert upgrade(as_stored(settings)) == settings
    # read once: a version 2 file's old keys (left by hand) are not read again
    assert upgrade({**as_stored(Settings()), "labels/key_mode": "hold"}).label_key_mode == "tap"


def test_the_views_settings_out_of_type_or_range_take_their_defaults():
    broken = upgrade({"version": 2, "live_max_answer_kb": "0", "label_key_mode": "twice", "spectrogram_band": 5,
                      "spectrogram_max_hz": "20000", "pitch_ceiling_hz": "nan", "live_templates": "[1, 2]",
                      "tracks_shown": '{"A/pitch": "maybe", "B/pitch": 1}', "live_model": 3})
    assert broken == Settings()
