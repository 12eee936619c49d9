"""Writes an `ImportPlan` into the store: one transaction, upserts by natural keys.

Re-importing the same release updates rows in place (no duplicate stimuli, models, runs or predictions);
a plan that brings only a new model's outputs adds only those. Any failure or a cancel rolls back, so the
store is exactly as it was.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from storage.annotations import AnnotationError, insert_annotations, upsert_label_sets
from storage.errors import ImportCancelled, ImportFailed, RowProblem
from storage.id_blocks import BLOCK_SEQUENCES, reserve_ids
from storage.importers.effect import (CHILD_DEFAULTS, CHILD_TABLES, PLAN_ROW, STIMULUS_FIELDS, FrameViews,
                                      PlanEffect, StimuliWouldChange, plan_effect)
from storage.importers.plan import REFERRING, ImportPlan
from storage.natural_order import natural_key_sql
from storage.outcomes import refresh_outcomes
from storage.story_steps import write_story_steps
from storage.store import Store
from storage.validation import check_values

Progress = Callable[[float, str], None]
ShouldCancel = Callable[[], bool]

RUN_COLS = ["model", "modality", "prompt_setting", "vision_mode", "context"]
# the plan's frames that name runs (a model and its conditions)
_RUN_FRAMES = ("predictions", "judgments", "trace_steps")
_PREDICTION_COLUMNS = "run_id, stimulus_id, raw_output, answer, correct, latency_s, meta"

# up to how many runs of one import's answers are told apart by a CASE on the model rather than a join
_RUNS_WRITTEN_OUT = 64
# the sequence each table's ids come from (storage.schema), for inserts that draw them beforehand
_ID_SEQUENCES = {"prediction": "seq_prediction", "stimulus": "seq_stimulus"}


def _answer_values(run_id: str = "r.run_id") -> str:
    """The values of `_PREDICTION_COLUMNS` for a plan's answer `f` joined to its stimulus `s`, its run's id being
    `run_id` (SQL: by default that of the run `r` it is joined to)."""
    return f"{run_id} AS run_id, s.stimulus_id, f.raw_output, f.answer, f.correct, f.latency_s, f.meta"


@dataclass
class ImportSummary:
    dataset: str
    dataset_id: int
    written: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)   # rows left out with --skip-bad, each with where and why
    effect: PlanEffect = field(default_factory=PlanEffect)   # stimuli added, named and changed; results added


def _check_unique(frame: pl.DataFrame, keys: list[str], table: str) -> list[RowProblem]:
    distinct = pl.col(keys[0]) if len(keys) == 1 else pl.struct(keys)
    if frame.height == 0 or frame.select(distinct.n_unique()).item() == frame.height:
        return []   # counting distinct keys is far cheaper than grouping rows to find which repeat
    dup = frame.group_by(keys).len().filter(pl.col("len") > 1)
    problems = []
    for row in dup.head(20).iter_rows(named=True):
        ident = ", ".join(f"{k}={row[k]!r}" for k in keys)
        problems.append(RowProblem(table, None, ",".join(keys), f"{row['len']} rows with {ident}",
                                   "each to appear once"))
    return problems


def _same_conditions(frame: pl.DataFrame) -> list[str] | None:
    """The run conditions (modality, prompt setting, vision mode, context; '' for none) when every row of
    `frame` has the same ones, as in most results tables, else None. Cheap: a condition a reader did not find
    is one value standing for the whole column."""
    conditions = frame.select(pl.col(c).fill_null("") for c in RUN_COLS[1:])
    if not conditions.height or any(n > 1 for n in conditions.select(pl.all().n_unique()).row(0)):
        return None
    return list(conditions.row(0))


def validate(plan: ImportPlan) -> None:
    """Raise `ImportFailed` for a plan that cannot be written as it is (duplicate ids, empty keys).

    Duplicates of compound keys (predictions, judgments, ratings) are found after ids are resolved, in SQL.
    """
    problems: list[RowProblem] = []
    problems += _check_unique(plan.frame("stimuli"), ["external_id"], "stimuli")
    for table, column in [("stimuli", "external_id"), ("predictions", "stimulus"), ("predictions", "model"),
                          ("judgments", "criterion"), ("human_ratings", "rater"), ("media", "path")]:
        frame = plan.frame(table)
        if frame.height and frame[column].null_count():
            problems.append(RowProblem(table, None, column, f"{frame[column].null_count()} empty values",
                                       "a value in every row"))
    if problems:
        raise ImportFailed(problems)


class _Writer:
    def __init__(self, cur: duckdb.DuckDBPyConnection, plan: ImportPlan, progress: Progress,
                 should_cancel: ShouldCancel) -> None:
        self.cur = cur
        self.plan = plan
        self.progress = progress
        self.should_cancel = should_cancel
        self.written: dict[str, int] = {}
        self.views = FrameViews(cur)

    def step(self, fraction: float, message: str) -> None:
        if self.should_cancel():
            raise ImportCancelled()
        self.progress(fraction, message)

    def register(self, name: str, frame: pl.DataFrame) -> None:
        self.views.register(name, frame)

    def view(self, table: str) -> str:
        """The plan's frame of `table` as a view (registered once, shared with the comparison)."""
        return self.views.plan_table(self.plan, table)

    def release(self) -> None:
        self.views.release()

    def scalar(self, sql: str, params: list | None = None):
        return self.cur.execute(sql, params or []).fetchall()[0][0]

    def refuse_duplicates(self, table: str, label: str, keys: dict[str, str]) -> None:
        """Fail when the incoming rows of `table` name the same key twice (e.g. one model answering twice)."""
        cols = ", ".join(keys)
        rows = self.cur.execute(f"SELECT {cols}, count(*) FROM {table} GROUP BY ALL HAVING count(*) > 1"
                                " LIMIT 20").fetchall()
        if rows:
            raise ImportFailed([RowProblem(label, None, ",".join(keys.values()),
                                           f"{r[-1]} rows for the same {', '.join(keys.values())} ({r[:-1]})",
                                           "each to appear once") for r in rows])

    def replace_differing(self, incoming: str, sql_table: str, group: list[str], columns: list[str]) -> int:
        """Make `sql_table`'s rows of each group (a stimulus, a prediction's trace, ...) that `incoming` brings
        equal to the incoming rows, touching only groups whose rows differ as sets: rows of an unchanged group
        keep their ids. Returns how many incoming rows were written."""
        keys = ", ".join(group)
        match = " AND ".join(f"t.{g} IS NOT DISTINCT FROM d.{g}" for g in group)
        text = ", ".join(f"CAST({c} AS VARCHAR)" for c in columns)
        self.cur.execute(
            f"CREATE OR REPLACE TEMP TABLE groups_in AS SELECT DISTINCT {keys} FROM {incoming}")
        cols = ", ".join(columns)
        if not self.scalar(f"SELECT EXISTS (SELECT 1 FROM {sql_table} t SEMI JOIN groups_in d ON {match})"):
            # none of the groups is stored (a new dataset's traces): all differ, so all are written as they
            # are, without comparing every row with nothing
            self.cur.execute(f"INSERT INTO {sql_table} ({keys}, {cols}) SELECT {keys}, {cols} FROM {incoming}")
            return int(self.scalar(f"SELECT count(*) FROM {incoming}"))
        self.cur.execute(
            f"CREATE OR REPLACE TEMP TABLE groups_differing AS SELECT DISTINCT {keys} FROM ("
            f" (SELECT {keys}, {text} FROM {incoming} EXCEPT ALL SELECT t.{', t.'.join(group)}, {text}"
            f"  FROM {sql_table} t SEMI JOIN groups_in d ON {match})"
            f" UNION ALL"
            f" (SELECT t.{', t.'.join(group)}, {text} FROM {sql_table} t SEMI JOIN groups_in d ON {match}"
            f"  EXCEPT ALL SELECT {keys}, {text} FROM {incoming}))")
        self.cur.execute(f"DELETE FROM {sql_table} t WHERE EXISTS (SELECT 1 FROM groups_differing d WHERE {match})")
        self.cur.execute(f"INSERT INTO {sql_table} ({keys}, {cols}) SELECT {keys}, {cols} FROM {incoming} t"
                         f" SEMI JOIN groups_differing d ON {match}")
        return int(self.scalar(f"SELECT count(*) FROM {incoming} t SEMI JOIN groups_differing d ON {match}"))

    def insert_numbered(self, sql_table: str, columns: str, values: str, table: str, tail: str = "",
                        params: list | None = None) -> None:
        """INSERT INTO `sql_table` (`columns`) SELECT `values` FROM the plan's frame of `table` as f, then
        `tail` (joins that find a row for each of the frame's rows), each row with the id the table's sequence
        would give it in the frame's order: the ids are drawn beforehand, because a sequence drawn row by row as
        rows are inserted holds the whole insert to one thread. A sequence of `BLOCK_SEQUENCES` gives a block at
        once (`storage.id_blocks`); another is drawn value by value, and should another writer draw from it at
        the same time (the ids drawn are then not consecutive), each row draws its own id as it is inserted."""
        rows = self.plan.frame(table).height
        sequence = _ID_SEQUENCES[sql_table]
        if sequence in BLOCK_SEQUENCES:
            first = reserve_ids(self.cur, sequence, rows)
        else:
            first, last = self.cur.execute(f"SELECT min(v), max(v) FROM (SELECT nextval('{sequence}') AS v"
                                           " FROM range(?))", [rows]).fetchall()[0]
            if last - first + 1 != rows:
                self.cur.execute(f"INSERT INTO {sql_table} ({columns}) SELECT {values} FROM {self.view(table)} f"
                                 f" {tail}", params or [])
                return
        self.cur.execute(f"INSERT INTO {sql_table} (id, {columns}) SELECT ? + f.{PLAN_ROW}, {values}"
                         f" FROM {self.view(table)} f {tail}", [first, *(params or [])])

    def upsert_keyed(self, incoming: str, sql_table: str, keys: list[str], values: list[str]) -> int:
        """Store each incoming row by its key: a stored row with the same key and other values is replaced, a
        stored row with the same values is left as it is (its id kept). Returns how many rows were written."""
        match = " AND ".join(f"t.{k} = i.{k}" for k in keys)
        same = " AND ".join(f"t.{v} IS NOT DISTINCT FROM i.{v}" for v in values)
        self.cur.execute(f"DELETE FROM {sql_table} t WHERE EXISTS (SELECT 1 FROM {incoming} i WHERE {match}"
                         f" AND NOT ({same}))")
        cols = ", ".join(keys + values)
        written = int(self.scalar(f"SELECT count(*) FROM {incoming} i WHERE NOT EXISTS"
                                  f" (SELECT 1 FROM {sql_table} t WHERE {match})"))
        self.cur.execute(f"INSERT INTO {sql_table} ({cols}) SELECT {cols} FROM {incoming} i WHERE NOT EXISTS"
                         f" (SELECT 1 FROM {sql_table} t WHERE {match})")
        return written

    # -- tables ---------------------------------------------------------------------------------
    def dataset(self, effect: PlanEffect) -> int:
        info = self.plan.dataset
        # a folder that says it is synthetic is marked so, whatever the importer knew
        synthetic = info.synthetic or (Path(info.root) / "SYNTHETIC.md").is_file()
        values = [info.benchmark, str(info.root), info.source, synthetic, self.plan.importer,
                  self.plan.importer_version, json.dumps(info.meta)]
        found = self.cur.execute("SELECT id FROM dataset WHERE name = ?", [info.name]).fetchall()
        if not found:
            return int(self.scalar(
                "INSERT INTO dataset (name, benchmark, root, source, synthetic, importer, importer_version, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id", [info.name, *values]))
        dataset_id = int(found[0][0])
        # Only a release brings the dataset's own description (its media say where its root is); a table of
        # results, or a release whose description is unchanged, leaves the dataset's row as it is.
        if self.plan.frame("media").height and self.plan.importer != "generic":
            self.cur.execute(
                "UPDATE dataset SET benchmark=?, root=?, source=?, synthetic=?, importer=?, importer_version=?,"
                " meta=?, imported_at=current_timestamp WHERE id=? AND (benchmark, root, source, synthetic,"
                " importer, importer_version, CAST(meta AS VARCHAR)) IS DISTINCT FROM (?, ?, ?, ?, ?, ?, ?)",
                [*values, dataset_id, *values])
        return dataset_id

    def stimuli(self, dataset_id: int, effect: PlanEffect, replace_stimuli: bool) -> None:
        if effect.changes and not replace_stimuli:
            raise StimuliWouldChange(effect.changes)
        if effect.new_stimuli and self.plan.only_existing_stimuli:
            more = f" and {effect.new_stimuli - len(effect.new_ids)} more" if effect.new_stimuli > len(effect.new_ids) else ""
            raise ImportFailed(RowProblem(
                self.plan.dataset.source, None, "stimulus", f"{effect.new_stimuli} ids not in the dataset"
                f" ({', '.join(repr(i) for i in effect.new_ids)}{more})",
                f"ids of stimuli already in {self.plan.dataset.name!r} (stimuli_exist=true)"))
        frame = self.plan.frame("stimuli")
        if frame.height:
            # new ids become stimuli; a field the plan leaves empty was not stated (a results table names
            # its stimuli without describing them), so a new stimulus gets the generic kind
            columns = "dataset_id, external_id, kind, ground_truth, split, title, text, meta, sort_key"
            values = ("?, f.external_id, coalesce(f.kind, 'generic'), f.ground_truth, f.split, f.title, f.text,"
                      f" f.meta, coalesce(f.sort_key, {natural_key_sql('f.external_id')})")
            if not effect.dataset_exists:   # a new dataset's stimuli are all new: their ids are drawn beforehand
                self.insert_numbered("stimulus", columns, values, "stimuli", params=[dataset_id])
            else:
                self.cur.execute(
                    f"INSERT INTO stimulus ({columns}) SELECT {values} FROM {self.view('stimuli')} f WHERE NOT EXISTS"
                    " (SELECT 1 FROM stimulus s WHERE s.dataset_id=? AND s.external_id=f.external_id)",
                    [dataset_id, dataset_id])
            self.written["stimuli"] = effect.new_stimuli
        if effect.changes:
            # asked for (replace_stimuli): the stated values replace the stored ones, the rest stay
            changed = [c.stimulus for c in effect.changes if c.field in STIMULUS_FIELDS]
            if changed and frame.height:
                self.cur.execute(
                    "UPDATE stimulus SET kind=coalesce(f.kind, stimulus.kind),"
                    " ground_truth=coalesce(f.ground_truth, stimulus.ground_truth),"
                    " split=coalesce(f.split, stimulus.split), title=coalesce(f.title, stimulus.title),"
                    " text=coalesce(f.text, stimulus.text), meta=coalesce(f.meta, stimulus.meta)"
                    f" FROM {self.view('stimuli')} f"
                    " WHERE stimulus.dataset_id=? AND stimulus.external_id=f.external_id"
                    " AND list_contains(?, f.external_id)", [dataset_id, changed])
            self.written["stimuli_changed"] = len(effect.changed_stimuli)
        # every later table refers to stimuli by external id through this map
        self.cur.execute("CREATE OR REPLACE TEMP TABLE stim_map AS SELECT id AS stimulus_id, external_id"
                         " FROM stimulus WHERE dataset_id=?", [dataset_id])
        if any(self.plan.frame(t).height for t in REFERRING):
            unknown = self.cur.execute(
                f"SELECT f.external_id FROM {self.views.named_stimuli(self.plan)} f ANTI JOIN stim_map m"
                " ON m.external_id = f.external_id WHERE NOT f.described ORDER BY 1 LIMIT 20").fetchall()
            if unknown:
                raise ImportFailed([RowProblem("import", None, "stimulus", repr(u[0]),
                                               "an id of a stimulus in this dataset") for u in unknown])

    def children(self, table: str) -> None:
        """A stimulus's media, transcript or goal: rewritten only for stimuli whose rows differ (new ones, or
        stored ones the user asked to replace), so an unchanged stimulus keeps its rows and their ids."""
        frame = self.plan.frame(table)
        if not frame.height:
            return
        sql_table, columns = CHILD_TABLES[table]
        sel = ", ".join(f"{CHILD_DEFAULTS.get(c, f'f.{c}')} AS {c}" for c in columns)
        self.cur.execute(f"CREATE OR REPLACE TEMP TABLE {table}_in AS SELECT m.stimulus_id, {sel}"
                         f" FROM {self.view(table)} f JOIN stim_map m ON m.external_id = f.stimulus")
        written = self.replace_differing(f"{table}_in", sql_table, ["stimulus_id"], list(columns))
        if written:
            self.written[table] = written

    def run_keys(self) -> None:
        """The temp table `plan_run_keys`: each model and condition the plan's answers, judgments and traces
        name, once per frame (`source`), found in one parallel pass over each frame however many rows it has."""
        parts, params = [], []
        for t in (t for t in _RUN_FRAMES if self.plan.frame(t).height):
            same = _same_conditions(self.plan.frame(t))
            # conditions the same in every row are given once, so only the model is looked for in each row
            conditions = ", ".join(f"coalesce({c}, '') AS {c}" if same is None else f"CAST(? AS VARCHAR) AS {c}"
                                   for c in RUN_COLS[1:])
            parts.append(f"SELECT DISTINCT '{t}' AS source, model, {conditions} FROM {self.view(t)}"
                         " WHERE model IS NOT NULL")
            params += same or []
        empty = "SELECT '' AS source, " + ", ".join(f"'' AS {c}" for c in RUN_COLS) + " WHERE false"
        self.cur.execute("CREATE OR REPLACE TEMP TABLE plan_run_keys AS " + (" UNION ALL ".join(parts) or empty),
                         params)

    def models(self) -> None:
        self.run_keys()
        others = [t for t in ("models", "aggregate_results") if self.plan.frame(t).height]
        if not others and not any(self.plan.frame(t).height for t in _RUN_FRAMES):
            return
        names = ["SELECT model FROM plan_run_keys", *(f"SELECT model FROM {self.view(t)}" for t in others)]
        self.cur.execute("CREATE OR REPLACE TEMP TABLE model_names AS SELECT DISTINCT model FROM"
                         f" ({' UNION ALL '.join(names)}) WHERE model IS NOT NULL")
        self.cur.execute("INSERT INTO model (name) SELECT model FROM model_names"
                         " WHERE model NOT IN (SELECT name FROM model)")
        self.cur.execute(f"UPDATE model SET organisation = f.organisation FROM {self.view('models')} f"
                         " WHERE model.name = f.model AND f.organisation IS NOT NULL")
        self.written["models"] = int(self.scalar("SELECT count(*) FROM model_names"))

    def runs(self, dataset_id: int) -> None:
        if any(self.plan.frame(t).height for t in _RUN_FRAMES):
            self.cur.execute(
                "INSERT INTO run (dataset_id, model_id, modality, prompt_setting, vision_mode, context)"
                " SELECT DISTINCT ?, m.id, f.modality, f.prompt_setting, f.vision_mode, f.context FROM"
                " plan_run_keys f JOIN model m ON m.name = f.model WHERE NOT EXISTS (SELECT 1 FROM run r WHERE"
                " r.dataset_id=? AND r.model_id=m.id AND r.modality=f.modality AND"
                " r.prompt_setting=f.prompt_setting AND r.vision_mode=f.vision_mode AND r.context=f.context)",
                [dataset_id, dataset_id])
            self.written["runs"] = int(self.scalar(
                "SELECT count(DISTINCT (model, modality, prompt_setting, vision_mode, context)) FROM plan_run_keys"))
        self.cur.execute(
            "CREATE OR REPLACE TEMP TABLE run_map AS SELECT r.id AS run_id, m.name AS model, r.modality,"
            " r.prompt_setting, r.vision_mode, r.context FROM run r JOIN model m ON m.id = r.model_id"
            " WHERE r.dataset_id = ?", [dataset_id])

    _RUN_JOIN = ("JOIN run_map r ON r.model = f.model AND r.modality = coalesce(f.modality, '')"
                 " AND r.prompt_setting = coalesce(f.prompt_setting, '') AND r.vision_mode ="
                 " coalesce(f.vision_mode, '') AND r.context = coalesce(f.context, '')"
                 " JOIN stim_map s ON s.external_id = f.stimulus")

    def predictions(self, effect: PlanEffect) -> None:
        frame = self.plan.frame("predictions")
        if frame.height:
            self._answers(frame, effect)
        self._answerless_predictions()

    def _answers(self, frame: pl.DataFrame, effect: PlanEffect) -> None:
        same = _same_conditions(frame)
        values, join, params = _answer_values(), self._RUN_JOIN, []
        if same is not None:
            # answers all given under the same conditions are matched to their runs by the model alone; a few
            # models' runs are written out, which costs less than a join looking up every answer's model
            runs = self.cur.execute("SELECT model, run_id FROM run_map WHERE modality = ? AND prompt_setting = ?"
                                    " AND vision_mode = ? AND context = ?", same).fetchall()
            join = "JOIN stim_map s ON s.external_id = f.stimulus"
            if len(runs) <= _RUNS_WRITTEN_OUT:
                values = _answer_values("CASE f.model" + " WHEN ? THEN ?" * len(runs) + " END")
                params = [value for run in runs for value in run]
            else:
                join = ("JOIN run_map r ON r.model = f.model AND r.modality = ? AND r.prompt_setting = ?"
                        " AND r.vision_mode = ? AND r.context = ? " + join)
                params = same
        incoming = f"SELECT {values} FROM {self.view('predictions')} f {join}"
        columns = f"prediction ({_PREDICTION_COLUMNS})"
        # the plan's runs are few: whether any of them already has answers is asked of them alone
        existing = self.scalar(
            "SELECT count(*) FROM prediction WHERE run_id IN (SELECT r.run_id FROM plan_run_keys f"
            " JOIN run_map r ON r.model = f.model AND r.modality = f.modality AND r.prompt_setting ="
            " f.prompt_setting AND r.vision_mode = f.vision_mode AND r.context = f.context"
            " WHERE f.source = 'predictions')")
        unique = "predictions" in self.plan.unique_checked
        if not existing and unique:
            # new runs whose keys the reader proved unique: one pass from the plan into the table
            self.insert_numbered("prediction", _PREDICTION_COLUMNS, values, "predictions", join, params)
            self.written["predictions"] = frame.height
            return
        self.cur.execute(f"CREATE OR REPLACE TEMP TABLE pred_in AS {incoming}", params)
        if not unique:
            self.refuse_duplicates("pred_in", "predictions", {"run_id": "model and condition",
                                                              "stimulus_id": "stimulus"})
        if not existing:
            self.cur.execute(f"INSERT INTO {columns} SELECT * FROM pred_in")
            self.written["predictions"] = frame.height
            return
        # a stored answer of the same model, condition and stimulus is replaced only where it differs
        self.cur.execute(
            "UPDATE prediction SET raw_output=p.raw_output, answer=p.answer, correct=p.correct,"
            " latency_s=p.latency_s, meta=p.meta FROM pred_in p"
            " WHERE prediction.run_id=p.run_id AND prediction.stimulus_id=p.stimulus_id"
            " AND prediction.run_id IN (SELECT DISTINCT run_id FROM pred_in)"
            " AND (prediction.raw_output, prediction.answer, prediction.correct, prediction.latency_s,"
            " CAST(prediction.meta AS VARCHAR)) IS DISTINCT FROM (p.raw_output, p.answer, p.correct,"
            " p.latency_s, CAST(p.meta AS VARCHAR))")
        self.cur.execute(
            f"INSERT INTO {columns} SELECT p.* FROM pred_in p ANTI JOIN (SELECT run_id, stimulus_id FROM"
            " prediction WHERE run_id IN (SELECT DISTINCT run_id FROM pred_in)) e"
            " ON e.run_id = p.run_id AND e.stimulus_id = p.stimulus_id")
        written = effect.results_added.get("predictions", 0) + effect.results_replaced.get("predictions", 0)
        if written:
            self.written["predictions"] = written

    def _answerless_predictions(self) -> None:
        """Judgments and traces may arrive without an answer: they still hang off a prediction."""
        for table in ("judgments", "trace_steps"):
            other = self.plan.frame(table)
            other = other.filter(pl.col("model").is_not_null()) if other.height else other
            if not other.height:
                continue
            self.register(f"f_{table}_keys", other.select(["stimulus", *RUN_COLS]).unique())
            self.cur.execute(
                "INSERT INTO prediction (run_id, stimulus_id) SELECT DISTINCT r.run_id, s.stimulus_id"
                f" FROM f_{table}_keys f {self._RUN_JOIN} WHERE NOT EXISTS (SELECT 1 FROM prediction p"
                " WHERE p.run_id = r.run_id AND p.stimulus_id = s.stimulus_id)")

    def judgments(self) -> None:
        frame = self.plan.frame("judgments")
        if not frame.height:
            return
        self.cur.execute(
            "CREATE OR REPLACE TEMP TABLE judg_in AS SELECT p.id AS prediction_id, coalesce(f.judge, '') AS judge,"
            f" f.criterion, f.score, f.scale_max, f.rationale FROM {self.view('judgments')} f"
            f" {self._RUN_JOIN} JOIN prediction p ON p.run_id = r.run_id AND p.stimulus_id = s.stimulus_id")
        self.refuse_duplicates("judg_in", "judgments", {"prediction_id": "prediction", "judge": "judge",
                                                         "criterion": "criterion"})
        written = self.upsert_keyed("judg_in", "judgment", ["prediction_id", "judge", "criterion"],
                                    ["score", "scale_max", "rationale"])
        if written:
            self.written["judgments"] = written

    def human_ratings(self) -> None:
        frame = self.plan.frame("human_ratings")
        if not frame.height:
            return
        self.cur.execute(
            "CREATE OR REPLACE TEMP TABLE human_in AS SELECT s.stimulus_id, f.rater, coalesce(f.condition, '')"
            f" AS condition, f.answer, f.correct, f.response_time_s FROM {self.view('human_ratings')} f"
            " JOIN stim_map s ON s.external_id = f.stimulus")
        self.refuse_duplicates("human_in", "human ratings", {"stimulus_id": "stimulus", "rater": "rater",
                                                             "condition": "condition"})
        written = self.upsert_keyed("human_in", "human_rating", ["stimulus_id", "rater", "condition"],
                                    ["answer", "correct", "response_time_s"])
        if written:
            self.written["human_ratings"] = written

    def labels(self) -> None:
        sets = self.plan.frame("label_sets")
        labels = self.plan.frame("labels")
        upsert_label_sets(self.cur, sets, labels)
        if sets.height:
            self.written["label_sets"] = sets.height
        if labels.height:
            self.written["labels"] = labels.height

    def annotations(self) -> None:
        frame = self.plan.frame("annotations")
        if not frame.height:
            return
        rows = self.cur.sql(f"SELECT s.stimulus_id, f.* EXCLUDE (stimulus, {PLAN_ROW})"
                            f" FROM {self.view('annotations')} f JOIN stim_map s ON s.external_id = f.stimulus").pl()
        # the same path as every edit: identical live labels are not added twice, events of one shape
        try:
            added = insert_annotations(self.cur, rows, skip_existing=True)
        except AnnotationError as exc:
            raise ImportFailed(RowProblem("annotations", None, None, str(exc), "labels that can be stored")) from None
        self.written["annotations"] = len(added)

    def trace_steps(self) -> None:
        if self.plan.frame("story_questions").height:
            written = write_story_steps(self.cur, self.view("story_steps"), self.view("story_questions"))
            if written:
                self.written["story_steps"] = written
        frame = self.plan.frame("trace_steps")
        if not frame.height:
            return
        self.cur.execute(
            "CREATE OR REPLACE TEMP TABLE trace_in AS SELECT s.stimulus_id, p.id AS prediction_id, f.step_index,"
            f" f.action, f.args, f.kwargs FROM {self.view('trace_steps')} f"
            " JOIN stim_map s ON s.external_id = f.stimulus"
            " LEFT JOIN run_map r ON r.model = f.model AND r.modality = coalesce(f.modality, '')"
            " AND r.prompt_setting = coalesce(f.prompt_setting, '') AND r.vision_mode ="
            " coalesce(f.vision_mode, '') AND r.context = coalesce(f.context, '')"
            " LEFT JOIN prediction p ON p.run_id = r.run_id AND p.stimulus_id = s.stimulus_id")
        # a task's reference trace is part of the stimulus (a changed one was refused unless replacing was
        # asked for); a model's trace belongs to its answer; either is rewritten only where it differs
        written = self.replace_differing("trace_in", "trace_step", ["stimulus_id", "prediction_id"],
                                         ["step_index", "action", "args", "kwargs"])
        if written:
            self.written["trace_steps"] = written

    def aggregate_results(self, dataset_id: int) -> None:
        frame = self.plan.frame("aggregate_results")
        if not frame.height:
            return
        self.cur.execute(
            "CREATE OR REPLACE TEMP TABLE agg_in AS SELECT ? AS dataset_id, m.id AS model_id, f.source,"
            " coalesce(f.metric_group, '') AS metric_group, f.metric, f.value, f.value_text"
            f" FROM {self.view('aggregate_results')} f JOIN model m ON m.name = f.model", [dataset_id])
        written = self.upsert_keyed("agg_in", "aggregate_result", ["dataset_id", "model_id", "source",
                                                                   "metric_group", "metric"],
                                    ["value", "value_text"])
        if written:
            self.written["aggregate_results"] = written


