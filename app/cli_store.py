"""What every verb of the command line shares: its --db argument, opening its store, and running a verb that
only reads. The verbs' modules (`app.cli_*`) and the dispatcher (`app.cli`) import this; it imports none of
them, so the command line has no import cycle."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from storage.errors import StoreLockedError, StoreMissingError
from storage.store import Store, default_store_path

EXIT_MISSING_STORE = 2

ReaderRun = Callable[[Store, argparse.Namespace, TextIO, TextIO], int]


def db_argument(parser: argparse.ArgumentParser) -> None:
    """--db PATH and --create, the same for every verb (read back by `open_cli_store`)."""
    parser.add_argument("--db", type=Path, default=None,
                        help=f"store file (default: {default_store_path()})")
    parser.add_argument("--create", action="store_true",
                        help="make a new empty store at --db when there is none (otherwise a missing file is an error)")


def open_cli_store(db: Path | str | None, *, create: bool = False, read_only: bool = False) -> Store:
    """The store a verb works on. Without `db` the default store is used and made when missing (first
    start); a `db` that does not exist is only made with `create`, else `StoreMissingError`. `read_only`
    opens it without the write lock (falling back to a writable open only when the store must be made)."""
    path = Path(db) if db is not None else default_store_path()
    if not Path(path).expanduser().exists():
        if db is not None and not create:
            raise StoreMissingError(Path(path).expanduser().resolve())
        return Store.open(path)
    store = Store.open(path, read_only=read_only, create=False)
    for line in store.notes:   # attached files that moved or changed
        print(line, file=sys.stderr)
    return store


def open_store(db: Path | None, *, with_sample: bool = True, create: bool = False,
               read_only: bool = False) -> Store:
    """Open the store (see `open_cli_store`); a brand-new empty store gets the bundled sample."""
    store = open_cli_store(db, create=create, read_only=read_only)
    if not with_sample:
        return store
    # the sample's importers and every benchmark's rules: imported only where a sample may be written (a
    # reader such as `thinslice list` would spend seconds importing them)
    from app.sample import import_sample, store_is_empty
    if store_is_empty(store):
        if store.read_only:  # the sample is written once, by a writable open
            store.close()
            store = open_cli_store(db, create=create)
        import_sample(store)
    return store


def run_reader(verb: str, run: ReaderRun, args: argparse.Namespace, *, paths: tuple[str, ...] = (),
               with_sample: bool = False) -> int:
    """Run `run`, the code of the reader `verb`, on the store `args.db` opened read-only (see `open_store`),
    writing to stdout and stderr. While a Thinslice window holds the store the window runs the verb and its
    output is written here; `paths` names the arguments that are files, handed over as absolute paths."""
    try:
        store = open_store(args.db, with_sample=with_sample, create=args.create, read_only=True)
    except StoreLockedError as held:
        plain = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
        for name in paths:
            plain[name] = str(Path(plain[name]).expanduser().resolve())
        answer = hand_to_window(held, verb, plain)
        sys.stdout.write(answer.get("out", ""))
        sys.stderr.write(answer.get("err", ""))
        return int(answer.get("code", 1))
    try:
        return run(store, args, sys.stdout, sys.stderr)
    finally:
        store.close()


def hand_to_window(held: StoreLockedError, verb: str, args: Mapping[str, Any]) -> dict:
    """The answer of the Thinslice window holding the store, which does `verb` itself; the lock error
    again when no window of ours takes requests for it (another program holds it)."""
    from app.store_channel import ask_holder
    answer = ask_holder(held.path, verb, args)
    if answer is None:
        raise held
    return answer
