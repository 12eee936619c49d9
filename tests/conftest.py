"""Shared test set-up: offscreen Qt, isolated settings, no proxies, headless media."""
from __future__ import annotations

import os
import sys
from pathlib import Path

# Must happen before any QApplication exists: without a display the run would abort.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
for _var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
    os.environ.pop(_var, None)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402

# the same examples on every run, so a red CI run can be reproduced exactly
hypothesis_settings.register_profile("thinslice", derandomize=True, database=None, deadline=None)
hypothesis_settings.load_profile("thinslice")

REFERENCE_DATA = ROOT.parent / "shared" / "reference-data"


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Each test gets its own settings file and data folder, so nothing leaks between tests."""
    monkeypatch.setenv("THINSLICE_HOME", str(tmp_path / "thinslice-home"))
    try:
        from PySide6.QtCore import QSettings
    except ImportError:  # Qt-free test runs
        yield
        return
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    yield


@pytest.fixture
def reference_data() -> Path:
    if not REFERENCE_DATA.exists():
        pytest.skip("reference data folder not present")
    return REFERENCE_DATA
