"""Pieces every importer shares: options, the problem log, safe media paths, JSON and JSON-lines files, and
the annotation sidecar (tables are read by `storage.tables`)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from storage.errors import ImportCancelled, ImportFailed, RowProblem, ThinsliceError
from storage.files import HAND_WRITTEN, Limit, open_regular, read_regular_bytes, utf16_hint
from storage.importers.plan import ImportPlan
from storage.validation import label_problems

ShouldCancel = Callable[[], bool]

# Fields a source column can be mapped to with --map FIELD=COLUMN (one set for every file of a release).
MAP_FIELDS: dict[str, str] = {
    "stimulus": "the stimulus (clip, case, scene, task) id",
    "label": "ground-truth label of the stimulus",
    "model": "model name",
    "modality": "condition: text, audio, video ...",
    "answer": "the model's or rater's parsed answer",
    "raw": "the raw output text",
    "correct": "whether the answer was correct (true/false, 1/0)",
    "rater": "human rater id",
    "judge": "judge name",
    "criterion": "judged criterion (C1..C4, VES, Expr ...)",
    "score": "judge score",
    "rationale": "judge's reason",
    "text": "transcript or stimulus text",
    "speaker": "speaker of a transcript segment",
    "start": "start time in seconds",
    "end": "end time in seconds",
    "media": "media file path (relative to the dataset root)",
    "split": "data split",
    "prompt": "prompt setting (P1/P2/P3, no/basic/enhance)",
    "vision": "vision mode (VV/DV)",
    "latency": "response latency in seconds",
    "response_time": "human response time in seconds",
    "site": "recording site (FriendBench, Seamless vendor)",
    "gender": "gender composition of a dyad (same/mixed)",
    "part": "early or late part of the conversation",
    "relationship_detail": "relationship detail (Seamless)",
    "topic": "conversation topic",
    "organisation": "the model's organisation",
    "duration": "clip duration in seconds",
    "video_a": "participant A's video file",
    "video_b": "participant B's video file",
    "audio_a": "participant A's audio file",
    "audio_b": "participant B's audio file",
    "transcript": "transcript file",
}


@dataclass
class ImportOptions:
    dataset_name: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)   # FIELD -> source column
    skip_bad: bool = False
    allow_outside_root: bool = False
    extra: dict[str, Any] = field(default_factory=dict)     # importer-specific, e.g. window_s for seamless
    # stated values of stored stimuli that differ (truth, title, media ...) replace the stored ones; without
    # it such an import is refused and the differences listed
    replace_stimuli: bool = False
    should_cancel: ShouldCancel = lambda: False


class Importer(Protocol):
    kind: str
    title: str
    version: int

    def detect(self, path: Path) -> float:
        """Confidence 0..1 that `path` (a file or folder) is this importer's format."""

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        """Read `path` into a plan without writing anything; raise `ImportFailed` for bad input."""


class ProblemLog:
    """Collects bad rows: with skip_bad they are listed and skipped, otherwise the first ones fail the import."""

    def __init__(self, skip_bad: bool, limit: int = 50) -> None:
        self.skip_bad = skip_bad
        self.limit = limit
        self.problems: list[RowProblem] = []

    def add(self, file: str, line: int | None, field_name: str | None, found: Any, expected: str) -> None:
        shown = found if isinstance(found, str) and found.startswith("<") else repr(found)
        if isinstance(shown, str) and len(shown) > 80:
            shown = shown[:77] + "..."
        self.problems.append(RowProblem(file, line, field_name, shown, expected))
        if not self.skip_bad and len(self.problems) >= self.limit:
            raise ImportFailed(self.problems)

    def finish(self, plan: ImportPlan) -> None:
        """Fail unless skipping; when skipping, keep the list on the plan so it is reported."""
        if self.problems and not self.skip_bad:
            raise ImportFailed(self.problems)
        plan.problems.extend(self.problems)


def check_cancel(options: ImportOptions) -> None:
    if options.should_cancel():
        raise ImportCancelled()


