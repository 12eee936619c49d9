"""`thinslice list [--db PATH] [--dataset NAME] [--kind KIND] [--filter KEY=VALUE ...]`: the stimulus ids.

Prints one stimulus per line, `ID<TAB>KIND<TAB>DATASET`, in the dataset's natural id order (numbers as
numbers: 0, 1, 2, 10, 100), streamed a batch at a time; the first column is what
`thinslice --stimulus` (and `--dataset`) take. The filters are the window's filter bar:

    truth=VALUE       ground truth
    text=WORDS        id, title, text or metadata contain the words
    modality=NAME     only stimuli with predictions in that condition
    correct=MODEL     the model was right (in --filter modality=..., if given)
    wrong=MODEL       the model was wrong
    disagree=yes      the models gave different answers
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import TextIO

from app.cli_store import db_argument, run_reader
from storage import lookups, queries
from storage.errors import ThinsliceError
from storage.store import Store

FILTER_KEYS = ("truth", "text", "modality", "correct", "wrong", "disagree")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice list", description="Print the ids of the stores' stimuli (for --stimulus), one a line.",
        epilog="Filter keys: " + ", ".join(FILTER_KEYS) + ". Output: ID, kind and dataset, tab-separated.")
    db_argument(parser)
    parser.add_argument("--dataset", metavar="NAME", help="only this dataset (default: every dataset)")
    parser.add_argument("--kind", help="only this kind of stimulus (dyad, echomind_mcq, agentviss_scene, ...)")
    parser.add_argument("--filter", metavar="KEY=VALUE", action="append", default=[],
                        help="keep only matching stimuli; keys: " + ", ".join(FILTER_KEYS))
    return parser


def parse_filters(items: list[str]) -> queries.StimulusFilter:
    """The --filter KEY=VALUE items as the filter the window's filter bar builds; ValueError names a bad item."""
    f = queries.StimulusFilter()
    outcomes = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in FILTER_KEYS:
            raise ValueError(f"--filter takes KEY=VALUE with KEY one of {', '.join(FILTER_KEYS)}, got {item!r}")
        if key == "truth":
            f = replace(f, ground_truth=value)
        elif key == "text":
            f = replace(f, text=value)
        elif key == "modality":
            f = replace(f, modality=value)
        elif key in ("correct", "wrong"):
            outcomes.append((value, "correct" if key == "correct" else "incorrect"))
        else:
            f = replace(f, models_disagree=value.lower() in ("yes", "true", "1"))
    return replace(f, model_outcomes=tuple(outcomes))


def list_main(argv: list[str]) -> int:
    """Print the matching stimuli; a wrong --dataset or --kind names the valid ones. Returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        parse_filters(args.filter)
    except ValueError as exc:
        print(f"thinslice list: {exc}", file=sys.stderr)
        return 2
    return run_reader("list", list_run, args)


def list_run(store: Store, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Write the stimuli `args` asks for to `out`, a batch at a time; 1 with one line on `err` for a dataset
    or kind the store lacks."""
    base = parse_filters(args.filter)
    cur = store.cursor()
    try:
        chosen = lookups.datasets(cur, args.dataset)
    except ThinsliceError as exc:
        err.write(f"thinslice list: {exc}\n")
        return 1
    if args.kind:
        kinds = sorted({k for d in chosen for k in queries.dataset_facets(cur, d.id)["kind"]})
        if args.kind not in kinds:
            err.write(f"thinslice list: no stimuli of kind {args.kind!r} (kinds here: {', '.join(kinds) or 'none'})\n")
            return 1
    try:
        for dataset in chosen:
            f = replace(base, dataset_id=dataset.id, kind=args.kind)
            tail = f"\t{dataset.name}\n"
            for rows in queries.stimulus_listing(cur, f):
                out.write("".join(f"{external_id}\t{kind}{tail}" for external_id, kind in rows))
        out.flush()
    except BrokenPipeError:   # the reader (head, less) has all it wanted
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (so the interpreter's last flush is silent)
    return 0
