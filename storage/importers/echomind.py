"""EchoMind: scripts in three voices, voice MCQs, model outputs, judge scores and leaderboards.

Folder layout read (the release's `data_*` folders as published, plus model outputs beside them):

    <root>/data_synthesis/script_info_synthesis.json   scripts: case_id, spoken_info, topic, script text,
                                                        {target,neutral,alternative}_audio_info
    <root>/data_synthesis/audio/...                     voices, paths relative to this audio/ folder
    <root>/data_synthesis/MCQ/understanding.json        MCQs: question_id, audio_dir, audio_name, question,
    <root>/data_synthesis/MCQ/reasoning.json                  options_text, answer key (sniffed, see below)
    <root>/data_human/...                               the same for the human recordings (optional)
    <root>/outputs/<model>/<name>.json                  model outputs, judge scores (any names, see below)
    <root>/**/<name>.json with "leaderboardData"        leaderboard tables (aggregate results per model)

The root may also be one `data_*` folder, a folder holding only outputs (added to an existing dataset of
the same name), or a single leaderboard or output JSON file.

Output files are recognised by their content, not their names: records with `predicted_answer` are ASR,
records with `question_id` and `predicted_text_answer`/`predicted_audio_answer` are MCQ answers, records
with `output_content` are conversation responses, and records carrying the judge keys
(`context_fit_score`, `response_naturalness_score`, `colloquialism_degree_score`,
`speech_information_relevance_score`, `VES_score`) are judge scores. The release's own output tree
(`output/output_<type>/{asr,mcq,response}_output/<model>/...`) is read the same way.
- Model: the record's `model` field, else the first folder below `outputs/` (or below `*_output/`).
- Prompt setting of a conversation or judge record: `ouput_prompt` (the release's spelling), else
  `output_prompt`/`prompt`/`system_prompt`, else a prompt name (no, basic, enhance, basic_plus_basic,
  qwen25omni_default) in the file or folder name, e.g. `outputs/atlas-7b/conversation_basic.json`.
- Voice of a flat judge record: `voice_type` (or `voice`), else target/neutral/alternative in the file name.
  Judge scores may also sit inside `output_content.<voice>` of a conversation record.
- MCQ task: understanding or reasoning from the file name (the release names them `*_mcq_understanding.json`),
  else by looking the question id up in the release's MCQ files.
- Human or synthesis data: a `human`/`synthesis` word in the path, else the only data folder present.

Run conditions written: modality `asr`, `mcq_understanding`, `mcq_reasoning`, `conversation:target`,
`conversation:neutral`, `conversation:alternative`; prompt_setting as found for conversations and ''
otherwise; context `audio_output` for MCQ runs from an `audio_output_true` folder, else ''.
Judgments: criteria C1 (context fit), C2 (naturalness), C3 (colloquialism), C4 (speech-information
relevance) and VES, scale 1-5, hanging off the conversation prediction of that voice.

Stimulus ids: `<type>/<case_id>` for scripts (kind echomind_script, media audio:target/alternative/neutral)
and `<type>/mcq/<task>/<question_id>` for MCQs (kind echomind_mcq, media audio, ground truth = option letter).
Unknown release fields are sniffed: the script text from script/speak_A/text/...; the MCQ answer key from
answer/label/gt/correct_answer/...; `--map text=FIELD` and `--map label=FIELD` override the guess.

Answers are kept as the files give them: the MCQ key as written and each MCQ reply as raw output. Which option
a key or a reply names, and whether the reply is correct, is EchoMind's rule in `app.benchmarks.echomind`,
applied to the plan before it is written (the same parser reads live replies).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import soundfile

from storage.errors import ImportFailed
from storage.importers.common import (ImportOptions, ProblemLog, check_cancel, dumps, read_annotation_sidecar,
                                      read_json, resolve_media)
from storage.importers.label_sets import LabelSet, add_label_set, bundled_label_set
from storage.importers.plan import DatasetInfo, ImportPlan

TAXONOMY_FILE = "echomind_vocal_attributes.json"
VOICES = ("target", "neutral", "alternative")
MCQ_TASKS = ("understanding", "reasoning")
PROMPTS = ("basic_plus_basic", "qwen25omni_default", "enhance", "basic", "no")
TEXT_FIELDS = ("script", "speak_A", "script_text", "text", "utterance", "sentence", "content", "transcript",
               "spoken_text")
KEY_FIELDS = ("answer", "label", "gt", "correct_answer", "ground_truth", "answer_key", "correct", "key",
              "correct_option", "right_answer", "gold")
SUBTYPE_FIELDS = ("question_type", "task_type", "sub_task", "subtask", "category", "type", "task", "dimension")
JUDGE_CRITERIA = {"C1": "context_fit", "C2": "response_naturalness", "C3": "colloquialism_degree",
                  "C4": "speech_information_relevance"}
JUDGE_SCORE_KEYS = tuple(f"{base}_score" for base in JUDGE_CRITERIA.values()) + ("VES_score",)
VES_REASON_KEYS = ("VES_reason", "VES_resaon", "VES_explanation", "explanation", "reason")
SCALE_MAX = 5.0
_STRUCTURAL = re.compile(r"^(outputs?|output_(human|synthesis)|(asr|mcq|response|conversation|judge|judgments?)"
                         r"_outputs?|audio_output_(true|false)|judges?|judgments|leaderboards?|"
                         + "|".join(PROMPTS) + r")$", re.IGNORECASE)
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])\s*[\.\):]\s*(.*?)\s*$")


class EchoMindImporter:
    kind = "echomind"
    title = "EchoMind (scripts in three voices, MCQs, model outputs, judges, leaderboards)"
    version = 1

    def detect(self, path: Path) -> float:
        path = Path(path)
        if path.is_file():
            if path.suffix.lower() != ".json":
                return 0.0
            try:
                head = path.open("rb").read(65536)
            except OSError:
                return 0.0
            if b'"leaderboardData"' in head:
                return 0.8
            if any(k in head for k in (b'"ouput_prompt"', b'"prediected_audio_file"', b'"predicted_answer"')):
                return 0.7
            return 0.0
        if not path.is_dir():
            return 0.0
        if _data_dirs(path):
            return 0.95
        if any(_is_leaderboard_file(p) for p in sorted(path.glob("*.json"))[:20]):
            return 0.6
        return 0.0

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        path = Path(path)
        if not path.exists():
            raise ImportFailed(f"{path} does not exist")
        root = path if path.is_dir() else path.parent
        reader = _Reader(root, options)
        if path.is_dir():
            reader.read_release()
        else:
            reader.read_output_file(path)
        return reader.finish(path)


# -- file helpers ---------------------------------------------------------------------------------

def _data_dirs(root: Path) -> list[Path]:
    """The `data_*` folders of a release (or `root` itself when it is one)."""
    def is_data(folder: Path) -> bool:
        return any(folder.glob("script_info*.json")) or (folder / "MCQ").is_dir()
    if is_data(root):
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("data_") and is_data(p))


def _is_leaderboard_file(path: Path) -> bool:
    try:
        return b'"leaderboardData"' in path.open("rb").read(65536)
    except OSError:
        return False


def _record_lines(path: Path) -> list[int]:
    """1-based line of each element of a top-level JSON array (the file is known to be valid JSON)."""
    text = path.read_bytes().decode("utf-8-sig")
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = text.index("[") + 1
    line, counted = 1, 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return lines
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        _, pos = decoder.raw_decode(text, pos)


def _read_records(path: Path, rel: str) -> tuple[Any, list[int]]:
    """The decoded file and, when it is a list, each record's line number."""
    data = read_json(path, rel)
    return data, (_record_lines(path) if isinstance(data, list) else [])


