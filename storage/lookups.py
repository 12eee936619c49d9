"""Finding datasets and stimuli: by name, by id, by the dataset's own id. The one set of these lookups; the
browser queries, the analysis frames, the annotation store and the CLI all use it."""
from __future__ import annotations

from typing import Any

import duckdb

from storage.errors import ThinsliceError
from storage.records import Dataset

# The stimuli counted per dataset in one pass and joined: a count correlated with each dataset row took twice as
# long, and a dashboard reads its dataset each time the data changes.
_DATASET_COLUMNS = ("SELECT d.id, d.name, d.benchmark, d.root, coalesce(d.source, ''), d.synthetic,"
                    " coalesce(c.n, 0) FROM dataset d LEFT JOIN (SELECT dataset_id, count(*) AS n FROM stimulus"
                    " GROUP BY dataset_id) c ON c.dataset_id = d.id")


class DatasetNotFound(ThinsliceError, LookupError):
    """No dataset of that name (or id) in the store; the message lists the ones there are."""


def _known(cur: duckdb.DuckDBPyConnection) -> str:
    names = [r[0] for r in cur.execute("SELECT name FROM dataset ORDER BY 1").fetchall()]
    return ", ".join(names) or "none"


def datasets(cur: duckdb.DuckDBPyConnection, name: str | None = None) -> list[Dataset]:
    """Every dataset (or the one named), ordered by name, with its stimulus count; DatasetNotFound for an
    unknown name."""
    rows = cur.execute(_DATASET_COLUMNS + (" WHERE d.name = ?" if name else "") + " ORDER BY d.name",
                       [name] if name else []).fetchall()
    if name and not rows:
        raise DatasetNotFound(f"no dataset named {name!r} (the store has: {_known(cur)})")
    return [Dataset(*r) for r in rows]


def dataset_named(cur: duckdb.DuckDBPyConnection, name: str | None) -> Dataset:
    """The dataset called `name`, or the only one when `name` is None; DatasetNotFound otherwise."""
    if name is not None:
        return datasets(cur, name)[0]
    found = datasets(cur)
    if len(found) != 1:
        raise DatasetNotFound(f"name a dataset (the store has: {_known(cur)})")
    return found[0]


def dataset_by_id(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> Dataset:
    rows = cur.execute(_DATASET_COLUMNS + " WHERE d.id = ?", [dataset_id]).fetchall()
    if not rows:
        raise DatasetNotFound(f"no dataset with id {dataset_id} (the store has: {_known(cur)})")
    return Dataset(*rows[0])


def dataset_name(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> str | None:
    rows = cur.execute("SELECT name FROM dataset WHERE id = ?", [dataset_id]).fetchall()
    return rows[0][0] if rows else None


def dataset_of_stimulus(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> str | None:
    """The name of the dataset holding a stimulus (by store id), or None when there is no such stimulus."""
    rows = cur.execute("SELECT d.name FROM stimulus s JOIN dataset d ON d.id = s.dataset_id WHERE s.id = ?",
                       [stimulus_id]).fetchall()
    return rows[0][0] if rows else None


def find_stimulus(cur: duckdb.DuckDBPyConnection, ref: str, dataset_name: str | None = None) -> tuple[int, int] | None:
    """(stimulus id, dataset id) for an external id (optionally within a dataset) or a numeric store id."""
    params: list[Any] = [ref]
    sql = ("SELECT s.id, s.dataset_id FROM stimulus s JOIN dataset d ON d.id = s.dataset_id"
           " WHERE s.external_id = ?")
    if dataset_name:
        sql += " AND d.name = ?"
        params.append(dataset_name)
    rows = cur.execute(sql + " ORDER BY s.id LIMIT 1", params).fetchall()
    if not rows and ref.isdigit():
        rows = cur.execute("SELECT id, dataset_id FROM stimulus WHERE id = ?", [int(ref)]).fetchall()
    return (int(rows[0][0]), int(rows[0][1])) if rows else None


def external_ids(cur: duckdb.DuckDBPyConnection, ids: list[int]) -> dict[int, str]:
    """The dataset's own id of each stimulus."""
    if not ids:
        return {}
    return dict(cur.execute("SELECT id, external_id FROM stimulus WHERE list_contains(?, id)", [ids]).fetchall())


def dataset_stimuli(cur: duckdb.DuckDBPyConnection, dataset_id: int, *, external_id: str | None = None,
                    split: str | None = None, kind: str | None = None) -> dict[int, str]:
    """Store id -> the dataset's own id of the dataset's stimuli (optionally filtered), in external-id order."""
    where, params = ["dataset_id = ?"], [dataset_id]
    for column, value in (("external_id", external_id), ("split", split), ("kind", kind)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows = cur.execute(f"SELECT id, external_id FROM stimulus WHERE {' AND '.join(where)} ORDER BY external_id",
                       params).fetchall()
    return {int(r[0]): r[1] for r in rows}


def datasets_holding(cur: duckdb.DuckDBPyConnection, external_ids: list[str]) -> list[tuple[str, int]]:
    """(dataset name, how many of `external_ids` it holds) for every dataset holding any, most first."""
    if not external_ids:
        return []
    rows = cur.execute("SELECT d.name, count(DISTINCT s.external_id) AS n FROM stimulus s JOIN dataset d"
                       " ON d.id = s.dataset_id WHERE list_contains(?, s.external_id) GROUP BY d.name"
                       " ORDER BY n DESC, d.name", [list(external_ids)]).fetchall()
    return [(r[0], int(r[1])) for r in rows]
