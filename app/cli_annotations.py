"""`thinslice export FORMAT OUT [--db PATH] [--dataset NAME] [--annotator NAME] [--filter KEY=VALUE ...]`."""
from __future__ import annotations

import argparse
import sys

from app.export_service import FILTER_KEYS, export_annotations
from storage.errors import ThinsliceError
from storage.exporters.registry import exporters
from storage.store import Store, default_store_path


def _parser() -> argparse.ArgumentParser:
    formats = "; ".join(f"{e.name}: {e.title}" for e in exporters())
    parser = argparse.ArgumentParser(
        prog="thinslice export", description="Export annotations from the store to a file.",
        epilog=f"Formats: {formats}. Formats with one file per stimulus write a folder when several "
               "stimuli are exported.")
    parser.add_argument("format", choices=[e.name for e in exporters()], metavar="FORMAT")
    parser.add_argument("out", metavar="OUT", help="file (or folder) to write")
    parser.add_argument("--db", metavar="PATH", help=f"store to read (default {default_store_path()})")
    parser.add_argument("--dataset", metavar="NAME", help="dataset to export (needed when the store has several)")
    parser.add_argument("--annotator", metavar="NAME", help="only this annotator's labels")
    parser.add_argument("--filter", metavar="KEY=VALUE", action="append", default=[],
                        help=f"keep only matching labels; keys: {', '.join(FILTER_KEYS)}")
    return parser


def export_main(argv: list[str]) -> int:
    """Run the export command; prints what was written, or the reason why not. Returns the exit code."""
    args = _parser().parse_args(argv)
    filters = {}
    for item in args.filter:
        key, sep, value = item.partition("=")
        if not sep or not key:
            print(f"thinslice export: --filter takes KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        filters[key.strip()] = value
    try:
        store = Store.open(args.db or default_store_path())
    except ThinsliceError as exc:
        print(f"thinslice export: {exc}", file=sys.stderr)
        return 1
    try:
        written = export_annotations(store, args.format, args.out, dataset=args.dataset,
                                     annotator=args.annotator, filters=filters)
    except ThinsliceError as exc:
        print(f"thinslice export: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(f"wrote {written}")
    return 0
