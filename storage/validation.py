"""Values checked at the edge, once, for every importer: what no file may bring into the store.

Readers read what a file says and the benchmark rules interpret it; before anything is written this module
refuses the values no store should hold, whichever reader produced them: times that are not finite, negative
or end before they start; judge scores that are not finite or fall outside the judge's scale; ids, model
names and labels holding control characters (NUL and the like); Python values of the wrong type where a
field is typed (a list where a label is expected, true/false where a time is: the rule is
`storage.value_kinds`, which the plan asks as rows are added and labels are held to here); and a plan with
no rows at all (a header-only table would make an empty dataset). Every refusal is a `RowProblem` naming the file and
line the stimulus was read from (the plan's origins) or else the source file, the table and the field; with
--skip-bad the bad rows are left out and listed instead. A label holds the same rule wherever it comes from:
`label_problems` judges the rows an annotation file's reader (ELAN, Praat, Audacity, tables, native exports)
or a release's annotation sidecar produced, and the store's one write of labels (`insert_annotations`) asks
`bad_values` once more, so no road into the store holds a label to a different rule.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.importers.plan import FRAME_SCHEMAS, ImportPlan
from storage.value_kinds import shown_value, wrong_kinds

# Names that identify something (ids, models, judges, labels): no control character may hide in them, or two
# names that print the same would be different ones, and a NUL cuts the name short in other tools.
NAME_COLUMNS: dict[str, tuple[str, ...]] = {
    "stimuli": ("external_id", "kind", "split"),
    "media": ("stimulus", "role"),
    "segments": ("stimulus", "speaker", "media_role"),
    "models": ("model", "organisation"),
    "predictions": ("stimulus", "model", "modality", "prompt_setting", "vision_mode", "context"),
    "judgments": ("stimulus", "model", "modality", "prompt_setting", "vision_mode", "context", "judge",
                  "criterion"),
    "human_ratings": ("stimulus", "rater", "condition"),
    "label_sets": ("name", "scope"),
    "labels": ("label_set", "name", "parent", "shortcut"),
    "annotations": ("stimulus", "annotator", "label_set", "label", "media_role"),
    "trace_steps": ("stimulus", "model", "action"),
    "goal_atoms": ("stimulus",),
    "aggregate_results": ("model", "source", "metric_group", "metric"),
}
CONTROL_CHARACTERS = r"[\x00-\x1f\x7f-\x9f]"
# the same characters one by one: a search for any of them takes about half the time of the pattern over
# millions of names
_CONTROL_LIST = [c for c in map(chr, range(0xa0)) if re.match(CONTROL_CHARACTERS, c)]

# (start, end) pairs of times in seconds: finite, not negative, start <= end.
INTERVALS: dict[str, tuple[str, str]] = {"segments": ("start_s", "end_s"), "annotations": ("start_s", "end_s")}
# Intervals that are either both times or neither: a label with a start and no end is no label.
BOTH_OR_NEITHER = ("annotations",)
# The rule for any span of time (a label, a segment, a clip, a voice window) in the one wording every check
# that enforces it uses.
TIMES_EXPECTED = "0 <= start <= end, in seconds"
BOTH_OR_NEITHER_EXPECTED = "both a start and an end, or neither (a whole-stimulus label)"


def times_problem(start: float | None, end: float | None, *, optional: bool = False) -> str | None:
    """The expectation a span's times break: `TIMES_EXPECTED`, or `BOTH_OR_NEITHER_EXPECTED` for one time
    without the other where `optional` allows a span with no times at all; None when they keep the rule."""
    if start is None and end is None and optional:
        return None
    if start is None or end is None:
        return BOTH_OR_NEITHER_EXPECTED if optional else TIMES_EXPECTED
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end < start:
        return TIMES_EXPECTED
    return None


# Single times and durations in seconds: finite and not negative.
DURATIONS: dict[str, tuple[str, ...]] = {"media": ("duration_s",), "predictions": ("latency_s",),
                                         "human_ratings": ("response_time_s",)}
# Numbers that must at least be finite (a media offset may be negative: the file starts before the clip).
FINITE: dict[str, tuple[str, ...]] = {"media": ("offset_s",)}

def bad_values(table: str, frame: pl.DataFrame, scale: float | None = None) -> list[tuple[int, str, Any, str]]:
    """(row index, field, found, expected) for every impossible value in one frame of `table`'s columns
    (typed as `FRAME_SCHEMAS` types them; a column the frame lacks is not judged), at most 50 per rule. The
    one statement of the rule: the importers' check, the annotation files' and the store's write of labels
    all ask it."""
    if not frame.height:
        return []
    found: list[tuple[int, str, Any, str]] = []
    indexed = frame.with_row_index("_row")
    present = set(frame.columns)

    def collect(condition: pl.Expr, column: str, expected: str, shown: pl.Expr | None = None) -> None:
        hits = indexed.filter(condition).select("_row", (shown if shown is not None else pl.col(column)).alias("v"))
        found.extend((int(r), column, v, expected) for r, v in hits.head(50).iter_rows())

    for column in (c for c in NAME_COLUMNS.get(table, ()) if c in present):
        collect(pl.col(column).str.contains_any(_CONTROL_LIST), column, "text without control characters")
    for column in (c for c in DURATIONS.get(table, ()) if c in present):
        collect(~pl.col(column).is_finite() | (pl.col(column) < 0), column, "a finite time of 0 s or more")
    for column in (c for c in FINITE.get(table, ()) if c in present):
        collect(~pl.col(column).is_finite(), column, "a finite number")
    if table in INTERVALS and set(INTERVALS[table]) <= present:
        start, end = INTERVALS[table]
        for column in (start, end):
            collect(~pl.col(column).is_finite() | (pl.col(column) < 0), column, "a finite time of 0 s or more")
        collect(pl.col(start).is_finite() & pl.col(end).is_finite() & (pl.col(start) > pl.col(end)),
                f"{start}/{end}", TIMES_EXPECTED,
                pl.format("{}..{}", pl.col(start), pl.col(end)))
        if table in BOTH_OR_NEITHER:
            collect(pl.col(start).is_null() != pl.col(end).is_null(), f"{start}/{end}",
                    BOTH_OR_NEITHER_EXPECTED,
                    pl.format("{}..{}", pl.col(start).cast(pl.String).fill_null("none"),
                              pl.col(end).cast(pl.String).fill_null("none")))
    if table == "judgments":
        collect(~pl.col("scale_max").is_finite() | (pl.col("scale_max") <= 0), "scale_max",
                "a finite scale maximum above 0")
        top = pl.coalesce(pl.col("scale_max"), pl.lit(scale if scale is not None else math.inf))
        collect(~pl.col("score").is_finite() | (pl.col("score") < 0) | (pl.col("score") > top), "score",
                "a finite score on the judge's scale (0 to its maximum)")
    return found


def check_values(plan: ImportPlan, skip_bad: bool, *, datasetless: bool = False,
                 judge_scale: float | None = None) -> None:
    """Refuse a plan holding impossible values (see the module's note) with one `ImportFailed` naming where
    each was read and what was expected; with `skip_bad`, leave those rows out (a stimulus whose id is bad,
    with everything of it) and list them in `plan.problems` instead. `judge_scale` is the scale of judgments
    that do not carry their own maximum."""
    problems: list[RowProblem] = []
    for table in FRAME_SCHEMAS:
        frame = plan.frame(table)
        if plan.values_checked.get(table) is frame:
            continue   # its reader found these very rows good, and would have named each bad one's line
        bad = bad_values(table, frame, judge_scale)
        if not bad:
            continue
        key = "external_id" if table == "stimuli" else "stimulus" if "stimulus" in frame.columns else None
        rows = sorted({index for index, *_ in bad})
        for index, column, value, expected in bad:
            stimulus = frame[key][index] if key else None
            file, line, about = plan.where(table, stimulus)
            problems.append(RowProblem(file, line, column, f"{shown_value(value)} ({about})", expected))
        if skip_bad and table == "stimuli":
            plan.drop_stimuli({frame["external_id"][i] for i in rows})
        elif skip_bad:
            plan.frames[table] = frame.with_row_index("_row").filter(~pl.col("_row").is_in(rows)).drop("_row")
    if problems and not skip_bad:
        raise ImportFailed(problems)
    plan.problems.extend(problems)
    if not datasetless and not any(plan.counts().values()):
        raise ImportFailed(RowProblem(Path(plan.dataset.source).name or str(plan.dataset.root), None, None,
                                      "no rows (a header alone, or nothing readable)",
                                      "at least one stimulus or result to import"))


def label_problems(rows: Sequence[Mapping[str, Any]], *,
                   before_zero: bool = False) -> list[tuple[int, str, str, str]]:
    """(row index, field, found, expected) for each row of labels (dicts with the annotations table's fields;
    others, such as `meta` or `origin`, are not judged) that no store may hold: see `label_column_problems`,
    which judges the same fields column by column."""
    return label_column_problems({c: [row.get(c) for row in rows] for c in FRAME_SCHEMAS["annotations"]},
                                 before_zero=before_zero)


def label_column_problems(columns: Mapping[str, Sequence[Any]], *,
                          before_zero: bool = False) -> list[tuple[int, str, str, str]]:
    """(row index, field, found, expected) for each row of labels, given as the values of each of the
    annotations table's fields in row order (a field missing from `columns` is none), that no store may hold:
    a value of the wrong kind (a list where a label is expected, true where a time is), then whatever
    `bad_values` refuses of the rest. Sorted by row; the rule the release importers hold their annotations
    to, for every other road labels take into the store. With `before_zero`, a finite time below 0 is left to
    the caller, which places labels on a stimulus and may cut them to it (the store's write refuses one still)."""
    problems, frame, fit = label_kind_problems(columns)
    problems += [(fit[index], *problem) for index, *problem in label_value_problems(frame, before_zero=before_zero)]
    return sorted(problems, key=lambda p: p[0])


def label_kind_problems(columns: Mapping[str, Sequence[Any]]) -> tuple[list[tuple[int, str, str, str]], pl.DataFrame,
                                                                        list[int]]:
    """The first half of `label_column_problems`: (row index, field, found, expected) for each row holding a
    value of the wrong kind, the other rows as a frame typed as `FRAME_SCHEMAS` types labels, and the index
    of each of those rows among all."""
    schema = FRAME_SCHEMAS["annotations"]
    height = len(next(iter(columns.values()), ()))
    columns = {c: columns[c] if c in columns else [None] * height for c in schema}
    problems: list[tuple[int, str, str, str]] = []
    wrong: set[int] = set()
    for index, column, value, expected in wrong_kinds(schema, columns):
        if index not in wrong:   # one wrong value is enough to refuse a row
            wrong.add(index)
            problems.append((index, column, shown_value(value), expected))
    fit = [i for i in range(height) if i not in wrong] if wrong else range(height)
    frame = pl.DataFrame({c: pl.Series(c, [values[i] for i in fit] if wrong else values, dtype=schema[c], strict=False)
                          for c, values in columns.items()})
    return problems, frame, list(fit) if wrong else fit


def label_value_problems(frame: pl.DataFrame, *, before_zero: bool = False) -> list[tuple[int, str, str, str]]:
    """The second half of `label_column_problems`: (row index, field, found, expected) for each row of a
    frame of labels (typed as `FRAME_SCHEMAS` types them) holding a value `bad_values` refuses."""
    schema = FRAME_SCHEMAS["annotations"]
    problems = []
    judged = frame.select(c for c in schema if c in frame.columns)
    for index, column, value, expected in bad_values("annotations", judged):
        if before_zero and column in INTERVALS["annotations"] and math.isfinite(value) and value < 0:
            continue
        problems.append((index, column, shown_value(value) if column in schema else str(value), expected))
    return problems
