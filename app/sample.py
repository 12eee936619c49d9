"""The bundled synthetic sample: four small datasets in the shapes of the real releases."""
from __future__ import annotations

from collections.abc import Callable

from app.import_service import run_import
from storage.importers.common import ImportOptions
from storage.importers.label_sets import add_label_set, read_label_set
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.resources import LABEL_SETS_DIR, SAMPLE_DIR
from storage.store import Store


# (importer kind, folder under resources/sample, dataset name)
SAMPLE_DATASETS = [
    ("friendbench", "friendbench", "FriendBench (sample)"),
    ("echomind", "echomind", "EchoMind (sample)"),
    ("agentviss", "agentviss", "AgentViSS (sample)"),
    ("ncp", "ncp", "NCP-ExploreToM (sample)"),
    ("exploretom", "ncp/exploretom", "ExploreToM stories (sample)"),
]

Progress = Callable[[float, str], None]


def store_is_empty(store: Store) -> bool:
    return store.cursor().execute("SELECT count(*) FROM dataset").fetchall()[0][0] == 0


def import_label_sets(store: Store) -> int:
    """Load every label set shipped in resources/label_sets (EchoMind taxonomy, familiarity, cues, ...)."""
    paths = sorted(LABEL_SETS_DIR.glob("*.json"))
    plan = ImportPlan(DatasetInfo("label sets", "generic", LABEL_SETS_DIR, "bundled"), "label_sets")
    for path in paths:
        add_label_set(plan, read_label_set(path))
    write_plan(store, plan, datasetless=True)
    return len(paths)


def import_sample(store: Store, progress: Progress | None = None,
                  should_cancel: Callable[[], bool] = lambda: False) -> list[str]:
    """Import every bundled sample dataset (idempotent: importing the same files again changes no row; files of
    a newer version replace what an older one stored)."""
    progress = progress or (lambda _f, _m: None)
    import_label_sets(store)
    names = []
    for i, (kind, folder, name) in enumerate(SAMPLE_DATASETS):
        root = SAMPLE_DIR / folder
        if not root.exists():
            continue
        progress(i / len(SAMPLE_DATASETS), f"importing {name}")
        # the sample is the app's own: importing it again brings it to this version's files, stimuli included
        options = ImportOptions(dataset_name=name, should_cancel=should_cancel, replace_stimuli=True)
        run_import(store, kind, root, options)
        names.append(name)
    progress(1.0, "sample imported")
    return names