def write_plan(store: Store, plan: ImportPlan, *, progress: Progress | None = None,
               should_cancel: ShouldCancel | None = None, datasetless: bool = False,
               skip_bad: bool = False, replace_stimuli: bool = False, values_checked: bool = False
               ) -> ImportSummary:
    """Write `plan` in one transaction. Raises `ImportFailed` or `ImportCancelled`; the store is then unchanged.

    Only what the plan adds is written: stimuli it names that are already stored keep every value it does not
    state, and a stated value that differs from the stored one (a different ground truth, other media) refuses
    the import with `StimuliWouldChange` unless `replace_stimuli`. Rows equal to stored ones are left as they
    are, ids included (see `storage.importers.effect`).

    Every plan's values are checked first (`storage.validation.check_values`): impossible ones fail the write,
    or with `skip_bad` their rows are left out and listed; `values_checked` says the caller has just done so
    (`app.import_service.plan_import` does, so that a dry run refuses alike), sparing a second pass over
    millions of rows. `datasetless` writes only the plan's label sets and labels (they belong to no dataset).
    """
    if not values_checked:
        check_values(plan, skip_bad, datasetless=datasetless)
    validate(plan)
    progress = progress or (lambda _f, _m: None)
    should_cancel = should_cancel or (lambda: False)
    if datasetless:
        with store.import_lock, store.transaction() as cur:
            w = _Writer(cur, plan, progress, should_cancel)
            try:
                w.labels()
            finally:
                w.release()
        return ImportSummary(plan.dataset.name, -1, w.written, list(plan.notes))
    with store.import_lock, store.transaction() as cur:
        w = _Writer(cur, plan, progress, should_cancel)
        try:
            w.step(0.0, "dataset")
            effect = plan_effect(cur, plan, w.views)
            dataset_id = w.dataset(effect)
            w.step(0.05, "stimuli")
            w.stimuli(dataset_id, effect, replace_stimuli)
            w.step(0.15, "media and transcripts")
            for table in CHILD_TABLES:
                w.children(table)
            w.step(0.25, "models and runs")
            w.models()
            w.runs(dataset_id)
            w.step(0.35, "predictions")
            w.predictions(effect)
            refresh_outcomes(cur, dataset_id, [m for (m,) in cur.execute("SELECT DISTINCT model FROM plan_run_keys")
                                               .fetchall()])
            w.step(0.65, "judgments")
            w.judgments()
            w.step(0.75, "human ratings")
            w.human_ratings()
            w.step(0.85, "labels and annotations")
            w.labels()
            w.annotations()
            w.step(0.9, "traces")
            w.trace_steps()
            w.aggregate_results(dataset_id)
            w.step(1.0, "done")
        finally:
            w.release()
    return ImportSummary(plan.dataset.name, dataset_id, w.written, list(plan.notes),
                         [str(p) for p in plan.problems], effect)
