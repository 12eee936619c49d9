"""`thinslice team init|add-member|join|status|sync|leave`: a team project on a PostgreSQL server.

    thinslice team init URL                          create or upgrade the team schema (the database's owner)
    thinslice team add-member URL NAME [--lead]      make NAME a member (asks for a password, or --no-password)
    thinslice team join URL [--as NAME] [--db PATH]  connect this store to the team as NAME
    thinslice team status [--db PATH]                the team, the connection, the edits waiting and why
                                                     the server refused any of them (JSON)
    thinslice team sync [--db PATH]                  send what waits and bring in the others' edits
    thinslice team leave [--db PATH]                 make the store a local project again
    thinslice team history STIMULUS [--dataset NAME] [--db PATH]   the server's history of a stimulus, conflicts too

URL is a libpq connection string or postgresql:// URL (sslmode and the other libpq options are honoured).
Passwords come from libpq's own places (~/.pgpass or PGPASSFILE, a service file, PGPASSWORD); a password
written in URL is used once and never stored or printed.
"""
from __future__ import annotations

import argparse
import getpass
import json
import sys

from app.cli_store import db_argument, open_cli_store
from app.team import TeamSession, init_team, join_team, leave_team
from app.team_membership import joined
from app.annotation_model import AnnotationModel
from storage import team_server
from storage.annotations import AnnotationStore

PASSWORD_NOTE = ("thinslice: the password in the URL was used for this command only and is not kept; put it in"
                 " ~/.pgpass (or the file PGPASSFILE names) or a service file for next time")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="thinslice team", description="Annotate as a team on a PostgreSQL server.",
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    init = verbs.add_parser("init", help="create or upgrade the team schema on the server")
    init.add_argument("url", metavar="URL")
    member = verbs.add_parser("add-member", help="make a PostgreSQL role a member of the team")
    member.add_argument("url", metavar="URL")
    member.add_argument("name", metavar="NAME")
    member.add_argument("--lead", action="store_true", help="may adjudicate (consensus tier) and edit label sets")
    member.add_argument("--no-password", action="store_true",
                        help="set no password (the server authenticates the role another way)")
    join = verbs.add_parser("join", help="connect this store to the team")
    join.add_argument("url", metavar="URL")
    join.add_argument("--as", dest="member", metavar="NAME", help="member name (default: the URL's user)")
    db_argument(join)
    for name, text in (("status", "show the team, the connection and the edits waiting"),
                       ("sync", "send what waits and bring in the others' edits"),
                       ("leave", "make this store a local project again")):
        db_argument(verbs.add_parser(name, help=text))
    history = verbs.add_parser("history", help="the server's history of a stimulus (JSON lines, newest first)")
    history.add_argument("stimulus", metavar="STIMULUS", help="the stimulus's own id in the release")
    history.add_argument("--dataset", metavar="NAME", help="its dataset (needed when the store has several)")
    db_argument(history)
    return parser


def team_main(argv: list[str]) -> int:
    """Run a team verb; returns the exit code (errors are raised as `ThinsliceError` for the dispatcher)."""
    args = _parser().parse_args(argv)
    if getattr(args, "url", None):
        team_server.public_url(args.url)   # an address that does not parse is refused in one line, first
        if team_server.has_password(args.url):
            print(PASSWORD_NOTE, file=sys.stderr)
    if args.verb == "init":
        applied = init_team(args.url)
        print(json.dumps({"team": team_server.describe(args.url), "migrations_applied": applied}))
        return 0
    if args.verb == "add-member":
        password = None if args.no_password else getpass.getpass(f"Password for {args.name}: ")
        with team_server.connect(args.url) as con:
            team_server.add_member(con, args.name, lead=args.lead, password=password or None)
        print(json.dumps({"member": args.name, "lead": args.lead}))
        return 0
    store = open_cli_store(args.db, create=getattr(args, "create", False))
    try:
        if args.verb == "join":
            member, lead = join_team(store, args.url, args.member)
            print(json.dumps({"team": team_server.describe(args.url), "member": member, "lead": lead}))
            return 0
        if args.verb == "leave":
            leave_team(store)
            print(json.dumps({"team": None}))
            return 0
        if joined(store) is None:
            print(json.dumps({"team": None}))
            return 0 if args.verb == "status" else 1
        if args.verb == "history":
            dataset = AnnotationStore(store).dataset(args.dataset).name
            url, member = joined(store)
            with team_server.connect(url, user=member) as con:
                for event in team_server.history(con, dataset, args.stimulus):
                    print(json.dumps({k: event[k] for k in ("id", "member", "action", "before", "after")}
                                     | {"happened_at": event["happened_at"].isoformat()}))
            return 0
        session = TeamSession(store, AnnotationModel(AnnotationStore(store)))
        session.start()
        try:
            if args.verb == "sync":
                session.flush()
                session.catch_up()
            status = session.status()
        finally:
            session.stop()
        print(json.dumps({"team": status.team, "member": status.member, "lead": status.lead,
                          "online": status.online, "waiting": status.waiting, "message": status.message,
                          "refused": list(status.refused), "unmatched": session.report.unmatched,
                          "skipped": session.report.skipped}))
        return 0 if status.online or args.verb == "status" else 1
    finally:
        store.close()
