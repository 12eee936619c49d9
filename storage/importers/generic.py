"""Any table of stimuli, predictions, judgments or human ratings, read through a column map.

A map is FIELD -> source column with the fields of `MAP_FIELDS`. What the table is follows from the fields
mapped: a `rater` makes it human ratings; a `judge`, `criterion` or `score` makes it judgments; a `model`
with an answer, raw output or correctness makes it predictions; anything else is stimuli (with `speaker`,
`start` or `end` mapped, one row per transcript segment). Without a map the columns are guessed from
their names and values.

Every column is read as text and converted with polars expressions, so a million-row file is checked
and planned without a Python loop over rows; only the bad rows are visited, to name their lines.
Predictions, judgments and ratings name their stimuli without describing them: each id becomes a stimulus row
that states only what the table has (a mapped label or split), so ids the dataset already holds keep their kind,
truth, title, media and metadata, and only new ids become new (generic) stimuli. With
`options.extra["stimuli_exist"]` true, every id must already be in the dataset and a new one is refused.
"""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.files import check_regular
from storage.importers.common import (MAP_FIELDS, ImportOptions, ProblemLog, check_cancel, read_annotation_sidecar,
                                      resolve_media)
from storage.importers.plan import REFERRING, DatasetInfo, ImportPlan
from storage.importers.sniff import mapping_of, sniff_frame
from storage.natural_order import natural_keys
from storage.tables import LINE, TABLE_SUFFIXES, form_of, read_table
from storage.validation import TIMES_EXPECTED, bad_values
from storage.importers.correctness import correct_word_expr, same_answers

_NUMERIC = {"score": "score", "start": "start_s", "end": "end_s", "latency": "latency_s",
            "response_time": "response_time_s"}
# fields whose value may be any JSON (kept as its text); every other field needs a name, a number or a word
_MAY_HOLD_JSON = ("raw", "answer", "rationale", "text", "label")
# the map field a plan column comes from, where their names differ, so a refusal names the user's column
_FIELD_OF = {"external_id": "stimulus", "ground_truth": "label", "prompt_setting": "prompt", "vision_mode": "vision",
             "condition": "modality", "start_s": "start", "end_s": "end", "latency_s": "latency",
             "response_time_s": "response_time", "raw_output": "raw"}
