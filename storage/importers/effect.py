"""What writing a plan would do to the store: which stimuli it adds, which stored ones it names, and which of
those it would change.

An import is asked to add what its files hold. A results table that names stimuli already in the dataset
attaches its answers to them and says nothing about the stimuli themselves (their fields are null in the plan,
meaning "not stated"); a release re-imported states every field. A stored stimulus changes only where the
plan states a field (or a stimulus's media, transcript, goal or reference trace) that differs from what is
stored, and the writer refuses such a change unless the user asked to replace stimuli. This module only reads:
the writer calls it inside its transaction, and a dry run calls it on a store opened read-only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from storage.errors import ImportFailed
from storage.importers.plan import REFERRING, ImportPlan
from storage.story_steps import QUESTION_STEPS

# The fields of a stimulus an import may state, compared with what is stored (JSON compared as text).
STIMULUS_FIELDS = ("kind", "ground_truth", "split", "title", "text", "meta")

# Per-stimulus child tables: plan frame -> (store table, columns compared, defaults the writer applies).
CHILD_TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "media": ("media", ("role", "path", "present", "offset_s", "duration_s", "sample_rate")),
    "segments": ("segment", ("ord", "speaker", "start_s", "end_s", "text", "words", "media_role")),
    "goal_atoms": ("goal_atom", ("ord", "holders", "entity", "property", "value", "text")),
}
# what the writer stores for a column the plan leaves empty
CHILD_DEFAULTS = {"offset_s": "coalesce(f.offset_s, 0)", "present": "coalesce(f.present, false)",
                  "ord": "coalesce(f.ord, 0)"}
JSON_COLUMNS = {"words", "holders", "meta", "args", "kwargs"}
REPLACE_OPTION = "--replace-stimuli"
SHOWN_CHANGES = 10


@dataclass(frozen=True)
class StimulusChange:
    """One stated value of a stored stimulus that the plan would replace."""

    stimulus: str
    field: str
    stored: str
    incoming: str
    origin: str = ""   # where the plan read the stimulus (file, or file:line), when the reader said

    def __str__(self) -> str:
        where = f" ({self.origin})" if self.origin else ""
        return f"{self.stimulus}{where} {self.field}: {self.stored} -> {self.incoming}"


@dataclass
class PlanEffect:
    """What a plan would do: stimuli added, stored stimuli named, stored stimuli changed (and how), and the
    results it adds or replaces."""

    dataset_exists: bool = False
    new_stimuli: int = 0
    new_ids: list[str] = field(default_factory=list)   # the first new ids, sorted
    existing_stimuli: int = 0
    changes: list[StimulusChange] = field(default_factory=list)
    results_added: dict[str, int] = field(default_factory=dict)      # predictions, judgments, human_ratings
    results_replaced: dict[str, int] = field(default_factory=dict)   # stored rows whose values the plan changes

    @property
    def changed_stimuli(self) -> list[str]:
        return sorted({c.stimulus for c in self.changes})

    def sentence(self) -> str:
        """One line for the dry run, the dialog and the summary: '2 predictions added to 2 existing stimuli,
        0 new stimuli, 0 stimuli changed'."""
        added = [f"{n} {table.replace('_', ' ')} added" for table, n in self.results_added.items() if n]
        replaced = [f"{n} {table.replace('_', ' ')} replaced" for table, n in self.results_replaced.items() if n]
        head = ", ".join(added + replaced) or "no results added"
        return (f"{head} to {self.existing_stimuli} existing stimuli, {self.new_stimuli} new stimuli, "
                f"{len(self.changed_stimuli)} stimuli changed")

    def as_dict(self) -> dict:
        return {"new_stimuli": self.new_stimuli, "existing_stimuli": self.existing_stimuli,
                "changed_stimuli": len(self.changed_stimuli), "results_added": dict(self.results_added),
                "results_replaced": dict(self.results_replaced),
                "changes": [str(c) for c in self.changes[:SHOWN_CHANGES]], "summary": self.sentence()}


