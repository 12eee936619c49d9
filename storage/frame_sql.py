"""One SQL expression worked out over a polars frame by DuckDB in memory, where the frame's columns lie: for a
rule stated once in SQL (an answer's correctness, an id's natural sort key) that an import applies to its plan's
frames before anything is written."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:   # modules the store loads on opening use this: polars waits for an import
    import polars as pl


def evaluate_sql(frame: pl.DataFrame, sql: str) -> pl.Series:
    """`sql`, an expression over `frame`'s columns, for each of its rows in order, as one unnamed series."""
    import duckdb
    import polars as pl

    con = duckdb.connect()
    try:
        # as string views: DuckDB reads polars' own buffers instead of a copy of every text
        con.register("rows", frame.to_arrow(compat_level=pl.CompatLevel.newest()))
        result = con.sql(f"SELECT ({sql}) AS value FROM rows").pl()
    finally:
        con.close()
    return result.get_column("value").alias("")
