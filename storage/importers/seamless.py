"""Seamless Interaction (Meta), the corpus FriendBench's clips come from.

A release folder holds one `{id}.mp4`, `{id}.wav` and `{id}.json` per participant, ids shaped
`V<vendor>_S<session>_I<interaction>_P<participant>` (the participant may end in letters, `P0059A`), plus
`relationships.csv` (`vendor_id,session_id,relationship,relationship_detail`), `participants.csv` (BFI-2
traits; vendor written without the `V`) and `interactions.csv` (prompts). The two participants of an
interaction become one `dyad` stimulus: participant A is the lexically first id. Session ids repeat across
vendors, so a relationship joins on vendor and session together (`V03` + `1805`, `conversation_key`) and
traits on vendor and participant. The metadata tables alone label nothing: given without the
per-participant files, the import is refused with one line saying which files are needed.

Options (`ImportOptions.extra`):
- `window_s` (float): cut windows of this length as stimuli instead of whole interactions. Windows refer to
  the source files through `offset_s`/`duration_s`; nothing is re-encoded.
- `window_starts` (list of seconds) or `window_every_s` (float, default `window_s`): where windows start.
- `snap_to_turn` (bool): move each start to the nearest turn start within +-5 s.
Window stimuli are named `<interaction>@<start seconds, 2 decimals>`; their transcript segments and VAD
intervals are clipped to the window and shifted to window time.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import soundfile as sf

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import (ImportOptions, ProblemLog, check_cancel, dumps, read_annotation_sidecar,
                                      read_json, resolve_media)
from storage.importers.label_sets import add_label_set, bundled_label_set
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.tables import Table, read_table
from storage.validation import TIMES_EXPECTED, times_problem

PARTICIPANT_ID = re.compile(r"^(V\d+)_S(\d+)_I(\d+)_P(\d+[A-Za-z]*)$")
SNAP_RADIUS_S = 5.0
VIDEO_SUFFIXES = (".mp4", ".mov", ".mkv", ".webm", ".avi")
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".m4a", ".ogg", ".opus")
FAMILIARITY = ("familiar", "stranger")
# label sets a dyad is annotated with: familiar/stranger per clip, vocal cues as time ranges
LABEL_SET_FILES = ("friendbench_familiarity.json", "vocal_cues.json")
# the release's metadata tables and the column each one is recognised by; alone they label nothing
METADATA_TABLES = {"relationships": "session_id", "participants": "participant_id", "interactions": "prompt_hash"}
PARTICIPANT_FILES = ("V<vendor>_S<session>_I<interaction>_P<participant>.json with its .wav or .mp4, one set per "
                     "participant (e.g. V03_S1805_I00000123_P0042.json and .wav)")


def vendor_key(vendor: str) -> str:
    """A vendor as the file names write it (`V03`), from `V03`, `03` or `3` (participants.csv drops the V)."""
    digits = vendor.strip().upper().removeprefix("V")
    return f"V{digits.zfill(2)}"


def conversation_key(vendor: str, session: str) -> str:
    """The key a conversation's metadata joins on: vendor and session together (`V03_S1805`), since session
    ids repeat across vendors; the session is kept as zero-padded text."""
    return f"{vendor_key(vendor)}_S{session.strip().zfill(4)}"


# -- pieces FriendBench shares ---------------------------------------------------------------------------

def probe_media(path: Path) -> tuple[float | None, int | None]:
    """(duration in seconds, audio sample rate) of a media file; (None, None) when it cannot be read."""
    if path.suffix.lower() in (".wav", ".flac", ".ogg"):
        try:
            info = sf.info(str(path))
            return float(info.duration), int(info.samplerate)
        except (RuntimeError, sf.LibsndfileError):
            return None, None
    try:
        with av.open(str(path)) as container:
            duration = container.duration / 1_000_000 if container.duration else None
            rate = next((s.rate for s in container.streams.audio), None)
            return duration, (int(rate) if rate else None)
    except (av.FFmpegError, OSError, ValueError):
        return None, None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _speaker(value: Any, default: str | None) -> str | None:
    if value is None:
        return default
    text = str(value).strip()
    marker = text.lower().removeprefix("speaker").removeprefix("participant").strip(" _-")
    if marker in ("a", "pa", "p1", "1", "left"):
        return "A"
    if marker in ("b", "pb", "p2", "2", "right"):
        return "B"
    return text or default


def parse_transcript(data: Any, name: str, log: ProblemLog, default_speaker: str | None = None) -> list[dict]:
    """Segments {speaker, start_s, end_s, text, words} from a transcript in Seamless or FriendBench shape.

    Accepts `{"metadata:transcript": [...]}` (Seamless, one participant per file), `{"segments": [...]}`
    or a bare list. Segment keys: `transcript`/`text`, `start`, `end`, optional `speaker`, optional `words`
    [{word, start, end, score}]. Bad segments or words are logged with their 1-based segment number.
    """
    if isinstance(data, dict):
        items = data.get("metadata:transcript", data.get("segments"))
    else:
        items = data
    if items is None:
        return []
    if not isinstance(items, list):
        log.add(name, None, "metadata:transcript", f"<{type(items).__name__}>", "a list of segments")
        return []
    segments = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            log.add(name, number, None, f"<{type(item).__name__}>", "a segment object")
            continue
        start, end = _number(item.get("start", item.get("start_s"))), _number(item.get("end", item.get("end_s")))
        text = item.get("transcript", item.get("text"))
        if times_problem(start, end) is not None:
            log.add(name, number, "start/end", f"{item.get('start')!r}..{item.get('end')!r}", TIMES_EXPECTED)
            continue
        if text is not None and not isinstance(text, str):
            log.add(name, number, "transcript", text, "text")
            continue
        words = _parse_words(item.get("words"), name, number, log)
        if words is None:
            continue
        if text is None:
            text = " ".join(w["word"] for w in words)
        segments.append({"speaker": _speaker(item.get("speaker", item.get("participant")), default_speaker),
                         "start_s": start, "end_s": end, "text": text, "words": words})
    return segments


def _parse_words(raw: Any, name: str, number: int, log: ProblemLog) -> list[dict] | None:
    if raw is None:
        return []
    if not isinstance(raw, list):
        log.add(name, number, "words", f"<{type(raw).__name__}>", "a list of {word, start, end}")
        return None
    words = []
    for item in raw:
        word = item.get("word", item.get("text")) if isinstance(item, dict) else None
        start = _number(item.get("start")) if isinstance(item, dict) else None
        end = _number(item.get("end")) if isinstance(item, dict) else None
        if not isinstance(word, str) or start is None or end is None or end < start:
            log.add(name, number, "words", item, f"{{word: text, start, end}} with {TIMES_EXPECTED}")
            return None
        entry = {"word": word, "start": start, "end": end}
        score = _number(item.get("score"))
        if score is not None:
            entry["score"] = score
        words.append(entry)
    return words


def clip_segments(segments: list[dict], start: float, end: float) -> list[dict]:
    """The parts of `segments` inside [start, end), shifted so that `start` becomes 0.

    Words outside the window are dropped and a segment's text is rebuilt from the words kept; a segment
    with words of which none fall inside is dropped (it only overlapped by silence).
    """
    clipped = []
    for seg in segments:
        if seg["end_s"] <= start or seg["start_s"] >= end:
            continue
        words = [w for w in seg["words"] if w["end"] > start and w["start"] < end]
        if seg["words"] and not words:
            continue
        shifted = [{**w, "start": round(max(w["start"], start) - start, 3),
                    "end": round(min(w["end"], end) - start, 3)} for w in words]
        text = seg["text"] if len(words) == len(seg["words"]) else " ".join(w["word"] for w in words)
        clipped.append({**seg, "start_s": round(max(seg["start_s"], start) - start, 3),
                        "end_s": round(min(seg["end_s"], end) - start, 3), "text": text, "words": shifted})
    return clipped


def transcript_text(segments: list[dict]) -> str:
    """The transcript as lines 'A: words', in time order (what a text-condition rater reads)."""
    return "\n".join(f"{s['speaker']}: {s['text']}" if s["speaker"] else s["text"] for s in segments
                     if s["text"])


def segment_rows(stimulus: str, segments: list[dict]) -> list[dict]:
    ordered = sorted(segments, key=lambda s: (s["start_s"], s["speaker"] or ""))
    return [{"stimulus": stimulus, "ord": i, "speaker": s["speaker"], "start_s": s["start_s"],
             "end_s": s["end_s"], "text": s["text"], "words": dumps(s["words"]),
             "media_role": f"audio:{s['speaker']}" if s["speaker"] in ("A", "B") else None}
            for i, s in enumerate(ordered)]


# -- the Seamless release --------------------------------------------------------------------------------

@dataclass
class _Participant:
    pid: str
    files: dict[str, Path] = field(default_factory=dict)   # suffix -> file
    segments: list[dict] = field(default_factory=list)
    vad: list[tuple[float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class _Windows:
    length: float
    starts: tuple[float, ...] | None
    every: float
    snap: bool


def _windows(extra: dict[str, Any]) -> _Windows | None:
    if extra.get("window_s") is None:
        return None

    def positive(key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ImportFailed(RowProblem("import options", None, key, repr(value), "a positive number of seconds"))
        return float(value)

    length = positive("window_s", extra["window_s"])
    starts = extra.get("window_starts")
    if starts is not None:
        if not isinstance(starts, (list, tuple)) or not all(
                isinstance(s, (int, float)) and not isinstance(s, bool) and s >= 0 for s in starts):
            raise ImportFailed(RowProblem("import options", None, "window_starts", repr(starts),
                                          "a list of start times in seconds (>= 0)"))
        starts = tuple(float(s) for s in starts)
    every = positive("window_every_s", extra.get("window_every_s", length))
    return _Windows(length, starts, every, bool(extra.get("snap_to_turn", False)))


def _find_csv(root: Path, stem: str) -> Path | None:
    found = sorted(p for p in root.rglob(f"{stem}*.csv") if p.is_file())
    return found[0] if found else None


def _scan(root: Path, limit: int | None = None) -> dict[str, dict[str, Path]]:
    """Files named by a participant id, grouped by id: {id: {suffix: path}}."""
    found: dict[str, dict[str, Path]] = {}
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            seen += 1
            if limit is not None and seen > limit:
                return found
            stem, _, suffix = name.rpartition(".")
            if stem and PARTICIPANT_ID.match(stem):
                found.setdefault(stem, {})["." + suffix.lower()] = Path(folder) / name
    return found


class SeamlessImporter:
    kind = "seamless"
    title = "Seamless Interaction (dyadic conversations)"
    version = 1

    def detect(self, path: Path) -> float:
        path = Path(path)
        if path.is_file():
            if PARTICIPANT_ID.match(path.stem):
                return 0.6
            return 0.7 if _metadata_table(path) else 0.0
        if not path.is_dir():
            return 0.0
        if _scan(path, limit=3000):
            return 0.85
        return 0.3 if (path / "relationships.csv").is_file() else 0.0

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        path = Path(path).resolve()
        root = path if path.is_dir() else path.parent
        if not root.is_dir():
            raise ImportFailed(RowProblem(str(path), None, None, "<no such folder>", "a Seamless Interaction folder"))
        windows = _windows(options.extra)
        log = ProblemLog(options.skip_bad)
        plan = ImportPlan(DatasetInfo(options.dataset_name or f"Seamless Interaction {root.name}", "seamless",
                                      root, str(root), synthetic=(root / "SYNTHETIC.md").is_file()),
                          importer=self.kind, importer_version=self.version)
        plan.mapping = {"stimulus": "V<vendor>_S<session>_I<interaction> of the file names",
                        "label": "relationships.csv:relationship"}
        relationships = self._relationships(root, log)
        traits = self._traits(root, log)
        prompts = self._prompts(root, log)
        groups: dict[str, list[_Participant]] = {}
        for pid, files in sorted(_scan(root).items()):
            key = pid.rsplit("_P", 1)[0]
            groups.setdefault(key, []).append(_Participant(pid, files))
        if not groups:
            raise ImportFailed(_no_participants(root, path))
        stimuli, media, segments = [], [], []
        missing = unlabelled = 0
        for key, people in groups.items():
            check_cancel(options)
            if len(people) > 2:
                log.add(people[2].files[min(people[2].files)].name, None, "participant",
                        ", ".join(p.pid for p in people), "two participants per interaction")
                continue
            for person in people:
                self._read_json(root, person, log)
            vendor, session, interaction = PARTICIPANT_ID.match(people[0].pid).groups()[:3]
            relation = relationships.get(conversation_key(vendor, session))
            unlabelled += relation is None
            roles = dict(zip("AB", people))
            base_meta: dict[str, Any] = {
                "site": vendor, "vendor": vendor, "session": session, "interaction": interaction,
                "participants": {r: p.pid for r, p in roles.items()},
                "relationship_detail": relation[1] if relation else None,
                **prompts.get(interaction, {}),
            }
            found_traits = {r: traits[t] for r, p in roles.items()
                            if (t := f"{vendor_key(vendor)}_P{p.pid.rsplit('_P', 1)[1]}") in traits}
            if found_traits:
                base_meta["traits"] = found_traits
            files = {}
            duration = 0.0
            for role, person in roles.items():
                folder = next(iter(person.files.values())).parent
                for kind, suffixes in (("video", VIDEO_SUFFIXES), ("audio", AUDIO_SUFFIXES)):
                    file = next((person.files[s] for s in suffixes if s in person.files),
                                folder / f"{person.pid}{suffixes[0]}")
                    resolved = resolve_media(root, str(file), options.allow_outside_root, log, person.pid, None)
                    if resolved is None:
                        continue
                    length, rate = probe_media(file) if resolved[1] else (None, None)
                    missing += not resolved[1]
                    duration = max(duration, length or 0.0)
                    files[f"{kind}:{role}"] = (resolved, length, rate)
                duration = max([duration] + [s["end_s"] for s in person.segments] + [e for _, e in person.vad])
            all_segments = [dict(s, speaker=s["speaker"] or role) for role, p in roles.items() for s in p.segments]
            spans = self._spans(windows, duration, all_segments, key, plan)
            for start, length, snapped_from in spans:
                stim_id = key if windows is None else f"{key}@{start:.2f}"
                end = start + length if length is not None else math.inf
                clipped = clip_segments(all_segments, start, end) if windows else all_segments
                meta = dict(base_meta, vad={r: [[round(max(s, start) - start, 3), round(min(e, end) - start, 3)]
                                                for s, e in p.vad if e > start and s < end]
                                            for r, p in roles.items()})
                if windows:
                    meta["window"] = {"start_s": start, "duration_s": length, "snapped_from_s": snapped_from}
                stimuli.append({"external_id": stim_id, "kind": "dyad", "split": None,
                                "ground_truth": relation[0] if relation else None,
                                "title": stim_id if not relation else f"{stim_id} ({relation[1]})",
                                "text": transcript_text(sorted(clipped, key=lambda s: s["start_s"])) or None,
                                "meta": dumps({k: v for k, v in meta.items() if v is not None})})
                for role, ((stored, present), file_length, rate) in files.items():
                    media.append({"stimulus": stim_id, "role": role, "path": stored, "present": present,
                                  "offset_s": start, "duration_s": length if windows else file_length,
                                  "sample_rate": rate})
                segments.extend(segment_rows(stim_id, clipped))
        plan.add("stimuli", stimuli)
        plan.add("media", media)
        plan.add("segments", segments)
        if missing:
            plan.notes.append(f"{missing} media files missing")
        if unlabelled:
            plan.notes.append(f"{unlabelled} interactions without a row in relationships.csv")
        for file_name in LABEL_SET_FILES:
            add_label_set(plan, bundled_label_set(file_name))
        read_annotation_sidecar(root, plan, log)
        log.finish(plan)
        return plan

    # -- parts ---------------------------------------------------------------------------------------
    @staticmethod
    def _read_json(root: Path, person: _Participant, log: ProblemLog) -> None:
        file = person.files.get(".json")
        if file is None:
            return
        name = str(file.relative_to(root))
        try:
            data = read_json(file, name)
        except ImportFailed as exc:
            for p in exc.problems:
                log.add(p.file, p.line, p.field, p.found, p.expected)
            return
        if not isinstance(data, dict):
            log.add(name, None, None, f"<{type(data).__name__}>", "a JSON object with metadata:transcript")
            return
        if isinstance(data.get("id"), str) and data["id"] != person.pid:
            log.add(name, None, "id", data["id"], f"the id in the file name, {person.pid}")
        person.segments = parse_transcript(data, name, log, default_speaker=None)
        vad = data.get("metadata:vad") or []
        if not isinstance(vad, list):
            log.add(name, None, "metadata:vad", f"<{type(vad).__name__}>", "a list of {start, end}")
            return
        for number, item in enumerate(vad, start=1):
            start = _number(item.get("start")) if isinstance(item, dict) else None
            end = _number(item.get("end")) if isinstance(item, dict) else None
            if start is None or end is None or end < start:
                log.add(name, number, "metadata:vad", item, f"{{start, end}}: {TIMES_EXPECTED}")
                continue
            person.vad.append((start, end))

    @staticmethod
    def _spans(windows: _Windows | None, duration: float, segments: list[dict], key: str,
               plan: ImportPlan) -> list[tuple[float, float | None, float | None]]:
        """(start, length, start before snapping) of each stimulus cut from one interaction."""
        if windows is None:
            return [(0.0, None, None)]
        if windows.starts is not None:
            starts = [s for s in windows.starts if duration == 0 or s < duration]
            if len(starts) < len(windows.starts):
                plan.notes.append(f"{key}: {len(windows.starts) - len(starts)} window starts after its end "
                                  f"({duration:.1f} s) skipped")
        else:
            count = max(1, int(math.floor((duration - windows.length) / windows.every + 1e-9)) + 1)
            starts = [round(i * windows.every, 3) for i in range(count)]
        turns = sorted({s["start_s"] for s in segments})
        spans, used = [], set()
        for start in starts:
            snapped_from = None
            if windows.snap and turns:
                nearest = min(turns, key=lambda t: (abs(t - start), t))
                if abs(nearest - start) <= SNAP_RADIUS_S:
                    snapped_from, start = start, round(nearest, 3)
            if round(start, 2) in used:
                continue
            used.add(round(start, 2))
            spans.append((start, windows.length, snapped_from))
        return spans

    @staticmethod
    def _relationships(root: Path, log: ProblemLog) -> dict[str, tuple[str, str | None]]:
        path = _find_csv(root, "relationships")
        if path is None:
            return {}
        table = read_table(path, str(path.relative_to(root)), log)
        _require(table, ["vendor_id", "session_id", "relationship"])
        result: dict[str, tuple[str, str | None]] = {}
        for line, row in table.rows():
            vendor, session = (row["vendor_id"] or "").strip(), (row["session_id"] or "").strip()
            relation = (row["relationship"] or "").strip().lower()
            if not re.fullmatch(r"V?\d+", vendor, re.IGNORECASE):
                log.add(table.name, line, "vendor_id", row["vendor_id"], "a vendor such as V03")
                continue
            if not session.isdigit():
                log.add(table.name, line, "session_id", row["session_id"], "a session number such as 0038")
                continue
            if relation not in FAMILIARITY:
                log.add(table.name, line, "relationship", row["relationship"], "familiar or stranger")
                continue
            key = conversation_key(vendor, session)
            value = (relation, (row.get("relationship_detail") or "").strip() or None)
            if key in result and result[key] != value:
                log.add(table.name, line, "relationship", f"{key}: {value}", f"the same as before, {result[key]}")
                continue
            result[key] = value
        return result

    @staticmethod
    def _traits(root: Path, log: ProblemLog) -> dict[str, dict[str, Any]]:
        path = _find_csv(root, "participants")
        if path is None:
            return {}
        table = read_table(path, str(path.relative_to(root)), log)
        _require(table, ["vendor_id", "participant_id"])
        result = {}
        for _line, row in table.rows():
            values = {k.removesuffix("_raw"): _float_or_text(v) for k, v in row.items()
                      if k not in ("vendor_id", "participant_id") and v is not None}
            result[f"{vendor_key(row['vendor_id'] or '')}_P{(row['participant_id'] or '').strip()}"] = values
        return result

    @staticmethod
    def _prompts(root: Path, log: ProblemLog) -> dict[str, dict[str, Any]]:
        """interactions.csv by prompt hash, which the interaction number in the file names matches."""
        path = _find_csv(root, "interactions")
        if path is None:
            return {}
        table = read_table(path, str(path.relative_to(root)), log)
        _require(table, ["prompt_hash"])
        result = {}
        for _line, row in table.rows():
            keep = {"interaction_type": row.get("interaction_type"), "prompt_id": row.get("prompt_id_unique"),
                    "prompt_a": row.get("participant_a_prompt_text"), "prompt_b": row.get("participant_b_prompt_text"),
                    "ipc_a": row.get("ipc_a"), "ipc_b": row.get("ipc_b")}
            result[(row["prompt_hash"] or "").strip()] = {k: v for k, v in keep.items() if v}
        return result


def _metadata_table(path: Path) -> str | None:
    """Which of the release's metadata tables `path` is (by its name and header), or None."""
    stem = next((s for s in METADATA_TABLES if path.name.lower().startswith(s)), None)
    if stem is None or path.suffix.lower() != ".csv":
        return None
    try:
        with path.open("rb") as fh:
            header = fh.readline().decode("utf-8-sig", "replace").lower()
    except OSError:
        return None
    return stem if METADATA_TABLES[stem] in header and ("vendor_id" in header or stem == "interactions") else None


def _no_participants(root: Path, path: Path) -> RowProblem:
    """Why a folder (or a metadata table given alone) makes no conversations, and what else is needed."""
    tables = [found.name for stem in METADATA_TABLES if (found := _find_csv(root, stem)) is not None]
    if tables:
        return RowProblem(path.name if path.is_file() else str(root), None, None,
                          f"<only the metadata ({', '.join(tables)}) and no per-participant files in {root}>",
                          f"the per-participant files the metadata describes, in the same folder: {PARTICIPANT_FILES}")
    return RowProblem(str(root), None, None, "<no files named V.._S.._I.._P..>", f"per-participant files: "
                      f"{PARTICIPANT_FILES}")


def _float_or_text(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def _require(table: Table, columns: list[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ImportFailed(RowProblem(table.name, 1, ", ".join(missing),
                                      f"<columns {', '.join(table.columns) or 'none'}>",
                                      f"the columns {', '.join(columns)}"))
