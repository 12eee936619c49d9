"""The whole content of a store as rows, to show that an import, a sync or a command changed only what it was
asked to: every table's rows, sorted, compared before and after."""
from __future__ import annotations

from typing import Any

from storage.store import Store


def store_rows(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the store's main schema, sorted, keyed by table name."""
    cur = store.cursor()
    tables = [row[0] for row in cur.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        " AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
    return {table: sorted(cur.execute(f'SELECT * FROM "{table}"').fetchall(), key=repr) for table in tables}


def changed_rows(before: dict[str, list[tuple[Any, ...]]], after: dict[str, list[tuple[Any, ...]]]
                 ) -> dict[str, tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
    """Per table whose rows differ: (rows only before, rows only after)."""
    changes = {}
    for table in sorted(set(before) | set(after)):
        old, new = before.get(table, []), after.get(table, [])
        if old != new:
            gone = [row for row in old if row not in new]
            came = [row for row in new if row not in old]
            changes[table] = (gone, came)
    return changes
