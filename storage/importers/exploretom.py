"""ExploreToM story questions (the released CSV) and NCP-ExploreToM tasks with model action traces.

ExploreToM CSV: one stimulus of kind `story` per row; text = `infilled_story` (else `story_structure` or
`raw_story`), title = `question`, ground truth = `expected_answer`, meta = nth_order, false_belief, params
and every other `qprop=`/`sprop=`/`param=` column as it is.

NCP (the release format is not public, so this is ours): a task is a JSON object
    {"task_id": "...", "goal": [sentence or {holders, entity, property, value}, ...],
     "context": "...", "false_belief": true, "goal_type": "...",
     "initial_steps": [{action, args, kwargs}, ...], "reference_trace": [...]}
in a file holding one task, a list of tasks or {"tasks": [...]}; or a folder of such files (`tasks/` if it
exists), with model traces under `traces/`. A trace is {"model", "task_id", "steps": [...], "raw_output"}
(a list of them, {"model", "traces": [...]}, JSON lines, or `traces/<model>/<task_id>.json` with the names
taken from the path). ExploreToM's golden-trace file ({group: {scenario: {steps, story, questions ...}}})
reads as one task per scenario with its steps as the reference trace and no goal.

In the store, a task's reference trace (trace steps without a model) is its set-up steps followed by its
reference steps, and the stimulus meta `setup_steps` says how many of them are set-up: a model's trace is
played after the set-up. Each model's attempt is a prediction (run conditions all '') whose trace steps
follow; whether it reached the goal is computed later by the belief engine, so `correct` stays empty.

This reader keeps a task's goal as written (goal-atom rows holding a sentence in `text`, or an atom's fields
as given) and checks only the shape of its steps; `app.benchmarks.ncp` reads the goal with the one goal
parser and checks the steps' actions against the belief engine before the plan is written.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import (
    ImportOptions, ProblemLog, check_cancel, dumps, json_objects, json_values, read_annotation_sidecar, read_json,
    read_jsonl,
)
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.words import STORY_KIND, TASK_KIND
from storage.tables import LINE, read_table
from storage.steps import read_steps

STORY_COLUMNS = ("infilled_story", "story_structure", "raw_story")
_TRUE = {"true", "1", "yes", "t"}
_FALSE = {"false", "0", "no", "f"}


# ------------------------------------------------------------------------------------------- ExploreToM
class ExploreToMImporter:
    kind = "exploretom"
    title = "ExploreToM story questions (CSV)"
    version = 1

    def detect(self, path: Path) -> float:
        path = Path(path)
        if path.is_dir():
            files = sorted(path.glob("*.csv"))
            return 0.85 if files and self.detect(files[0]) else 0.0
        if path.suffix.lower() != ".csv" or not path.is_file():
            return 0.0
        with path.open("rb") as fh:
            header = fh.readline().decode("utf-8", "replace")
        names = {c.strip().strip('"') for c in header.split(",")}
        return 0.95 if "expected_answer" in names and names & set(STORY_COLUMNS) else 0.0

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        path = Path(path)
        files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
        if not files:
            raise ImportFailed(RowProblem(str(path), None, None, "<no .csv files>", "ExploreToM CSV files"))
        root = path if path.is_dir() else path.parent
        plan = ImportPlan(DatasetInfo(name=options.dataset_name or f"ExploreToM {root.name}",
                                      benchmark="exploretom", root=root, source=str(path)),
                          importer=self.kind, importer_version=self.version)
        log = ProblemLog(options.skip_bad)
        seen: dict[str, str] = {}
        for file in files:
            check_cancel(options)
            self._read_file(file, plan, options, log, seen, prefix=file.stem + ":" if len(files) > 1 else "")
        read_annotation_sidecar(root, plan, log)
        log.finish(plan)
        return plan

    def _read_file(self, file: Path, plan: ImportPlan, options: ImportOptions, log: ProblemLog,
                   seen: dict[str, str], prefix: str) -> None:
        frame = read_table(file, file.name, log).frame
        columns = [c for c in frame.columns if c != LINE]
        story = next((c for c in STORY_COLUMNS if c in columns), None)
        missing = [c for c in ("question", "expected_answer") if c not in columns]
        if story is None:
            missing.append(" or ".join(STORY_COLUMNS))
        if missing:
            raise ImportFailed(RowProblem(file.name, 1, None, f"<no column {', '.join(missing)}>",
                                          "ExploreToM columns; the file has " + ", ".join(columns)))
        id_column = options.mapping.get("stimulus")
        if id_column and id_column not in columns:
            raise ImportFailed(RowProblem(file.name, 1, "stimulus", f"<no column {id_column!r}>",
                                          "one of " + ", ".join(columns)))
        belief_column = "is_false_belief" if "is_false_belief" in columns else next(
            (c for c in columns if "is_false_belief" in c), None)
        extra_columns = [c for c in columns if c.split("=", 1)[0] in ("qprop", "sprop", "param")
                         and c not in ("qprop=nth_order", "qprop=params")]
        plan.mapping.update({"stimulus": id_column or "<row number>", "text": story, "title": "question",
                             "label": "expected_answer"})
        lines = frame.get_column(LINE)
        # Each row's first problem, in the order the checks are made; a row's id counts as used once it is
        # read, even if the row is refused for something else.
        problems: dict[int, tuple[str | None, Any, str]] = {}
        if id_column:
            ids = [prefix + (v or "").strip() for v in frame.get_column(id_column).to_list()]
            for index, external in enumerate(ids):
                if not external.strip(":"):
                    problems[index] = (id_column, "<empty>", "a question id")
                elif external in seen:
                    problems[index] = (id_column, external, f"a new id (first used at {seen[external]})")
                else:
                    seen[external] = f"{file.name}:{lines[index]}"
            external_ids: pl.Series | pl.Expr = pl.Series("external_id", ids, dtype=pl.String)
        else:
            # the row's number: never empty, and unique, the file's name setting apart those of other files
            external_ids = (pl.lit(prefix) + (pl.col(LINE) - 1).cast(pl.String).str.zfill(6)).alias("external_id")
        for column in (story, "question"):
            for index in _blank_rows(frame, column):
                problems.setdefault(index, (column, "<empty>", "a story and a question"))
        orders = _distinct_values(frame, "qprop=nth_order", _order)
        flags = _distinct_values(frame, belief_column, _flag)
        for column, values, expected in (("qprop=nth_order", orders, "a whole number (-1, 1 or 2)"),
                                         (belief_column, flags, "True or False")):
            if values is None:
                continue
            bad = [raw for raw, value in values.items() if value is _BAD]
            if not bad:
                continue
            for index in frame.select(pl.col(column).is_in(bad).arg_true()).to_series().to_list():
                problems.setdefault(index, (column, frame[column][index] if column == belief_column
                                            else frame[column][index].strip(), expected))
        for index in sorted(problems):
            log.add(file.name, lines[index], *problems[index])
        if len(problems) == frame.height:
            return
        kept = frame.with_columns(external_ids)
        if problems:
            kept = kept.filter(~pl.int_range(pl.len()).is_in(sorted(problems)))
        # the tracker's sentences, kept as written for the app to read into a trace: the first column of them
        # that the row fills, unless that is the story itself
        structure: Any = None
        for column in reversed([c for c in ("story_structure", "raw_story") if c in columns]):
            structure = pl.when(_filled(pl.col(column))).then(
                pl.col(column) if column != story else pl.lit(None, pl.String)).otherwise(structure)
        members = {column: _stated(pl.col(column)) for column in extra_columns}
        if structure is not None:
            members["story_structure"] = _stated(structure)
        if orders is not None:
            order = _mapped(orders, "qprop=nth_order", pl.Int64)
            members["nth_order"] = pl.when(order.is_not_null()).then(json_values(order))
        if flags is not None:
            members["false_belief"] = json_values(_mapped(flags, belief_column, pl.Boolean))   # null is stated
        if "qprop=params" in columns:
            members["params"] = _stated(pl.col("qprop=params"))
        split = options.mapping.get("split")
        plan.add("stimuli", kept.select(
            "external_id", kind=pl.lit(STORY_KIND), ground_truth=pl.col("expected_answer"), title=pl.col("question"),
            text=pl.col(story), meta=json_objects(members),
            split=pl.col(split) if split in columns else pl.lit(None, pl.String)))


def _filled(value: pl.Expr) -> pl.Expr:
    """Whether a value is there: not missing, not empty (a quoted empty field reads as empty text)."""
    return value.is_not_null() & value.ne("")


def _stated(text: pl.Expr) -> pl.Expr:
    """A meta member's JSON text where the row has text, else null (the member is left out)."""
    return pl.when(_filled(text)).then(json_values(text))