class StimuliWouldChange(ImportFailed):
    """The plan states values of stored stimuli that differ from the store's; nothing was written."""

    def __init__(self, changes: list[StimulusChange]) -> None:
        shown = "; ".join(str(c) for c in changes[:SHOWN_CHANGES])
        more = f"; and {len(changes) - SHOWN_CHANGES} more" if len(changes) > SHOWN_CHANGES else ""
        stimuli = len({c.stimulus for c in changes})
        ImportFailed.__init__(self, (
            f"Import refused, nothing was written: it would change {stimuli} stored stimuli "
            f"({len(changes)} values): {shown}{more}. To replace the stored values, import again with "
            f"{REPLACE_OPTION}."))
        self.changes = list(changes)


def _shown(value: object) -> str:
    if value is None:
        return "<empty>"
    text = str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _text(column: str, alias: str) -> str:
    """A column as comparable text: JSON and numbers compare by their text, so 1.0 and '1.0' agree."""
    return f"CAST({alias}.{column} AS VARCHAR)" if column in JSON_COLUMNS else f"{alias}.{column}"


# the column of a plan's view (`FrameViews.plan_table`) numbering its rows in the frame's order
PLAN_ROW = "plan_row"


def _arrow(frame: pl.DataFrame) -> Any:
    """The frame as an Arrow table for DuckDB. Text columns are string views (DuckDB reads polars' own buffers
    instead of a copy), and a column holding one value in every row (a condition or a field the table does not
    have: '' or null) is that value with its count (run-end encoded): polars keeps such a column as the value
    alone, and making it whole would write a copy per row that DuckDB then reads."""
    import pyarrow as pa

    newest = pl.CompatLevel.newest()
    if frame.height < 2:
        return frame.to_arrow(compat_level=newest)
    flat = [c for c, dtype in frame.schema.items() if not dtype.is_nested()]
    # the first and last values answer for most columns at once; only a column where they agree is compared whole
    ends = frame.select(pl.col(c).first().eq_missing(pl.col(c).last()) for c in flat).row(0)
    candidates = [c for c, same in zip(flat, ends) if same]
    alike = frame.select(pl.col(c).eq_missing(pl.col(c).first()).all() for c in candidates).row(0) if candidates else ()
    constant = [c for c, same in zip(candidates, alike) if same]
    if not constant:
        return frame.to_arrow(compat_level=newest)
    values = frame.select(pl.col(c).first() for c in constant).to_arrow(compat_level=newest)
    rest = frame.drop(constant).to_arrow(compat_level=newest)
    # made from their parts: pyarrow's constructors from Python values load its compute module, a fifth of a
    # second the first time
    ends = pl.Series([frame.height], dtype=pl.Int64).to_arrow()

    def repeated(value: Any) -> Any:
        return pa.Array.from_buffers(pa.run_end_encoded(pa.int64(), value.type), frame.height, [None],
                                     children=[ends, value])

    return pa.table({c: repeated(values.column(c).combine_chunks()) if c in constant else rest.column(c)
                     for c in frame.columns})


