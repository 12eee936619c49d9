"""AgentViSS scenes read through an editable mapping preset (the release's field names are not public).

The importer reads `data.json` (a list of scenes or an object holding them) or, failing that, `train.jsonl`
(one scene per line, nested values possibly written as JSON text), through the preset
`resources/presets/agentviss_mapping.json`. A user's own preset comes in through
`options.extra["preset"]` (a path); `options.mapping` overrides single targets (target -> path).

What lands in the store:
- a scene is a stimulus of kind `agentviss_scene`: text = scene description; meta = dialogue type,
  conflict intensity, source, characters (names in order) and roles (per character: gender, age,
  occupation, expression style, conflict trait, initial emotion, facial expression, body action);
- media `image:group` and `image:portrait:<character>:<turn>`, where <turn> is the turn's segment `ord`;
- dialogue turns are segments (speaker, text, no times, ord from 0);
- each role's run is a prediction per (model, vision_mode VV/DV, context = role name), holding the model's
  responses; each of the four tasks judged on it (Expr, Char, Int-Reg, Int-Out) is a judgment whose
  criterion is the task;
- the label sets "AgentViSS expression style" and "AgentViSS conflict trait" for annotating scenes.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import (
    ImportOptions, ProblemLog, check_cancel, dumps, read_annotation_sidecar, read_json, read_jsonl, resolve_media,
)
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.words import AGENTVISS_TASKS
from storage.resources import PRESETS_DIR

DEFAULT_PRESET = PRESETS_DIR / "agentviss_mapping.json"

DIALOGUE_TYPES = ("persuasion", "deliberation", "information-seeking", "eristic")
EXPRESSION_STYLES = ("honest", "strategic concealment", "deception", "exaggeration", "suppression")
CONFLICT_TRAITS = ("competing", "collaborating", "compromising", "avoiding", "accommodating")
VISION_MODES = ("VV", "DV")
_SYNONYMS = {
    "expression": "Expr", "expr": "Expr", "character": "Char", "char": "Char",
    "int reg": "Int-Reg", "intreg": "Int-Reg", "intention regulation": "Int-Reg", "interaction regulation": "Int-Reg",
    "int out": "Int-Out", "intout": "Int-Out", "intention outcome": "Int-Out", "interaction outcome": "Int-Out",
    "vv": "VV", "verbalized vision": "VV", "verbalised vision": "VV", "verbalized": "VV", "text": "VV",
    "dv": "DV", "direct vision": "DV", "direct": "DV", "image": "DV",
    "information seeking": "information-seeking", "concealment": "strategic concealment",
}
SCENE_TARGETS = ("scene_id", "description", "dialogue_type", "conflict_intensity", "source", "group_image")
ROLE_TARGETS = ("role_name", "gender", "age", "occupation", "expression_style", "conflict_trait",
                "initial_emotion", "facial_expression", "body_action")
TURN_TARGETS = ("turn_speaker", "turn_text", "turn_portrait")
RESULT_TARGETS = ("result_role", "task_name", "vision_mode", "model", "score", "rationale", "response", "judge")
LIST_TARGETS = ("scenes", "roles", "turns", "results")
TARGETS = LIST_TARGETS + SCENE_TARGETS + ROLE_TARGETS + TURN_TARGETS + RESULT_TARGETS
LABEL_SETS = {"AgentViSS expression style": (EXPRESSION_STYLES, "How a role expresses what it thinks"),
              "AgentViSS conflict trait": (CONFLICT_TRAITS, "How a role handles conflict (Thomas-Kilmann)")}

_MISSING = object()


# ------------------------------------------------------------------------------------------- paths
def _decoded(value: Any) -> Any:
    """JSON written as text (train.jsonl flattens nested fields) is read as the value it holds."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _walk(value: Any, path: str, key: str | None) -> Any:
    if path == "@key":
        return key if key is not None else _MISSING
    for part in path.split("."):
        value = _decoded(value)
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return _decoded(value)


def get_value(record: Any, paths: str, key: str | None = None) -> Any:
    """The first alternative of `paths` ("a.b|c") that is present and not null, or None."""
    for path in paths.split("|"):
        value = _walk(record, path.strip(), key)
        if value is not _MISSING and value is not None:
            return value
    return None


