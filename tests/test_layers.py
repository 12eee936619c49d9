"""The Qt-free layers stay Qt-free: importing all of storage/ and the core of app/ loads no PySide6."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT_MODULES = {"app.main_window", "app.gui"}


def qt_free_modules() -> list[str]:
    names = []
    for package in ("storage", "app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if module.endswith("__init__"):
                module = module.rsplit(".", 1)[0]
            if module not in QT_MODULES:
                names.append(module)
    return names


def test_storage_and_app_core_import_no_qt():
    modules = qt_free_modules()
    assert "storage.store" in modules and "app.session" in modules
    code = ("import sys, importlib\n"
            f"for m in {modules!r}:\n"
            "    importlib.import_module(m)\n"
            "bad = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'pyqtgraph')))\n"
            "print(','.join(bad))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"Qt loaded by the core: {result.stdout.strip()}"