class FrameViews:
    """Polars frames registered on a cursor as views for SQL (the comparison here, the writer's inserts), and
    forgotten afterwards with `release`."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cur = cur
        self.names: list[str] = []

    def register(self, name: str, frame: pl.DataFrame) -> str:
        self.cur.register(name, _arrow(frame))
        self.names.append(name)
        return name

    def plan_table(self, plan: ImportPlan, table: str) -> str:
        """The view `plan_<table>` of one of the plan's frames, registered once however often it is asked for:
        the comparison and the writer read the same frames, and the plan does not change while they do. Its
        column `PLAN_ROW` numbers the rows from 0 in the frame's order."""
        name = f"plan_{table}"
        return name if name in self.names else self.register(name, plan.frame(table).with_row_index(PLAN_ROW))

    def named_stimuli(self, plan: ImportPlan) -> str:
        """The view `plan_named` of every stimulus id the plan names, once each (`external_id`), and whether
        the plan's stimuli describe it (`described`) or other rows only refer to it, found once and shared by
        the comparison and the writer. Referring rows mostly name the plan's own stimuli: each is looked up
        among them (a hash lookup per row, however many millions) and only the others are gathered, unless
        the reader knows them all to be among them (`ImportPlan.names_only_described`)."""
        name = "plan_named"
        if name in self.names:
            return name
        described = plan.frame("stimuli").get_column("external_id").drop_nulls().unique()
        others = pl.Series("external_id", [], dtype=pl.String)
        # a frame the reader knows names only the plan's own stimuli (a results table's) is not looked up
        referring = [plan.frame(table).get_column("stimulus") for table in REFERRING
                     if plan.frame(table).height and not plan.names_only_described(table)]
        if referring:
            ids = pl.concat(referring, rechunk=False).drop_nulls()
            others = ids.filter(~ids.is_in(described.implode())).unique()
        named = pl.concat([described.to_frame("external_id").with_columns(described=pl.lit(True)),
                           others.to_frame("external_id").with_columns(described=pl.lit(False))])
        return self.register(name, named)

    def release(self) -> None:
        for name in self.names:
            try:
                self.cur.unregister(name)
            except duckdb.Error:
                pass
        self.names.clear()


def plan_effect(cur: duckdb.DuckDBPyConnection, plan: ImportPlan, views: FrameViews | None = None) -> PlanEffect:
    """Compare `plan` with the store behind `cur` (reading only) and say what writing it would do. `views`
    are the caller's registrations of the plan's frames (the writer's), reused rather than made again."""
    reader = views or FrameViews(cur)
    try:
        return _effect(cur, plan, reader)
    finally:
        if views is None:
            reader.release()


def _effect(cur: duckdb.DuckDBPyConnection, plan: ImportPlan, reader: FrameViews) -> PlanEffect:
    found = cur.execute("SELECT id FROM dataset WHERE name = ?", [plan.dataset.name]).fetchall()
    # counted and listed in the database: a plan may name millions of stimuli
    named_view = reader.named_stimuli(plan)
    if not found:
        named = int(cur.execute(f"SELECT count(*) FROM {named_view}").fetchone()[0])
        first = [row[0] for row in cur.execute(f"SELECT external_id FROM {named_view} ORDER BY 1 LIMIT ?",
                                               [SHOWN_CHANGES]).fetchall()]
        return PlanEffect(False, new_stimuli=named, new_ids=first,
                          results_added={t: plan.frame(t).height for t in _RESULTS if plan.frame(t).height})
    dataset_id = int(found[0][0])
    new = (f"FROM {named_view} n ANTI JOIN (SELECT external_id FROM stimulus WHERE dataset_id = ?) s"
           " ON s.external_id = n.external_id")
    named, new_stimuli = cur.execute(f"SELECT (SELECT count(*) FROM {named_view}), count(*) {new}",
                                     [dataset_id]).fetchone()
    new_ids = [row[0] for row in cur.execute(f"SELECT n.external_id {new} ORDER BY 1 LIMIT ?",
                                             [dataset_id, SHOWN_CHANGES]).fetchall()]
    stored = int(named) - int(new_stimuli)
    effect = PlanEffect(True, new_stimuli=int(new_stimuli), existing_stimuli=stored, new_ids=new_ids)
    if plan.frame("stimuli").height and stored:
        effect.changes += _field_changes(cur, dataset_id, reader.plan_table(plan, "stimuli"))
    for table, (sql_table, columns) in CHILD_TABLES.items():
        if plan.frame(table).height and stored:
            effect.changes += _set_changes(cur, dataset_id, reader.plan_table(plan, table), sql_table, columns,
                                           table)
    reference = plan.frame("trace_steps")
    reference = reference.filter(pl.col("model").is_null()) if reference.height else reference
    if reference.height and stored:
        reader.register("eff_reference", reference)
        effect.changes += _set_changes(cur, dataset_id, "eff_reference", "trace_step",
                                       ("step_index", "action", "args", "kwargs"), "reference trace",
                                       "prediction_id IS NULL")
    asked = plan.frame("story_questions")
    if asked.height and stored:
        # a story question's reference trace is its story's steps
        reader.register("eff_story", asked.join(plan.frame("story_steps"), on="story").drop("story"))
        effect.changes += _set_changes(cur, dataset_id, "eff_story", f"({QUESTION_STEPS})",
                                       ("step_index", "action", "args", "kwargs"), "reference trace")
    effect.changes = sorted((_placed(c, plan) for c in effect.changes), key=lambda c: (c.stimulus, c.field))
    _results(cur, plan, dataset_id, reader, effect)
    return effect


