"""Whether a local store has joined a team, read without loading the PostgreSQL client.

The window asks this at every start; `app.team`, which talks to the server, is loaded only for a store that
has joined (psycopg alone takes a tenth of a second to import).
"""
from __future__ import annotations

from storage.store import Store
from storage.team_local import TeamLocal

URL_KEY, MEMBER_KEY, LEAD_KEY, LAST_EVENT_KEY = "url", "member", "lead", "last_event"


def joined(store: Store) -> tuple[str, str] | None:
    """(url without password, member) of the team this store has joined, or None for a local project."""
    local = TeamLocal(store)
    url, member = local.get(URL_KEY), local.get(MEMBER_KEY)
    return (url, member) if url and member else None
