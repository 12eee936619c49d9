"""`thinslice import`: bring a release or a results table into the store, all or nothing."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.cli_store import db_argument, open_cli_store
from app.import_service import plan_import, plan_report, run_import
from storage.errors import ImportFailed
from storage.importers.common import MAP_FIELDS, ImportOptions
from storage.importers.registry import detect_importer, importers
from storage.store import Store, default_store_path


def _parser() -> argparse.ArgumentParser:
    fields = "\n".join(f"  {name:<14} {help_}" for name, help_ in MAP_FIELDS.items())
    parser = argparse.ArgumentParser(
        prog="thinslice import", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Import a benchmark release or a results table. One set of --map options applies to every "
                    "file of a release. A results table that names stimuli already in --dataset adds its answers "
                    "to them and leaves the stimuli as they are; only new ids become new stimuli.",
        epilog=f"fields a column can be mapped to (--map FIELD=COLUMN):\n{fields}")
    parser.add_argument("kind", nargs="?", help="importer kind (see --list), or 'auto' to detect")
    parser.add_argument("path", nargs="?", type=Path, help="release folder or file")
    parser.add_argument("--list", action="store_true", help="list the importer kinds and exit")
    db_argument(parser)
    parser.add_argument("--dataset", help="dataset name to import into (default: from the release)")
    parser.add_argument("--map", action="append", default=[], metavar="FIELD=COLUMN",
                        help="map a target field to a source column")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                        help="importer option: stimuli_exist=true (generic: every stimulus id must already be in "
                             "--dataset; refuse new ones), scale_max=N (generic: judges' scale), benchmark=NAME "
                             "(generic: the rules of a new dataset), window_s=20 snap_to_turn=true (Seamless)")
    parser.add_argument("--replace-stimuli", action="store_true",
                        help="let the files replace stored stimuli's values they state differently (truth, "
                             "title, text, metadata, media, transcript, goal); without it such an import is "
                             "refused and the differences listed. Values a file does not state are always kept")
    parser.add_argument("--dry-run", action="store_true",
                        help="report what would be imported and what it would do to the store "
                             "(stimuli added, named and changed); write nothing")
    parser.add_argument("--skip-bad", action="store_true", help="skip malformed rows and list each one")
    parser.add_argument("--allow-outside-root", action="store_true",
                        help="accept media paths outside the dataset folder")
    return parser


def _parse_pairs(pairs: list[str], what: str) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise ImportFailed(f"--{what} {pair!r}: expected NAME=VALUE")
        result[key.strip()] = value.strip()
    return result


def parse_map(pairs: list[str]) -> dict[str, str]:
    """The --map FIELD=COLUMN options as a map, refusing a field the generic importer does not know."""
    mapping = _parse_pairs(pairs, "map")
    unknown = sorted(set(mapping) - set(MAP_FIELDS))
    if unknown:
        raise ImportFailed(f"unknown field(s) in --map: {', '.join(unknown)}; known: {', '.join(MAP_FIELDS)}")
    return mapping


def _option_value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def import_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.list:
        for imp in importers():
            print(f"{imp.kind:<12} {imp.title}")
        print(f"{'auto':<12} detect the kind from the files")
        return 0
    if not args.kind or not args.path:
        _parser().print_usage(sys.stderr)
        print("thinslice import: KIND and PATH are required (or --list)", file=sys.stderr)
        return 2
    mapping = parse_map(args.map)
    extra = {k: _option_value(v) for k, v in _parse_pairs(args.set, "set").items()}
    options = ImportOptions(dataset_name=args.dataset, mapping=mapping, skip_bad=args.skip_bad,
                            allow_outside_root=args.allow_outside_root, extra=extra,
                            replace_stimuli=args.replace_stimuli)
    if not args.path.exists():
        raise ImportFailed(f"{args.path} does not exist")
    kind = detect_importer(args.path).kind if args.kind == "auto" else args.kind
    if args.dry_run:
        store = _existing_store(args.db)
        try:
            report = {"kind": kind, **plan_report(plan_import(kind, args.path, options, store), store),
                      "written": False}
        finally:
            if store is not None:
                store.close()
        print(json.dumps(report, indent=2))
        if "effect" in report:
            print(report["effect"]["summary"], file=sys.stderr)
        return 0
    store = open_cli_store(args.db, create=args.create)
    try:
        summary = run_import(store, kind, args.path, options,
                             progress=lambda f, m: print(f"{f:4.0%} {m}", file=sys.stderr))
    finally:
        store.close()
    print(json.dumps({"kind": kind, "dataset": summary.dataset, "written": summary.written,
                      "effect": summary.effect.as_dict(), "notes": summary.notes, "skipped": summary.skipped},
                     indent=2))
    print(summary.effect.sentence(), file=sys.stderr)
    return 0


def _existing_store(db: Path | None) -> Store | None:
    """The store a dry run compares with, opened for reading only; None when there is none yet."""
    path = Path(db).expanduser() if db is not None else default_store_path()
    return Store.open(path, read_only=True, create=False) if path.exists() else None
