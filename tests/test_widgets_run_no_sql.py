"""A widget runs no SQL: no module of `widgets/` takes a cursor or a transaction of the store or executes a
statement; it asks a service in `app/` and takes records back. (The import contract keeps `widgets` off the
query modules and DuckDB; this keeps a widget from running SQL through a store object it was handed.)"""
from __future__ import annotations

import ast
from pathlib import Path

WIDGETS = Path(__file__).resolve().parents[1] / "widgets"
SQL_CALLS = {"cursor", "transaction", "execute", "executemany", "sql"}


def sql_calls(source: str, name: str) -> list[str]:
    """`name:line: .call(...)` for each call of a SQL method in a module's source."""
    return [f"{name}:{node.lineno}: .{node.func.attr}(...)" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS]


def test_no_widget_runs_sql():
    found = [hit for path in sorted(WIDGETS.glob("*.py")) for hit in sql_calls(path.read_text(), path.name)]
    assert found == [], "widgets running SQL (ask a service in app/ instead):\n" + "\n".join(found)


def test_the_check_finds_a_query_run_through_a_handed_store():
    source = "def rows(store):\n    return store.cursor().execute('SELECT 1').fetchall()\n"
    assert sorted(sql_calls(source, "view.py")) == ["view.py:2: .cursor(...)", "view.py:2: .execute(...)"]