_BAD = object()   # a value a column's check refuses


# Every character Python's str.strip() takes for white space (polars' own list leaves out a few controls).
_SPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
          "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _blank_rows(frame: pl.DataFrame, column: str) -> list[int]:
    """The rows whose value is missing or only spaces (as Python reads spaces)."""
    value = pl.col(column)
    return frame.select((value.is_null() | value.str.strip_chars(_SPACE).eq("")).arg_true()).to_series().to_list()


def _distinct_values(frame: pl.DataFrame, column: str | None, read: Any) -> dict[str, Any] | None:
    """Each distinct text of a column read once by `read` (None: no such column); a release repeats a few."""
    if column is None or column not in frame.columns:
        return None
    return {raw: read(raw) for raw in frame.get_column(column).drop_nulls().unique().to_list()}


def _order(raw: str) -> Any:
    """A question's order (-1, 1 or 2, written as a number), None when blank, `_BAD` when not a number."""
    text = raw.strip()
    if not text:
        return None
    try:
        return int(float(text))
    except (ValueError, OverflowError):   # "inf" is no whole number either
        return _BAD


def _flag(raw: str) -> Any:
    """A false-belief flag (True, false, 1, no ...), None when blank, `_BAD` when none of them."""
    flag = raw.strip().lower()
    if flag and flag not in _TRUE | _FALSE:
        return _BAD
    return flag in _TRUE if flag else None


