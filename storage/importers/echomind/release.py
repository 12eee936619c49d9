"""Reading an EchoMind release's data folders: the scripts in three voices and the voice MCQs."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import soundfile

from storage.importers.common import check_cancel, dumps, resolve_media
from storage.importers.echomind.files import (CLONE_BOARDS, CLONE_DATA, CLONE_OUTPUTS, KEY_FIELDS, MCQ_TASKS,
                                              NOT_IN_TAXONOMY, SUBTYPE_FIELDS, TEXT_FIELDS, VOICES, case_key,
                                              clean_label, clone_json_files, counted, data_dirs, id_text, is_clone,
                                              parse_options, read_records)
from storage.importers.label_sets import Label


class ReleaseReading:
    """The part of the reader that reads `data_*` folders (mixed into `EchoMindReader`, which holds the state)."""

    def read_release(self) -> None:
        folders = data_dirs(self.root)
        read: dict[Path, list[str]] = {}
        for folder in folders:
            before = len(self.stimuli)
            self.read_data_dir(folder)
            read[folder] = [stimulus["kind"] for stimulus in self.stimuli[before:]]
        clone = is_clone(self.root)
        files = clone_json_files(self.root) if clone else self.loose_json_files(folders)
        for path in files:
            check_cancel(self.options)
            self.read_output_file(path)
        if clone:
            self.notes.append(self.clone_summary(read, files))

    def loose_json_files(self, folders: list[Path]) -> list[Path]:
        """Every JSON file outside the data folders, the annotation sidecar and hidden folders."""
        found = []
        for path in sorted(self.root.rglob("*.json")):
            rel = path.relative_to(self.root)
            if rel.parts[0] == "annotations" or any(part.startswith(".") for part in rel.parts):
                continue
            if any(folder != self.root and path.is_relative_to(folder) for folder in folders):
                continue
            if self.root in folders and (rel.parts[0] in ("MCQ", "audio") or
                                         (len(rel.parts) == 1 and rel.name.startswith("script_info"))):
                continue
            found.append(path)
        return found

    def clone_summary(self, read: dict[Path, list[str]], files: list[Path]) -> str:
        """What was found in a clone of the release repository, in one line of the report."""
        data = ", ".join(f"{self.rel(folder)} ({counted(kinds.count('echomind_script'), 'script')}, "
                         f"{counted(kinds.count('echomind_mcq'), 'MCQ')})" for folder, kinds in read.items())
        if not data:
            data = (f"no data_* folder in {CLONE_DATA}/ (the scripts and MCQs are published apart from the code;"
                    f" put the data_human/ and data_synthesis/ folders in {CLONE_DATA}/)")
        boards = sum(path.is_relative_to(self.root / CLONE_BOARDS) for path in files)
        outputs = "/ and ".join(str(part) for part in CLONE_OUTPUTS if (self.root / part).is_dir()) or \
            str(CLONE_OUTPUTS[0])
        return (f"release clone {self.root.name}: found {data}; {counted(len(files) - boards, 'output file')} in "
                f"{outputs}/; {counted(boards, 'leaderboard')} in {CLONE_BOARDS}/")

    def data_type_of(self, folder: Path) -> str:
        name = folder.name.lower()
        if name.startswith("data_"):
            return name[len("data_"):]
        for info in folder.glob("script_info_*.json"):
            return info.stem[len("script_info_"):].lower()
        return "synthesis"

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
        return self.taxonomy.find(clean_label(text)) if isinstance(text, str) else None

    def keep_new_attribute(self, name: str, file: str, line: int) -> Label:
        """Count a script whose attribute the taxonomy does not hold. The script is kept; its attribute becomes
        a label flagged (in its description) and listed in the report, so that a release with one new
        attribute still imports."""
        entry = self.new_attributes.setdefault(name.lower(), {
            "label": Label(name, description=f"{NOT_IN_TAXONOMY}: first seen as spoken_info in {file}:{line}"),
            "scripts": 0, "first": f"{file}:{line}"})
        entry["scripts"] += 1
        return entry["label"]

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
        data, lines = read_records(path, file)
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
            case_id = id_text(record["case_id"])
            if case_id is None:
                self.log.add(file, line, "case_id", record["case_id"], "a non-empty string or integer id")
                continue
            if case_key(case_id) in seen:
                self.log.add(file, line, "case_id", case_id,
                             f"a case id not already used on line {seen[case_key(case_id)]}")
                continue
            seen[case_key(case_id)] = line
            spoken = record["spoken_info"]
            label = self.find_label(spoken)
            if label is None and isinstance(spoken, str) and clean_label(spoken).strip():
                label = Label(" ".join(clean_label(spoken).split()))  # outside the taxonomy: kept, see below
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
            if self.taxonomy.get(label.name) is None:
                label = self.keep_new_attribute(label.name, file, line)
            lineage = self.taxonomy.lineage(label.name)
            stimulus = f"{data_type}/{case_id}"
            meta = {"case_id": case_id, "data_type": data_type, "spoken_info": spoken, "topic": topic,
                    "attribute": label.name,
                    "dimension_coarse": lineage[0].name if len(lineage) > 1 else None,
                    "dimension_fine": lineage[1].name if len(lineage) > 2 else None,
                    "target_label": label.name,
                    "alternative_label": self.sniff_voice_label(record, "alternative"),
                    "voices": sorted(voice_files)}
            if self.taxonomy.get(label.name) is None:
                meta["in_taxonomy"] = False
            title = " · ".join(part for part in (case_id, label.name, topic) if part)
            self.stimuli.append({"external_id": stimulus, "kind": "echomind_script", "ground_truth": label.name,
                                 "split": data_type, "title": title, "text": text, "meta": dumps(meta)})
            for voice, name in voice_files.items():
                self.audio_media(stimulus, f"audio:{voice}", str(audio_rel / name), file, line)
            self.scripts[(data_type, case_key(case_id))] = {"stimulus": stimulus, "text": text}

    def read_mcqs(self, path: Path, folder: Path, data_type: str, task: str) -> None:
        file = self.rel(path)
        data, lines = read_records(path, file)
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
            qid = id_text(record["question_id"])
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
            script = self.scripts.get((data_type, case_key(case_match.group(1)))) if case_match else None
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
