"""EchoMind's rules: which option a reply (or an answer key) names, and how an MCQ answer is scored.

One parser reads every MCQ reply, whether it arrives in a release's output file or from a live model, and
also resolves a release's answer key ("C", "C. Sad voice", "The answer is: C"). It returns None when the text
does not settle the choice, so an unparseable reply is counted as such instead of being guessed.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from app.benchmarks.chat import Message, audio_part, clip_audio_wav, conversation, text_part
from app.benchmarks.profile import (BenchmarkProfile, Frames, KindProfile, LiveChoice, Page, PlayerLayout)
from app.dashboard_tables import ChartSpec, DashboardTable, table_of
from app.metrics import (BLEU_TOKENIZERS, JUDGE_MEANS_METHOD, judge_means,
                         mcq_accuracy_by_type, text_overlap_table, wer_table)
from app.prompt_template import PromptTemplate
from storage.importers.common import ProblemLog, dumps
from storage.importers.echomind.files import JUDGE_CRITERIA
from storage.importers.plan import ImportPlan
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames

NAME = "echomind"
# the judges' criteria as the release's judge files name them (their reader's table), then the overall VES
ECHOMIND_JUDGE_CRITERIA: tuple[str, ...] = (*JUDGE_CRITERIA, "VES")
RUN_KEY = ("model", "modality")   # what one run is, in the failure filters
BLEU_TOKENIZER = "nltk_word"      # how responses are tokenised for BLEU against the references
MCQ_KIND = "echomind_mcq"
SCRIPT_KIND = "echomind_script"

# The prompts a live model is asked with: an MCQ (its options in `format_options`' form, read back by
# `choice_letter`) and an open reply, whose prompt setting adds one of the hints.
MCQ_PROMPT = PromptTemplate(
    name="echomind.mcq",
    benchmark="EchoMind",
    description="Multiple-choice question about the speaker's voice, the speech or the sound environment.",
    system="You are a careful listener.",
    user="Listen to the audio and answer the question.\n\nQuestion: {question}\nOptions:\n{options}\n\n"
    "Answer with the letter of the correct option only.",
)

OPEN_RESPONSE_PROMPT = PromptTemplate(
    name="echomind.open_response",
    benchmark="EchoMind",
    description="Reply to speaker A as a conversation partner would (prompt settings: no, basic, enhance).",
    system="You are a helpful conversation partner.{setting_hint}",
    user="Respond naturally to what the speaker says in the audio, as you would in a spoken conversation.",
)

SETTING_HINTS: dict[str, str] = {
    "no": "",
    "basic": " Pay attention to how the speaker sounds, not only to what they say.",
    "enhance": (
        " Pay close attention to the speaker's voice (emotion, age, gender, pace, non-verbal sounds such as "
        "sighs or coughs) and to background sounds, and let them shape the content and tone of your reply."
    ),
}

# "Answer: b", "the answer is **B**", "option d", "final answer = C" and the JSON form {"answer": "B"}.
_MARKER = re.compile(r"\b(?i:final\s+answer|answer|option|choice)\b[\"']?\s*(?:is\b)?\s*[:=：-]?\s*[\"'*(\[\s]*"
                     r"([A-Za-z])(?![A-Za-z])(?P<after>\s+\w)?")
# The whole reply is one letter: "B", "(c)", "**A**", "D.", "\"B\"".
_ALONE = re.compile(r"^[\s\"'*(\[]*([A-Za-z])[\s\"'*)\].:]*$")
# A reply that starts with a capital letter and its punctuation: "C) the speaker sounds very sad", "B. ..."
_LEADING = re.compile(r"^[\s*]*\(?([A-Z])[\).:]\s")
# A letter in brackets anywhere: "I choose (B)".
_BRACKETED = re.compile(r"\(([A-Za-z])\)")


def _plain(text: str) -> str:
    return text.strip().lower().rstrip(".").strip()


def option_text(option: str) -> str:
    """The option without a leading "A." / "(A)" / "A)" of its own."""
    return re.sub(r"^\s*\(?[A-Za-z][\).:]\s+", "", option).strip()


def option_letters(count: int) -> list[str]:
    """The letters of `count` options, in order: A, B, C, ..."""
    return [chr(ord("A") + i) for i in range(count)]


def format_options(options: Sequence[str]) -> str:
    """Options as lettered lines ("A. ..."): the form the MCQ prompt shows and `choice_letter` reads back."""
    return "\n".join(f"{letter}. {text}" for letter, text in zip(option_letters(len(options)), options))


def options_by_letter(options: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    """Options as letter -> text, from the stored mapping or a list in letter order."""
    if isinstance(options, Mapping):
        return {str(k).strip().upper(): str(v) for k, v in options.items()}
    return {letter: option_text(str(v)) for letter, v in zip(option_letters(len(options)), options)}


def choice_letter(text: Any, options: Mapping[str, str]) -> str | None:
    """The option letter a reply or an answer key names, or None when it names none or several.

    Read in this order: the reply is a bare letter; the letter after the last "answer"/"option"/"choice"
    marker (a lower-case "a" before a word is the article: "the answer is a guess"); a leading "C)" or
    "C."; a letter in brackets; the text of exactly one option (the longest when one contains another).
    """
    if not isinstance(text, str) or not text.strip() or not options:
        return None
    letters = {letter.upper() for letter in options}
    stripped = text.strip()
    alone = _ALONE.match(stripped)
    if alone:
        return alone.group(1).upper() if alone.group(1).upper() in letters else None
    for match in reversed(list(_MARKER.finditer(stripped))):
        letter = match.group(1)
        if letter == "a" and match.group("after"):
            continue
        if letter.upper() in letters:
            return letter.upper()
    for pattern in (_LEADING, _BRACKETED):
        match = pattern.search(stripped)
        if match and match.group(1).upper() in letters:
            return match.group(1).upper()
    lowered = _plain(stripped)
    texts = {letter.upper(): _plain(option_text(option)) for letter, option in options.items()}
    exact = [letter for letter, option in texts.items() if option and option == lowered]
    if len(exact) == 1:
        return exact[0]
    hits = [letter for letter, option in texts.items() if option and option in lowered]
    if len(hits) > 1:
        longest = max(hits, key=lambda letter: len(texts[letter]))
        hits = [longest] if all(texts[h] in texts[longest] for h in hits) else hits
    return hits[0] if len(hits) == 1 else None


def mcq_answer(text: str | None, audio_text: str | None, options: Mapping[str, str]) -> str | None:
    """The letter a model chose: from its text answer, else from the transcript of its spoken answer."""
    answer = choice_letter(text, options)
    if answer is None and text and audio_text and text != audio_text:
        answer = choice_letter(audio_text, options)
    return answer


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(answer, correct) for a live reply: an MCQ's letter, or a conversation reply as it is."""
    if detail.kind != MCQ_KIND:
        return (text or "").strip(), None
    answer = choice_letter(text, options_by_letter(detail.meta.get("options") or {}))
    if answer is None or detail.ground_truth is None:
        return answer, None
    return answer, answer == detail.ground_truth.strip().upper()


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Resolve each MCQ's answer key to a letter, then parse and score every MCQ answer in the plan.

    A key that names no option is a problem of its question (read from `plan.origins`), which is left out.
    Answers added without their questions are scored against the stored question (`plan.known_stimuli`), or
    else from the options and key their records repeat.
    """
    stimuli = plan.frame("stimuli")
    keys: dict[str, tuple[dict[str, str], str | None]] = {}
    bad: set[str] = set()
    if stimuli.height:
        truths, metas = [], []
        for external, kind, raw_key, meta_text in stimuli.select("external_id", "kind", "ground_truth",
                                                                 "meta").iter_rows():
            if kind != MCQ_KIND:
                truths.append(raw_key)
                metas.append(meta_text)
                continue
            meta = json.loads(meta_text) if meta_text else {}
            options = meta.get("options") or {}
            key = choice_letter(raw_key, options) if raw_key is not None else None
            if raw_key is not None and key is None:
                file, line, field = plan.origins.get(external, ("?", None, None))
                log.add(file, line, field, raw_key,
                        f"one of the options {', '.join(options)} (a letter, or the option text)")
                bad.add(external)
            meta["answer_text"] = options.get(key) if key else None
            keys[external] = (options, key)
            truths.append(key)
            metas.append(dumps(meta))
        plan.frames["stimuli"] = stimuli.with_columns(
            pl.Series("ground_truth", truths, dtype=stimuli["ground_truth"].dtype),
            pl.Series("meta", metas, dtype=stimuli["meta"].dtype))
    if plan.known_stimuli is not None:   # answers attached to questions already stored (keys are letters)
        for external, kind, key, meta_text in plan.known_stimuli.select(
                "external_id", "kind", "ground_truth", "meta").iter_rows():
            if kind == MCQ_KIND and external not in keys:
                keys[external] = ((json.loads(meta_text) if meta_text else {}).get("options") or {}, key)
    predictions = plan.frame("predictions")
    if predictions.height:
        answers, correct, metas = [], [], []
        for stimulus, modality, raw, answer, given, meta_text in predictions.select(
                "stimulus", "modality", "raw_output", "answer", "correct", "meta").iter_rows():
            if not (modality or "").startswith("mcq_"):
                answers.append(answer)
                correct.append(given)
                metas.append(meta_text)
                continue
            meta = json.loads(meta_text) if meta_text else {}
            options, key = keys.get(stimulus) or (meta.get("options") or {}, None)
            if stimulus not in keys and meta.get("answer_key") is not None:
                key = choice_letter(meta["answer_key"], options)
            letter = mcq_answer(raw, meta.get("predicted_audio_answer"), options) if options else None
            meta["parsed"] = letter is not None
            meta.pop("options", None)
            meta.pop("answer_key", None)
            answers.append(letter)
            correct.append(None if key is None or raw is None else letter == key)
            metas.append(dumps(meta))
        plan.frames["predictions"] = predictions.with_columns(
            pl.Series("answer", answers, dtype=predictions["answer"].dtype),
            pl.Series("correct", correct, dtype=predictions["correct"].dtype),
            pl.Series("meta", metas, dtype=predictions["meta"].dtype))
    if bad:
        plan.drop_stimuli(bad)


def dashboard_tables(frames: AnalysisFrames, correction: str, notes: list[str]) -> list[DashboardTable]:
    """WER of the ASR outputs, MCQ accuracy by task and question type, judge means, and BLEU / ROUGE-L F
    against reference responses when there are any (else a note says why not)."""
    tables: list[DashboardTable] = []
    asr = frames.asr
    if asr is not None and asr.height:
        wer = wer_table(asr, "reference", "answer", ["model"])
        tables.append(table_of(
            "echomind.wer", "EchoMind ASR word error rate",
            f"WER per utterance against the script text, then averaged (recomputed). Normaliser: "
            f"{wer['normalizer'][0]}.", wer, asr, ["model"],
            ChartSpec("bars", value_col="wer", category_cols=("model",), y_label="WER (lower is better)")))
    mcq = frames.predictions.filter(pl.col("modality").str.starts_with("mcq_")).with_columns(
        pl.col("modality").str.replace("mcq_", "").alias("task"))
    if mcq.height and mcq["correct"].drop_nulls().len():
        by_task = mcq_accuracy_by_type(mcq, "task", ["model"])
        tables.append(table_of(
            "echomind.mcq", "EchoMind MCQ accuracy by task", "Share correct with 95% Wilson intervals.",
            by_task, mcq, ["model", "task"],
            ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high", category_cols=("task",),
                      series_col="model", y_label="accuracy", y_range=(0.0, 1.0))))
        if "question_type" in mcq.columns and mcq["question_type"].drop_nulls().len():
            typed = mcq.filter(pl.col("question_type").is_not_null())
            by_type = mcq_accuracy_by_type(typed, "question_type", ["model"])
            tables.append(table_of(
                "echomind.mcq_type", "EchoMind MCQ accuracy by question type",
                "Share correct with 95% Wilson intervals.", by_type, typed, ["model", "question_type"],
                ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high",
                          category_cols=("question_type",), series_col="model", y_label="accuracy",
                          y_range=(0.0, 1.0))))
    judged = frames.judgments.filter(pl.col("criterion").is_in(list(ECHOMIND_JUDGE_CRITERIA)))
    if judged.height:
        means = judge_means(judged, ["model", "criterion"], criteria=ECHOMIND_JUDGE_CRITERIA)
        tables.append(table_of(
            "echomind.judges", "EchoMind conversation judge scores",
            "Mean judge score (1-5) per criterion: C1 context fit, C2 naturalness, C3 colloquialism, "
            f"C4 speech-information relevance, VES vocal empathy; {JUDGE_MEANS_METHOD}.",
            means, judged, ["model", "criterion"],
            ChartSpec("bars", value_col="mean", low_col="ci_low", high_col="ci_high", category_cols=("criterion",),
                      series_col="model", y_label="mean score", y_range=(0.0, 5.0))))
    conv = frames.conversation
    if conv is not None and conv.height:
        referenced = conv.filter(pl.col("reference").is_not_null())
        if referenced.height:
            overlap = text_overlap_table(referenced, "reference", "answer", ["model"], tokenizer=BLEU_TOKENIZER)
            tables.append(table_of(
                "echomind.overlap", "EchoMind response BLEU / ROUGE-L F",
                f"Sentence BLEU (smoothing 1) and ROUGE-L F against the reference responses. BLEU tokenizer: "
                f"{BLEU_TOKENIZERS[BLEU_TOKENIZER]}.", overlap, referenced, ["model"],
                ChartSpec("bars", value_col="bleu", category_cols=("model",), y_label="BLEU", y_range=(0.0, 1.0))))
        else:
            notes.append("EchoMind: no reference responses in this dataset, so BLEU and ROUGE-L are not recomputed "
                         "(imported METEOR/BERTScore/BLEU figures, if any, are listed as published).")
    return tables


def echomind_mcq_messages(
    question: str, options: Sequence[str], audio_wav: bytes, template: PromptTemplate = MCQ_PROMPT
) -> list[Message]:
    """An EchoMind multiple-choice question about the given audio."""
    system, user = template.render(question=question, options=format_options(options))
    return conversation(system, [text_part(user), audio_part(audio_wav)])


def echomind_open_messages(
    audio_wav: bytes, setting: str = "no", template: PromptTemplate = OPEN_RESPONSE_PROMPT
) -> list[Message]:
    """An EchoMind conversation turn: reply to speaker A's audio under prompt setting no/basic/enhance."""
    if setting not in SETTING_HINTS:
        raise ValueError(f"prompt setting must be one of {', '.join(SETTING_HINTS)}, got {setting!r}")
    system, user = template.render(setting_hint=SETTING_HINTS[setting])
    return conversation(system, [text_part(user), audio_part(audio_wav)])


