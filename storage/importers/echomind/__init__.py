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
the same name), or a single leaderboard or output JSON file. A clone of the release repository is read as the
benchmark's own scripts lay it out: `dataset/data_*` (the data folders above), `output/output_*` (their
outputs) and `Demo/Data/` (the leaderboards); the rest of a clone (code, web assets) is not read, and the
report says what was found in each part.

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
A `spoken_info` attribute the taxonomy (resources/label_sets/echomind_vocal_attributes.json) does not hold
is kept: it becomes a new label of that set whose description says "not in the taxonomy", the script's meta
says `in_taxonomy: false`, and the report lists each such attribute with its count and first line.
Unknown release fields are sniffed: the script text from script/speak_A/text/...; the MCQ answer key from
answer/label/gt/correct_answer/...; `--map text=FIELD` and `--map label=FIELD` override the guess.

Answers are kept as the files give them: the MCQ key as written and each MCQ reply as raw output. Which option
a key or a reply names, and whether the reply is correct, is EchoMind's rule in `app.benchmarks.echomind`,
applied to the plan before it is written (the same parser reads live replies).

The reader is split by what it reads: `files` (the release's names and file helpers), `release` (the data
folders), `outputs` (model outputs), `judges` (judge scores and leaderboards) and `reader` (the plan).
"""
from __future__ import annotations

from pathlib import Path

from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.importers.echomind.files import (KIND, VERSION, clone_json_files, data_dirs, is_clone, is_leaderboard_file,
                                              parse_options)
from storage.importers.echomind.reader import EchoMindReader
from storage.importers.plan import ImportPlan

__all__ = ["EchoMindImporter", "parse_options"]


class EchoMindImporter:
    kind = KIND
    title = "EchoMind (scripts in three voices, MCQs, model outputs, judges, leaderboards)"
    version = VERSION

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
        if data_dirs(path):
            return 0.95
        if is_clone(path) and clone_json_files(path):
            return 0.9
        if any(is_leaderboard_file(p) for p in sorted(path.glob("*.json"))[:20]):
            return 0.6
        return 0.0

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        path = Path(path)
        if not path.exists():
            raise ImportFailed(f"{path} does not exist")
        root = path if path.is_dir() else path.parent
        reader = EchoMindReader(root, options)
        if path.is_dir():
            reader.read_release()
        else:
            reader.read_output_file(path)
        return reader.finish(path)