_RESULTS = ("predictions", "judgments", "human_ratings")


def _placed(change: StimulusChange, plan: ImportPlan) -> StimulusChange:
    """The change with where its stimulus was read (from the plan's origins, else the plan's source file)."""
    file, line, _field = plan.origins.get(change.stimulus, (Path(plan.dataset.source).name, None, None))
    origin = file if line is None else f"{file}:{line}"
    return StimulusChange(change.stimulus, change.field, change.stored, change.incoming, origin)


def _field_changes(cur: duckdb.DuckDBPyConnection, dataset_id: int, view: str) -> list[StimulusChange]:
    selects = " UNION ALL ".join(
        f"SELECT f.external_id, '{name}' AS field, {_text(name, 's')} AS stored, {_text(name, 'f')} AS incoming"
        f" FROM {view} f JOIN stimulus s ON s.dataset_id = {dataset_id} AND s.external_id = f.external_id"
        f" WHERE f.{name} IS NOT NULL AND {_text(name, 'f')} IS DISTINCT FROM {_text(name, 's')}"
        for name in STIMULUS_FIELDS)
    return [StimulusChange(ext, name, _shown(old), _shown(new))
            for ext, name, old, new in cur.execute(selects).fetchall()]


def _set_changes(cur: duckdb.DuckDBPyConnection, dataset_id: int, view: str, sql_table: str,
                 columns: tuple[str, ...], what: str, where: str = "true") -> list[StimulusChange]:
    """Stored stimuli whose rows of `sql_table` differ, as sets, from the rows the plan brings for them."""
    incoming = ", ".join(f"CAST({CHILD_DEFAULTS.get(c, f'f.{c}')} AS VARCHAR)" for c in columns)
    stored = ", ".join(f"CAST(t.{c} AS VARCHAR)" for c in columns)
    rows = cur.execute(
        f"WITH named AS (SELECT s.id AS stimulus_id, s.external_id FROM stimulus s WHERE s.dataset_id = ?"
        f"   AND s.external_id IN (SELECT DISTINCT stimulus FROM {view})),"
        f" plan_rows AS (SELECT n.external_id, {incoming} FROM {view} f JOIN named n ON n.external_id = f.stimulus),"
        f" store_rows AS (SELECT n.external_id, {stored} FROM {sql_table} t JOIN named n"
        f"   ON n.stimulus_id = t.stimulus_id WHERE {where}),"
        f" differing AS (SELECT external_id FROM (SELECT * FROM plan_rows EXCEPT ALL SELECT * FROM store_rows)"
        f"   UNION SELECT external_id FROM (SELECT * FROM store_rows EXCEPT ALL SELECT * FROM plan_rows))"
        f" SELECT d.external_id, (SELECT count(*) FROM store_rows r WHERE r.external_id = d.external_id),"
        f"  (SELECT count(*) FROM plan_rows r WHERE r.external_id = d.external_id) FROM differing d",
        [dataset_id]).fetchall()
    return [StimulusChange(ext, what, f"{old} stored rows", f"{new} different rows") for ext, old, new in rows]


