"""Recording verdicts computed after an import on the stored predictions (an NCP attempt's success, which
comes from replaying its trace with the belief engine)."""
from __future__ import annotations

import duckdb


def set_prediction_correctness(cur: duckdb.DuckDBPyConnection, verdicts: dict[int, bool | None]) -> None:
    """Record computed correctness (e.g. an NCP goal reached) on predictions."""
    for pid, correct in verdicts.items():
        cur.execute("UPDATE prediction SET correct = ? WHERE id = ?", [correct, pid])
