"""The command line. Every verb runs the same code the GUI uses.

    thinslice [--db PATH] [--dataset NAME] [--stimulus ID] [--screenshot OUT.png]   the app (or a screenshot)
    thinslice info [--db PATH]                                                       JSON summary of the store
    thinslice list [--db PATH] [--dataset NAME] [--kind KIND] [--filter K=V ...]   stimulus ids (for --stimulus)
    thinslice import KIND PATH [--db PATH] [--dataset NAME] [--map F=C ...] [--dry-run] [--skip-bad]
    thinslice import --list
    thinslice attach PATH [--db PATH] [--dataset NAME] [--map F=C ...]    a Parquet release read in place
    thinslice export FORMAT OUT [--db PATH] [--dataset NAME] [--annotator NAME] [--filter K=V ...] [--skip-unrepresentable]
    thinslice annotations import FORMAT PATH [--db PATH] [--dataset NAME] [--annotator NAME] [--label-set NAME]
                                 [--stimulus ID] [--clip] [--skip-unrepresentable]
    thinslice metrics [--db PATH] [--dataset NAME] --json
    thinslice cues compute|compare [--db PATH] [--dataset NAME] [--json]            voice and turn-taking cues
    thinslice ncp replay TRACE.json | ncp story STORY.txt | ncp answer TRACE.json QUESTION
    thinslice sample [--db PATH]                                                     (re)import the sample
    thinslice backup OUT [--db PATH]                 a consistent, checked copy of the store in a new file OUT
    thinslice check [--db PATH]                      read every table back; exit 1 naming a damaged table
    thinslice recover [--db PATH]                    open a store whose write-ahead log is damaged, and put back
                                                     the acknowledged edits it lacks from its edit journal
    thinslice team init|add-member|join|status|sync|leave ...   annotate as a team on a PostgreSQL server

--db names an existing store; add --create to make a new one there. Without --db the default store in the
data folder is used (and made, with the sample, on first start). Verbs that only read (info, export, check,
metrics, list) open the store read-only, so they work while another program holds it for reading. While a
Thinslice window holds the store, `backup`, `check`, `info`, `list`, `metrics` and `export` are handed to the
window, which runs the verb's own code on its store and sends back what it printed (app/store_channel.py).
"""
from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import duckdb

from app.cli_store import (EXIT_MISSING_STORE, ReaderRun, db_argument, hand_to_window, open_cli_store,
                           run_reader)
from storage.errors import StoreLockedError, StoreMissingError, ThinsliceError
from storage.store import Store, database_error, default_store_path

VERBS = ("info", "list", "import", "attach", "export", "annotations", "metrics", "cues", "ncp", "sample", "backup",
         "check", "recover", "team")
def _fail(message: str, code: int = 1) -> int:
    print(f"thinslice: {message}", file=sys.stderr)
    return code


def _info_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="thinslice info", description="Print a JSON summary of the store.")
    db_argument(parser)
    return parser


def cmd_info(argv: list[str]) -> int:
    return run_reader("info", info_run, _info_parser().parse_args(argv), with_sample=True)


