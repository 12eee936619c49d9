"""Recording verdicts computed after an import on the stored predictions (an NCP attempt's success, which
comes from replaying its trace with the belief engine, and an attached answer to a story question)."""
from __future__ import annotations

import duckdb

from storage.outcomes import refresh_outcomes_of


def set_prediction_correctness(cur: duckdb.DuckDBPyConnection, verdicts: dict[int, bool | None]) -> None:
    """Record computed correctness (e.g. an NCP goal reached) on predictions, and the models' outcomes it
    changes (`storage.outcomes`)."""
    if not verdicts:
        return
    # one statement for them all, not one per row: an attached file brings tens of thousands of answers
    cur.execute("UPDATE prediction SET correct = v.correct FROM (SELECT unnest(?::BIGINT[]) AS id,"
                " unnest(?::BOOLEAN[]) AS correct) v WHERE prediction.id = v.id",
                [list(verdicts), list(verdicts.values())])
    refresh_outcomes_of(cur, list(verdicts))
