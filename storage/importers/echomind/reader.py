"""One EchoMind read: the rows gathered for a plan, and the plan they make."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from storage.importers.common import ImportOptions, ProblemLog, read_annotation_sidecar
from storage.importers.echomind.files import KIND, NOT_IN_TAXONOMY, TAXONOMY_FILE, VERSION, counted
from storage.importers.echomind.judges import JudgeReading
from storage.importers.echomind.outputs import OutputReading
from storage.importers.echomind.release import ReleaseReading
from storage.importers.label_sets import LabelSet, add_label_set, bundled_label_set
from storage.importers.plan import DatasetInfo, ImportPlan


class EchoMindReader(ReleaseReading, OutputReading, JudgeReading):
    """Accumulates rows for one plan; every bad record goes to the problem log."""

    def __init__(self, root: Path, options: ImportOptions) -> None:
        self.root = root
        self.options = options
        self.log = ProblemLog(options.skip_bad)
        self.taxonomy: LabelSet = bundled_label_set(TAXONOMY_FILE)
        self.mapping: dict[str, str] = {}
        self.notes: list[str] = []
        self.stimuli: list[dict[str, Any]] = []
        self.media: list[dict[str, Any]] = []
        self.predictions: list[dict[str, Any]] = []
        self.judgments: list[dict[str, Any]] = []
        self.aggregates: list[dict[str, Any]] = []
        self.data_types: list[str] = []
        self.scripts: dict[tuple[str, str], dict[str, Any]] = {}        # (type, case key) -> script info
        self.mcqs: dict[tuple[str, str, str], str] = {}                 # (type, task, question id) -> stimulus
        self.plan_origins: dict[str, tuple[str, int | None, str | None]] = {}  # MCQ stimulus -> its key's place
        self.missing_media = 0
        # attributes the taxonomy lacks, by lower-cased name: {label, scripts (how many), first (file:line)}
        self.new_attributes: dict[str, dict[str, Any]] = {}

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return path.name

    def drop_repeats(self, rows: list[dict[str, Any]], keys: tuple[str, ...], what: str) -> list[dict[str, Any]]:
        """Keep the first row per key; a repeat (same run and stimulus again) is a problem, not an overwrite."""
        first: dict[tuple, dict[str, Any]] = {}
        for row in rows:
            key = tuple(row[k] for k in keys)
            if key in first:
                earlier = first[key]
                self.log.add(row["_file"], row["_line"], "case_id/question_id", row["stimulus"],
                             f"one {what} per stimulus and run ({row['model']} {row['modality']} "
                             f"{row['prompt_setting']}); already given at {earlier['_file']}:{earlier['_line']}")
                continue
            first[key] = row
        return list(first.values())

    def add_new_attributes(self, plan: ImportPlan) -> None:
        """Attributes the taxonomy lacks become labels of its set, placed last, and are listed in the notes."""
        if not self.new_attributes:
            return
        plan.add("labels", [{"label_set": self.taxonomy.name, "name": entry["label"].name, "parent": None,
                             "description": entry["label"].description, "ord": None}
                            for entry in self.new_attributes.values()])
        listed = ", ".join(f"'{entry['label'].name}' ({counted(entry['scripts'], 'script')}, first at "
                           f"{entry['first']})" for entry in self.new_attributes.values())
        self.notes.append(f"{counted(len(self.new_attributes), 'vocal attribute')} {NOT_IN_TAXONOMY} "
                          f"'{self.taxonomy.name}', imported as new labels flagged '{NOT_IN_TAXONOMY}': {listed}")

    def finish(self, path: Path) -> ImportPlan:
        name = self.options.dataset_name or f"EchoMind {self.root.name}"
        plan = ImportPlan(DatasetInfo(name=name, benchmark="echomind", root=self.root, source=str(path),
                                      synthetic=(self.root / "SYNTHETIC.md").is_file(),
                                      meta={"data_types": self.data_types, "label_set": self.taxonomy.name}),
                          importer=KIND, importer_version=VERSION)
        add_label_set(plan, self.taxonomy)
        self.add_new_attributes(plan)
        run = ("stimulus", "model", "modality", "prompt_setting", "context")
        predictions = self.drop_repeats(self.predictions, run, "answer")
        judgments = self.drop_repeats(self.judgments, (*run, "judge", "criterion"), "score per criterion")
        for table, rows in (("stimuli", self.stimuli), ("media", self.media), ("predictions", predictions),
                            ("judgments", judgments), ("aggregate_results", self.aggregates)):
            if rows:
                plan.add(table, rows)
        read_annotation_sidecar(self.root, plan, self.log)
        if self.missing_media:
            self.notes.append(f"{self.missing_media} media files missing")
        plan.mapping = dict(self.mapping)
        plan.origins.update(self.plan_origins)
        plan.notes.extend(self.notes)
        self.log.finish(plan)
        return plan
