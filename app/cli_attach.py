"""`thinslice attach`: read a results release kept as Parquet in place, as a new dataset."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.attach_service import attach_dataset
from app.cli_import import parse_map
from app.cli_store import db_argument, open_cli_store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice attach",
        description="Attach a predictions table kept as Parquet (one file, or a folder of parts) as a new dataset "
                    "without copying its predictions into the store: they are read from the files each time. "
                    "Stimuli, models and runs are stored as an import stores them. Every row is checked first; a "
                    "bad row refuses the attach, naming file and row. If the files later move or change, the "
                    "store says so when opened. The column map is `thinslice import generic`'s (see its --help).")
    parser.add_argument("path", type=Path, help="a .parquet file or a folder of them")
    db_argument(parser)
    parser.add_argument("--dataset", help="name of the new dataset (default: Generic <file or folder name>)")
    parser.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN",
                        help="map a field to a column (default: guessed from the columns' names and values)")
    return parser


def attach_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    mapping = parse_map(args.map)
    store = open_cli_store(args.db, create=args.create)
    try:
        summary = attach_dataset(store, args.path, args.dataset, mapping or None,
                                 progress=lambda f, m: print(f"{f:4.0%} {m}", file=sys.stderr))
    finally:
        store.close()
    print(json.dumps({"dataset": summary.dataset, "written": summary.written, "mapping": summary.mapping,
                      "notes": summary.notes}, indent=2))
    print(summary.notes[0], file=sys.stderr)
    return 0