def resolve_media(root: Path, relative: str, allow_outside_root: bool, log: ProblemLog, file: str,
                  line: int | None) -> tuple[str, bool] | None:
    """Resolve a media path against the dataset root.

    Returns (path to store, present) or None after logging a problem when the path escapes the root.
    Stored paths are relative to the root when inside it; a missing file is recorded, not fatal.
    """
    root = root.resolve()
    candidate = Path(relative)
    full = (candidate if candidate.is_absolute() else root / candidate).resolve()
    try:
        stored = str(full.relative_to(root))
    except ValueError:
        if not allow_outside_root:
            log.add(file, line, "media", relative,
                    f"a path inside the dataset root {root} (use --allow-outside-root to accept it)")
            return None
        stored = str(full)
    return stored, full.is_file()


class JsonRefused(ThinsliceError, ValueError):
    """Text that parses as JSON but cannot be kept: nested past the parser's depth, or a lone surrogate."""

    def __init__(self, why: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(why)


# only a \\u escape can bring a surrogate into text decoded from UTF-8
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def loads_json(text: str) -> Any:
    """`json.loads`, refusing with `JsonRefused` what no store can hold: nesting too deep for the parser and
    escapes that leave a lone surrogate (no character, so no UTF-8 text)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonRefused("nesting deeper than the parser allows") from None
    escape = _SURROGATE_ESCAPE.search(text)
    if escape:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, RecursionError):
            raise JsonRefused(f"an escape {escape.group(0)} that is half a character (a lone surrogate)",
                              text.count("\n", 0, escape.start()) + 1) from None
    return value


def read_json(path: Path, log_name: str | None = None) -> Any:
    """Read a JSON file (a regular file only); a syntax or encoding error names the file, line and column."""
    name = log_name or path.name
    try:
        raw = read_regular_bytes(path)
    except OSError as exc:
        raise ImportFailed(RowProblem(name, None, None, f"<unreadable: {exc.strerror}>", "a readable file"))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ImportFailed(RowProblem(name, line, None, f"<byte 0x{raw[exc.start]:02x} that is not UTF-8"
                                      f"{utf16_hint(raw)}>", "UTF-8 text"))
    try:
        return loads_json(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(RowProblem(name, exc.lineno, None, f"<invalid JSON: {exc.msg} at column {exc.colno}>",
                                      "well-formed JSON"))
    except JsonRefused as exc:
        raise ImportFailed(RowProblem(name, exc.line, None, f"<{exc}>", "JSON of text and values a store can hold"))


def read_jsonl(path: Path, log: ProblemLog, name: str | None = None,
               max_bytes: Limit = HAND_WRITTEN) -> list[tuple[int, dict[str, Any]]]:
    """Records of a JSON-lines file (a regular file only) with their line numbers; bad lines go to the log.
    A UTF-16 file is refused whole, at its first line, as the table reader refuses one. Problems name the
    file `name` (default: its file name). `max_bytes` as in `storage.files.check_regular` (None for a table
    a program wrote)."""
    name = name or path.name
    records = []
    with open_regular(path, max_bytes) as fh:
        for number, raw in enumerate(fh, start=1):
            if number == 1 and utf16_hint(raw):
                raise ImportFailed(RowProblem(name, 1, None, f"<byte 0x{raw[0]:02x} that is not UTF-8"
                                              f"{utf16_hint(raw)}>", "UTF-8 text"))
            if not raw.strip():
                continue
            try:
                value = loads_json(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
            except UnicodeDecodeError:
                log.add(name, number, None, "<bytes that are not UTF-8>", "UTF-8 text")
                continue
            except json.JSONDecodeError as exc:
                log.add(name, number, None, f"<invalid JSON: {exc.msg}>", "one JSON object per line")
                continue
            except JsonRefused as exc:
                log.add(name, number, None, f"<{exc}>", "JSON of text and values a store can hold")
                continue
            if not isinstance(value, dict):
                log.add(name, number, None, f"<{type(value).__name__}>", "a JSON object")
                continue
            records.append((number, value))
    return records


# bytes that make a JSON-lines file one for `read_jsonl`'s line-by-line reading: a control character other
# than the line break (a tab, a carriage return: text the line reader judges itself)
_CONTROL_BYTES = bytes(range(32)).replace(b"\n", b"")
# ... and where these texts are: a word the table reader takes as a number and `json` does not (Inf) or reads
# its own way (NaN), an escape that may be half a character (a surrogate's); looked for only once the cheaper
# search for their first letters finds them
_LINE_BY_LINE = {b"Inf": re.compile(rb"[:,\[]\s*-?Inf"), b"NaN": re.compile(rb"[:,\[]\s*-?NaN"),
                 b"\\u": re.compile(rb"\\u[dD][89a-fA-F]")}
# brackets past one a line that may nest deeper than `json` can follow, which `loads_json` refuses line by line
_PLAIN_NESTING = 500


def read_jsonl_table(path: Path, max_bytes: Limit = HAND_WRITTEN) -> Any:
    """The records of a JSON-lines file as one Arrow table, row i from line i + 1, read in one pass by
    pyarrow; or None when the file is not plainly one JSON object per line, so that `read_jsonl` reads it
    and names each bad line. Plain: UTF-8 without a byte-order mark, every line one object on its own, from
    `{` to `}` (no blank line, no white space around it), none of `_CONTROL_BYTES` and `_LINE_BY_LINE`, no
    deep nesting, and fields of one kind down the file. Such a file gives the values `json` gives: a line
    break falls between a `}` and a `{`, which no JSON value holds, so no record spans two lines, and the
    row count shows there is one a line."""
    import pyarrow as pa
    import pyarrow.json as pj

    data = read_regular_bytes(path, max_bytes)
    body = data[:-1] if data.endswith(b"\n") else data
    lines = body.count(b"\n") + 1
    if (not body.startswith(b"{") or not body.endswith(b"}") or body.count(b"}\n{") != lines - 1
            or len(data.translate(None, _CONTROL_BYTES)) != len(data)
            or any(t in data and found.search(data) for t, found in _LINE_BY_LINE.items())
            or data.count(b"{") + data.count(b"[") - lines > _PLAIN_NESTING):
        return None
    try:
        data.decode("utf-8")
        table = pj.read_json(pa.py_buffer(data), parse_options=pj.ParseOptions(newlines_in_values=False))
    except (UnicodeDecodeError, pa.ArrowInvalid):
        return None
    return table if table.num_rows == lines else None


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def json_values(value: pl.Expr) -> pl.Expr:
    """Each value of a column of texts, whole numbers or booleans as `dumps` writes it (a null as `null`), in
    one pass: polars escapes text exactly as Python's `json` does without `ensure_ascii`."""
    return pl.struct(value.alias("v")).struct.json_encode().str.slice(5).str.head(-1)


def json_objects(members: dict[str, pl.Expr]) -> pl.Expr:
    """Per row, the object `dumps` writes of the members whose JSON text (as `json_values` makes it) is not
    null: so a row's meta is built by polars, not by a Python dict per row."""
    parts = [pl.lit(dumps(key) + ": ") + members[key] for key in sorted(members)]
    if not parts:
        return pl.lit("{}")
    return pl.concat_str([pl.lit("{"), pl.concat_str(parts, separator=", ", ignore_nulls=True), pl.lit("}")])


ANNOTATION_SIDECAR = Path("annotations") / "thinslice_annotations.jsonl"
_SIDECAR_FIELDS = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s", "value", "note",
                   "media_role")


