"""Running an import end to end for the GUI, the CLI and the sample: read, interpret, write, then score.

The reader reads the files into a plan with the raw text; the benchmark's rules (`app.benchmarks`) interpret
it (answers parsed and scored, goals read); the writer writes it; NCP attempts are then scored by replaying
their stored traces with the belief engine. A dry run stops before the write and shows the parsed plan.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.benchmarks import interpret_plan
from app.changes import ChangeChannel, Topic
from app.ncp import score_dataset_stories, score_dataset_traces
from storage.importers.common import ImportOptions
from storage.importers.effect import plan_effect, read_known_stimuli
from storage.importers.generic import GenericImporter
from storage.importers.plan import ImportPlan
from storage.importers.registry import detect_importer, get_importer
from storage.importers.writer import ImportSummary, write_plan
from storage.store import Store
from storage.validation import check_values

Progress = Callable[[float, str], None]


def plan_import(kind: str, path: Path, options: ImportOptions, store: Store | None = None) -> ImportPlan:
    """Read `path` with the importer for `kind` ('auto' detects), interpret it with its benchmark's rules, and
    return what would be written.

    With the `store` it will be written to, a table of results aimed at a stored dataset is read as that
    dataset's benchmark, and its answers to stored stimuli are scored against the stored truth."""
    path = Path(path)
    importer = detect_importer(path) if kind == "auto" else get_importer(kind)
    plan = importer.plan(path, options)
    if store is not None:
        benchmark = read_known_stimuli(store.cursor(), plan)
        if benchmark is not None and plan.importer == GenericImporter.kind:
            plan.dataset.benchmark = benchmark
    plan = interpret_plan(plan, options.skip_bad)
    check_values(plan, options.skip_bad)   # the writer checks again; here so a dry run shows the same refusals
    return plan


def run_import(store: Store, kind: str, path: Path, options: ImportOptions,
               progress: Progress | None = None, changes: ChangeChannel | None = None) -> ImportSummary:
    """Plan and write one import in a single transaction, then score the NCP attempts it brought; `changes`
    hears that the datasets changed (a new one, or new rows in one), after the store has them."""
    progress = progress or (lambda _f, _m: None)
    progress(0.0, f"reading {Path(path).name}")
    plan = plan_import(kind, path, options, store)
    summary = write_plan(store, plan, progress=lambda f, m: progress(0.3 + 0.6 * f, m),
                         should_cancel=options.should_cancel, replace_stimuli=options.replace_stimuli,
                         values_checked=True)
    _after_import(store, summary)
    if changes is not None:
        changes.publish([Topic.DATASETS], dataset_id=summary.dataset_id, source="import")
    progress(1.0, "done")
    return summary


def _after_import(store: Store, summary: ImportSummary) -> None:
    """Scores that need what is stored: an NCP attempt's success comes from replaying it after its set-up, and
    an answer to a story question attached from a file of its own is held to the story's expected answer."""
    score_dataset_traces(store, summary.dataset_id)
    score_dataset_stories(store, summary.dataset_id)


def plan_report(plan: ImportPlan, store: Store | None = None) -> dict:
    """What a plan would write: the dataset, rows per table, the mapping used, notes and the skipped rows; with
    the store it would go to, also what it would do there (`effect`: stimuli added, named and changed)."""
    report = {"dataset": plan.dataset.name, "counts": plan.counts(), "mapping": plan.mapping,
              "notes": plan.notes, "skipped": [str(p) for p in plan.problems]}
    if store is not None:
        report["effect"] = plan_effect(store.cursor(), plan).as_dict()
    return report


def dry_run_report(kind: str, path: Path, options: ImportOptions, preview_rows: int = 20,
                   store: Store | None = None) -> dict:
    """What an import would write (`plan_report`) plus a preview of a table file."""
    return {**table_preview(path, options, preview_rows),
            **plan_report(plan_import(kind, path, options, store), store)}


def table_preview(path: Path, options: ImportOptions | None = None, n: int = 20) -> dict:
    """A table file's own columns, its first `n` rows and the mapping that would be used; empty for a folder.

    Read apart from the plan, so that a user can see their column names even when the plan fails for want
    of a mapping.
    """
    if not Path(path).is_file():
        return {"columns": [], "rows": [], "mapping": {}}
    from storage.importers.generic import preview
    columns, rows, mapping = preview(Path(path), options, n)
    return {"columns": list(columns), "rows": rows, "mapping": mapping}


RESULT_TABLES = ("predictions", "judgments", "human_ratings")


def attach_offer(store: Store, kind: str, path: Path, options: ImportOptions) -> dict | None:
    """When a generic table of results names stimuli that another dataset already holds (most of them), that
    dataset: {"dataset", "matched", "total"}; None when the results would go to a dataset of their own anyway
    (a benchmark's release always makes or updates its own)."""
    from storage import lookups
    if kind != GenericImporter.kind:
        return None
    plan = plan_import(kind, path, options)
    ids = sorted({str(i) for t in RESULT_TABLES if "stimulus" in plan.frame(t).columns
                  for i in plan.frame(t)["stimulus"].unique().to_list() if i is not None})
    cur = store.cursor()
    if not ids or plan.dataset.name in {d.name for d in lookups.datasets(cur)}:
        return None
    holders = lookups.datasets_holding(cur, ids)
    if not holders or holders[0][1] * 2 < len(ids):
        return None
    name, matched = holders[0]
    return {"dataset": name, "matched": matched, "total": len(ids)}