def _tokens(parts: list[str]) -> set[str]:
    found: set[str] = set()
    for part in parts:
        found.update(t for t in re.split(r"[_\-\.\s/]+", part.lower()) if t)
    return found


def _id_text(value: Any) -> str | None:
    """An id given as a string or an integer, as text; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _case_key(case_id: str) -> str:
    """Case ids compare by their number when they are written as `id_854` or `854`."""
    match = re.fullmatch(r"(?:id_?)?0*(\d+)", case_id.strip(), re.IGNORECASE)
    return match.group(1) if match else case_id.strip()


def parse_options(value: Any) -> dict[str, str] | None:
    """Options as letter -> text from a string ("A. ...\\nB. ..."), a list or a dict; None if unreadable."""
    options: dict[str, str] = {}
    if isinstance(value, str):
        lines = [line for line in value.splitlines() if line.strip()]
        for line in lines:
            match = _OPTION_LINE.match(line)
            if match:
                options[match.group(1).upper()] = match.group(2)
            elif options:  # a wrapped option continues on the next line
                last = list(options)[-1]
                options[last] = f"{options[last]} {line.strip()}"
            else:
                return None
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        for index, item in enumerate(value):
            match = _OPTION_LINE.match(item)
            letter = match.group(1).upper() if match else chr(ord("A") + index)
            options[letter] = match.group(2) if match else item.strip()
    elif isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        options = {str(k).strip().upper(): v.strip() for k, v in value.items()}
    else:
        return None
    return options if len(options) >= 2 else None


def _clean_label(text: str) -> str:
    return re.sub(r"^\s*(target|alternative|neutral)\s*:\s*", "", text, flags=re.IGNORECASE)


# -- the reader -----------------------------------------------------------------------------------

class _Reader:
    """Accumulates rows for one plan; every bad record goes to the problem log."""

    def __init__(self, root: Path, options: ImportOptions) -> None:
        self.root = root
        self.options = options
        self.log = ProblemLog(options.skip_bad)
        self.taxonomy: LabelSet = bundled_label_set(TAXONOMY_FILE)
        self.mapping: dict[str, str] = {}
        self.notes: list[str] = []
        self.stimuli: list[dict[str, Any]] = []
        self.media: list[dict[str, Any]] = []
        self.predictions: list[dict[str, Any]] = []
        self.judgments: list[dict[str, Any]] = []
        self.aggregates: list[dict[str, Any]] = []
        self.data_types: list[str] = []
        self.scripts: dict[tuple[str, str], dict[str, Any]] = {}        # (type, case key) -> script info
        self.mcqs: dict[tuple[str, str, str], str] = {}                 # (type, task, question id) -> stimulus
        self.plan_origins: dict[str, tuple[str, int | None, str | None]] = {}  # MCQ stimulus -> its key's place
        self.missing_media = 0

    # -- release ---------------------------------------------------------------------------------
    def read_release(self) -> None:
        data_dirs = _data_dirs(self.root)
        for folder in data_dirs:
            self.read_data_dir(folder)
        for path in sorted(self.root.rglob("*.json")):
            rel = path.relative_to(self.root)
            if rel.parts[0] == "annotations" or any(part.startswith(".") for part in rel.parts):
                continue
            if any(folder != self.root and path.is_relative_to(folder) for folder in data_dirs):
                continue
            if self.root in data_dirs and (rel.parts[0] in ("MCQ", "audio") or
                                           (len(rel.parts) == 1 and rel.name.startswith("script_info"))):
                continue
            check_cancel(self.options)
            self.read_output_file(path)

    def data_type_of(self, folder: Path) -> str:
        name = folder.name.lower()
        if name.startswith("data_"):
            return name[len("data_"):]
        for info in folder.glob("script_info_*.json"):
            return info.stem[len("script_info_"):].lower()
        return "synthesis"

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return path.name

    def read_data_dir(self, folder: Path) -> None:
        data_type = self.data_type_of(folder)
        self.data_types.append(data_type)
        for info in sorted(folder.glob("script_info*.json")):
            self.read_scripts(info, folder, data_type)
        for task in MCQ_TASKS:
            mcq_file = folder / "MCQ" / f"{task}.json"
            if mcq_file.is_file():
                self.read_mcqs(mcq_file, folder, data_type, task)

    def audio_media(self, stimulus: str, role: str, rel: str, file: str, line: int) -> None:
        resolved = resolve_media(self.root, rel, self.options.allow_outside_root, self.log, file, line)
        if resolved is None:
            return
        stored, present = resolved
        duration = rate = None
        if present:
            try:
                info = soundfile.info(str(self.root / stored) if not Path(stored).is_absolute() else stored)
                duration, rate = float(info.duration), int(info.samplerate)
            except (RuntimeError, OSError):  # libsndfile errors are RuntimeErrors
                self.notes.append(f"{stored}: not a readable audio file")
        else:
            self.missing_media += 1
        self.media.append({"stimulus": stimulus, "role": role, "path": stored, "present": present,
                           "offset_s": 0.0, "duration_s": duration, "sample_rate": rate})

    def find_label(self, text: Any) -> Any:
        return self.taxonomy.find(_clean_label(text)) if isinstance(text, str) else None

    def sniff_voice_label(self, record: dict[str, Any], voice: str) -> str | None:
        """The attribute a voice carries, when the release says (alternative and target infos may)."""
        info = record.get(f"{voice}_audio_info")
        candidates: list[Any] = []
        if isinstance(info, dict):
            candidates += [v for k, v in info.items() if "file" not in k.lower()]
        candidates += [v for k, v in record.items() if k.lower().startswith(voice) and not k.endswith("_audio_info")]
        for value in candidates:
            label = self.find_label(value)
            if label is not None:
                return label.name
        return None

    def read_scripts(self, path: Path, folder: Path, data_type: str) -> None:
        file = self.rel(path)
        data, lines = _read_records(path, file)
        if not isinstance(data, list):
            self.log.add(file, None, None, f"<{type(data).__name__}>", "a JSON list of scripts")
            return
        text_field = self.options.mapping.get("text")
        if text_field is None:
            keys: set[str] = set()
            for record in data[:20]:
                if isinstance(record, dict):
                    keys |= set(record) | set(record.get("target_audio_info") or {} if isinstance(
                        record.get("target_audio_info"), dict) else {})
            text_field = next((k for k in TEXT_FIELDS if k in keys), None)
            if text_field is None:
                self.notes.append(f"{file}: no script text field found (looked for {', '.join(TEXT_FIELDS)}); "
                                  "map one with --map text=FIELD")
        if text_field:
            self.mapping["text"] = text_field
        self.mapping.setdefault("stimulus", "case_id")
        audio_rel = Path(self.rel(folder)) / "audio" if folder != self.root else Path("audio")
        seen: dict[str, int] = {}
        for line, record in zip(lines, data):
            check_cancel(self.options)
            if not isinstance(record, dict):
                self.log.add(file, line, None, f"<{type(record).__name__}>", "a JSON object per script")
                continue
            missing = [k for k in ("case_id", "spoken_info", "target_audio_info") if k not in record]
            if missing:
                self.log.add(file, line, missing[0], "<missing>",
                             f"a '{missing[0]}' field (this record has: {', '.join(sorted(record)) or 'nothing'})")
                continue
            case_id = _id_text(record["case_id"])
            if case_id is None:
                self.log.add(file, line, "case_id", record["case_id"], "a non-empty string or integer id")
                continue
            if _case_key(case_id) in seen:
                self.log.add(file, line, "case_id", case_id,
                             f"a case id not already used on line {seen[_case_key(case_id)]}")
                continue
            seen[_case_key(case_id)] = line
            spoken = record["spoken_info"]
            label = self.find_label(spoken)
            if label is None:
                self.log.add(file, line, "spoken_info", spoken,
                             f"an attribute of the label set '{self.taxonomy.name}'"
                             " (e.g. 'sad-toned expressive voice')")
                continue
            topic = record.get("topic")
            if topic is not None and not isinstance(topic, str):
                self.log.add(file, line, "topic", topic, "a string")
                continue
            text = None
            if text_field:
                text = record.get(text_field)
                if text is None and isinstance(record.get("target_audio_info"), dict):
                    text = record["target_audio_info"].get(text_field)
                if text is not None and not isinstance(text, str):
                    self.log.add(file, line, text_field, text, "the script text as a string")
                    continue
            voice_files: dict[str, str] = {}
            bad = False
            for voice in VOICES:
                info = record.get(f"{voice}_audio_info")
                if info is None and voice != "target":
                    continue
                file_key = f"{voice}_input_audio_file"
                if not isinstance(info, dict) or not isinstance(info.get(file_key), str) or not info[file_key]:
                    found = info.get(file_key, "<missing>") if isinstance(info, dict) else info
                    self.log.add(file, line, f"{voice}_audio_info.{file_key}", found,
                                 "an audio file name relative to the audio folder")
                    bad = True
                    break
                voice_files[voice] = info[file_key]
            if bad:
                continue
            lineage = self.taxonomy.lineage(label.name)
            stimulus = f"{data_type}/{case_id}"
            meta = {"case_id": case_id, "data_type": data_type, "spoken_info": spoken, "topic": topic,
                    "attribute": label.name,
                    "dimension_coarse": lineage[0].name if len(lineage) > 1 else None,
                    "dimension_fine": lineage[1].name if len(lineage) > 2 else None,
                    "target_label": label.name,
                    "alternative_label": self.sniff_voice_label(record, "alternative"),
                    "voices": sorted(voice_files)}
            title = " · ".join(part for part in (case_id, label.name, topic) if part)
            self.stimuli.append({"external_id": stimulus, "kind": "echomind_script", "ground_truth": label.name,
                                 "split": data_type, "title": title, "text": text, "meta": dumps(meta)})
            for voice, name in voice_files.items():
                self.audio_media(stimulus, f"audio:{voice}", str(audio_rel / name), file, line)
            self.scripts[(data_type, _case_key(case_id))] = {"stimulus": stimulus, "text": text}

    def read_mcqs(self, path: Path, folder: Path, data_type: str, task: str) -> None:
        file = self.rel(path)
        data, lines = _read_records(path, file)
        if not isinstance(data, list):
            self.log.add(file, None, None, f"<{type(data).__name__}>", "a JSON list of questions")
            return
        key_field = self.options.mapping.get("label")
        columns = sorted({k for r in data[:50] if isinstance(r, dict) for k in r})
        if key_field is not None and key_field not in columns:
            self.log.add(file, None, key_field, "<missing>",
                         f"the mapped answer key field (columns present: {', '.join(columns)})")
            return
        if key_field is None:
            key_field = next((k for k in KEY_FIELDS if k in columns), None)
        if key_field is None:
            self.notes.append(f"{file}: no answer key field found (looked for {', '.join(KEY_FIELDS)}); "
                              "correctness is not computed; map one with --map label=FIELD")
        else:
            self.mapping["label"] = key_field
        subtype_field = next((k for k in SUBTYPE_FIELDS if k in columns), None)
        audio_rel = Path(self.rel(folder)) / "audio" if folder != self.root else Path("audio")
        seen: dict[str, int] = {}
        for line, record in zip(lines, data):
            check_cancel(self.options)
            if not isinstance(record, dict):
                self.log.add(file, line, None, f"<{type(record).__name__}>", "a JSON object per question")
                continue
            missing = [k for k in ("question_id", "audio_name", "question", "options_text") if k not in record]
            if missing:
                self.log.add(file, line, missing[0], "<missing>",
                             f"a '{missing[0]}' field (this record has: {', '.join(sorted(record)) or 'nothing'})")
                continue
            qid = _id_text(record["question_id"])
            if qid is None:
                self.log.add(file, line, "question_id", record["question_id"], "a non-empty string or integer id")
                continue
            if qid in seen:
                self.log.add(file, line, "question_id", qid, f"a question id not already used on line {seen[qid]}")
                continue
            seen[qid] = line
            question, audio_dir, audio_name = record["question"], record.get("audio_dir", ""), record["audio_name"]
            bad = next(((k, v) for k, v in (("question", question), ("audio_dir", audio_dir),
                                            ("audio_name", audio_name)) if not isinstance(v, str)), None)
            if bad or not audio_name:
                k, v = bad or ("audio_name", audio_name)
                self.log.add(file, line, k, v, "a non-empty string" if k != "audio_dir" else "a string")
                continue
            options = parse_options(record["options_text"])
            if options is None:
                self.log.add(file, line, "options_text", record["options_text"],
                             "at least two options like \"A. ...\\nB. ...\" (a string, list or object)")
                continue
            # the key as written ("C", "C. Sad voice"); app.benchmarks.echomind resolves it to a letter
            raw_key = record.get(key_field) if key_field is not None else None
            subtype = record.get(subtype_field) if subtype_field else None
            case_match = re.match(r"(id_?\d+)", audio_name)
            script = self.scripts.get((data_type, _case_key(case_match.group(1)))) if case_match else None
            stimulus = f"{data_type}/mcq/{task}/{qid}"
            meta = {"question_id": qid, "data_type": data_type, "task": task,
                    "subtype": subtype if isinstance(subtype, str) else None, "options": options,
                    "audio_dir": audio_dir,
                    "case_id": case_match.group(1) if case_match else None,
                    "script": script["stimulus"] if script else None}
            self.plan_origins[stimulus] = (file, line, key_field)
            self.stimuli.append({"external_id": stimulus, "kind": "echomind_mcq",
                                 "ground_truth": raw_key if raw_key is None else str(raw_key),
                                 "split": data_type, "title": f"{task} {qid}" + (f" · {subtype}" if
                                                                                  isinstance(subtype, str) else ""),
                                 "text": question + "\n" + "\n".join(f"{k}. {v}" for k, v in options.items()),
                                 "meta": dumps(meta)})
            rel = audio_rel / audio_dir / audio_name if audio_dir else audio_rel / audio_name
            self.audio_media(stimulus, "audio", str(rel), file, line)
            self.mcqs[(data_type, task, qid)] = stimulus

    # -- outputs ---------------------------------------------------------------------------------
    def read_output_file(self, path: Path) -> None:
        file = self.rel(path)
        data, lines = _read_records(path, file)
        if isinstance(data, dict) and "leaderboardData" in data:
            self.read_leaderboard(data, file)
            return
        if not isinstance(data, list) or not data:
            self.notes.append(f"{file}: skipped (not an EchoMind output list)")
            return
        keys = {k for r in data[:5] if isinstance(r, dict) for k in r}
        answer_field = self.options.mapping.get("answer", "predicted_answer")
        if keys & set(JUDGE_SCORE_KEYS):
            kind = "judge"
        elif "output_content" in keys:
            kind = "conversation"
        elif "question_id" in keys and keys & {"predicted_text_answer", "predicted_audio_answer"}:
            kind = "mcq"
        elif answer_field in keys:
            kind = "asr"
            self.mapping["answer"] = answer_field
        else:
            self.notes.append(f"{file}: skipped (no EchoMind output fields in it)")
            return
        rel_parts = list(path.relative_to(self.root).parts) if path.is_relative_to(self.root) else [path.name]
        folder_model = next((p for p in rel_parts[:-1] if not _STRUCTURAL.match(p)), None)
        tokens = _tokens(rel_parts)
        data_type = next((t for t in ("human", "synthesis") if t in tokens), None)
        if data_type is None:
            data_type = self.data_types[0] if len(self.data_types) == 1 else "synthesis"
        context = {"file": file, "tokens": tokens, "folder_model": folder_model, "data_type": data_type,
                   "path": path, "parts": rel_parts}
        handler = {"asr": self.read_asr, "mcq": self.read_mcq_answers, "conversation": self.read_conversation,
                   "judge": self.read_judge_file}[kind]
        for line, record in zip(lines, data):
            check_cancel(self.options)
            if not isinstance(record, dict):
                self.log.add(file, line, None, f"<{type(record).__name__}>", "a JSON object per record")
                continue
            handler(record, line, context)

    def model_of(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> str | None:
        field = self.options.mapping.get("model", "model")
        value = record.get(field)
        if isinstance(value, str) and value.strip():
            self.mapping.setdefault("model", field)
            return value.strip()
        if value is not None and not isinstance(value, str):
            self.log.add(ctx["file"], line, field, value, "the model name as a string")
            return None
        if ctx["folder_model"]:
            self.mapping.setdefault("model", "<folder below outputs/>")
            return ctx["folder_model"]
        self.log.add(ctx["file"], line, field, "<missing>",
                     "a model name: a 'model' field, or the file placed in outputs/<model>/")
        return None

    def prompt_of(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> str | None:
        fields = [self.options.mapping["prompt"]] if "prompt" in self.options.mapping else \
            ["ouput_prompt", "output_prompt", "prompt", "system_prompt"]
        for field in fields:
            value = record.get(field)
            if isinstance(value, str) and value.strip():
                self.mapping.setdefault("prompt", field)
                return value.strip()
        joined = "/".join(ctx["parts"]).lower()
        for name in PROMPTS:
            if (name in ("basic_plus_basic", "qwen25omni_default") and name in joined) or name in ctx["tokens"]:
                self.mapping.setdefault("prompt", "<file name>")
                return name
        self.log.add(ctx["file"], line, fields[0], "<missing>",
                     "a prompt setting (no/basic/enhance) in the record or the file name")
        return None

    def script_of(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> str | None:
        case_id = _id_text(record.get("case_id"))
        if case_id is None:
            self.log.add(ctx["file"], line, "case_id", record.get("case_id", "<missing>"), "a case id")
            return None
        if self.scripts:
            script = self.scripts.get((ctx["data_type"], _case_key(case_id)))
            if script is None:
                self.log.add(ctx["file"], line, "case_id", case_id,
                             f"a case id of the {ctx['data_type']} scripts in this release")
                return None
            return script["stimulus"]
        return f"{ctx['data_type']}/{case_id}"

    def read_asr(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        stimulus, model = self.script_of(record, line, ctx), self.model_of(record, line, ctx)
        field = self.options.mapping.get("answer", "predicted_answer")
        answer = record.get(field)
        if answer is not None and not isinstance(answer, str):
            self.log.add(ctx["file"], line, field, answer, "the transcript as a string")
            return
        if stimulus and model:
            self.predictions.append({"stimulus": stimulus, "model": model, "modality": "asr", "prompt_setting": "",
                                     "vision_mode": "", "context": "", "raw_output": answer, "answer": answer,
                                     "correct": None, "meta": dumps({"source_file": ctx["file"]}),
                                     "_file": ctx["file"], "_line": line})

    def read_mcq_answers(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        file = ctx["file"]
        qid = _id_text(record.get("question_id"))
        if qid is None:
            self.log.add(file, line, "question_id", record.get("question_id"), "a question id")
            return
        task = next((t for t in MCQ_TASKS if t in ctx["tokens"]), None)
        if task is None:
            tasks = [t for t in MCQ_TASKS if (ctx["data_type"], t, qid) in self.mcqs]
            task = tasks[0] if len(tasks) == 1 else None
        if task is None:
            self.log.add(file, line, "question_id", qid,
                         "a file name saying 'understanding' or 'reasoning' (or an id found in exactly one MCQ file)")
            return
        mcq = self.mcqs.get((ctx["data_type"], task, qid))
        if mcq is None and self.mcqs:
            self.log.add(file, line, "question_id", qid, f"a question id of MCQ/{task}.json ({ctx['data_type']})")
            return
        repeated: dict[str, Any] = {}
        if mcq is None:  # outputs added alone: the record repeats the question, so keep its options and key
            key_field = self.options.mapping.get("label") or next((k for k in KEY_FIELDS if k in record), None)
            repeated = {"options": parse_options(record.get("options_text")) or {},
                        "answer_key": record.get(key_field) if key_field else None}
            mcq = f"{ctx['data_type']}/mcq/{task}/{qid}"
        model = self.model_of(record, line, ctx)
        texts = {}
        for field in ("predicted_text_answer", "predicted_audio_answer"):
            value = record.get(field)
            if value is not None and not isinstance(value, str):
                self.log.add(file, line, field, value, "the model's answer as a string")
                return
            texts[field] = value
        if model is None:
            return
        # the reply as given; app.benchmarks.echomind reads the letter and scores it
        raw = texts["predicted_text_answer"] or texts["predicted_audio_answer"]
        meta = {"predicted_audio_answer": texts["predicted_audio_answer"],
                "predicted_audio_file": record.get("prediected_audio_file"), "source_file": file, **repeated}
        self.predictions.append({"stimulus": mcq, "model": model, "modality": f"mcq_{task}",
                                 "prompt_setting": "", "vision_mode": "",
                                 "context": "audio_output" if "audio_output_true" in ctx["parts"] else "",
                                 "raw_output": raw, "answer": None, "correct": None, "meta": dumps(meta),
                                 "_file": file, "_line": line})

    def read_conversation(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        file = ctx["file"]
        content = record.get("output_content")
        if not isinstance(content, dict):
            self.log.add(file, line, "output_content", content, "an object with target/neutral/alternative")
            return
        stimulus, model = self.script_of(record, line, ctx), self.model_of(record, line, ctx)
        prompt = self.prompt_of(record, line, ctx)
        if not (stimulus and model and prompt):
            return
        for voice in VOICES:
            reply = content.get(voice)
            if reply is None or reply == {}:
                continue
            if not isinstance(reply, dict):
                self.log.add(file, line, f"output_content.{voice}", reply, "an object")
                continue
            text, transcript = reply.get("response_text"), reply.get("response_audio_transcript")
            wrong = next(((k, v) for k, v in (("response_text", text), ("response_audio_transcript", transcript))
                          if v is not None and not isinstance(v, str)), None)
            if wrong:
                self.log.add(file, line, f"output_content.{voice}.{wrong[0]}", wrong[1], "a string")
                continue
            run = {"stimulus": stimulus, "model": model, "modality": f"conversation:{voice}",
                   "prompt_setting": prompt, "vision_mode": "", "context": ""}
            audio = reply.get("file")
            meta = {"response_audio_file": audio if isinstance(audio, str) else None, "source_file": file}
            if isinstance(audio, str) and audio:
                near = [p for p in (ctx["path"].parent / audio,) if p.is_file()]
                near += sorted(ctx["path"].parent.glob(f"*/{audio}"))[:1]
                if near:
                    meta["response_audio"] = self.rel(near[0])
            self.predictions.append({**run, "raw_output": transcript, "answer": text, "correct": None,
                                     "meta": dumps(meta), "_file": file, "_line": line})
            judged = [reply] + [v for v in reply.values() if isinstance(v, dict)]
            for block in judged:
                if set(block) & set(JUDGE_SCORE_KEYS):
                    self.add_judgments(block, run, line, file, f"output_content.{voice}.")

    def read_judge_file(self, record: dict[str, Any], line: int, ctx: dict[str, Any]) -> None:
        voice_value = record.get("voice_type", record.get("voice"))
        voice = voice_value if voice_value in VOICES else next((v for v in VOICES if v in ctx["tokens"]), None)
        if voice is None:
            self.log.add(ctx["file"], line, "voice_type", voice_value if voice_value is not None else "<missing>",
                         "target, neutral or alternative (in the record or the file name)")
            return
        stimulus, model = self.script_of(record, line, ctx), self.model_of(record, line, ctx)
        prompt = self.prompt_of(record, line, ctx)
        if stimulus and model and prompt:
            run = {"stimulus": stimulus, "model": model, "modality": f"conversation:{voice}",
                   "prompt_setting": prompt, "vision_mode": "", "context": ""}
            self.add_judgments(record, run, line, ctx["file"], "")

    def add_judgments(self, block: dict[str, Any], run: dict[str, Any], line: int, file: str, where: str) -> None:
        judge = next((block[k] for k in ("judge", "judge_model", "evaluator") if isinstance(block.get(k), str)), "")
        for criterion, base in [*JUDGE_CRITERIA.items(), ("VES", "VES")]:
            key = f"{base}_score"
            if key not in block:
                continue
            score = block[key]
            if isinstance(score, str):
                try:
                    score = float(score.strip())
                except ValueError:
                    pass
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= SCALE_MAX:
                self.log.add(file, line, where + key, score, f"a score from 1 to {SCALE_MAX:g}")
                continue
            reasons = (f"{base}_reason", f"{base}_resaon") if criterion != "VES" else VES_REASON_KEYS
            rationale = next((block[k] for k in reasons if isinstance(block.get(k), str)), None)
            self.judgments.append({**run, "judge": judge, "criterion": criterion, "score": float(score),
                                   "scale_max": SCALE_MAX, "rationale": rationale, "_file": file, "_line": line})

    def read_leaderboard(self, data: dict[str, Any], file: str) -> None:
        entries = data["leaderboardData"]
        if not isinstance(entries, list):
            self.log.add(file, None, "leaderboardData", f"<{type(entries).__name__}>", "a list of models")
            return
        source = Path(file).name
        seen: set[tuple[str, str, str]] = set()
        for number, entry in enumerate(entries, start=1):
            info = entry.get("info") if isinstance(entry, dict) else None
            name = info.get("name") if isinstance(info, dict) else None
            if not isinstance(name, str) or not name.strip():
                self.log.add(file, number, "info.name", name if isinstance(info, dict) else entry,
                             "each leaderboard entry to have info.name (record number shown)")
                continue
            for group, metrics in entry.items():
                if group == "info":
                    continue
                if not isinstance(metrics, dict):
                    self.log.add(file, number, group, metrics, "an object of metric -> value")
                    continue
                for metric, value in metrics.items():
                    row = {"model": name.strip(), "source": source, "metric_group": group, "metric": metric}
                    if (name.strip(), group, metric) in seen:
                        self.log.add(file, number, f"{group}.{metric}", name,
                                     "each model's metric once per leaderboard file")
                        continue
                    seen.add((name.strip(), group, metric))
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        self.aggregates.append({**row, "value": float(value), "value_text": None})
                    elif isinstance(value, str):
                        try:
                            self.aggregates.append({**row, "value": float(value), "value_text": None})
                        except ValueError:
                            self.aggregates.append({**row, "value": None, "value_text": value})
                    elif value is None:
                        self.aggregates.append({**row, "value": None, "value_text": None})
                    else:
                        self.log.add(file, number, f"{group}.{metric}", value, "a number or a text such as '-'")

    # -- plan ------------------------------------------------------------------------------------
    def drop_repeats(self, rows: list[dict[str, Any]], keys: tuple[str, ...], what: str) -> list[dict[str, Any]]:
        """Keep the first row per key; a repeat (same run and stimulus again) is a problem, not an overwrite."""
        first: dict[tuple, dict[str, Any]] = {}
        for row in rows:
            key = tuple(row[k] for k in keys)
            if key in first:
                earlier = first[key]
                self.log.add(row["_file"], row["_line"], "case_id/question_id", row["stimulus"],
                             f"one {what} per stimulus and run ({row['model']} {row['modality']} "
                             f"{row['prompt_setting']}); already given at {earlier['_file']}:{earlier['_line']}")
                continue
            first[key] = row
        return list(first.values())

    def finish(self, path: Path) -> ImportPlan:
        name = self.options.dataset_name or f"EchoMind {self.root.name}"
        plan = ImportPlan(DatasetInfo(name=name, benchmark="echomind", root=self.root, source=str(path),
                                      synthetic=(self.root / "SYNTHETIC.md").is_file(),
                                      meta={"data_types": self.data_types, "label_set": self.taxonomy.name}),
                          importer=EchoMindImporter.kind, importer_version=EchoMindImporter.version)
        add_label_set(plan, self.taxonomy)
        run = ("stimulus", "model", "modality", "prompt_setting", "context")
        predictions = self.drop_repeats(self.predictions, run, "answer")
        judgments = self.drop_repeats(self.judgments, (*run, "judge", "criterion"), "score per criterion")
        for table, rows in (("stimuli", self.stimuli), ("media", self.media), ("predictions", predictions),
                            ("judgments", judgments), ("aggregate_results", self.aggregates)):
            if rows:
                plan.add(table, rows)
        read_annotation_sidecar(self.root, plan, self.log)
        if self.missing_media:
            self.notes.append(f"{self.missing_media} media files missing")
        plan.mapping = dict(self.mapping)
        plan.origins.update(self.plan_origins)
        plan.notes.extend(self.notes)
        self.log.finish(plan)
        return plan