# every character `str.strip_chars` trims (Unicode White_Space)
WHITE_SPACE = list("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                    "\u200a\u2028\u2029\u202f\u205f\u3000")
# the bytes a delimited file's values cannot hold if none is padded or empty text: the first byte of each
# white-space character but the line break (which only a quoted field can hold), and the quote
_PADDING_BYTES = bytes(sorted({ch.encode()[0] for ch in WHITE_SPACE if ch != "\n"} | {ord('"')}))
_ASCII_PADDING_BYTES = bytes(byte for byte in _PADDING_BYTES if byte < 0x80)
_AUDIO = {".wav", ".mp3", ".flac", ".ogg", ".m4a", ".opus"}
_VIDEO = {".mp4", ".mkv", ".mov", ".avi", ".webm"}
_IMAGE = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"}


# ------------------------------------------------------------------------------------------- mapping
def guess_mapping(frame: pl.DataFrame) -> dict[str, str]:
    """Fields guessed from a table's column names and values (see `storage.importers.sniff`)."""
    return mapping_of(sniff_frame(frame.drop(LINE, strict=False), fields=list(MAP_FIELDS)))


def table_kind(mapping: dict[str, str]) -> str:
    """What a mapped table holds: human_ratings, judgments, predictions, segments or stimuli."""
    if "rater" in mapping:
        return "human_ratings"
    if {"judge", "criterion", "score"} & mapping.keys():
        return "judgments"
    if "model" in mapping and {"answer", "raw", "correct"} & mapping.keys():
        return "predictions"
    if {"speaker", "start", "end"} & mapping.keys():
        return "segments"
    return "stimuli"


def preview(path: Path, options: ImportOptions | None = None, n: int = 20
            ) -> tuple[list[str], list[tuple[str | None, ...]], dict[str, str]]:
    """The first `n` rows as text, the columns, and the mapping that would be used (given or guessed)."""
    frame = read_table(Path(path), n_rows=max(n, 200)).frame
    mapping = dict(options.mapping) if options and options.mapping else guess_mapping(frame)
    frame = frame.drop(LINE)
    return frame.columns, [tuple(row) for row in frame.head(n).iter_rows()], mapping


# ------------------------------------------------------------------------------------------- importer
class GenericImporter:
    kind = "generic"
    title = "Any table (CSV, TSV, JSONL, JSON, Parquet) with a column map"
    version = 1

    def detect(self, path: Path) -> float:
        """A weak yes for any single table file, so that it is the last resort."""
        path = Path(path)
        suffix = path.suffix.lower()
        return 0.1 if path.is_file() and suffix in TABLE_SUFFIXES else 0.0

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        # a link to /dev/zero, a pipe or a folder is refused in one line; a results table a program wrote
        # may be of any size
        path = check_regular(path, max_bytes=None)
        log = ProblemLog(options.skip_bad)
        table = read_table(path, path.name, log)
        frame, nested = table.frame, table.nested
        del table   # only its frame and the lines of its nested values are used
        check_cancel(options)
        columns = [c for c in frame.columns if c != LINE]
        mapping = dict(options.mapping) if options.mapping else guess_mapping(frame)
        check_mapping(path.name, mapping, columns)
        root = path.parent
        plan = ImportPlan(
            DatasetInfo(name=options.dataset_name or f"Generic {path.stem}",
                        benchmark=str(options.extra.get("benchmark", "generic")), root=root, source=str(path)),
            importer=self.kind, importer_version=self.version, mapping=mapping,
            only_existing_stimuli=bool(options.extra.get("stimuli_exist")))
        kind = table_kind(mapping)
        frame = _without_nested_names(frame, nested, mapping, path.name, log)
        typed = _typed(frame, mapping, path.name, log, kind,
                       padded=form_of(path) != "delimited" or _may_be_padded(path))
        del frame   # the text as read is no longer needed: the plan is built from the typed columns alone
        check_cancel(options)
        build = {"human_ratings": _human_ratings, "judgments": _judgments, "predictions": _predictions,
                 "segments": _segments, "stimuli": _stimuli}[kind]
        build(plan, typed, mapping, options, path.name, log)
        if "media" in mapping:
            _media(plan, typed, root, options, path.name, log)
        plan.notes.append(f"read {typed.height} rows of {path.name} as {kind.replace('_', ' ')}")
        read_annotation_sidecar(root, plan, log)
        log.finish(plan)
        return plan


def check_mapping(file: str, mapping: dict[str, str], columns: list[str]) -> None:
    problems = []
    for field_name, column in mapping.items():
        if field_name not in MAP_FIELDS:
            problems.append(RowProblem(file, None, field_name, "<an unknown field>",
                                       "one of " + ", ".join(MAP_FIELDS)))
        elif column not in columns:
            problems.append(RowProblem(file, 1, field_name, f"<no column {column!r}>",
                                       "one of the columns " + ", ".join(repr(c) for c in columns)))
    if problems:
        raise ImportFailed(problems)
    if "stimulus" not in mapping and table_kind(mapping) not in ("stimuli",):
        raise ImportFailed(RowProblem(file, 1, "stimulus", "<not mapped>",
                                      "--map stimulus=COLUMN naming the id column; columns are "
                                      + ", ".join(repr(c) for c in columns)))
    if table_kind(mapping) == "judgments" and "model" not in mapping:
        raise ImportFailed(RowProblem(file, 1, "model", "<not mapped>",
                                      "--map model=COLUMN: judgments belong to a model's output"))


def _without_nested_names(frame: pl.DataFrame, nested: dict[str, list[int]], mapping: dict[str, str], file: str,
                          log: ProblemLog) -> pl.DataFrame:
    """The table's rows but those holding a list or an object (`Table.nested`: in a JSON or Parquet table)
    where a mapped field needs a name or a number; each of those is logged with its line. A text field (a raw
    output, a reason, a transcript) may hold one, as its JSON text."""
    refused: set[int] = set()
    for field_name, column in mapping.items():
        if field_name in _MAY_HOLD_JSON:
            continue
        for line in nested.get(column, ())[: log.limit]:
            found = frame.filter(pl.col(LINE) == line)[column].item()
            log.add(file, line, column, found, f"a {MAP_FIELDS.get(field_name, field_name)}, not a list or object")
            refused.add(line)
    return frame.filter(~pl.col(LINE).is_in(sorted(refused))) if refused else frame


def _add(plan: ImportPlan, table: str, frame: pl.DataFrame, mapping: dict[str, str], file: str,
         log: ProblemLog) -> None:
    """Add a frame (with each row's `LINE`) to the plan, after logging with its line, by the one value rule
    every importer's rows meet (`storage.validation.bad_values`), each row holding a value no store may."""
    bad = bad_values(table, frame)
    said = {(problem.line, problem.field) for problem in log.problems}
    for index, column, found, expected in bad:
        source = mapping.get(_FIELD_OF.get(column, column), column)
        if (frame[LINE][index], source) not in said:   # a stimulus id is in the results' rows and its own
            log.add(file, frame[LINE][index], source, found, expected)
    if bad:
        frame = frame.with_row_index("_row").filter(~pl.col("_row").is_in(sorted({b[0] for b in bad}))).drop("_row")
    before = plan.frames.get(table)
    plan.add(table, frame.drop(LINE))
    # a table all of whose rows were found good here need not be read again; judgments are, against the
    # judge's scale
    if not bad and table != "judgments" and (before is None or plan.values_checked.get(table) is before):
        plan.values_checked[table] = plan.frames[table]


def _report(frame: pl.DataFrame, bad: pl.Expr, column: str, field_name: str, file: str, log: ProblemLog,
            expected: str) -> pl.DataFrame:
    """Log the rows where `bad` holds (at most the log's limit are visited) and return the others."""
    flagged = frame.filter(bad)
    if flagged.height:
        for line, found in flagged.select(LINE, column).head(log.limit).iter_rows():
            log.add(file, line, field_name, found if found else "<empty>", expected)
        if flagged.height > log.limit and log.skip_bad:
            log.add(file, None, field_name, f"<{flagged.height - log.limit} more such rows>", expected)
        return frame.filter(~bad)
    return frame


def _may_be_padded(path: Path) -> bool:
    """Whether a value of a delimited file may hold white space or be empty text (an empty field is null): not
    when no byte after its header line is one of `_PADDING_BYTES`, since each value is then the very bytes
    between two delimiters. Read in blocks, stopping at the first such byte (a tab-separated file stops at its
    first tab); far cheaper than searching each value of each column."""
    with path.open("rb") as fh:
        fh.readline()
        # blocks that stay in the processor's cache while each byte is looked for in turn (a byte's search is
        # a vectorised scan; eight-megabyte blocks took 2.5 times as long), read into one buffer
        block = bytearray(1 << 18)
        while size := fh.readinto(block):
            del block[size:]
            if block.isascii():
                if any(block.find(byte) != -1 for byte in _ASCII_PADDING_BYTES):
                    return True
            elif len(block.translate(None, _PADDING_BYTES)) != size:
                return True
    return False


def _typed(frame: pl.DataFrame, mapping: dict[str, str], file: str, log: ProblemLog, kind: str,
           padded: bool = True) -> pl.DataFrame:
    """Rename mapped columns to fields, convert types, drop (and log) the rows that do not convert.

    Every column is converted in one parallel pass and every check answered in a second one; only a check
    that some row fails reads the rows again, to name their lines. A text field is its trimmed text (empty as
    null); a number or a truth value keeps its trimmed text (`_src_FIELD`) only while it is checked, so the
    typed table holds one copy of each column."""
    # a table a program wrote is rarely padded: only a column with white space in a value (found by a fast
    # search for any of its characters, unless `padded` says the file holds none) or an empty value is trimmed
    # (a copy), every other column is taken as read, sharing its memory
    columns = sorted(set(mapping.values()))
    if not padded:   # the file holds no white space and no empty text (`_may_be_padded`)
        padded_columns = dict.fromkeys(columns, False)
    else:
        padded_columns = dict(zip(columns, frame.select(
            (pl.col(c).str.contains_any(WHITE_SPACE) | (pl.col(c) == "")).any() for c in columns).row(0)))
    stripped = {field_name: pl.col(column).str.strip_chars() if padded_columns[column] else pl.col(column)
                for field_name, column in mapping.items()}
    texts = [f for f in mapping if f not in _NUMERIC and f != "correct"]
    sources = [f for f in mapping if f not in texts]
    converted: list[pl.Expr] = []
    checks: list[tuple[pl.Expr, str, str, str]] = []   # (bad, column shown, user's column, expected)
    required = ["stimulus"] if kind != "stimuli" else []
    required += {"human_ratings": ["rater"], "judgments": ["model"], "predictions": ["model"]}.get(kind, [])
    for field_name in required:
        if field_name in mapping:
            checks.append((pl.col(field_name).is_null(), field_name, mapping[field_name],
                           f"a {MAP_FIELDS[field_name]}"))
    for field_name, target in _NUMERIC.items():
        if field_name in mapping:
            src = f"_src_{field_name}"
            converted.append(pl.col(src).cast(pl.Float64, strict=False).alias(target))
            # "nan" and "inf" convert, but no time, score or duration is either
            checks.append(((pl.col(src) != "") & (pl.col(target).is_null() | ~pl.col(target).is_finite()), src,
                           mapping[field_name], "a number, finite"))
    if "correct" in mapping:
        converted.append(correct_word_expr(pl.col("_src_correct")).alias("correct"))
        checks.append(((pl.col("_src_correct") != "") & pl.col("correct").is_null(), "_src_correct",
                       mapping["correct"], "true/false, yes/no or 1/0"))
    if "start" in mapping and "end" in mapping:
        checks.append((pl.col("end_s") < pl.col("start_s"), "_src_end", mapping["end"],
                       TIMES_EXPECTED))
    typed = (frame.lazy().select(pl.col(LINE), *(stripped[f].alias(f"_src_{f}") for f in sources),
                                 *(stripped[f].alias(f) for f in texts))
             .with_columns(*(pl.when(pl.col(f) == "").then(None).otherwise(pl.col(f)).alias(f) for f in texts
                             if padded_columns[mapping[f]]), *converted).collect())
    if checks:
        failing = typed.select(bad.fill_null(False).any().alias(str(i))
                               for i, (bad, *_rest) in enumerate(checks)).row(0)
        for (bad, shown, column, expected), fails in zip(checks, failing):
            if fails:   # in order, each on the rows the checks before it kept, so a row is named once
                typed = _report(typed, bad, shown, column, file, log, expected)
    return typed.drop(f"_src_{f}" for f in sources)


def _col(frame: pl.DataFrame, name: str, default: str | None = None) -> pl.Expr:
    if name in frame.columns:
        return pl.col(name) if default is None else pl.col(name).fill_null(default)
    return pl.lit(default, dtype=pl.String)


def _duplicates(frame: pl.DataFrame, keys: list[str], file: str, log: ProblemLog, what: str) -> pl.DataFrame:
    """Log and drop second rows with the same key. A hash of the key answers "none" quickly for big tables."""
    if frame.height < 2:
        return frame
    # a key the same in every row (a condition the table does not have) need not be hashed; every key is
    # asked in one pass
    constant = frame.select(((pl.col(k) == pl.col(k).first()).all() & pl.col(k).first().is_not_null()).alias(k)
                            for k in keys).row(0)
    varying = [k for k, same in zip(keys, constant) if not same] or keys[:1]
    hashed = pl.lit(0, dtype=pl.UInt64)
    for seed, key in enumerate(varying):
        hashed = hashed.xor(pl.col(key).fill_null("").hash(seed=seed + 1))
    if frame.select(hashed.n_unique()).item() == frame.height:
        return frame
    dup = pl.struct(keys).is_duplicated() & ~pl.struct(keys).is_first_distinct()
    first = frame.filter(dup)
    if first.height:
        for row in first.head(log.limit).iter_rows(named=True):
            ident = ", ".join(f"{k}={row[k]!r}" for k in keys)
            log.add(file, row[LINE], ",".join(keys), f"<a second row with {ident}>", f"one {what} per key")
        return frame.filter(~dup)
    return frame


def _first_rows(typed: pl.DataFrame) -> pl.DataFrame:
    """Each stimulus id's first row of the table (its line, id, sort key and any label or split), in the table's
    order: the stimuli a results table names. A row a builder drops as a second row of one key has the id of a
    row before it, so the first rows are the same before and after that."""
    exprs = [pl.col("stimulus").alias("external_id")]
    if "label" in typed.columns:
        exprs.append(pl.col("label").alias("ground_truth"))
    if "split" in typed.columns:
        exprs.append(pl.col("split"))
    firsts = typed.select(pl.col(LINE), *exprs).filter(pl.col("external_id").is_first_distinct())
    return firsts.with_columns(natural_keys(firsts.get_column("external_id")).alias("sort_key"))


@contextmanager
def _first_rows_beside(typed: pl.DataFrame) -> Iterator[Future[pl.DataFrame]]:
    """`_first_rows(typed)`, worked out on a thread of its own while the block runs (and waited for when it
    ends): polars finds first occurrences on one core, so the other checks of a large table use the second
    meanwhile, and the new stimuli's sort keys are ready before the write begins."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(_first_rows, typed)


def _stimuli_for(plan: ImportPlan, firsts: pl.DataFrame, mapping: dict[str, str], file: str,
                 log: ProblemLog) -> None:
    """The plan's stimuli: the first rows (`_first_rows`) of the ids a results table names."""
    # kind and the other fields stay empty: a results table does not say what its stimuli are
    _add(plan, "stimuli", firsts, mapping, file, log)
    stimuli = plan.frames["stimuli"]
    if plan.values_checked.get("stimuli") is stimuli:
        # no id was left out: every id of the table is a stimulus of the plan, so every row the plan took from
        # the table names one
        for table in REFERRING:
            if table in plan.frames:
                plan.described_by[table] = (plan.frames[table], stimuli)


def _correct(typed: pl.DataFrame) -> pl.Expr | pl.Series:
    """The table's own correctness column; without one, whether the answer equals the row's label by
    `same_answers` (null when either is missing)."""
    if "correct" in typed.columns:
        return pl.col("correct")
    if "label" in typed.columns and "answer" in typed.columns:
        return same_answers(typed.get_column("answer"), typed.get_column("label"))
    return pl.lit(None, dtype=pl.Boolean)


def _run_key(typed: pl.DataFrame) -> list[pl.Expr]:
    return [pl.col("model"), _col(typed, "modality", "").alias("modality"),
            _col(typed, "prompt", "").alias("prompt_setting"), _col(typed, "vision", "").alias("vision_mode"),
            pl.lit("").alias("context")]


def _predictions(plan: ImportPlan, typed: pl.DataFrame, mapping: dict[str, str], options: ImportOptions,
                 file: str, log: ProblemLog) -> None:
    with _first_rows_beside(typed) as firsts:
        typed = typed.with_columns(_run_key(typed))
        typed = _duplicates(typed, ["stimulus", "model", "modality", "prompt_setting", "vision_mode"], file, log,
                            "prediction")
        plan.unique_checked.add("predictions")
        correct = _correct(typed)
        _add(plan, "predictions", typed.select(
            pl.col(LINE), pl.col("stimulus"), pl.col("model"), "modality", "prompt_setting", "vision_mode",
            "context", _col(typed, "raw").alias("raw_output"), _col(typed, "answer").alias("answer"),
            correct.alias("correct"),
            (pl.col("latency_s") if "latency_s" in typed.columns else pl.lit(None, dtype=pl.Float64))
            .alias("latency_s")), mapping, file, log)
    _stimuli_for(plan, firsts.result(), mapping, file, log)


def _judgments(plan: ImportPlan, typed: pl.DataFrame, mapping: dict[str, str], options: ImportOptions,
               file: str, log: ProblemLog) -> None:
    # without a criterion column, the score column's own name says what was judged
    criterion = _col(typed, "criterion", mapping.get("score", "score"))
    with _first_rows_beside(typed) as firsts:
        typed = typed.with_columns(*_run_key(typed), _col(typed, "judge", "").alias("judge"),
                                   criterion.alias("criterion"))
        typed = _duplicates(typed, ["stimulus", "model", "modality", "prompt_setting", "vision_mode", "judge",
                                    "criterion"], file, log, "judgment")
        scale = options.extra.get("scale_max")
        _add(plan, "judgments", typed.select(
            LINE, "stimulus", "model", "modality", "prompt_setting", "vision_mode", "context", "judge", "criterion",
            (pl.col("score") if "score" in typed.columns else pl.lit(None, dtype=pl.Float64)).alias("score"),
            pl.lit(float(scale) if scale is not None else None, dtype=pl.Float64).alias("scale_max"),
            _col(typed, "rationale").alias("rationale")), mapping, file, log)
        if {"answer", "raw"} & mapping.keys():
            _add(plan, "predictions", typed.unique(subset=["stimulus", "model", "modality", "prompt_setting",
                                                           "vision_mode"], keep="first", maintain_order=True).select(
                LINE, "stimulus", "model", "modality", "prompt_setting", "vision_mode", "context",
                _col(typed, "raw").alias("raw_output"), _col(typed, "answer").alias("answer")), mapping, file, log)
    _stimuli_for(plan, firsts.result(), mapping, file, log)


def _human_ratings(plan: ImportPlan, typed: pl.DataFrame, mapping: dict[str, str], options: ImportOptions,
                   file: str, log: ProblemLog) -> None:
    condition = _col(typed, "modality", "")
    if "prompt" in typed.columns:
        condition = pl.concat_str([condition, pl.col("prompt").fill_null("")], separator=" ").str.strip_chars()
    with _first_rows_beside(typed) as firsts:
        typed = typed.with_columns(condition.alias("condition"))
        typed = _duplicates(typed, ["stimulus", "rater", "condition"], file, log, "rating")
        correct = _correct(typed)
        _add(plan, "human_ratings", typed.select(
            LINE, "stimulus", "rater", "condition", _col(typed, "answer").alias("answer"), correct.alias("correct"),
            (pl.col("response_time_s") if "response_time_s" in typed.columns
             else pl.lit(None, dtype=pl.Float64)).alias("response_time_s")), mapping, file, log)
    _stimuli_for(plan, firsts.result(), mapping, file, log)


def _with_ids(typed: pl.DataFrame) -> pl.DataFrame:
    if "stimulus" in typed.columns:
        return typed
    return typed.with_columns(pl.format("row{}", pl.col(LINE)).alias("stimulus"))


def _stimuli(plan: ImportPlan, typed: pl.DataFrame, mapping: dict[str, str], options: ImportOptions,
             file: str, log: ProblemLog) -> None:
    typed = _with_ids(typed)
    typed = _report(typed, pl.col("stimulus").is_null(), "stimulus", "stimulus", file, log, "a stimulus id")
    typed = _duplicates(typed, ["stimulus"], file, log, "stimulus")
    _add(plan, "stimuli", typed.select(
        LINE, pl.col("stimulus").alias("external_id"),
        _col(typed, "label").alias("ground_truth"), _col(typed, "split").alias("split"),
        _col(typed, "text").alias("text")), mapping, file, log)


def _segments(plan: ImportPlan, typed: pl.DataFrame, mapping: dict[str, str], options: ImportOptions,
              file: str, log: ProblemLog) -> None:
    typed = _with_ids(typed)
    typed = _report(typed, pl.col("stimulus").is_null(), "stimulus", "stimulus", file, log, "a stimulus id")
    _add(plan, "segments", typed.select(
        LINE, "stimulus", (pl.int_range(pl.len()).over("stimulus")).cast(pl.Int32).alias("ord"),
        _col(typed, "speaker").alias("speaker"),
        (pl.col("start_s") if "start_s" in typed.columns else pl.lit(None, dtype=pl.Float64)).alias("start_s"),
        (pl.col("end_s") if "end_s" in typed.columns else pl.lit(None, dtype=pl.Float64)).alias("end_s"),
        _col(typed, "text").alias("text")), mapping, file, log)
    _stimuli_for(plan, _first_rows(typed), mapping, file, log)


def media_role(path: str) -> str:
    """The media role a file's extension suggests for a generic stimulus."""
    suffix = Path(path).suffix.lower()
    if suffix in _AUDIO:
        return "audio"
    if suffix in _VIDEO:
        return "video"
    if suffix in _IMAGE:
        return "image:group"
    return "file"


def _media(plan: ImportPlan, typed: pl.DataFrame, root: Path, options: ImportOptions, file: str,
           log: ProblemLog) -> None:
    pairs = _with_ids(typed).select("stimulus", "media", LINE).drop_nulls(["media"]).unique(
        subset=["stimulus", "media"], keep="first", maintain_order=True)
    rows, missing = [], 0
    for stimulus, relative, line in pairs.iter_rows():
        check_cancel(options)
        resolved = resolve_media(root, relative, options.allow_outside_root, log, file, line)
        if resolved is None:
            continue
        stored, present = resolved
        missing += not present
        rows.append({"stimulus": stimulus, "role": media_role(stored), "path": stored, "present": present,
                     "offset_s": 0.0})
    if rows:
        plan.add("media", rows)
    if missing:
        plan.notes.append(f"{missing} media files missing")
