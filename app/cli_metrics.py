"""`thinslice metrics [--db PATH] [--dataset NAME] [--correction loglinear|half_over_n] [--json | --methods]`.

Prints the same tables the metrics dashboard draws: as one JSON document with --json, as a methods
paragraph per dataset with --methods (each figure's method as its note states it, and its n), else as
readable tables per dataset.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from importlib import metadata
from typing import Any, TextIO

from app.beliefs.stories import engine_agreement
from app.cli_store import db_argument, run_reader
from app.dashboard import CORRECTION_NAMES, dashboard_json
from app.metrics import CORRECTIONS
from storage.lookups import DatasetNotFound
from storage.store import Store

_HIDDEN_COLUMNS = {"ci_method", "correction", "normalizer", "bleu_tokenizer", "source"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="thinslice metrics",
                                     description="Print each benchmark's dashboard figures, recomputed from the store.")
    db_argument(parser)
    parser.add_argument("--dataset", help="only this dataset (by name)")
    parser.add_argument("--correction", choices=CORRECTIONS, default="loglinear",
                        help="rate correction for d' and c: " + "; ".join(f"{k} = {v}" for k, v in
                                                                          CORRECTION_NAMES.items()))
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--methods", action="store_true",
                        help="print each dataset's methods as a paragraph for a paper's methods section")
    return parser


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def format_table(table: dict[str, Any]) -> str:
    """A dashboard table (as in the JSON) as aligned text columns."""
    rows = table["rows"]
    if not rows:
        return f"{table['title']}\n  (no rows)"
    columns = [c for c in rows[0] if c not in _HIDDEN_COLUMNS]
    cells = [[_cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    body = ["  ".join(v.rjust(w) if _numeric(v) else v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join([table["title"], f"  {table['note']}", line, "-" * len(line), *body])


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def metrics_main(argv: list[str]) -> int:
    """Run the command; 0 on success, 1 for an unknown dataset, 2 for bad arguments."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return run_reader("metrics", metrics_run, args)


def metrics_run(store: Store, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the figures `args` asks for to `out`; 1 with one line on `err` for an unknown dataset."""
    try:
        result = dashboard_json(store, args.dataset, args.correction)
        agreement = engine_agreement(store, args.dataset)   # ExploreToM questions the engine answers
        for dataset in result["datasets"]:
            if dataset["dataset"] in agreement:
                dataset["engine_answers"] = agreement[dataset["dataset"]]
    except DatasetNotFound as exc:
        err.write(f"thinslice metrics: {exc}\n")
        return 1
    if args.methods:
        text = "\n\n".join(methods_paragraph(d) for d in result["datasets"])
    else:
        text = json.dumps(result, indent=2, ensure_ascii=False) if args.json else format_result(result)
    try:
        out.write(text + "\n")
        out.flush()
    except BrokenPipeError:  # the reader stopped early (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def format_result(result: dict[str, Any]) -> str:
    """Every dataset's notes and tables as readable text."""
    lines = []
    for dataset in result["datasets"]:
        lines.append(f"== {dataset['dataset']} ({dataset['benchmark']})")
        lines += [f"note: {note}" for note in dataset["notes"]]
        engine = dataset.get("engine_answers")
        if engine:
            lines.append(f"note: the belief engine reproduces {engine['expected_reproduced']} of "
                         f"{engine['questions']} expected answers ({engine['engine_answered']} answered)")
        for table in dataset["tables"]:
            lines += ["", format_table(table)]
        lines.append("")
    return "\n".join(lines)


def methods_paragraph(dataset: dict[str, Any]) -> str:
    """One dataset's figures (as the JSON gives them) as a methods paragraph: each table's method as its note
    states it, with its rows and the stimuli behind them, then the dataset's notes."""
    sentences = [f"Figures of {dataset['dataset']} ({dataset['benchmark']}) were recomputed by Thinslice "
                 f"{metadata.version('thinslice')} from the stored answers."]
    for table in dataset["tables"]:
        counts = [r["n_stimuli"] for r in table["rows"]]
        n = (f"{len(counts)} rows, {min(counts)} to {max(counts)} stimuli each" if counts and min(counts) != max(counts)
             else f"{len(counts)} rows of {counts[0]} stimuli each" if counts else "no rows")
        note = table["note"].rstrip(".")
        sentences.append(f"{table['title']}: {note} ({n}).")
    sentences += [note if note.endswith(".") else note + "." for note in dataset["notes"]]
    return " ".join(sentences)
