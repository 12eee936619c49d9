"""What an importer produces: the unified model as polars frames, checked and ready to write.

Importers only read files and build an `ImportPlan` holding what the files say (a model's raw reply, a goal
as written, the steps as given); the benchmark's rules in `app.benchmarks` then interpret it (parse answers,
score them, parse goals), and `storage.importers.writer.write_plan` writes the plan in one transaction. So a
dry run is a plan that is never written, and every importer gets the same all-or-nothing, idempotent write.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.value_kinds import shown_value, wrong_kinds

# Columns of each frame. `stimulus` columns hold the dataset's own external ids; the writer maps them to
# store ids. Run conditions (modality, prompt_setting, vision_mode, context) are '' when not applicable.
RUN_KEY = {"model": pl.String, "modality": pl.String, "prompt_setting": pl.String,
           "vision_mode": pl.String, "context": pl.String}

FRAME_SCHEMAS: dict[str, dict[str, Any]] = {
    # `sort_key`: the id's natural sort key (`storage.natural_order`) where the reader worked it out, else null
    # and worked out as the stimulus is written
    "stimuli": {"external_id": pl.String, "kind": pl.String, "ground_truth": pl.String,
                "split": pl.String, "title": pl.String, "text": pl.String, "meta": pl.String, "sort_key": pl.String},
    "media": {"stimulus": pl.String, "role": pl.String, "path": pl.String, "present": pl.Boolean,
              "offset_s": pl.Float64, "duration_s": pl.Float64, "sample_rate": pl.Int32},
    "segments": {"stimulus": pl.String, "ord": pl.Int32, "speaker": pl.String, "start_s": pl.Float64,
                 "end_s": pl.Float64, "text": pl.String, "words": pl.String, "media_role": pl.String},
    "models": {"model": pl.String, "organisation": pl.String},
    "predictions": {"stimulus": pl.String, **RUN_KEY, "raw_output": pl.String, "answer": pl.String,
                    "correct": pl.Boolean, "latency_s": pl.Float64, "meta": pl.String},
    "judgments": {"stimulus": pl.String, **RUN_KEY, "judge": pl.String, "criterion": pl.String,
                  "score": pl.Float64, "scale_max": pl.Float64, "rationale": pl.String},
    "human_ratings": {"stimulus": pl.String, "rater": pl.String, "condition": pl.String,
                      "answer": pl.String, "correct": pl.Boolean, "response_time_s": pl.Float64},
    "label_sets": {"name": pl.String, "scope": pl.String, "description": pl.String, "source": pl.String},
    "labels": {"label_set": pl.String, "name": pl.String, "parent": pl.String, "colour": pl.String,
               "shortcut": pl.String, "description": pl.String, "ord": pl.Int32, "aliases": pl.List(pl.String)},
    "annotations": {"stimulus": pl.String, "annotator": pl.String, "label_set": pl.String,
                    "label": pl.String, "start_s": pl.Float64, "end_s": pl.Float64, "value": pl.String,
                    "note": pl.String, "media_role": pl.String},
    # model NULL: the task's reference trace; otherwise the trace of that run's prediction
    "trace_steps": {"stimulus": pl.String, **RUN_KEY, "step_index": pl.Int32, "action": pl.String,
                    "args": pl.String, "kwargs": pl.String},
    # an ExploreToM story's steps, once for all its questions: `story` numbers the plan's stories, and
    # `story_questions` names each question's story (`storage.story_steps`)
    "story_steps": {"story": pl.Int64, "step_index": pl.Int32, "action": pl.String, "args": pl.String,
                    "kwargs": pl.String},
    "story_questions": {"stimulus": pl.String, "story": pl.Int64},
    "goal_atoms": {"stimulus": pl.String, "ord": pl.Int32, "holders": pl.String, "entity": pl.String,
                   "property": pl.String, "value": pl.String, "text": pl.String},
    "aggregate_results": {"model": pl.String, "source": pl.String, "metric_group": pl.String,
                          "metric": pl.String, "value": pl.Float64, "value_text": pl.String},
}

# the frames that refer to stimuli by their external id, in the column `stimulus`
REFERRING = ("media", "segments", "predictions", "judgments", "human_ratings", "annotations", "trace_steps",
             "goal_atoms")


@functools.cache
def empty_frame(table: str) -> pl.DataFrame:
    """The table's frame without rows: one made once and shared (a frame is replaced, never changed in place),
    as a plan is asked for its absent frames dozens of times on the way to the store."""
    return pl.DataFrame(schema=FRAME_SCHEMAS[table])


def conform(table: str, frame: pl.DataFrame | list[dict[str, Any]]) -> pl.DataFrame:
    """Give a frame exactly the table's columns and types (missing columns become null)."""
    schema = FRAME_SCHEMAS[table]
    if isinstance(frame, list):
        frame = pl.DataFrame(frame, schema_overrides={k: v for k, v in schema.items()},
                             infer_schema_length=None) if frame else empty_frame(table)
    exprs = []
    for name, dtype in schema.items():
        if name in frame.columns:
            exprs.append(pl.col(name).cast(dtype, strict=False).alias(name))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    return frame.select(exprs)


