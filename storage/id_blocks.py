"""Blocks of consecutive ids reserved from a table's sequence, so that a bulk insert numbers its rows itself.

Drawing a million values with `nextval` row by row costs about 30 ns each, on one thread. A block is reserved
instead with two calls: one `nextval` for its first id, then `setval` to move the sequence past its last. No
other draw from the same sequence may fall between the two, or it would be given an id inside the block. DuckDB's
sequences are shared by every connection at once and are not rolled back with a transaction, so the two calls
are made under one lock for the process (one process opens a store), and any other thread draws from a sequence
reserved in blocks (`BLOCK_SEQUENCES`) only through `reserve_ids` (a live answer does). The import writer's own
draws by a column's default are made by the thread that reserved, so they cannot fall between its two calls. A
block whose import then fails or is cancelled leaves a gap in the ids, as any rolled-back draw does.
"""
from __future__ import annotations

import threading

import duckdb

# the sequences an import reserves blocks of (the stimulus ids of another writer, attaching, are drawn by default)
BLOCK_SEQUENCES = ("seq_prediction",)
_RESERVING = threading.Lock()


def reserve_ids(cur: duckdb.DuckDBPyConnection, sequence: str, count: int) -> int:
    """Reserve `count` (at least 1) consecutive ids of `sequence`; returns the first."""
    if count < 1:
        raise ValueError(f"a block of {count} ids")
    with _RESERVING:
        first = int(cur.execute(f"SELECT nextval('{sequence}')").fetchall()[0][0])
        if count > 1:
            cur.execute(f"SELECT setval('{sequence}', ?)", [first + count - 1]).fetchall()
    return first