def _results(cur: duckdb.DuckDBPyConnection, plan: ImportPlan, dataset_id: int, reader: FrameViews,
             effect: PlanEffect) -> None:
    """Count the plan's predictions, judgments and ratings that are new, and the stored ones it changes."""
    view = {table: reader.plan_table(plan, table) for table in _RESULTS if plan.frame(table).height}
    run_join = ("JOIN model m ON m.name = f.model JOIN run r ON r.dataset_id = {d} AND r.model_id = m.id"
                " AND r.modality = coalesce(f.modality, '') AND r.prompt_setting = coalesce(f.prompt_setting, '')"
                " AND r.vision_mode = coalesce(f.vision_mode, '') AND r.context = coalesce(f.context, '')"
                " JOIN stimulus s ON s.dataset_id = {d} AND s.external_id = f.stimulus").format(d=dataset_id)
    queries = {
        "predictions": (f"FROM {view.get('predictions')} f {run_join} JOIN prediction p ON p.run_id = r.id"
                        " AND p.stimulus_id = s.id",
                        "f.raw_output IS DISTINCT FROM p.raw_output OR f.answer IS DISTINCT FROM p.answer"
                        " OR f.correct IS DISTINCT FROM p.correct OR f.latency_s IS DISTINCT FROM p.latency_s"
                        " OR f.meta IS DISTINCT FROM CAST(p.meta AS VARCHAR)"),
        "judgments": (f"FROM {view.get('judgments')} f {run_join} JOIN prediction p ON p.run_id = r.id"
                      " AND p.stimulus_id = s.id JOIN judgment j ON j.prediction_id = p.id"
                      " AND j.judge = coalesce(f.judge, '') AND j.criterion = f.criterion",
                      "f.score IS DISTINCT FROM j.score OR f.scale_max IS DISTINCT FROM j.scale_max"
                      " OR f.rationale IS DISTINCT FROM j.rationale"),
        "human_ratings": (f"FROM {view.get('human_ratings')} f JOIN stimulus s ON s.dataset_id = {dataset_id}"
                          " AND s.external_id = f.stimulus JOIN human_rating h ON h.stimulus_id = s.id"
                          " AND h.rater = f.rater"
                          " AND h.condition = coalesce(f.condition, '')",
                          "f.answer IS DISTINCT FROM h.answer OR f.correct IS DISTINCT FROM h.correct"
                          " OR f.response_time_s IS DISTINCT FROM h.response_time_s"),
    }
    for table, (source, differs) in queries.items():
        if table not in view:
            continue
        stored, replaced = cur.execute(f"SELECT count(*), count(*) FILTER (WHERE {differs}) {source}").fetchall()[0]
        effect.results_added[table] = plan.frame(table).height - int(stored)
        effect.results_replaced[table] = int(replaced)


def read_known_stimuli(cur: duckdb.DuckDBPyConnection, plan: ImportPlan) -> str | None:
    """Set `plan.known_stimuli` to the stored stimuli the plan names but does not describe (no kind stated),
    and return the benchmark of the stored dataset the plan writes into (None when it is new)."""
    found = cur.execute("SELECT id, benchmark FROM dataset WHERE name = ?", [plan.dataset.name]).fetchall()
    if not found:
        return None
    reader = FrameViews(cur)
    try:
        plan.known_stimuli = cur.sql(
            "SELECT s.external_id, s.kind, s.ground_truth, CAST(s.meta AS VARCHAR) AS meta FROM stimulus s"
            f" JOIN (SELECT external_id FROM {reader.named_stimuli(plan)} EXCEPT SELECT external_id FROM"
            f" {reader.plan_table(plan, 'stimuli')} WHERE kind IS NOT NULL) n ON n.external_id = s.external_id"
            " WHERE s.dataset_id = ? ORDER BY s.external_id", params=[found[0][0]]).pl()
    finally:
        reader.release()
    return str(found[0][1])
