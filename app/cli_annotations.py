"""`thinslice export FORMAT OUT ...` and `thinslice annotations import FORMAT PATH ...`."""
from __future__ import annotations

import argparse
import sys
from typing import TextIO

from app.cli_store import EXIT_MISSING_STORE, db_argument, open_cli_store, run_reader
from app.annotation_files import AUTO
from app.export_service import FILTER_KEYS, export_annotations, import_annotations
from storage.errors import StoreMissingError, ThinsliceError
from storage.exporters.registry import exporters
from storage.exporters.report import TransferReport
from storage.store import Store

SKIP_HELP = ("leave out what the format cannot hold (listed in the report) instead of refusing; without it,"
             " nothing is written when anything would be lost")  # for export


def _parser() -> argparse.ArgumentParser:
    formats = "; ".join(f"{e.name}: {e.title}" for e in exporters())
    parser = argparse.ArgumentParser(
        prog="thinslice export", description="Export annotations from the store to a file.",
        epilog=f"Formats: {formats}. Formats with one file per stimulus write a folder when several "
               "stimuli are exported.")
    parser.add_argument("format", choices=[e.name for e in exporters()], metavar="FORMAT")
    parser.add_argument("out", metavar="OUT", help="file (or folder) to write")
    db_argument(parser)
    parser.add_argument("--dataset", metavar="NAME", help="dataset to export (needed when the store has several)")
    parser.add_argument("--annotator", metavar="NAME", help="only this annotator's labels")
    parser.add_argument("--filter", metavar="KEY=VALUE", action="append", default=[],
                        help=f"keep only matching labels; keys: {', '.join(FILTER_KEYS)}")
    parser.add_argument("--skip-unrepresentable", action="store_true", help=SKIP_HELP)
    return parser


def export_main(argv: list[str]) -> int:
    """Run the export command; prints what was written, or the reason why not. Returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        _filters(args.filter)
    except ValueError as exc:
        print(f"thinslice export: {exc}", file=sys.stderr)
        return 2
    try:
        return run_reader("export", export_run, args, paths=("out",))
    except ThinsliceError as exc:
        print(f"thinslice export: {exc}", file=sys.stderr)
        return EXIT_MISSING_STORE if isinstance(exc, StoreMissingError) else 1


def _filters(items: list[str]) -> dict[str, str]:
    """The --filter KEY=VALUE items; ValueError names a bad one."""
    filters = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--filter takes KEY=VALUE, got {item!r}")
        filters[key.strip()] = value
    return filters


def export_run(store: Store, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Export what `args` asks for from `store`; what was written goes to `out`, the reason why not to `err`."""
    try:
        result = export_annotations(store, args.format, args.out, dataset=args.dataset, annotator=args.annotator,
                                    filters=_filters(args.filter), skip_unrepresentable=args.skip_unrepresentable)
    except ThinsliceError as exc:
        err.write(f"thinslice export: {exc}\n")
        return 1
    out.write("\n".join([*result.report.lines(), f"wrote {result.report.written} labels to {result.path}"]) + "\n")
    return 0


def _import_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice annotations import",
        description="Read annotations written in one of the export formats back into a dataset, all or nothing.")
    parser.add_argument("format", choices=[AUTO] + [e.name for e in exporters()], metavar="FORMAT",
                        help=f"{AUTO} (the format the file's content shows) or one of: "
                        + ", ".join(e.name for e in exporters()))
    parser.add_argument("path", metavar="PATH", help="file (or folder) to read")
    db_argument(parser)
    parser.add_argument("--dataset", metavar="NAME", help="dataset whose stimuli the labels belong to")
    parser.add_argument("--annotator", metavar="NAME", help="annotator for rows that do not name one")
    parser.add_argument("--label-set", metavar="NAME", help="label set for rows that do not name one")
    parser.add_argument("--stimulus", metavar="ID", help="put the labels of this one per-recording file (ELAN,"
                        " Praat, Audacity) on this stimulus; without it, each file goes to the stimulus its name"
                        " (or the id inside it) names")
    parser.add_argument("--clip", action="store_true", help="cut labels that reach past their stimulus's duration"
                        " to it (listed in the report) instead of refusing the import")
    parser.add_argument("--skip-outside", action="store_true", help="leave out labels that reach past their"
                        " stimulus's duration (listed in the report) instead of refusing the import; with --clip"
                        " too, --clip decides")
    parser.add_argument("--skip-unrepresentable", action="store_true",
                        help="leave out labels Thinslice cannot represent (an ELAN annotation whose time cannot be"
                        " found), listed in the report, instead of refusing the import")
    return parser


def annotations_main(argv: list[str]) -> int:
    """`thinslice annotations import FORMAT PATH ...`; prints how many labels were added."""
    if argv[:1] != ["import"]:
        print("usage: thinslice annotations import FORMAT PATH [--db PATH] [--dataset NAME] [--annotator NAME]"
              " [--label-set NAME] [--stimulus ID] [--clip] [--skip-outside] [--skip-unrepresentable]",
              file=sys.stderr)
        return 2
    args = _import_parser().parse_args(argv[1:])
    # a refused file or a locked store is reported by the command-line dispatcher, like every verb's errors
    store = open_cli_store(args.db, create=args.create)
    try:
        report = TransferReport()
        added = import_annotations(store, args.format, args.path, args.dataset, args.annotator, args.label_set,
                                   args.stimulus, clip=args.clip, skip_unrepresentable=args.skip_unrepresentable,
                                   skip_outside=args.skip_outside, report=report)
    finally:
        store.close()
    print("\n".join(report.lines()))
    print(f"added {added} labels")
    return 0