def get_items(record: Any, paths: str) -> list[tuple[Any, str | None]] | None:
    """Items of the first alternative of `paths` that is a list ("x[]") or an object ("x{}"), with their keys.

    None when no alternative is present (as opposed to an empty list).
    """
    for path in paths.split("|"):
        path = path.strip()
        marker = path[-2:]
        if marker not in ("[]", "{}"):
            continue
        base = path[:-2]
        value = _decoded(record) if base == "" else _walk(record, base, None)
        if marker == "[]" and isinstance(value, list):
            return [(item, None) for item in value]
        if marker == "{}" and isinstance(value, dict):
            return [(item, str(name)) for name, item in value.items()]
    return None


def load_preset(options: ImportOptions) -> tuple[dict[str, str], dict[str, Any], str]:
    """The preset's fields with `options.mapping` laid over them, its constants, and where it came from."""
    source = Path(options.extra.get("preset") or DEFAULT_PRESET)
    preset = read_json(source, str(source))
    if not isinstance(preset, dict) or not isinstance(preset.get("fields"), dict):
        raise ImportFailed(RowProblem(str(source), None, "fields", "<no 'fields' object>",
                                      "a preset {\"fields\": {target: path}, \"constants\": {...}}"))
    fields = {k: v for k, v in preset["fields"].items() if isinstance(v, str)}
    fields.update(options.mapping)
    unknown = sorted(set(fields) - set(TARGETS))
    if unknown:
        raise ImportFailed(RowProblem(str(source), None, unknown[0], "<an unknown target>",
                                      "one of " + ", ".join(TARGETS)))
    missing = [t for t in ("scenes", "scene_id") if not fields.get(t)]
    if missing:
        raise ImportFailed(RowProblem(str(source), None, missing[0], "<no path>", "a JSON path for it"))
    constants = preset.get("constants") if isinstance(preset.get("constants"), dict) else {}
    return fields, constants, str(source)


def canonical(value: Any, choices: tuple[str, ...]) -> str | None:
    """`value` as one of `choices` (case, spaces, dashes and underscores ignored; common synonyms known)."""
    if value is None:
        return None
    text = re.sub(r"[\s_\-]+", " ", str(value).strip().lower())
    for choice in choices:
        if text == re.sub(r"[\s_\-]+", " ", choice.lower()):
            return choice
    mapped = _SYNONYMS.get(text)
    return mapped if mapped in choices else None


# ------------------------------------------------------------------------------------------- importer
class AgentVissImporter:
    kind = "agentviss"
    title = "AgentViSS scenes (data.json or train.jsonl, through a mapping preset)"
    version = 1

    def detect(self, path: Path) -> float:
        path = Path(path)
        source = _source_file(path) if path.is_dir() else path
        if source is None or source.name not in ("data.json", "train.jsonl") or not source.is_file():
            return 0.0
        with source.open("rb") as fh:
            head = fh.read(65536).decode("utf-8", "replace").lower()
        hints = sum(word in head for word in ("dialogue", "conflict", "portrait", "expression", "scene"))
        return 0.9 if hints >= 2 else 0.3 if path.is_dir() and (path / "images").is_dir() else 0.0

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        path = Path(path)
        source = _source_file(path) if path.is_dir() else path
        if source is None or not source.is_file():
            raise ImportFailed(RowProblem(str(path), None, None, "<no data.json or train.jsonl>",
                                          "an AgentViSS folder with data.json or train.jsonl"))
        root = path if path.is_dir() else path.parent
        fields, constants, preset_source = load_preset(options)
        plan = ImportPlan(DatasetInfo(name=options.dataset_name or f"AgentViSS {root.name}", benchmark="agentviss",
                                      root=root, source=str(source), meta={"preset": preset_source}),
                          importer=self.kind, importer_version=self.version, mapping=dict(fields))
        log = ProblemLog(options.skip_bad)
        scenes = self._scenes(source, fields, log)
        builder = _SceneBuilder(plan, fields, constants, root, options, log, source.name)
        for number, scene in scenes:
            check_cancel(options)
            builder.add(number, scene)
        builder.finish()
        _add_label_sets(plan)
        read_annotation_sidecar(root, plan, log)
        log.finish(plan)
        return plan

    @staticmethod
    def _scenes(source: Path, fields: dict[str, str], log: ProblemLog) -> list[tuple[int, Any]]:
        if source.suffix.lower() == ".jsonl":
            return read_jsonl(source, log)
        document = read_json(source)
        items = get_items(document, fields["scenes"])
        if items is None:
            raise ImportFailed(RowProblem(source.name, None, "scenes", f"<{type(document).__name__} without "
                                          f"{fields['scenes']!r}>", "a list of scenes at the preset's path"))
        return [(number, item) for number, (item, _key) in enumerate(items, start=1)]


def _source_file(folder: Path) -> Path | None:
    for name in ("data.json", "train.jsonl"):
        if (folder / name).is_file():
            return folder / name
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value).strip() or None


