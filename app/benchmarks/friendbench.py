"""FriendBench's rules: reading a familiar/stranger verdict out of a model's reply, and scoring it.

Replies are prose ("I think they are strangers.", "They are clearly not strangers."), so negation decides the
verdict as often as the label word does. The parser returns None when the text does not settle the answer,
so an unparseable reply is counted as such instead of being guessed. Imported answers and live replies are
read by the same parser; the release's own spellings of the two labels ("friends", "1") are normalised by
the reader before this runs.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import polars as pl

from app.benchmarks.chat import (Message, audio_part, clip_audio_wav, clip_frames, conversation, image_part,
                                 text_part)
from app.benchmarks.profile import (BenchmarkProfile, KindProfile, LiveChoice, Page, PlayerLayout,
                                    transcript_of)
from app.dashboard_tables import CORRECTION_NAMES, HUMANS, ChartSpec, DashboardTable, QueriedRowStimuli
from app.metrics import human_signal_detection, signal_detection_table
from app.prompt_template import PromptTemplate
from storage.importers.common import ProblemLog, dumps
from storage.importers.plan import ImportPlan
from storage.importers.words import MODALITY_WORDS
from storage.records import StimulusDetail

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames

NAME = "friendbench"
RUN_KEY = ("model", "modality")   # what one run is, in the failure filters
FAMILIAR = "familiar"
STRANGER = "stranger"
DYAD_KIND = "dyad"
MODALITIES = tuple(MODALITY_WORDS)   # text, audio, video: the conditions a clip is asked in

# The prompt a live model is asked with; its last line is the form `parse_familiarity` reads.
FORCED_CHOICE_PROMPT = PromptTemplate(
    name="friendbench.forced_choice",
    benchmark="FriendBench",
    description="Are the two people familiar with each other or strangers? ({modality} is text, audio or video)",
    system="You are an expert in human social interaction.",
    user=(
        "You will be given a 20-second excerpt ({modality}) of a conversation between two people playing an "
        "icebreaker game.\n{transcript_block}"
        "Do these two people already know each other (familiar) or did they just meet (strangers)?\n"
        "Answer with exactly one word: familiar or stranger."
    ),
)

# A negation and up to two words before what it negates ("do not seem familiar", "aren't really friends"),
# within one clause; "not just friends" and "not sure, but friends" are not negations of the label.
_NEGATION = r"(?:\bnot|\bnever|n't|\bno\s+longer)"
_GAP = r"\s+(?:(?!(?:but|and|or|yet|just|only|merely)\b)\w+\s+){0,2}?"
_NEGATION_WORDS = ("no", "never", "n't")
# Negated and multi-word forms first: each is blanked out before the later, shorter ones are looked for, so
# "not strangers" is not also read as "strangers" and "unfamiliar" not as "familiar". Beside each pattern,
# the words that must all be in a text for it to match there (any one of each tuple), so a pass that cannot
# match is never run.
_PHRASES: tuple[tuple[re.Pattern[str], str, tuple[tuple[str, ...], ...]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), label, needs) for pattern, label, needs in (
        (rf"{_NEGATION}{_GAP}unfamiliar\b", FAMILIAR, (_NEGATION_WORDS, ("unfamiliar",))),
        (rf"{_NEGATION}{_GAP}(?:a\s+)?strangers?\b", FAMILIAR, (_NEGATION_WORDS, ("stranger",))),
        (rf"{_NEGATION}{_GAP}(?:familiar|friends?|acquainted|know\s+each\s+other)\b", STRANGER,
         (_NEGATION_WORDS, ("familiar", "friend", "acquainted", "know"))),
        (r"\bunfamiliar\b", STRANGER, (("unfamiliar",),)),
        (r"\b(?:never|just|first\s+time\s+they(?:'ve|\s+have)?)\s+met\b", STRANGER, (("met",),)),
        (r"\bknow\s+each\s+other\b", FAMILIAR, (("know",),)),
        (r"\bfamiliar\b", FAMILIAR, (("familiar",),)),
        (r"\bstrangers?\b", STRANGER, (("stranger",),)),
        (r"\bfriends?\b", FAMILIAR, (("friend",),)),
        (r"\bacquainted\b", FAMILIAR, (("acquainted",),)),
    ))
# No expression reaches across a character other than a letter, digit, space or apostrophe, so a long text is
# read in pieces cut after such a character, each piece alone: the window never waits on one long pass.
_CLAUSE_END = re.compile(r"[^\w\s']")
_FIRST_PIECE = 4096
_LARGEST_PIECE = 65536
# "Answer: ...", "final answer is ...", and the JSON form {"answer": "..."}.
_MARKER = re.compile(r"\b(?:final\s+answer|answer|verdict|classification|prediction)\b\"?\s*(?:is|:|=|-)\s*[\"*]*\s*",
                     re.IGNORECASE)
_MARKER_WORDS = ("answer", "verdict", "classification", "prediction")


def labels_in(text: str) -> list[tuple[int, str]]:
    """(position, "familiar" or "stranger") for every familiarity expression in `text`, in order."""
    found: list[tuple[int, str]] = []
    remaining = text
    folded = text.casefold()
    for pattern, label, needs in _PHRASES:
        if not all(any(word in folded for word in words) for words in needs):
            continue
        matches = [match.span() for match in pattern.finditer(remaining)]
        if not matches:
            continue
        found.extend((start, label) for start, _ in matches)
        # blanked from the spans just found, instead of a second pass of the pattern
        parts, last = [], 0
        for start, end in matches:
            parts += [remaining[last:start], " " * (end - start)]
            last = end
        parts.append(remaining[last:])
        remaining = "".join(parts)
    return sorted(found)


def _pieces(text: str) -> Iterator[str]:
    """`text` cut after clause-ending characters into pieces growing from 4 KB to 64 KB (the first ones small,
    so a reply that settles early is read early)."""
    start, size = 0, _FIRST_PIECE
    while start < len(text):
        cut = _CLAUSE_END.search(text, min(start + size, len(text)))
        end = cut.end() if cut else len(text)
        yield text[start:end]
        start, size = end, min(size * 2, _LARGEST_PIECE)


def _last_marker_end(text: str) -> int | None:
    """Where the text after the last "Answer: ..." marker begins, or None without one. Looked for from the
    end, at the marker words only, instead of reading a long reply through."""
    lowered = text.lower()
    if len(lowered) != len(text):   # a letter whose lower case is longer: positions would not match
        markers = list(_MARKER.finditer(text))
        return markers[-1].end() if markers else None
    ends = {word: len(lowered) for word in _MARKER_WORDS}
    while True:
        found = {word: lowered.rfind(word, 0, end) for word, end in ends.items()}
        word, position = max(found.items(), key=lambda item: item[1])
        if position < 0:
            return None
        # "final answer" is found at its "answer", which ends where the whole marker ends
        match = _MARKER.match(text, position)
        if match:
            return match.end()
        ends[word] = position


def parse_familiarity(text: str | None) -> str | None:
    """"familiar", "stranger", or None when the text names neither, or both without a marked verdict.

    After the last "Answer: ..." marker the first expression counts; without one the text must point one way.
    Time grows with the length of the text alone, and a long text is read in pieces, stopping once it has
    pointed both ways.
    """
    if not text:
        return None
    marker_end = _last_marker_end(text)
    if marker_end is not None:
        after = labels_in(text[marker_end:marker_end + 60])
        if after:
            return after[0][1]
    labels: set[str] = set()
    for piece in _pieces(text):
        labels.update(label for _, label in labels_in(piece))
        if len(labels) > 1:
            return None
    return labels.pop() if labels else None


def answer_of(given: str | None, raw: str | None) -> str | None:
    """The verdict of an imported answer: the answer column when the file has one, else the raw output."""
    return _verdict(given if given is not None else raw)


def _verdict(text: str | None) -> str | None:
    return text if text in (FAMILIAR, STRANGER) else parse_familiarity(text)


def is_correct(answer: str | None, truth: str | None, given: bool | None = None) -> bool | None:
    """Whether a verdict matches the clip's truth; `given` (the file's own flag) when either is unknown."""
    if answer is None or truth is None:
        return given
    return answer == truth.strip().lower()


def score_reply(detail: StimulusDetail, text: str | None) -> tuple[str | None, bool | None]:
    """(verdict, correct) for a live reply."""
    answer = parse_familiarity(text)
    return answer, (is_correct(answer, detail.ground_truth) if answer else None)


def _by_distinct(frame: pl.DataFrame, columns: list[str], rule: Callable[..., Any], dtype: pl.DataType) -> pl.Series:
    """`rule` applied to each row's `columns`, computed once per distinct combination of their values: a
    million answers that say "familiar" or "stranger" cost two calls, and every row gets what the one rule
    says for it."""
    keys = frame.select(columns)
    distinct = keys.unique()
    values = pl.Series("_value", [rule(*row) for row in distinct.iter_rows()], dtype=dtype)
    return keys.join(distinct.with_columns(values), on=columns, how="left", nulls_equal=True,
                     maintain_order="left")["_value"]


def _marked_unparsed(meta_text: str | None) -> str:
    meta = json.loads(meta_text) if meta_text else {}
    meta["unparsed"] = True
    return dumps(meta)


def interpret(plan: ImportPlan, log: ProblemLog) -> None:
    """Read each prediction's verdict from its answer or raw output and score it against the clip's truth.

    Column by column: each distinct text is read once by `answer_of`'s rule and each distinct (verdict, truth,
    flag) scored once by `is_correct`, so a release of millions of answers is read at the speed of its
    distinct values."""
    predictions = plan.frame("predictions")
    if not predictions.height:
        return
    # a clip named twice: its last truth, as the plan's later row would be written over the first
    truths = plan.frame("stimuli").select("external_id", "ground_truth").drop_nulls().unique(
        "external_id", keep="last")
    if plan.known_stimuli is not None:   # answers attached to clips already stored; the plan's own truth first
        known = plan.known_stimuli.select("external_id", "ground_truth").drop_nulls()
        truths = pl.concat([truths, known.filter(~pl.col("external_id").is_in(truths["external_id"]))])
    work = predictions.select(
        pl.coalesce("answer", "raw_output").alias("text"), pl.col("correct").alias("flag"), "meta",
        pl.col("stimulus").replace_strict(truths["external_id"], truths["ground_truth"], default=None,
                                          return_dtype=pl.String).alias("truth"))
    work = work.with_columns(_by_distinct(work, ["text"], _verdict, pl.String).alias("verdict"))
    correct = _by_distinct(work, ["verdict", "truth", "flag"], is_correct, pl.Boolean)
    unparsed = work["verdict"].is_null()
    metas = work["meta"].clone()
    if unparsed.any():
        metas.scatter(unparsed.arg_true(), _by_distinct(work.filter(unparsed), ["meta"], _marked_unparsed, pl.String))
        plan.notes.append(f"{unparsed.sum()} predictions without a familiar/stranger answer")
    plan.frames["predictions"] = predictions.with_columns(
        work["verdict"].alias("answer"), correct.alias("correct"), metas.alias("meta"))


def _crowd_rows(ratings: pl.DataFrame, correction: str) -> pl.DataFrame:
    """The human crowd's accuracy, d' and c per condition (each rating carries its clip's truth), as rows of the
    models' table: model "humans", the condition as the modality."""
    crowd = human_signal_detection(ratings, correction=correction)
    return crowd.select(pl.lit(HUMANS).alias("model"), pl.col("condition").alias("modality"), pl.exclude("condition"))


def dashboard_tables(frames: AnalysisFrames, correction: str, notes: list[str]) -> list[DashboardTable]:
    """Accuracy (Wilson 95%), d' and c per model x modality, plus the human crowd per condition.

    The model rows come from answer counts aggregated in the store; the stimuli behind a row are looked
    up when asked."""
    truths = [FAMILIAR, STRANGER]
    counts = frames.answer_counts(truths)
    name = CORRECTION_NAMES[correction]
    parts = []
    if counts.height:
        parts.append(signal_detection_table(counts, ["model", "modality"], correction=correction, count_col="n"))
    ratings = frames.ratings
    crowd_source = None
    if ratings.height:
        # only an import changes the ratings, so the crowd's rows are kept until one does
        parts.append(frames.from_import(f"{NAME}.crowd.{correction}", lambda: _crowd_rows(ratings, correction)))
        crowd_source = ratings.select("stimulus_id", pl.lit(HUMANS).alias("model"),
                                      pl.col("condition").alias("modality"))
    if not parts:
        return []
    table = pl.concat(parts, how="vertical_relaxed")

    def find(row: dict[str, Any]) -> list[int]:
        if crowd_source is not None and row["model"] == HUMANS:
            match = (pl.col("modality").is_null() if row["modality"] is None else pl.col("modality") == row["modality"])
            return crowd_source.filter(match)["stimulus_id"].unique().sort().to_list()
        return frames.predicted_stimulus_ids(row["model"], row["modality"], truths)

    stimulus_ids = QueriedRowStimuli(find, ["model", "modality"], table)
    accuracy = DashboardTable(
        "friendbench.accuracy", "FriendBench accuracy",
        "Share correct per model and modality, with 95% Wilson intervals; humans pooled over raters; an "
        "output that is neither label counts as wrong (n_unanswered).",
        table, stimulus_ids,
        ChartSpec("bars", value_col="accuracy", low_col="ci_low", high_col="ci_high", category_cols=("model",),
                  series_col="modality", y_label="accuracy", y_range=(0.0, 1.0), reference_line=0.5),
        ("model", "modality"))
    signal = DashboardTable(
        "friendbench.signal", f"FriendBench d′ and c (correction: {name})",
        f"Signal = familiar. d′ = z(H) − z(F); c = −(z(H) + z(F))/2, c > 0 leans \"stranger\". "
        f"Rate correction: {name}. An output that is neither label is left out of H and F (n_unanswered), "
        f"not counted as \"stranger\".",
        table, stimulus_ids,
        ChartSpec("scatter", x_col="criterion", y_col="d_prime", label_cols=("model", "modality"),
                  series_col="modality", x_label="criterion c (> 0: leans stranger)", y_label="d′ (sensitivity)"),
        ("model", "modality"))
    return [accuracy, signal]


def friendbench_messages(
    modality: str,
    transcript: str | None = None,
    audio_wav: bytes | None = None,
    frames_jpeg: Sequence[bytes] = (),
    template: PromptTemplate = FORCED_CHOICE_PROMPT,
) -> list[Message]:
    """The forced-choice question for one dyad clip.

    text: the transcript inside the prompt; audio: the clip's audio; video: sampled frames plus
    the audio (video keeps its sound in FriendBench). Raises ValueError when the modality's
    input is missing.
    """
    if modality not in MODALITIES:
        raise ValueError(f"modality must be one of {', '.join(MODALITIES)}, got {modality!r}")
    if modality == "text" and not transcript:
        raise ValueError("the text condition needs a transcript")
    if modality in ("audio", "video") and audio_wav is None:
        raise ValueError(f"the {modality} condition needs the clip's audio")
    if modality == "video" and not frames_jpeg:
        raise ValueError("the video condition needs at least one frame")
    block = f"\nTranscript:\n{transcript}\n\n" if modality == "text" else "\n"
    system, user = template.render(modality=modality, transcript_block=block)
    parts = [text_part(user)]
    if modality == "video":
        parts += [image_part(jpeg) for jpeg in frames_jpeg]
    if modality in ("audio", "video"):
        parts.append(audio_part(audio_wav))  # type: ignore[arg-type]
    return conversation(system, parts)


def dyad_messages(detail: StimulusDetail, template: PromptTemplate, choice: LiveChoice) -> list[Message]:
    """A dyad clip's question in the chosen modality: its transcript, its participants' audio mixed, or frames
    of its videos with that audio."""
    modality = choice.modality
    transcript = transcript_of(detail) if modality == "text" else None
    audio = clip_audio_wav(detail) if modality in ("audio", "video") else None
    frames = clip_frames(detail) if modality == "video" else ()
    return friendbench_messages(modality, transcript, audio, frames, template)


DYAD = KindProfile(DYAD_KIND, page=Page.MEDIA, player=PlayerLayout.DYAD, template=FORCED_CHOICE_PROMPT,
                   messages=dyad_messages)
PROFILE = BenchmarkProfile(
    NAME, "FriendBench", interpret, score_reply, dashboard_tables, RUN_KEY, kinds=(DYAD,),
    asks_unknown_kinds=True, page_words=("friendbench", "friend-bench"), shares_label_sets_with=("seamless",),
    default_label_set="vocal cues", has_voices=True,
    condition_words={"modality": {"text": "text only", "audio": "audio", "video": "video"}},
    vocabularies={"labels": (FAMILIAR, STRANGER), "conditions": MODALITIES})
# Seamless Interaction's dyads are asked FriendBench's question and read by its rules; their label sets are
# shared both ways.
SEAMLESS = replace(PROFILE, name="seamless", title="Seamless Interaction", asks_unknown_kinds=False,
                   page_words=("seamless",), shares_label_sets_with=(NAME,))