def _mapped(values: dict[str, Any], column: str, dtype: pl.DataType) -> pl.Expr:
    """The column's values as read by `_distinct_values` (refused ones are in rows already left out)."""
    good = {raw: value for raw, value in values.items() if value is not _BAD}
    return pl.col(column).replace_strict(list(good), list(good.values()), default=None, return_dtype=dtype)


# ------------------------------------------------------------------------------------------- NCP
class NcpImporter:
    kind = "ncp"
    title = "NCP-ExploreToM tasks and model action traces (JSON)"
    version = 1

    def detect(self, path: Path) -> float:
        path = Path(path)
        if path.is_dir():
            candidates = sorted((path / "tasks").glob("*.json")) if (path / "tasks").is_dir() else []
            candidates += sorted(path.glob("*.json"))[:3]
            return 0.8 if any(self._json_kind(f) for f in candidates) else 0.0
        kind = self._json_kind(path)
        return {"golden": 0.9, "tasks": 0.8, "traces": 0.6}.get(kind or "", 0.0)

    @staticmethod
    def _json_kind(path: Path) -> str | None:
        suffix = path.suffix.lower()
        if suffix not in (".json", ".jsonl") or not path.is_file() or path.stat().st_size > 50_000_000:
            return None
        try:
            with path.open("rb") as fh:
                value = json.loads(fh.readline() if suffix == ".jsonl" else fh.read())
        except (UnicodeDecodeError, json.JSONDecodeError, OSError):
            return None
        return _shape(value) if suffix == ".json" or (isinstance(value, dict) and "steps" in value) else None

    def plan(self, path: Path, options: ImportOptions) -> ImportPlan:
        path = Path(path)
        if not path.exists():
            raise ImportFailed(RowProblem(str(path), None, None, "<no such file or folder>", "an NCP task file"))
        root = path if path.is_dir() else path.parent
        plan = ImportPlan(DatasetInfo(name=options.dataset_name or f"NCP-ExploreToM {root.name}",
                                      benchmark="ncp", root=root, source=str(path)),
                          importer=self.kind, importer_version=self.version,
                          mapping={"stimulus": "task_id", "goal": "goal", "setup": "initial_steps",
                                   "reference": "reference_trace", "text": "context",
                                   "model": "model", "trace": "steps"})
        log = ProblemLog(options.skip_bad)
        task_files, trace_files = _ncp_files(path)
        tasks: dict[str, str] = {}
        for file in task_files:
            check_cancel(options)
            value = read_json(file, _relative(file, root))
            kind = _shape(value)
            if kind == "golden":
                _read_golden(value, _relative(file, root), plan, log, tasks)
            elif kind == "tasks":
                _read_tasks(value, _relative(file, root), plan, log, tasks)
            elif kind == "traces":
                trace_files.append(file)
            else:
                raise ImportFailed(RowProblem(_relative(file, root), None, None, f"<{type(value).__name__} "
                                              "without task fields>", "an NCP task (task_id, goal, steps), a "
                                              "list of tasks, or a model trace (model, task_id, steps)"))
        for file in trace_files:
            check_cancel(options)
            _read_traces(file, root, plan, log, tasks if task_files else None)
        read_annotation_sidecar(root, plan, log)
        log.finish(plan)
        return plan