def info_run(store: Store, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print the store's JSON summary to `out`."""
    from storage.queries import info_summary
    summary = info_summary(store.cursor())
    summary["store"] = str(store.path)
    out.write(json.dumps(summary, indent=2) + "\n")
    return 0


def reader_runs() -> dict[str, ReaderRun]:
    """The verbs that only read, each as the code that runs it on an open store: the command line runs it on
    its own read-only open, and a window holding the store runs it for the command line."""
    from app.cli_annotations import export_run
    from app.cli_list import list_run
    from app.cli_metrics import metrics_run
    return {"info": info_run, "list": list_run, "metrics": metrics_run, "export": export_run}


def reader_handlers(store: Store) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
    """What a window holding `store` does for `thinslice info`, `list`, `metrics` and `export`: the verb's own
    code on the asking thread's cursor, its output and exit code returned (see `run_reader`)."""

    def handler(run: ReaderRun) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
        def answer(args: Mapping[str, Any]) -> dict[str, Any]:
            out, err = io.StringIO(), io.StringIO()
            code = run(store, argparse.Namespace(**args), out, err)
            return {"code": code, "out": out.getvalue(), "err": err.getvalue()}
        return answer

    return {verb: handler(run) for verb, run in reader_runs().items()}


def cmd_sample(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="thinslice sample", description="Import the bundled synthetic sample.")
    db_argument(parser)
    args = parser.parse_args(argv)
    from app.sample import import_sample
    store = open_cli_store(args.db, create=args.create)
    try:
        names = import_sample(store, progress=lambda f, m: print(f"{f:4.0%} {m}", file=sys.stderr))
    finally:
        store.close()
    print(json.dumps({"imported": names}))
    return 0


def cmd_backup(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="thinslice backup",
                                     description="Write a consistent copy of the store to a new file, and check it. "
                                                 "While a Thinslice window holds the store, the window writes it.")
    parser.add_argument("out", type=Path, metavar="OUT", help="the copy to write (must not exist yet)")
    db_argument(parser)
    args = parser.parse_args(argv)
    from app.store_backups import back_up
    out = args.out.expanduser().resolve()
    try:
        store = open_cli_store(args.db, create=False)
    except StoreLockedError as held:
        print(json.dumps(hand_to_window(held, "backup", {"out": str(out)})))
        return 0
    try:
        report = back_up(store, out)
    finally:
        store.close()
    print(json.dumps(report.as_json()))
    return 0


def cmd_check(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="thinslice check",
                                     description="Read every table of the store back in full (history included).")
    db_argument(parser)
    args = parser.parse_args(argv)
    from app.store_backups import check_summary
    from storage.backup import check_store
    try:
        store = open_cli_store(args.db, read_only=True)
    except StoreLockedError as held:
        print(json.dumps(hand_to_window(held, "check", {}), indent=2))
        return 0
    try:
        tables = check_store(store)
    finally:
        store.close()
    print(json.dumps(check_summary(store.path, tables), indent=2))
    return 0


def cmd_recover(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="thinslice recover",
        description="Open a store whose write-ahead log is damaged, keeping everything written before the damage.")
    db_argument(parser)
    args = parser.parse_args(argv)
    from storage.backup import check_store, recover_store
    path = args.db if args.db is not None else default_store_path()
    recovery = recover_store(path)
    store = Store.open(path, create=False)
    try:
        check_store(store)
    finally:
        store.close()
    print(recovery.describe())
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
        if verb == "backup":
            return cmd_backup(rest)
        if verb == "check":
            return cmd_check(rest)
        if verb == "recover":
            return cmd_recover(rest)
        if verb == "import":
            from app.cli_import import import_main
            return import_main(rest)
        if verb == "attach":
            from app.cli_attach import attach_main
            return attach_main(rest)
        if verb == "export":
            from app.cli_annotations import export_main
            return export_main(rest)
        if verb == "annotations":
            from app.cli_annotations import annotations_main
            return annotations_main(rest)
        if verb == "metrics":
            from app.cli_metrics import metrics_main
            return metrics_main(rest)
        if verb == "cues":
            from app.cli_cues import cues_main
            return cues_main(rest)
        if verb == "list":
            from app.cli_list import list_main
            return list_main(rest)
        if verb == "ncp":
            from app.beliefs.cli import ncp_main
            return ncp_main(rest)
        if verb == "team":
            from app.cli_team import team_main
            return team_main(rest)
    except StoreMissingError as exc:
        return _fail(str(exc), EXIT_MISSING_STORE)
    except ThinsliceError as exc:
        return _fail(str(exc))
    except duckdb.Error as exc:  # a full disk, or a damaged block met while reading: one line naming which
        return _fail(str(database_error(exc)))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    return None


def gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice",
        description="Thinslice: look inside social-intelligence benchmarks of multimodal models.",
        epilog="verbs: " + ", ".join(VERBS) + " (thinslice VERB --help)")
    db_argument(parser)
    parser.add_argument("--dataset", help="dataset to show first (by name)")
    parser.add_argument("--stimulus", help="stimulus to select (its id in the dataset, or the store id)")
    parser.add_argument("--screenshot", type=Path, metavar="OUT.png",
                        help="render the main window to a PNG and exit")
    parser.add_argument("--annotator", help="your name, stamped on every annotation edit (remembered)")
    parser.add_argument("--no-sample", action="store_true", help="do not import the sample into an empty store")
    return parser