@dataclass
class DatasetInfo:
    name: str
    benchmark: str
    root: Path
    source: str
    synthetic: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportPlan:
    """Everything one import will write. Frames are keyed by the names in `FRAME_SCHEMAS`."""

    dataset: DatasetInfo
    importer: str
    importer_version: int = 1
    frames: dict[str, pl.DataFrame] = field(default_factory=dict)
    mapping: dict[str, str] = field(default_factory=dict)   # target field -> source column, as detected/used
    problems: list[RowProblem] = field(default_factory=list)  # rows skipped with --skip-bad
    notes: list[str] = field(default_factory=list)            # e.g. "3 media files missing"
    # tables whose natural keys the importer already proved unique (with line numbers); the writer skips
    # its own, slower check for them
    unique_checked: set[str] = field(default_factory=set)
    # frames whose every value the reader held to `storage.validation.bad_values` as it added them, row by
    # row with lines, and found good; `check_values` passes over a frame that is still that very object
    # (frames are replaced, never changed in place, so one interpreted or filtered since is checked again)
    values_checked: dict[str, pl.DataFrame] = field(default_factory=dict)
    # frames whose every stimulus id the reader knows to be among the plan's stimuli (the results of a table
    # whose stimuli are its own distinct ids), each with the stimuli frame that holds them: while both are
    # still those very objects, the comparison with the store need not look each row's id up (see
    # `names_only_described`)
    described_by: dict[str, tuple[pl.DataFrame, pl.DataFrame]] = field(default_factory=dict)
    # where a stimulus was read (file, line or record, field), for problems found only when the plan is
    # interpreted (an answer key naming no option, a goal sentence of no known form)
    origins: dict[str, tuple[str, int | None, str | None]] = field(default_factory=dict)
    # every stimulus the plan names must already be in the dataset (answers added to a release): a new id
    # is refused rather than made into a stimulus
    only_existing_stimuli: bool = False
    # stored stimuli the plan names without describing them (external_id, kind, ground_truth, meta), read
    # from the store before the plan is interpreted, so that answers attached to them are scored by their
    # benchmark's rules against the stored truth
    known_stimuli: pl.DataFrame | None = None

    def frame(self, table: str) -> pl.DataFrame:
        frame = self.frames.get(table)
        return empty_frame(table) if frame is None else frame

    def add(self, table: str, frame: pl.DataFrame | list[dict[str, Any]]) -> None:
        """Append rows to `table`; rows given as dicts (read from JSON and the like) must hold values of
        their columns' kinds, else `ImportFailed` names where they were read."""
        if isinstance(frame, list):
            self._refuse_wrong_kinds(table, frame)
        new = conform(table, frame)
        if table in self.frames and self.frames[table].height:
            self.frames[table] = pl.concat([self.frames[table], new], how="vertical")
        else:
            self.frames[table] = new

    def _refuse_wrong_kinds(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Refuse rows (as read from JSON and the like) whose values are of the wrong kind for their typed
        column, instead of letting a list become the text "[a, b]" or true become the time 1.0."""
        problems = []
        columns = sorted(c for c in {k for row in rows for k in row} if c in FRAME_SCHEMAS[table])
        for index, column, value, expected in wrong_kinds(FRAME_SCHEMAS[table],
                                                          {c: [row.get(c) for row in rows] for c in columns}):
            row = rows[index]
            file, line, about = self.where(table, row.get("stimulus", row.get("external_id")))
            problems.append(RowProblem(file, line, column, f"{shown_value(value)} ({about}, row {index + 1})",
                                       expected))
            if len(problems) >= 50:
                raise ImportFailed(problems)
        if problems:
            raise ImportFailed(problems)

    def where(self, table: str, stimulus: Any) -> tuple[str, int | None, str]:
        """(file, line, what) for a row of `table` about `stimulus`: where that stimulus was read when the
        reader said so, else the source file, with the table and stimulus named."""
        origin = self.origins.get(stimulus) if isinstance(stimulus, str) else None
        about = f"{table} of stimulus {stimulus!r}" if stimulus is not None else table
        if origin:
            return origin[0], origin[1], about
        return Path(self.dataset.source).name or str(self.dataset.root), None, about

    def names_only_described(self, table: str) -> bool:
        """Whether every stimulus id of `table` is known to be an external id of the plan's stimuli: true while
        its frame and the stimuli frame are the very ones the reader recorded in `described_by` (a frame
        filtered or interpreted since is a new object, and is looked at again)."""
        recorded = self.described_by.get(table)
        return (recorded is not None and recorded[0] is self.frames.get(table)
                and recorded[1] is self.frames.get("stimuli"))

    def drop_stimuli(self, external_ids: set[str]) -> None:
        """Leave out these stimuli and every row that belongs to them (media, answers, steps, goals ...)."""
        for table, frame in self.frames.items():
            column = "external_id" if table == "stimuli" else "stimulus"
            if column in frame.columns and frame.height:
                self.frames[table] = frame.filter(~pl.col(column).is_in(sorted(external_ids)))

    def counts(self) -> dict[str, int]:
        return {name: self.frame(name).height for name in FRAME_SCHEMAS}