def _relative(file: Path, root: Path) -> str:
    try:
        return str(file.relative_to(root)) or file.name
    except ValueError:
        return file.name


def _ncp_files(path: Path) -> tuple[list[Path], list[Path]]:
    if path.is_file():
        return ([], [path]) if path.suffix.lower() == ".jsonl" else ([path], [])
    task_dir = path / "tasks" if (path / "tasks").is_dir() else path
    tasks = sorted(task_dir.glob("*.json"))
    traces = sorted(p for p in (path / "traces").rglob("*") if p.suffix.lower() in (".json", ".jsonl")) \
        if (path / "traces").is_dir() else []
    return tasks, traces


def _shape(value: Any) -> str | None:
    """golden, tasks or traces: what a parsed JSON file holds (None: none of them)."""
    if isinstance(value, dict):
        groups = [v for k, v in value.items() if not k.startswith("_")]
        if groups and all(isinstance(g, dict) and g and all(isinstance(s, dict) and "steps" in s
                                                            and "state_after" in (s["steps"] or [{}])[0]
                                                            for s in g.values()) for g in groups):
            return "golden"
        if "model" in value:
            return "traces"
        if isinstance(value.get("tasks"), list) or _task_id(value) is not None:
            return "tasks"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        if all("model" in v for v in value):
            return "traces"
        if all(_task_id(v) is not None for v in value):
            return "tasks"
    return None


def _task_id(record: dict[str, Any]) -> Any:
    for key in ("task_id", "id", "name"):
        if key in record:
            return record[key]
    return None