def options_of(detail: StimulusDetail) -> list[str]:
    """A question's options in letter order."""
    options = detail.meta.get("options") or {}
    return [options[k] for k in sorted(options)] if isinstance(options, dict) else list(options)


def mcq_messages(detail: StimulusDetail, template: PromptTemplate, choice: LiveChoice) -> list[Message]:
    """A question (its text's first line) with its options and its audio."""
    question = (detail.text or "").split("\n", 1)[0]
    return echomind_mcq_messages(question, options_of(detail), clip_audio_wav(detail), template)


def script_messages(detail: StimulusDetail, template: PromptTemplate, choice: LiveChoice) -> list[Message]:
    """A conversation turn on the script's target voice (else its one audio), under the chosen prompt setting."""
    wav = clip_audio_wav(detail, ("audio:target", "audio"), first_only=True)
    return echomind_open_messages(wav, choice.prompt_setting, template)


def mcq_condition(detail: StimulusDetail, chosen: Mapping[str, str | None]) -> dict[str, str]:
    """As the release stores MCQ answers: the question's task (understanding or reasoning) is the modality."""
    task = detail.meta.get("task") or "understanding"
    return {"modality": f"mcq_{task}", "prompt_setting": "", "vision_mode": "", "context": ""}


def script_condition(detail: StimulusDetail, chosen: Mapping[str, str | None]) -> dict[str, str]:
    """A reply to the target voice under the chosen prompt setting (no when none)."""
    return {"modality": "conversation:target", "prompt_setting": chosen.get("prompt_setting") or "no",
            "vision_mode": "", "context": ""}


SCRIPT = KindProfile(SCRIPT_KIND, "script", Page.MEDIA, PlayerLayout.VOICES, OPEN_RESPONSE_PROMPT, script_messages,
                     script_condition, preferred_modality="audio", prompt_settings=True, voices=True)
MCQ = KindProfile(MCQ_KIND, "MCQ", Page.MEDIA, None, MCQ_PROMPT, mcq_messages, mcq_condition,
                  preferred_modality="audio", prompt_settings=True, question=True)
PROFILE = BenchmarkProfile(
    NAME, "EchoMind", interpret, score_reply, dashboard_tables, RUN_KEY, kinds=(SCRIPT, MCQ),
    page_words=("echomind",), default_label_set="EchoMind vocal attributes", frames=frozenset({Frames.SPEECH}),
    has_voices=True,
    condition_words={"modality": {"asr": "transcription (ASR)", "mcq_understanding": "MCQ, understanding",
                                  "mcq_reasoning": "MCQ, reasoning"},
                     "prompt_setting": {"no": "no prompt", "basic": "basic prompt", "enhance": "enhanced prompt"}},
    vocabularies={"criteria": ECHOMIND_JUDGE_CRITERIA, "prompt settings": tuple(SETTING_HINTS)})
