"""Where the files that ship with Thinslice are: the synthetic sample, the label sets and the presets.

They live in the `resources` package beside `storage`, both in a clone and in an installed copy (the wheel
carries them as package data), so the same path serves a developer and a user who ran `pip install`.
"""
from __future__ import annotations

from pathlib import Path

RESOURCES_DIR = Path(__file__).resolve().parents[1] / "resources"
SAMPLE_DIR = RESOURCES_DIR / "sample"
LABEL_SETS_DIR = RESOURCES_DIR / "label_sets"
PRESETS_DIR = RESOURCES_DIR / "presets"
