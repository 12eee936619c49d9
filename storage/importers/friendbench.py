"""FriendBench: are the two people in a 20 s clip familiar with each other or strangers?

Two release layouts are read:
- current: `validation/data/metadata.csv`, `validation/ratings/human_ratings.csv`,
  `validation/ratings/model_predictions.csv`, `validation/baselines/results.csv` (per-model aggregates);
- older: `val/metadata.jsonl` and `val/human_responses.jsonl` (optionally `val/model_predictions.jsonl`).
Column names are not published, so every table is sniffed (`storage.importers.sniff`); the mapping used is
kept on the plan and `options.mapping` (FIELD=COLUMN, one mapping for every file) corrects it.

Media come from metadata columns when present (`video_a`, `video_b`, `audio_a`, `audio_b`, `transcript`,
paths relative to the release root or the split folder); otherwise they are found by clip id in file and
folder names, e.g. `validation/media/<clip>/A.mp4`, `<clip>_B.flac`, `<clip>/transcript.json`, with the
participant read from an `A`/`B` (`p1`/`p2`, `left`/`right`) word in the name.
Transcripts are JSON: a list of segments, `{"segments": [...]}` or Seamless' `{"metadata:transcript": [...]}`.

Truth and human answers are normalised to `familiar`/`stranger` (friend, friends, 1 / stranger, strangers, 0),
and human answers scored against the truth; conditions to `text`/`audio`/`video`. A model's answer is kept as
the file gives it (with those spellings normalised) beside its raw output: the verdict in its prose and its
correctness are read by `app.benchmarks.friendbench` when the plan is interpreted.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import (ImportOptions, ProblemLog, check_cancel, dumps, read_annotation_sidecar,
                                      read_json, resolve_media)
from storage.importers.label_sets import add_label_set, bundled_label_set
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.seamless import (AUDIO_SUFFIXES, LABEL_SET_FILES, VIDEO_SUFFIXES, parse_transcript,
                                        probe_media, segment_rows, transcript_text)
from storage.importers.sniff import Guess, require_fields, sniff_frame, unit_scale
from storage.tables import TABLE_SUFFIXES, Table, read_table
from storage.validation import TIMES_EXPECTED
from storage.importers.words import FALSE_WORDS, FAMILIAR_WORDS, MODALITY_WORDS, STRANGER_WORDS, TRUE_WORDS

GENDER_WORDS = {
    "same": {"same", "same-gender", "same_gender", "same gender", "same-sex", "homogeneous", "mm", "ff", "m-m",
             "f-f", "male-male", "female-female", "m/m", "f/f"},
    "mixed": {"mixed", "mixed-gender", "mixed_gender", "mixed gender", "cross", "different", "mf", "fm", "m-f",
              "f-m", "male-female", "female-male", "m/f", "f/m"},
}
PART_WORDS = {"early": {"early", "beginning", "begin", "start", "first"},
              "late": {"late", "end", "ending", "last", "second"}}
TRANSCRIPT_SUFFIXES = (".json", ".jsonl")
_A_MARKERS = {"a", "pa", "p1", "left", "spka", "speakera", "participanta"}
_B_MARKERS = {"b", "pb", "p2", "right", "spkb", "speakerb", "participantb"}
_SWAP = {"a": "b", "A": "B", "pa": "pb", "PA": "PB", "p1": "p2", "P1": "P2", "left": "right"}
_TABLE_FOLDERS = {"data", "ratings", "baselines"}

FIELD_HELP = {"stimulus": "the clip id", "label": "familiar/stranger truth", "rater": "the rater id",
              "answer": "the familiar/stranger answer", "model": "the model name",
              "raw": "the model's raw output"}
METADATA_FIELDS = ["stimulus", "label", "site", "gender", "part", "relationship_detail", "topic", "split",
                   "start", "end", "duration", "video_a", "video_b", "audio_a", "audio_b", "transcript", "media",
                   "text"]
RATING_FIELDS = ["stimulus", "rater", "modality", "answer", "correct", "response_time", "label"]
PREDICTION_FIELDS = ["stimulus", "model", "organisation", "modality", "prompt", "answer", "raw", "correct",
                     "latency", "label"]
RESULT_FIELDS = ["model", "organisation", "modality", "prompt", "criterion", "score"]


def normalise_familiarity(value: Any) -> str | None:
    """'familiar' or 'stranger' for the usual spellings (friend/friends/1, stranger/strangers/0), else None."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in FAMILIAR_WORDS:
        return "familiar"
    if text in STRANGER_WORDS:
        return "stranger"
    return None


