"""The belief stepper's colours, shared by its table, rooms picture, goal checklist and step list."""
from __future__ import annotations

from PySide6.QtGui import QColor

FALSE_BG = QColor("#f6c9c4")
FALSE_FG = QColor("#9b1c10")
CHANGED_BG = QColor("#ffe98a")
CHANGED_FALSE_BG = QColor("#f5a96b")
UNKNOWN_FG = QColor("#707070")
WORLD_BG = QColor("#e3ecf5")
WITNESS_RING = QColor("#e0a800")
PEEK_RING = QColor("#7b3fb5")
HOLD_GREEN = QColor("#2f9e44")
NOT_HOLD_GREY = QColor("#d5d5d5")
PERSON_COLOURS = ("#4263eb", "#e8590c", "#2b8a3e", "#c2255c", "#1098ad", "#6741d9", "#a61e4d", "#5c940d",
                  "#d9480f", "#364fc7")