def _first(record: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in record:
            return record[key]
    return None


def parse_steps(value: Any, file: str, record: int | None, where: str, log: ProblemLog) -> list[dict[str, Any]] | None:
    """The steps of a list (`storage.steps.read_steps`), or None after logging each bad one by its field.

    Action names are not checked here: whether the engine has an action is the belief engine's to say
    (`app.benchmarks.ncp` checks a task's own steps; a model may call an action that does not exist, which
    the engine then shows as failed).
    """
    if value is None:
        return []
    if not isinstance(value, list):
        log.add(file, record, where, f"<{type(value).__name__}>", "a list of steps")
        return None
    steps, problems = read_steps(value)
    for p in problems:
        found = ("<missing>" if p.found is None else p.found) if p.part == "action" else f"<{type(p.found).__name__}>"
        log.add(file, record, f"{where}[{p.index}]" + (f".{p.part}" if p.part else ""), found, p.expected)
    return None if problems else [{"action": a, "args": args, "kwargs": kwargs} for a, args, kwargs in steps]


def _goal_rows(value: Any, external: str, file: str, record: int, log: ProblemLog) -> list[dict[str, Any]] | None:
    """The goal as written: one row per sentence (in `text`) or per atom object (its fields as given)."""
    if value is None:
        return []
    if isinstance(value, dict) and "atoms" in value:
        value = value["atoms"]
    items = value if isinstance(value, list) else [value]
    rows, ok = [], True
    for index, item in enumerate(items):
        if isinstance(item, str):
            rows.append({"stimulus": external, "ord": index, "text": item})
        elif isinstance(item, dict):
            holders = item.get("holders", [])
            rows.append({"stimulus": external, "ord": index, "holders": dumps(holders),
                         "entity": _text(item.get("entity")), "property": _text(item.get("property")) or "",
                         "value": _text(item.get("value")), "text": _text(item.get("text"))})
        else:
            log.add(file, record, f"goal[{index}]", f"<a {type(item).__name__}>",
                    "a goal sentence or an atom {holders, entity, property, value}")
            ok = False
    return rows if ok else None


def _text(value: Any) -> str | None:
    """A field kept as text for the goal parser to judge (a number stays readable, a missing one is None)."""
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(value)


def _add_task(plan: ImportPlan, log: ProblemLog, tasks: dict[str, str], file: str, record: int,
              task: dict[str, Any], external: str, reference_key: tuple[str, ...]) -> None:
    if external in tasks:
        log.add(file, record, "task_id", external, f"a new task id (first used in {tasks[external]})")
        return
    tasks[external] = f"{file} record {record}"
    setup = parse_steps(_first(task, "initial_steps", "setup", "initial_trace", "initial"), file, record,
                        "initial_steps", log)
    reference = parse_steps(_first(task, *reference_key), file, record, reference_key[0], log)
    goal = _goal_rows(_first(task, "goal", "goals", "goal_atoms"), external, file, record, log)
    if setup is None or reference is None or goal is None:
        return
    try:
        false_belief = _bool(_first(task, "false_belief", "is_false_belief", "is_false_belief_story"))
    except ValueError as exc:
        log.add(file, record, "false_belief", exc.args[0], "true or false")
        return
    context = _first(task, "context", "story", "description")
    # names the task declares besides its steps, for reading its goal (app.benchmarks.ncp)
    declared = {key: [str(v) for v in task[key]] for key in ("rooms", "containers", "people")
                if isinstance(task.get(key), list)}
    if isinstance(task.get("state_types"), dict):
        declared["state_types"] = {str(k): str(v) for k, v in task["state_types"].items()}
    meta: dict[str, Any] = {"false_belief": false_belief, "setup_steps": len(setup), "source": file,
                            "declared": declared}
    if isinstance(task.get("goal_type"), str):
        meta["goal_type_given"] = [task["goal_type"]]
    for key in ("context_id", "goal_id", "questions", "reference_returned"):
        if key in task:
            meta[key] = task[key]
    plan.origins[external] = (file, record, reference_key[0])
    plan.add("stimuli", [{"external_id": external, "kind": TASK_KIND, "title": task.get("title"),
                          "text": context if isinstance(context, str) else None, "meta": dumps(meta)}])
    if goal:
        plan.add("goal_atoms", goal)
    steps = setup + reference
    if steps:
        plan.add("trace_steps", _step_rows(external, None, steps))


def _step_rows(stimulus: str, model: str | None, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"stimulus": stimulus, "model": model, "modality": "" if model else None,
             "prompt_setting": "" if model else None, "vision_mode": "" if model else None,
             "context": "" if model else None, "step_index": i, "action": s["action"],
             "args": json.dumps(s["args"], ensure_ascii=False), "kwargs": json.dumps(s["kwargs"], ensure_ascii=False)}
            for i, s in enumerate(steps)]


def _read_tasks(value: Any, file: str, plan: ImportPlan, log: ProblemLog, tasks: dict[str, str]) -> None:
    records = value["tasks"] if isinstance(value, dict) and "tasks" in value else (
        value if isinstance(value, list) else [value])
    for number, task in enumerate(records, start=1):
        if not isinstance(task, dict):
            log.add(file, number, None, f"<{type(task).__name__}>", "a task object")
            continue
        external = _task_id(task)
        if not isinstance(external, (str, int)) or not str(external).strip():
            log.add(file, number, "task_id", external if external is not None else "<missing>", "a task id")
            continue
        _add_task(plan, log, tasks, file, number, task, str(external).strip(),
                  ("reference_trace", "reference_steps", "steps", "trace", "solution"))


