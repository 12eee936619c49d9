"""The pieces of a metrics dashboard table: how it is drawn, and the stimuli behind each of its rows.

Each benchmark's module in `app.benchmarks` chooses its tables and builds them from these; `app.dashboard`
loads the frames and puts the tables together.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the window shows before polars is loaded; the first table loads it
    import polars as pl

HUMANS = "humans"
CORRECTION_NAMES = {"loglinear": "log-linear (k+0.5)/(n+1)", "half_over_n": "1/(2N) for rates of 0 or 1"}


@dataclass
class ChartSpec:
    """How a table is drawn: `bars` (value with optional whiskers, one bar per row, grouped by
    `category_cols` and coloured by `series_col`) or `scatter` (x against y, each point labelled)."""

    kind: str
    value_col: str = ""
    low_col: str | None = None
    high_col: str | None = None
    category_cols: tuple[str, ...] = ()
    series_col: str | None = None
    x_col: str = ""
    y_col: str = ""
    label_cols: tuple[str, ...] = ()
    y_label: str = ""
    x_label: str = ""
    y_range: tuple[float, float] | None = None
    reference_line: float | None = None


class RowStimuli(Sequence[list[int]]):
    """For each row of a table, the sorted ids of the stimuli behind it, found when asked (a million
    predictions make a million ids; a click needs one row's)."""

    def __init__(self, source: pl.DataFrame | None, keys: Sequence[str], table: pl.DataFrame) -> None:
        self._source = source
        self._keys = list(keys)
        self._rows = table.select(self._keys).to_dicts() if source is not None and not table.is_empty() else []
        self._height = table.height

    def __len__(self) -> int:
        return self._height

    def __getitem__(self, row: int) -> list[int]:  # type: ignore[override]
        if self._source is None or not self._rows:
            return []
        if not -self._height <= row < self._height:
            raise IndexError(row)
        import polars as pl

        values = self._rows[row]
        match = pl.lit(True)
        for key in self._keys:
            value = values[key]
            match = match & (pl.col(key).is_null() if value is None else pl.col(key) == value)
        return self._source.filter(match)["stimulus_id"].unique().sort().to_list()


class QueriedRowStimuli(Sequence[list[int]]):
    """For each row of a table, the sorted ids of the stimuli behind it, asked of `find` (given the row's
    `keys` values) when first wanted and then remembered."""

    def __init__(self, find: Callable[[dict[str, Any]], list[int]], keys: Sequence[str], table: pl.DataFrame) -> None:
        self._find = find
        self._rows = table.select(list(keys)).to_dicts() if not table.is_empty() else []
        self._found: dict[int, list[int]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, row: int) -> list[int]:  # type: ignore[override]
        if not -len(self._rows) <= row < len(self._rows):
            raise IndexError(row)
        row %= len(self._rows)
        if row not in self._found:
            self._found[row] = self._find(self._rows[row])
        return self._found[row]


@dataclass
class DashboardTable:
    key: str
    title: str
    note: str
    frame: pl.DataFrame
    stimulus_ids: Sequence[list[int]]
    chart: ChartSpec | None = None
    describe_cols: tuple[str, ...] = ()
    n_stimuli: list[int] | None = None

    def describe(self, row: int) -> str:
        """A short description of one row, for a drill-down ("atlas-7b · video: accuracy")."""
        values = self.frame.row(row, named=True)
        parts = [str(values[c]) for c in self.describe_cols if c in values and values[c] not in (None, "")]
        return f"{self.title}: {' · '.join(parts)} ({self.stimulus_count(row)} stimuli)"

    def stimulus_count(self, row: int) -> int:
        return self.n_stimuli[row] if self.n_stimuli is not None else len(self.stimulus_ids[row])

    def to_json(self) -> dict[str, Any]:
        rows = []
        for i, row in enumerate(self.frame.iter_rows(named=True)):
            rows.append({k: _plain(v) for k, v in row.items()} | {"n_stimuli": self.stimulus_count(i)})
        return {"key": self.key, "title": self.title, "note": self.note, "rows": rows}


def _plain(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def _counts_by(frame: pl.DataFrame, keys: Sequence[str], table: pl.DataFrame) -> list[int]:
    """For each row of `table`, how many distinct stimuli of `frame` share its `keys` values."""
    import polars as pl

    if table.is_empty():
        return []
    grouped = frame.group_by(list(keys)).agg(pl.col("stimulus_id").n_unique().alias("_n"))
    joined = table.select(list(keys)).with_row_index("_row").join(grouped, on=list(keys), how="left",
                                                                  nulls_equal=True).sort("_row")
    return [int(n or 0) for n in joined["_n"].to_list()]


def table_of(key: str, title: str, note: str, frame: pl.DataFrame, source: pl.DataFrame, keys: Sequence[str],
           chart: ChartSpec | None, describe: Sequence[str] | None = None) -> DashboardTable:
    """A table whose rows' stimuli are those of `source` sharing the row's `keys` values."""
    source = source.select("stimulus_id", *keys)
    return DashboardTable(key, title, note, frame, RowStimuli(source, keys, frame), chart,
                          tuple(describe if describe is not None else keys), _counts_by(source, keys, frame))
