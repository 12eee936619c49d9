"""EchoMind's file layout: the names, fields and criteria its files use, and helpers for reading them."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from storage.importers.common import read_json

KIND = "echomind"
VERSION = 1
TAXONOMY_FILE = "echomind_vocal_attributes.json"
NOT_IN_TAXONOMY = "not in the taxonomy"   # how a label for an attribute the taxonomy lacks is flagged
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
STRUCTURAL_FOLDERS = re.compile(r"^(outputs?|output_(human|synthesis)|(asr|mcq|response|conversation|judge|judgments?)"
                         r"_outputs?|audio_output_(true|false)|judges?|judgments|leaderboards?|"
                         + "|".join(PROMPTS) + r")$", re.IGNORECASE)
OPTION_LINE = re.compile(r"^\s*\(?([A-Z])\s*[\.\):]\s*(.*?)\s*$")


# A clone of the release repository keeps the data the benchmark's scripts read in `dataset/data_*`, the
# outputs they write in `output/output_*` and the leaderboards of the project page in `Demo/Data/`; the rest
# of a clone (src/, Demo/Audio/, ...) is code and web assets.
CLONE_DATA = Path("dataset")
CLONE_OUTPUTS = (Path("output"), Path("outputs"))
CLONE_BOARDS = Path("Demo") / "Data"


def data_dirs(root: Path) -> list[Path]:
    """The `data_*` folders of a release, also inside a clone's `dataset/` (or `root` itself when it is one)."""
    def is_data(folder: Path) -> bool:
        return any(folder.glob("script_info*.json")) or (folder / "MCQ").is_dir()
    if is_data(root):
        return [root]
    found: list[Path] = []
    for parent in (root, root / CLONE_DATA):
        if parent.is_dir():
            found += sorted(p for p in parent.iterdir() if p.is_dir() and p.name.startswith("data_") and is_data(p))
    return found


def is_clone(root: Path) -> bool:
    """Whether `root` is a clone of the release repository: it holds `dataset/data_*`, `output/output_*` or
    `Demo/Data/` (a folder merely named dataset/ or output/ is not enough)."""
    return root.is_dir() and (any((root / CLONE_DATA).glob("data_*")) or any(
        (root / CLONE_OUTPUTS[0]).glob("output_*")) or (root / CLONE_BOARDS).is_dir())


def clone_json_files(root: Path) -> list[Path]:
    """The JSON files of a clone's outputs and leaderboards, the only ones of a clone read as results."""
    found: list[Path] = []
    for part in CLONE_OUTPUTS:
        if (root / part).is_dir():
            found += sorted(p for p in (root / part).rglob("*.json") if not any(
                q.startswith(".") for q in p.relative_to(root).parts))
    if (root / CLONE_BOARDS).is_dir():
        found += sorted(p for p in (root / CLONE_BOARDS).glob("*.json") if is_leaderboard_file(p))
    return found


def is_leaderboard_file(path: Path) -> bool:
    try:
        return b'"leaderboardData"' in path.open("rb").read(65536)
    except OSError:
        return False


def record_lines(path: Path) -> list[int]:
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


def read_records(path: Path, rel: str) -> tuple[Any, list[int]]:
    """The decoded file and, when it is a list, each record's line number."""
    data = read_json(path, rel)
    return data, (record_lines(path) if isinstance(data, list) else [])


def path_tokens(parts: list[str]) -> set[str]:
    found: set[str] = set()
    for part in parts:
        found.update(t for t in re.split(r"[_\-\.\s/]+", part.lower()) if t)
    return found


def id_text(value: Any) -> str | None:
    """An id given as a string or an integer, as text; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def case_key(case_id: str) -> str:
    """Case ids compare by their number when they are written as `id_854` or `854`."""
    match = re.fullmatch(r"(?:id_?)?0*(\d+)", case_id.strip(), re.IGNORECASE)
    return match.group(1) if match else case_id.strip()


def parse_options(value: Any) -> dict[str, str] | None:
    """Options as letter -> text from a string ("A. ...\\nB. ..."), a list or a dict; None if unreadable."""
    options: dict[str, str] = {}
    if isinstance(value, str):
        lines = [line for line in value.splitlines() if line.strip()]
        for line in lines:
            match = OPTION_LINE.match(line)
            if match:
                options[match.group(1).upper()] = match.group(2)
            elif options:  # a wrapped option continues on the next line
                last = list(options)[-1]
                options[last] = f"{options[last]} {line.strip()}"
            else:
                return None
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        for index, item in enumerate(value):
            match = OPTION_LINE.match(item)
            letter = match.group(1).upper() if match else chr(ord("A") + index)
            options[letter] = match.group(2) if match else item.strip()
    elif isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        options = {str(k).strip().upper(): v.strip() for k, v in value.items()}
    else:
        return None
    return options if len(options) >= 2 else None


def counted(n: int, noun: str) -> str:
    """`n` and the noun, plural unless one: "1 script", "3 scripts"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def clean_label(text: str) -> str:
    return re.sub(r"^\s*(target|alternative|neutral)\s*:\s*", "", text, flags=re.IGNORECASE)
