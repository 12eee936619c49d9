"""The rich text an answer is shown in on stage, in the presentation, the race and the compare view alike: its
text escaped, its verdict in the palette's colours, and the mark a verdict wears until it is revealed."""
from __future__ import annotations

import html

from widgets.palette import colour

HIDDEN = "?"


def verdict_html(correct: bool | None) -> str:
    """✓ right / ✗ wrong in the palette's colours, or nothing when the answer is not marked."""
    if correct is None:
        return ""
    shade, text = (colour("right"), "✓ right") if correct else (colour("wrong"), "✗ wrong")
    return f"<span style='color:{shade};font-weight:bold'>{text}</span>"


def text_html(text: str) -> str:
    """Plain text for a rich-text label: markup characters escaped, quotes left as they are (an escaped
    apostrophe would be `&#x27;` in the label's text)."""
    return html.escape(text, quote=False)
