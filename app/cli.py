"""The command line. Every verb runs the same code the GUI uses.

    thinslice [--db PATH] [--dataset NAME] [--stimulus ID] [--screenshot OUT.png]   the app (or a screenshot)
    thinslice info [--db PATH]                                                       JSON summary of the store
    thinslice import KIND PATH [--db PATH] [--dataset NAME] [--map F=C ...] [--dry-run] [--skip-bad]
    thinslice import --list
    thinslice export FORMAT OUT [--db PATH] [--dataset NAME] [--annotator NAME] [--filter K=V ...]
    thinslice annotations import FORMAT PATH [--db PATH] [--dataset NAME] [--annotator NAME] [--label-set NAME]
    thinslice metrics [--db PATH] [--dataset NAME] --json
    thinslice ncp replay TRACE.json
    thinslice sample [--db PATH]                                                     (re)import the sample
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from storage.errors import ThinsliceError
from storage.store import Store, default_store_path

VERBS = ("info", "import", "export", "annotations", "metrics", "ncp", "sample")


def _db_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", type=Path, default=None,
                        help=f"store file (default: {default_store_path()})")


def open_store(db: Path | None, *, with_sample: bool = True) -> Store:
    """Open the store; a brand-new empty store gets the bundled sample."""
    from app.sample import import_sample, store_is_empty
    store = Store.open(db or default_store_path())
    if with_sample and store_is_empty(store):
        import_sample(store)
    return store


def _fail(message: str, code: int = 1) -> int:
    print(f"thinslice: {message}", file=sys.stderr)
    return code


def cmd_info(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="thinslice info", description="Print a JSON summary of the store.")
    _db_arg(parser)
    args = parser.parse_args(argv)
    from storage.queries import info_summary
    store = open_store(args.db)
    try:
        summary = info_summary(store.cursor())
        summary["store"] = str(store.path)
        print(json.dumps(summary, indent=2))
    finally:
        store.close()
    return 0


def cmd_sample(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="thinslice sample", description="Import the bundled synthetic sample.")
    _db_arg(parser)
    args = parser.parse_args(argv)
    from app.sample import import_sample
    store = Store.open(args.db or default_store_path())
    try:
        names = import_sample(store, progress=lambda f, m: print(f"{f:4.0%} {m}", file=sys.stderr))
    finally:
        store.close()
    print(json.dumps({"imported": names}))
    return 0


def dispatch(argv: list[str]) -> int | None:
    """Run a verb; None means no verb was given (start the GUI)."""
    if not argv or argv[0] not in VERBS:
        return None
    verb, rest = argv[0], argv[1:]
    try:
        if verb == "info":
            return cmd_info(rest)
        if verb == "sample":
            return cmd_sample(rest)
        if verb == "import":
            from app.cli_import import import_main
            return import_main(rest)
        if verb == "export":
            from app.cli_annotations import export_main
            return export_main(rest)
        if verb == "annotations":
            from app.cli_annotations import annotations_main
            return annotations_main(rest)
        if verb == "metrics":
            from app.cli_metrics import metrics_main
            return metrics_main(rest)
        if verb == "ncp":
            if rest[:1] != ["replay"]:
                return _fail("usage: thinslice ncp replay TRACE.json", 2)
            from app.beliefs.cli import ncp_replay_main
            return ncp_replay_main(rest[1:])
    except ThinsliceError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    return None


def gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice",
        description="Thinslice: look inside social-intelligence benchmarks of multimodal models.",
        epilog="verbs: " + ", ".join(VERBS) + " (thinslice VERB --help)")
    _db_arg(parser)
    parser.add_argument("--dataset", help="dataset to show first (by name)")
    parser.add_argument("--stimulus", help="stimulus to select (its id in the dataset, or the store id)")
    parser.add_argument("--screenshot", type=Path, metavar="OUT.png",
                        help="render the main window to a PNG and exit")
    parser.add_argument("--annotator", help="your name, stamped on every annotation edit (remembered)")
    parser.add_argument("--no-sample", action="store_true", help="do not import the sample into an empty store")
    return parser