def normalise_modality(value: Any) -> str | None:
    """'text', 'audio' or 'video' (video keeps the sound) for the usual spellings, else None."""
    text = str(value or "").strip().lower()
    return next((name for name, words in MODALITY_WORDS.items() if text in words), None)


def _pick(words: Mapping[str, set[str]], value: str | None) -> str | None:
    if value is None:
        return None
    text = value.strip().lower()
    return next((name for name, options in words.items() if text in options), value.strip())


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def _scalar(value: str) -> float | str:
    number = _number(value)
    return number if number is not None and re.fullmatch(r"[-+0-9.eE]+", value.strip()) else value


@dataclass
class _Release:
    root: Path            # media paths are relative to this folder
    base: Path            # validation/ or val/
    layout: str
    metadata: Path
    ratings: Path | None
    predictions: Path | None
    results: Path | None


def _first(folder: Path, stems: list[str]) -> Path | None:
    for stem in stems:
        for suffix in TABLE_SUFFIXES:
            candidate = folder / f"{stem}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def _locate(path: Path) -> _Release | None:
    path = Path(path)
    if path.is_file():
        path = path.parent.parent if path.parent.name == "data" else path.parent
        if path.name not in ("validation", "val"):
            path = path.parent if path.parent.name in ("validation", "val") else path
        candidates = [path]
    else:
        candidates = [path / "validation", path / "val", path]
    for base in candidates:
        metadata = _first(base / "data", ["metadata"]) or _first(base, ["metadata"])
        if metadata is None:
            continue
        root = base.parent if base.name in ("validation", "val") else base
        return _Release(
            root=root, base=base, layout="val" if metadata.parent == base else "validation", metadata=metadata,
            ratings=_first(base / "ratings", ["human_ratings", "human_responses"])
            or _first(base, ["human_ratings", "human_responses"]),
            predictions=_first(base / "ratings", ["model_predictions", "predictions"])
            or _first(base, ["model_predictions", "predictions"]),
            results=_first(base / "baselines", ["results"]) or _first(base, ["results"]))
    return None


class _MediaIndex:
    """Files under the release root that name a clip id in a folder or at the start of the file name."""

    def __init__(self, root: Path, base: Path) -> None:
        self.root = root
        self.by_token: dict[str, list[Path]] = {}
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and not (here == base and d in _TABLE_FOLDERS))
            for name in sorted(files):
                file = here / name
                if file.suffix.lower() not in VIDEO_SUFFIXES + AUDIO_SUFFIXES + TRANSCRIPT_SUFFIXES:
                    continue
                rel = file.relative_to(root)
                tokens = set(rel.parts[:-1])
                pieces = re.split(r"([_\-. ])", file.stem)
                tokens.update("".join(pieces[:i]) for i in range(1, len(pieces) + 1, 2))
                for token in tokens:
                    self.by_token.setdefault(token, []).append(file)

    def find(self, clip: str) -> dict[str, list[Path]]:
        """Files of one clip by role: video:A/B, audio:A/B (or video/audio), transcript, transcript:A/B."""
        found: dict[str, list[Path]] = {}
        for file in self.by_token.get(clip, []):
            suffix = file.suffix.lower()
            kind = "video" if suffix in VIDEO_SUFFIXES else "audio" if suffix in AUDIO_SUFFIXES else "transcript"
            rest = str(file.relative_to(self.root).with_suffix("")).replace(clip, " ")
            words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", rest) if w}
            a, b = bool(words & _A_MARKERS), bool(words & _B_MARKERS)
            if a and b:
                continue
            role = f"{kind}:A" if a else f"{kind}:B" if b else kind
            found.setdefault(role, []).append(file)
        # two unmarked files of a kind (e.g. Seamless-named `<id>_P0059A.mp4`, `<id>_P0060.mp4`): A sorts first
        for kind in ("video", "audio", "transcript"):
            files = found.get(kind, [])
            if len(files) == 2 and f"{kind}:A" not in found and f"{kind}:B" not in found:
                del found[kind]
                found[f"{kind}:A"], found[f"{kind}:B"] = [min(files)], [max(files)]
        return found