def _read_golden(value: dict[str, Any], file: str, plan: ImportPlan, log: ProblemLog,
                 tasks: dict[str, str]) -> None:
    number = 0
    for group, scenarios in value.items():
        if group.startswith("_"):
            continue
        for name, scenario in scenarios.items():
            number += 1
            steps = scenario.get("steps") or []
            task = {"steps": [{k: s.get(k) for k in ("action", "args", "kwargs")} for s in steps
                              if isinstance(s, dict)],
                    "story": scenario.get("story"),
                    "is_false_belief_story": scenario.get("is_false_belief_story"),
                    "questions": scenario.get("questions"),
                    "reference_returned": [s.get("returned") for s in steps if isinstance(s, dict)],
                    "title": name}
            if len(task["steps"]) != len(steps):
                log.add(file, number, f"{group}.{name}.steps", "<a step that is not an object>",
                        "steps {action, args, kwargs, returned, state_after}")
                continue
            _add_task(plan, log, tasks, file, number, task, f"{group}.{name}", ("steps",))


def _read_traces(path: Path, root: Path, plan: ImportPlan, log: ProblemLog, tasks: dict[str, str] | None) -> None:
    file = _relative(path, root)
    if path.suffix.lower() == ".jsonl":
        records = read_jsonl(path, log)
    else:
        value = read_json(path, file)
        if isinstance(value, dict) and isinstance(value.get("traces"), list):
            base = {k: v for k, v in value.items() if k != "traces"}
            records = [(i, {**base, **t} if isinstance(t, dict) else t)
                       for i, t in enumerate(value["traces"], start=1)]
        elif isinstance(value, list):
            records = list(enumerate(value, start=1))
        else:
            records = [(1, value)]
    # traces/<model>/<task>.json: names from the path when the record leaves them out
    parts = path.relative_to(root).parts
    folder_model = parts[-2] if len(parts) >= 3 and parts[0] == "traces" else None
    seen: set[tuple[str, str]] = set()
    predictions, steps_rows = [], []
    for number, record in records:
        if not isinstance(record, dict):
            log.add(file, number, None, f"<{type(record).__name__}>", "a trace object {model, task_id, steps}")
            continue
        model = record.get("model") or folder_model
        task = _task_id(record) if _task_id(record) is not None else (path.stem if folder_model else None)
        if not isinstance(model, str) or not model.strip():
            log.add(file, number, "model", model if model is not None else "<missing>", "a model name")
            continue
        if not isinstance(task, (str, int)) or not str(task).strip():
            log.add(file, number, "task_id", task if task is not None else "<missing>", "a task id")
            continue
        task = str(task).strip()
        if tasks is not None and task not in tasks:
            log.add(file, number, "task_id", task, "the id of a task in this import")
            continue
        if (model, task) in seen:
            log.add(file, number, "model,task_id", f"<a second trace of {model} on {task}>", "one trace each")
            continue
        seen.add((model, task))
        steps = parse_steps(_first(record, "steps", "trace", "actions"), file, number, "steps", log)
        if steps is None:
            continue
        raw = record.get("raw_output")
        predictions.append({"stimulus": task, "model": model, "modality": "", "prompt_setting": "",
                            "vision_mode": "", "context": "", "raw_output": raw if isinstance(raw, str) else None,
                            "answer": record.get("answer") if isinstance(record.get("answer"), str) else None,
                            "latency_s": record.get("latency_s") if isinstance(record.get("latency_s"),
                                                                               (int, float)) else None,
                            "meta": dumps({"steps": len(steps), "source": file})})
        steps_rows += _step_rows(task, model, steps)
        if isinstance(record.get("organisation"), str):
            plan.add("models", [{"model": model, "organisation": record["organisation"]}])
    if predictions:
        plan.add("predictions", pl.DataFrame(predictions, infer_schema_length=None))
    if steps_rows:
        plan.add("trace_steps", steps_rows)