class _SceneBuilder:
    """Turns scene records into plan rows, logging each problem with the file and record number."""

    def __init__(self, plan: ImportPlan, fields: dict[str, str], constants: dict[str, Any], root: Path,
                 options: ImportOptions, log: ProblemLog, file: str) -> None:
        self.plan, self.fields, self.constants = plan, fields, constants
        self.root, self.options, self.log, self.file = root, options, log, file
        self.rows: dict[str, list[dict[str, Any]]] = {t: [] for t in ("stimuli", "media", "segments",
                                                                      "predictions", "judgments")}
        self.seen: dict[str, int] = {}
        self.missing_media = 0

    def field(self, record: Any, target: str, key: str | None = None) -> Any:
        paths = self.fields.get(target)
        return get_value(record, paths, key) if paths else None

    def add(self, number: int, scene: Any) -> None:
        log, file = self.log, self.file
        if not isinstance(scene, dict):
            log.add(file, number, None, f"<{type(scene).__name__}>", "a scene object")
            return
        external = _text(self.field(scene, "scene_id"))
        if external is None:
            log.add(file, number, "scene_id", "<missing>", "a scene id")
            return
        if external in self.seen:
            log.add(file, number, "scene_id", external, f"a new id (first used in record {self.seen[external]})")
            return
        self.seen[external] = number
        self.plan.origins[external] = (file, number, None)   # for problems found after reading
        problems_before = len(log.problems)
        dialogue_raw = self.field(scene, "dialogue_type")
        dialogue_type = canonical(dialogue_raw, DIALOGUE_TYPES)
        if dialogue_raw is not None and dialogue_type is None:
            log.add(file, number, "dialogue_type", dialogue_raw, "one of " + ", ".join(DIALOGUE_TYPES))
        roles, order = self.roles(number, scene)
        turns = self.turns(number, scene, external)
        if len(log.problems) > problems_before:   # a scene with a bad role or turn is skipped whole
            return
        results = self.results(number, scene, external)   # a bad result record is skipped alone
        meta = {"dialogue_type": dialogue_type, "conflict_intensity": self.field(scene, "conflict_intensity"),
                "source": _text(self.field(scene, "source")), "characters": order, "roles": roles,
                "turns": len(turns[0])}
        self.rows["stimuli"].append({"external_id": external, "kind": "agentviss_scene", "title": external,
                                     "text": _text(self.field(scene, "description")), "meta": dumps(meta)})
        self.rows["segments"] += turns[0]
        self.rows["media"] += turns[1]
        group = _text(self.field(scene, "group_image"))
        if group:
            self.media(external, "image:group", group, number)
        self.rows["predictions"] += results[0]
        self.rows["judgments"] += results[1]

    def media(self, stimulus: str, role: str, relative: str, number: int) -> None:
        resolved = resolve_media(self.root, relative, self.options.allow_outside_root, self.log, self.file, number)
        if resolved is None:
            return
        stored, present = resolved
        if not present and not Path(relative).is_absolute() and (self.root / "images" / relative).is_file():
            stored, present = str(Path("images") / relative), True
        self.missing_media += not present
        self.rows["media"].append({"stimulus": stimulus, "role": role, "path": stored, "present": present,
                                   "offset_s": 0.0})

    def roles(self, number: int, scene: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
        profiles: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        for index, (role, key) in enumerate(get_items(scene, self.fields.get("roles", "")) or []):
            name = _text(self.field(role, "role_name", key))
            if name is None:
                self.log.add(self.file, number, f"roles[{index}].role_name", "<missing>",
                             "a role name")
                continue
            profile = {t: self.field(role, t, key) for t in ROLE_TARGETS[1:]}
            for target, choices in (("expression_style", EXPRESSION_STYLES), ("conflict_trait", CONFLICT_TRAITS)):
                if profile[target] is not None:
                    value = canonical(profile[target], choices)
                    if value is None:
                        self.log.add(self.file, number, f"roles[{index}].{target}", profile[target],
                                     "one of " + ", ".join(choices))
                    profile[target] = value
            if name in profiles:
                self.log.add(self.file, number, f"roles[{index}]", name, "each role once per scene")
                continue
            profiles[name] = profile
            order.append(name)
        return profiles, order

    def turns(self, number: int, scene: dict[str, Any], external: str
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        segments: list[dict[str, Any]] = []
        media_before = len(self.rows["media"])
        for index, (turn, key) in enumerate(get_items(scene, self.fields.get("turns", "")) or []):
            speaker = _text(self.field(turn, "turn_speaker", key))
            text = self.field(turn, "turn_text", key)
            if isinstance(turn, str):   # a bare line of dialogue
                text = turn
            if text is None:
                self.log.add(self.file, number, f"turns[{index}].turn_text", "<missing>",
                             "the turn's text")
                continue
            segments.append({"stimulus": external, "ord": index, "speaker": speaker, "text": _text(text)})
            portrait = _text(self.field(turn, "turn_portrait", key))
            if portrait:
                self.media(external, f"image:portrait:{speaker or 'unknown'}:{index}", portrait, number)
        portraits = self.rows["media"][media_before:]
        del self.rows["media"][media_before:]
        return segments, portraits

    def results(self, number: int, scene: dict[str, Any], external: str
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        items = [(item, key, None) for item, key in get_items(scene, self.fields.get("results", "")) or []]
        if not items:
            for role, role_key in get_items(scene, self.fields.get("roles", "")) or []:
                role_name = _text(self.field(role, "role_name", role_key))
                items += [(item, key, role_name) for item, key in
                          get_items(role, self.fields.get("results", "")) or []]
        predictions: dict[tuple[str, str, str], dict[str, Any]] = {}
        judgments: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        for index, (item, key, role_name) in enumerate(items):
            where = f"results[{index}]"
            role = _text(self.field(item, "result_role", key)) or role_name
            model = _text(self.field(item, "model", key))
            mode_raw = self.field(item, "vision_mode", key)
            mode = canonical(mode_raw, VISION_MODES)
            task_raw = self.field(item, "task_name", key)
            task = canonical(task_raw, AGENTVISS_TASKS)
            score_raw = self.field(item, "score", key)
            checks = [(role is None, "result_role", "<missing>", "the role the result is for"),
                      (model is None, "model", "<missing>", "a model name"),
                      (mode is None, "vision_mode", mode_raw if mode_raw is not None else "<missing>", "VV or DV"),
                      (task is None, "task_name", task_raw if task_raw is not None else "<missing>",
                       "one of " + ", ".join(AGENTVISS_TASKS))]
            score = None
            if score_raw is not None:
                try:
                    score = float(score_raw)
                except (TypeError, ValueError):
                    checks.append((True, "score", score_raw, "a number"))
            bad = [(t, found, expected) for failed, t, found, expected in checks if failed]
            for target, found, expected in bad:
                self.log.add(self.file, number, f"{where}.{target}", found, expected)
            if bad:
                continue
            judge = _text(self.field(item, "judge", key)) or str(self.constants.get("judge") or "")
            run = (model, mode, role)
            prediction = predictions.setdefault(run, {
                "stimulus": external, "model": model, "modality": "", "prompt_setting": "", "vision_mode": mode,
                "context": role, "responses": {}})
            response = _text(self.field(item, "response", key))
            if response is not None:
                prediction["responses"][task] = response
            if (*run, judge, task) in judgments:
                self.log.add(self.file, number, where, f"<a second {task} result for {role}, {model}, {mode}>",
                             "one result per role, model, vision mode and task")
                continue
            scale = self.constants.get("scale_max")
            judgments[(*run, judge, task)] = {
                "stimulus": external, "model": model, "modality": "", "prompt_setting": "", "vision_mode": mode,
                "context": role, "judge": judge, "criterion": task, "score": score,
                "scale_max": float(scale) if isinstance(scale, (int, float)) else None,
                "rationale": _text(self.field(item, "rationale", key))}
        rows = []
        for prediction in predictions.values():
            responses = prediction.pop("responses")
            distinct = set(responses.values())
            prediction["raw_output"] = distinct.pop() if len(distinct) == 1 else None
            prediction["meta"] = dumps({"responses": responses}) if responses else None
            rows.append(prediction)
        return rows, list(judgments.values())

    def finish(self) -> None:
        for table, rows in self.rows.items():
            if rows:
                self.plan.add(table, rows)
        if not self.rows["stimuli"] and not self.log.problems:
            raise ImportFailed(RowProblem(self.file, None, "scenes", "<no scenes>", "at least one scene"))
        if self.missing_media:
            self.plan.notes.append(f"{self.missing_media} media files missing")


def _add_label_sets(plan: ImportPlan) -> None:
    plan.add("label_sets", [{"name": name, "scope": "whole", "description": description, "source": "AgentViSS"}
                            for name, (_labels, description) in LABEL_SETS.items()])
    plan.add("labels", [{"label_set": name, "name": label, "ord": i}
                        for name, (labels, _d) in LABEL_SETS.items() for i, label in enumerate(labels)])