def _swap_marker(path: Path) -> Path | None:
    """The B sibling of a participant-A file (`A.mp4` -> `B.mp4`, `clip_p1.wav` -> `clip_p2.wav`)."""
    pattern = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(sorted(_SWAP, key=len, reverse=True)) + r")(?![A-Za-z0-9])")
    swapped, count = pattern.subn(lambda m: _SWAP[m.group(1)], path.stem)
    return path.with_name(swapped + path.suffix) if count == 1 else None


class FriendBenchImporter:
    kind = "friendbench"
    title = "FriendBench (familiar or strangers)"
    version = 1

    def detect(self, path: Path) -> float:
        release = _locate(Path(path))
        if release is None:
            return 0.0
        named = release.base.name in ("validation", "val")
        if release.ratings or release.predictions:
            return 0.95 if named else 0.5
        # a lone metadata table is common: only the release's folder names make it likely FriendBench
        return 0.6 if named else 0.1

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        release = _locate(Path(path).resolve())
        if release is None:
            raise ImportFailed(RowProblem(str(path), None, None,
                                          "<no validation/data/metadata.csv or val/metadata.jsonl>",
                                          "a FriendBench release folder"))
        return _Planner(release, options).run()


class _Planner:
    """One import: reads the tables in order (metadata first: later tables refer to its clips)."""

    def __init__(self, release: _Release, options: ImportOptions) -> None:
        self.release = release
        self.root = release.root
        self.options = options
        self.log = ProblemLog(options.skip_bad)
        synthetic = (release.root / "SYNTHETIC.md").is_file()
        name = options.dataset_name or f"FriendBench {release.root.resolve().name}"
        self.plan = ImportPlan(DatasetInfo(name, "friendbench", release.root, str(release.root), synthetic,
                                           {"layout": release.layout}),
                               importer=FriendBenchImporter.kind, importer_version=FriendBenchImporter.version)
        self.truth: dict[str, str] = {}
        self.skipped: set[str] = set()
        self.index: _MediaIndex | None = None
        self.missing_media = 0
        self.no_media: list[str] = []

    def run(self) -> ImportPlan:
        r = self.release
        self.metadata(self.table(r.metadata))
        if not self.truth and not self.skipped:
            raise ImportFailed(RowProblem(str(r.metadata.relative_to(self.root)), None, None, "<no clip rows>",
                                          "one row per clip"))
        if r.ratings:
            self.ratings(self.table(r.ratings))
        if r.predictions:
            self.predictions(self.table(r.predictions))
        if r.results:
            self.results(self.table(r.results))
        if self.missing_media:
            self.plan.notes.append(f"{self.missing_media} media files missing")
        if self.no_media:
            self.plan.notes.append(f"{len(self.no_media)} clips without media files: {', '.join(self.no_media[:5])}")
        for file_name in LABEL_SET_FILES:
            add_label_set(self.plan, bundled_label_set(file_name))
        read_annotation_sidecar(self.root, self.plan, self.log)
        self.log.finish(self.plan)
        return self.plan

    # -- shared -------------------------------------------------------------------------------------------
    def table(self, path: Path) -> Table:
        return read_table(path, str(path.relative_to(self.root)), self.log)

    def sniff(self, table: Table, fields: list[str], required: list[str]) -> dict[str, Guess]:
        guesses = sniff_frame(table.data, fields=fields, overrides=self.options.mapping)
        require_fields(table, guesses, required, FIELD_HELP)
        short = Path(table.name).name
        for field_name, guess in guesses.items():
            known = self.plan.mapping.get(field_name)
            if known is None:
                self.plan.mapping[field_name] = guess.column
            elif known != guess.column:
                self.plan.mapping[f"{field_name} ({short})"] = guess.column
        return guesses

    @staticmethod
    def value(row: Mapping[str, str | None], guesses: Mapping[str, Guess], field_name: str) -> str | None:
        guess = guesses.get(field_name)
        value = row.get(guess.column) if guess else None
        return value.strip() if value is not None and value.strip() else None

    def clip_of(self, table: Table, line: int, row: Mapping[str, str | None], g: Mapping[str, Guess]) -> str | None:
        clip = self.value(row, g, "stimulus")
        if clip in self.truth:
            return clip
        if clip not in self.skipped:
            self.log.add(table.name, line, g["stimulus"].column, clip, "a clip id listed in the metadata")
        return None

    def flag(self, table: Table, line: int, row, g, field_name: str) -> tuple[bool, bool | None]:
        """(ok, value) of a true/false column; a value that is not a boolean is logged."""
        raw = self.value(row, g, field_name)
        if raw is None:
            return True, None
        if raw.lower() in TRUE_WORDS:
            return True, True
        if raw.lower() in FALSE_WORDS:
            return True, False
        self.log.add(table.name, line, g[field_name].column, raw, "true/false or 1/0")
        return False, None

    def seconds(self, table: Table, line: int, row, g, field_name: str) -> tuple[bool, float | None]:
        raw = self.value(row, g, field_name)
        if raw is None:
            return True, None
        number = _number(raw)
        if number is None or number < 0:
            self.log.add(table.name, line, g[field_name].column, raw, "a number of seconds >= 0")
            return False, None
        return True, number * unit_scale(g[field_name].column)

    def condition(self, table: Table, line: int, row, g) -> str | None:
        raw = self.value(row, g, "modality")
        if raw is None:
            return ""
        modality = normalise_modality(raw)
        if modality is None:
            self.log.add(table.name, line, g["modality"].column, raw, "text, audio or video")
        return modality

    # -- metadata and media --------------------------------------------------------------------------------
    def metadata(self, table: Table) -> None:
        g = self.sniff(table, METADATA_FIELDS, ["stimulus", "label"])
        used = {guess.column for guess in g.values()}
        default_split = self.release.base.name if self.release.base != self.root else None
        stimuli, media, segments = [], [], []
        for line, row in table.rows():
            check_cancel(self.options)
            clip = self.value(row, g, "stimulus")
            if clip is None or clip in self.truth or clip in self.skipped:
                self.log.add(table.name, line, g["stimulus"].column, clip,
                             "a clip id" if clip is None else "a clip id not listed before")
                continue
            truth = normalise_familiarity(self.value(row, g, "label"))
            if truth is None:
                self.log.add(table.name, line, g["label"].column, row.get(g["label"].column),
                             "familiar or stranger (also friend(s)/1, stranger(s)/0)")
                self.skipped.add(clip)
                continue
            ok_start, start = self.seconds(table, line, row, g, "start")
            ok_end, end = self.seconds(table, line, row, g, "end")
            ok_dur, duration = self.seconds(table, line, row, g, "duration")
            if ok_start and ok_end and start is not None and end is not None and end < start:
                # a clip ends at or after it starts, as every interval the store holds (`storage.validation`)
                self.log.add(table.name, line, f"{g['start'].column}/{g['end'].column}", f"{start:g}..{end:g}",
                             TIMES_EXPECTED)
                ok_end = False
            if not (ok_start and ok_end and ok_dur):
                self.skipped.add(clip)
                continue
            if duration is None and start is not None and end is not None:
                duration = end - start
            self.truth[clip] = truth
            self.plan.origins[clip] = (table.name, line, None)   # where a later refusal points
            meta: dict[str, Any] = {
                "site": self.value(row, g, "site"),
                "gender_composition": _pick(GENDER_WORDS, self.value(row, g, "gender")),
                "part": _pick(PART_WORDS, self.value(row, g, "part")),
                "relationship_detail": self.value(row, g, "relationship_detail"),
                "topic": self.value(row, g, "topic"),
                "source_start_s": start, "duration_s": duration,
            }
            # columns nobody mapped are kept as they are, so they can still be filtered on
            meta.update({c: _scalar(v) for c, v in row.items() if c not in used and v is not None and v.strip()})
            clip_media, clip_segments, text = self.media_of(table, line, row, g, clip, start, duration)
            media.extend(clip_media)
            segments.extend(segment_rows(clip, clip_segments))
            topic = meta["topic"]
            stimuli.append({"external_id": clip, "kind": "dyad", "ground_truth": truth,
                            "split": self.value(row, g, "split") or default_split,
                            "title": f"{clip}: {topic}" if topic else clip,
                            "text": self.value(row, g, "text") or text,
                            "meta": dumps({k: v for k, v in meta.items() if v is not None})})
        self.plan.add("stimuli", stimuli)
        self.plan.add("media", media)
        self.plan.add("segments", segments)

    def media_of(self, table: Table, line: int, row, g, clip: str, start: float | None,
                 duration: float | None) -> tuple[list[dict], list[dict], str | None]:
        """Media rows, transcript segments and transcript text of one clip."""
        given: dict[str, list[Path]] = {}
        text = None
        for field_name, role in (("video_a", "video:A"), ("video_b", "video:B"), ("audio_a", "audio:A"),
                                 ("audio_b", "audio:B"), ("media", None), ("transcript", "transcript")):
            value = self.value(row, g, field_name)
            if value is None:
                continue
            if field_name == "transcript" and not value.lower().endswith(TRANSCRIPT_SUFFIXES):
                text = value   # the transcript itself rather than a file
                continue
            path = self.locate_path(value)
            if role is None:
                suffix = path.suffix.lower()
                role = "video" if suffix in VIDEO_SUFFIXES else "audio" if suffix in AUDIO_SUFFIXES else "transcript"
            given.setdefault(role, []).append(path)
        if not given:
            if self.index is None:
                self.index = _MediaIndex(self.root, self.release.base)
            given = self.index.find(clip)
            for kind in ("video", "audio"):
                a, b = given.get(f"{kind}:A"), given.get(f"{kind}:B")
                if a and not b and (sibling := _swap_marker(a[0])):
                    given[f"{kind}:B"] = [sibling]
                elif b and not a and (sibling := _swap_marker(b[0])):
                    given[f"{kind}:A"] = [sibling]
        if not any(r.split(":")[0] in ("video", "audio") for r in given):
            self.no_media.append(clip)
        rows = []
        for role in sorted(r for r in given if not r.startswith("transcript")):
            file = sorted(given[role], key=lambda p: (VIDEO_SUFFIXES + AUDIO_SUFFIXES).index(p.suffix.lower())
                          if p.suffix.lower() in VIDEO_SUFFIXES + AUDIO_SUFFIXES else 99)[0]
            resolved = resolve_media(self.root, str(file), self.options.allow_outside_root, self.log,
                                     table.name, line)
            if resolved is None:
                continue
            stored, present = resolved
            self.missing_media += not present
            length, rate = probe_media(self.root / stored) if present else (None, None)
            # a file much longer than the clip is the source recording: the clip starts at its start time
            offset = start if (start is not None and length and duration and length > duration + 1.0) else 0.0
            rows.append({"stimulus": clip, "role": role, "path": stored, "present": present, "offset_s": offset,
                         "duration_s": duration if offset else (length or duration), "sample_rate": rate})
        segments = []
        for role in sorted(r for r in given if r.startswith("transcript")):
            speaker = role.split(":")[1] if ":" in role else None
            for file in given[role][:1]:
                segments.extend(self.transcript(table, line, file, speaker))
        if segments and text is None:
            text = transcript_text(sorted(segments, key=lambda s: s["start_s"]))
        return rows, segments, text

    def locate_path(self, value: str) -> Path:
        """A media path from a column: relative to the release root, else to the split folder."""
        candidate = Path(value)
        if candidate.is_absolute():
            return candidate
        for folder in (self.root, self.release.base, self.release.metadata.parent):
            if (folder / candidate).exists():
                return folder / candidate
        return self.root / candidate

    def transcript(self, table: Table, line: int, file: Path, speaker: str | None) -> list[dict]:
        resolved = resolve_media(self.root, str(file), self.options.allow_outside_root, self.log, table.name, line)
        if resolved is None:
            return []
        stored, present = resolved
        if not present:
            self.missing_media += 1
            return []
        name = stored
        try:
            data = read_json(self.root / stored, name)
        except ImportFailed as exc:
            for p in exc.problems:
                self.log.add(p.file, p.line, p.field, p.found, p.expected)
            return []
        return parse_transcript(data, name, self.log, default_speaker=speaker)

    # -- ratings, predictions, aggregates -------------------------------------------------------------------
    def ratings(self, table: Table) -> None:
        g = self.sniff(table, RATING_FIELDS, ["stimulus", "rater"])
        if "answer" not in g and "correct" not in g:
            require_fields(table, g, ["answer"], FIELD_HELP)
        rows, seen = [], set()
        for line, row in table.rows():
            check_cancel(self.options)
            clip = self.clip_of(table, line, row, g)
            rater = self.value(row, g, "rater")
            if clip is None:
                continue
            if rater is None:
                self.log.add(table.name, line, g["rater"].column, None, "a rater id")
                continue
            condition = self.condition(table, line, row, g)
            raw_answer = self.value(row, g, "answer")
            answer = normalise_familiarity(raw_answer)
            if raw_answer is not None and answer is None:
                self.log.add(table.name, line, g["answer"].column, raw_answer,
                             "familiar or stranger (also friend(s)/1, stranger(s)/0)")
                continue
            ok_flag, given_correct = self.flag(table, line, row, g, "correct")
            ok_rt, rt = self.seconds(table, line, row, g, "response_time")
            if condition is None or not ok_flag or not ok_rt:
                continue
            key = (clip, rater, condition)
            if key in seen:
                self.log.add(table.name, line, g["rater"].column, f"{rater} on {clip} ({condition or 'no condition'})",
                             "one rating per rater, clip and condition")
                continue
            seen.add(key)
            correct = answer == self.truth[clip] if answer else given_correct
            rows.append({"stimulus": clip, "rater": rater, "condition": condition, "answer": answer,
                         "correct": correct, "response_time_s": rt})
        self.plan.add("human_ratings", rows)

    def predictions(self, table: Table) -> None:
        g = self.sniff(table, PREDICTION_FIELDS, ["stimulus", "model"])
        if not {"answer", "raw", "correct"} & set(g):
            require_fields(table, g, ["answer", "raw"], FIELD_HELP)
        used = {guess.column for guess in g.values()}
        rows, models, seen = [], {}, set()
        for line, row in table.rows():
            check_cancel(self.options)
            clip = self.clip_of(table, line, row, g)
            model = self.value(row, g, "model")
            if clip is None:
                continue
            if model is None:
                self.log.add(table.name, line, g["model"].column, None, "a model name")
                continue
            condition = self.condition(table, line, row, g)
            ok_flag, given_correct = self.flag(table, line, row, g, "correct")
            ok_latency, latency = self.seconds(table, line, row, g, "latency")
            if condition is None or not ok_flag or not ok_latency:
                continue
            prompt = self.value(row, g, "prompt") or ""
            key = (clip, model, condition, prompt)
            if key in seen:
                self.log.add(table.name, line, g["model"].column, f"{model} on {clip} ({condition or 'no condition'})",
                             "one prediction per model, clip and condition")
                continue
            seen.add(key)
            raw = row.get(g["raw"].column) if "raw" in g else None
            given_answer = self.value(row, g, "answer")
            meta = {c: _scalar(v) for c, v in row.items() if c not in used and v is not None and v.strip()}
            models.setdefault(model, self.value(row, g, "organisation"))
            # the answer as the file spells it; the verdict in prose is read by app.benchmarks.friendbench
            rows.append({"stimulus": clip, "model": model, "modality": condition, "prompt_setting": prompt,
                         "vision_mode": "", "context": "", "raw_output": raw,
                         "answer": normalise_familiarity(given_answer) or given_answer, "correct": given_correct,
                         "latency_s": latency, "meta": dumps(meta) if meta else None})
        self.plan.add("predictions", rows)
        self.plan.add("models", [{"model": m, "organisation": o} for m, o in models.items()])

    def results(self, table: Table) -> None:
        g = self.sniff(table, RESULT_FIELDS, ["model"])
        long_form = "criterion" in g and "score" in g
        keys = {guess.column for f, guess in g.items() if f in ("model", "organisation", "modality", "prompt")}
        rows, models = [], {}
        for line, row in table.rows():
            model = self.value(row, g, "model")
            if model is None:
                self.log.add(table.name, line, g["model"].column, None, "a model name")
                continue
            raw_condition = self.value(row, g, "modality")
            group = "/".join(filter(None, [normalise_modality(raw_condition) or raw_condition,
                                           self.value(row, g, "prompt")]))
            models.setdefault(model, self.value(row, g, "organisation"))
            if long_form:
                metrics = {self.value(row, g, "criterion"): self.value(row, g, "score")}
            else:
                metrics = {c: v for c, v in row.items() if c not in keys}
            for metric, value in metrics.items():
                if metric is None or value is None or not value.strip():
                    continue
                number = _number(value)
                rows.append({"model": model, "source": table.name, "metric_group": group, "metric": metric,
                             "value": number, "value_text": None if number is not None else value.strip()})
        self.plan.add("aggregate_results", rows)
        self.plan.add("models", [{"model": m, "organisation": o} for m, o in models.items()
                                 if m not in set(self.plan.frame("models")["model"].to_list())])