def read_annotation_sidecar(root: Path, plan: ImportPlan, log: ProblemLog) -> None:
    """Annotations exported by Thinslice next to a dataset (`annotations/thinslice_annotations.jsonl`).

    Each line: {stimulus, annotator, label_set, label, start_s, end_s, value, note, media_role}; start_s and
    end_s are null for a whole-stimulus label.
    """
    path = root / ANNOTATION_SIDECAR
    if not path.is_symlink() and not path.exists():
        return   # a link to a device or a folder is refused by the reader, not passed over
    rows, lines = [], []
    for line, record in read_jsonl(path, log):
        missing = [k for k in ("stimulus", "annotator", "label_set") if not record.get(k)]
        if missing:
            log.add(str(ANNOTATION_SIDECAR), line, missing[0], "<missing>", "a non-empty value")
            continue
        rows.append({k: record.get(k) for k in _SIDECAR_FIELDS})
        lines.append(line)
    # the one value rule of labels, here with each bad one's line
    bad = label_problems(rows)
    for index, field_name, found, expected in bad:
        log.add(str(ANNOTATION_SIDECAR), lines[index], field_name, f"<{found}>", expected)
    refused = {index for index, *_ in bad}
    rows = [row for index, row in enumerate(rows) if index not in refused]
    if rows:
        plan.add("annotations", rows)
