"""A settings file written before the views' settings were typed (version 1 and earlier) opens with nothing lost:
its `live/...`, `analysis_tracks/...` and `labels/...` keys are read once, written back as version 2's keys, and
the views show what the user had chosen."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

from app.contenders import Contender, contenders_to_stored
from app.settings import SETTINGS_VERSION, Settings
from widgets.analysis_tracks import INTENSITY, PITCH, AnalysisTracksView
from widgets.label_palette import HOLD
from widgets.live_panel import LivePanel
from widgets.settings_store import SettingsStore

OLD_TEMPLATE = "friendbench-forced-choice"


def _old_file(path) -> None:
    """The file as version 1 of Thinslice wrote it: the window's keys at the top, each view's under its group."""
    old = QSettings(str(path), QSettings.Format.IniFormat)
    old.setValue("version", 1)
    old.setValue("annotator", "ana")
    old.setValue("last_dataset", "FriendBench (sample)")
    old.setValue("geometry", QByteArray(b"\x01\xd9\xd0\xcb"))
    old.setValue("recent_stores", ["/data/one.duckdb", "/data/two.duckdb"])
    old.setValue("contenders", contenders_to_stored([Contender("Qwen", "http://127.0.0.1:9/v1", "qwen", "audio")]))
    old.setValue("backup_keep", 3)
    # widgets/live_panel.py
    old.setValue("live/base_url", "https://api.example.org/v1")
    old.setValue("live/model", "gpt-x")
    old.setValue("live/api_key_env", "EXAMPLE_KEY")
    old.setValue("live/max_answer_kb", 512)
    old.setValue(f"live/templates/{OLD_TEMPLATE}/system", "You judge {clip}.")
    old.setValue(f"live/templates/{OLD_TEMPLATE}/user", "Friends or strangers? {transcript}")
    old.setValue("live/templates/only-system/system", "Be brief.")
    # widgets/analysis_tracks.py
    old.setValue("analysis_tracks/band", "narrow")
    old.setValue("analysis_tracks/max_frequency", 8000)
    old.setValue("analysis_tracks/dynamic_range", 70)
    old.setValue("analysis_tracks/pre_emphasis", 0)
    old.setValue("analysis_tracks/pitch_floor", 100)
    old.setValue("analysis_tracks/pitch_ceiling", 500)
    old.setValue("analysis_tracks/B/intensity", True)
    old.setValue("analysis_tracks/A/pitch", False)
    old.setValue("analysis_tracks/conversation", False)
    # widgets/main_window.py, for widgets/label_palette.py
    old.setValue("labels/key_mode", HOLD)
    old.sync()


def test_an_old_settings_file_opens_with_every_value_and_is_rewritten_once_in_the_new_shape(tmp_path, qtbot):
    path = tmp_path / "Thinslice.ini"
    _old_file(path)
    text = path.read_text(encoding="utf-8")
    assert "[live]" in text and "[analysis_tracks]" in text and "[labels]" in text   # the shape QSettings wrote

    expected = Settings(
        annotator="ana", last_dataset="FriendBench (sample)", geometry=b"\x01\xd9\xd0\xcb",
        recent_stores=("/data/one.duckdb", "/data/two.duckdb"),
        contenders=(Contender("Qwen", "http://127.0.0.1:9/v1", "qwen", "audio"),), backup_keep=3,
        live_base_url="https://api.example.org/v1", live_model="gpt-x", live_api_key_env="EXAMPLE_KEY",
        live_max_answer_kb=512,
        live_templates={OLD_TEMPLATE: {"system": "You judge {clip}.", "user": "Friends or strangers? {transcript}"},
                        "only-system": {"system": "Be brief."}},
        label_key_mode=HOLD, spectrogram_band="narrow", spectrogram_max_hz=8000, spectrogram_range_db=70,
        pre_emphasis_db=0, pitch_floor_hz=100, pitch_ceiling_hz=500,
        tracks_shown={"B/intensity": True, "A/pitch": False, "conversation": False})
    assert SettingsStore(QSettings(str(path), QSettings.Format.IniFormat)).load() == expected

    # written back once as version 2: the old groups are gone and a second reading gives the same
    again = QSettings(str(path), QSettings.Format.IniFormat)
    assert int(again.value("version")) == SETTINGS_VERSION == 2
    assert not [k for k in again.allKeys() if k.split("/")[0] in ("live", "analysis_tracks", "labels")]
    assert SettingsStore(again).load() == expected

    # the views show what the old file held
    store = SettingsStore(QSettings(str(path), QSettings.Format.IniFormat))
    panel = LivePanel(settings=store)
    qtbot.addWidget(panel)
    assert (panel.base_url.text(), panel.model.text(), panel.key_env.text(), panel.max_answer_kb.value()) == (
        "https://api.example.org/v1", "gpt-x", "EXAMPLE_KEY", 512)
    tracks = AnalysisTracksView(settings=store)
    qtbot.addWidget(tracks)
    assert tracks.band.currentData() == "narrow"
    assert [s.value() for s in (tracks.max_frequency, tracks.dynamic_range, tracks.pre_emphasis,
                                tracks.pitch_floor, tracks.pitch_ceiling)] == [8000, 70, 0, 100, 500]
    assert tracks.is_on("B", INTENSITY) and not tracks.is_on("A", PITCH)
    tracks.shutdown()


def test_wrong_values_in_an_old_file_take_their_defaults_and_the_rest_still_opens(tmp_path, qtbot):
    path = tmp_path / "Thinslice.ini"
    old = QSettings(str(path), QSettings.Format.IniFormat)
    old.setValue("annotator", "ben")
    old.setValue("live/max_answer_kb", "lots")
    old.setValue("analysis_tracks/band", "medium")
    old.setValue("analysis_tracks/max_frequency", 99999)
    old.setValue("analysis_tracks/pitch_floor", "low")
    old.setValue("analysis_tracks/B/pitch", "perhaps")
    old.setValue("labels/key_mode", "twice")
    old.sync()
    loaded = SettingsStore(QSettings(str(path), QSettings.Format.IniFormat)).load()
    assert loaded == Settings(annotator="ben")


def test_a_new_settings_file_is_not_written_by_reading_it(tmp_path):
    path = tmp_path / "Thinslice.ini"
    assert SettingsStore(QSettings(str(path), QSettings.Format.IniFormat)).load() == Settings()
    assert not path.exists()
