"""Named colours with a light and a dark version; `colour(name)` picks the one for the palette in use.

Every hard-coded colour in the views comes from here (or from the Qt palette itself), so a dark desktop
palette never leaves dark text on a dark background or a pale highlight under pale text.
"""
from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

# name -> (light, dark)
COLOURS: dict[str, tuple[str, str]] = {
    "right": ("#2e7d32", "#81c784"),
    "wrong": ("#c62828", "#ef9a9a"),
    "error": ("#c62828", "#ff8a80"),
    "warning": ("#a05a00", "#ffb74d"),
    "muted": ("#777777", "#a0a0a0"),
    # compare's word diff: inserted words on a highlight, deleted words struck through
    "diff_inserted_bg": ("#fff0a8", "#5c4d00"),
    "diff_inserted_fg": ("#000000", "#fff5c0"),
    "diff_deleted_fg": ("#b71c1c", "#ff8a80"),
    # the belief table: the world's row, cells changed at this step, false beliefs
    "world_bg": ("#e3ecf5", "#263545"),
    "changed_bg": ("#ffe98a", "#6b5a00"),
    "changed_false_bg": ("#f5a96b", "#7a3d12"),
    "false_bg": ("#f6c9c4", "#5a2320"),
    "false_fg": ("#9b1c10", "#ffb4a8"),
    "unknown_fg": ("#707070", "#a8a8a8"),
    "cell_fg": ("#000000", "#ececec"),
    # the transcript: the segment being spoken, and the word
    "segment_bg": ("#ffecb3", "#4a3f1a"),
    "word_bg": ("#ffc107", "#6e5700"),
    # presentation mode's page
    "page_bg": ("#fbfbf8", "#1c1c1c"),
    "page_fg": ("#111111", "#eeeeee"),
    "truth_bg": ("#e8f5e9", "#1f3d22"),
    # a media view with nothing to show: its message
    "placeholder_bg": ("#e8e8e8", "#2b2b2b"),
    "placeholder_fg": ("#444444", "#c8c8c8"),
    # the rooms canvas: a container, an object, an object this step moved
    "container_bg": ("#f3e3c3", "#4a3b24"),
    "container_edge": ("#8d6e3f", "#b08d57"),
    "container_fg": ("#5c4424", "#ecd9b4"),
    "object_bg": ("#e9ecef", "#3a3f44"),
    "object_edge": ("#495057", "#adb5bd"),
    "object_fg": ("#212529", "#e9ecef"),
    "object_changed_bg": ("#fff3bf", "#6b5a00"),
    "object_changed_edge": ("#c92a2a", "#ff8a80"),
    # a story question: the engine's answer matches the expected one, or not
    "match_bg": ("#d3f9d8", "#1f3d22"),
    "mismatch_bg": ("#f6c9c4", "#5a2320"),
}


def is_dark(palette: QPalette | None = None) -> bool:
    """True when the window background is darker than its text (a dark desktop palette)."""
    if palette is None:
        palette = QGuiApplication.palette()
    window = palette.color(QPalette.ColorRole.Window)
    text = palette.color(QPalette.ColorRole.WindowText)
    return window.lightnessF() < text.lightnessF()


def pick(light: str, dark: str, palette: QPalette | None = None) -> str:
    """The one helper that chooses between a light-palette and a dark-palette colour."""
    return dark if is_dark(palette) else light


def colour(name: str, palette: QPalette | None = None) -> str:
    """The named colour (a key of COLOURS) for the palette in use, as '#rrggbb'."""
    light, dark = COLOURS[name]
    return pick(light, dark, palette)


def score_colour(score: float, scale: float, palette: QPalette | None = None) -> QColor:
    """Red (low) to green (high) on the judge's own scale, pale on a light palette and deep on a dark one,
    so the palette's text stays readable on it."""
    share = max(0.0, min(1.0, score / scale if scale else 0.0))
    return QColor.fromHsvF(0.33 * share, 0.6, 0.42) if is_dark(palette) else QColor.fromHsvF(0.33 * share, 0.45, 0.95)


def qcolour(name: str, palette: QPalette | None = None) -> QColor:
    """`colour` as a QColor, for brushes and pens."""
    return QColor(colour(name, palette))
