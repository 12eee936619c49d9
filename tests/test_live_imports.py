"""Importing the metrics and live modules stays cheap: openai and NLTK load on first use."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_metrics_and_live_import_without_openai_or_nltk():
    code = (
        "import sys, app.metrics, app.live, app.prompts; "
        "print(sorted(m for m in ('openai', 'nltk') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
