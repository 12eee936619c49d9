"""An EchoMind multiple-choice question: the question and every option in full, with the truth and which model
chose which option."""
from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QTextBrowser, QWidget

from storage.records import StimulusDetail
from widgets.palette import colour


def mcq_options(detail: StimulusDetail) -> dict[str, str]:
    """The options by letter, from the stimulus's metadata (a dict {letter: text} or a list in order)."""
    options = detail.meta.get("options") or {}
    if isinstance(options, dict):
        return {str(k): str(v) for k, v in sorted(options.items())}
    return {chr(ord("A") + i): str(v) for i, v in enumerate(options)}


def mcq_question(detail: StimulusDetail, options: dict[str, str]) -> str:
    """The question without the option lines that the stimulus text repeats."""
    lines = (detail.text or "").splitlines()
    prefixes = tuple(f"{letter}." for letter in options)
    kept = [line for line in lines if not (options and line.strip().startswith(prefixes))]
    return "\n".join(kept).strip()


def chosen_letter(answer: str | None, options: dict[str, str]) -> str | None:
    """The option a model's answer names: its letter, or an option's full text."""
    if not answer:
        return None
    text = answer.strip()
    if text.upper().rstrip(".)") in options:
        return text.upper().rstrip(".)")
    by_text = {v.strip().lower(): k for k, v in options.items()}
    return by_text.get(text.lower())


def mcq_html(detail: StimulusDetail) -> str:
    """Question, then one row per option: letter, text, ✓ truth, and the models (with their condition) that chose it."""
    options = mcq_options(detail)
    choosers: dict[str, list[str]] = {}
    unmatched: list[str] = []
    answers_per_model: dict[str, int] = {}
    for p in detail.predictions:
        answers_per_model[p.model] = answers_per_model.get(p.model, 0) + 1
    for p in detail.predictions:
        # the condition is named only where it tells one model's answers apart
        who = f"{p.model} ({p.condition})" if answers_per_model[p.model] > 1 else p.model
        letter = chosen_letter(p.answer, options)
        if letter is None:
            unmatched.append(f"{escape(who)}: {escape(p.answer or 'no answer')}")
        else:
            choosers.setdefault(letter, []).append(escape(who))
    truth = (detail.ground_truth or "").strip().upper()
    rows = []
    for letter, text in options.items():
        is_truth = letter == truth
        style = f" style='background:{colour('truth_bg')}'" if is_truth else ""
        mark = f"<b style='color:{colour('right')}'>✓ truth</b>" if is_truth else ""
        models = ", ".join(choosers.get(letter, []))
        chose = f"<span style='color:{colour('muted')}'>chosen by</span> {models}" if models else ""
        rows.append(f"<tr{style}><td><b>{escape(letter)}.</b></td><td width='60%'>{escape(text)}</td>"
                    f"<td>{mark}</td><td>{chose}</td></tr>")
    other = (f"<p style='color:{colour('muted')}'>Answers matching no option: {'; '.join(unmatched)}</p>"
             if unmatched else "")
    question = escape(mcq_question(detail, options)).replace("\n", "<br/>")
    return (f"<p style='font-size:14pt'>{question}</p>"
            f"<table cellspacing=0 cellpadding=5 width='100%'>{''.join(rows)}</table>{other}")


class McqView(QTextBrowser):
    """Read-only; wraps to its width and scrolls when the question is longer than the room it has."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setMinimumHeight(90)

    def set_detail(self, detail: StimulusDetail | None) -> None:
        self.setHtml(mcq_html(detail) if detail is not None else "")
