"""The demo's aggregates computed without Spark: page views per page per one-minute event-time
window, from the generated page views themselves (Arrow compute), to check the query's output.

Windows are tumbling and aligned to the epoch, as Spark's ``window(ts, "1 minute")``: a view at
``ts`` belongs to the window ``[ts - ts % 60000, +60000)`` (in ms, UTC). Each (window, page)
gets the number of views and the sum of their ``duration_ms`` (integers, so the comparison is
exact).

>>> import pyarrow as pa
>>> views = pa.record_batch({
...     "page": ["/", "/", "/docs"],
...     "ts": pa.array([60_000, 119_999, 120_000]).cast(pa.timestamp("ms", tz="UTC")),
...     "duration_ms": [10, 20, 5]})
>>> expected = ExpectedAggregates()
>>> expected.add(views)
>>> sorted(expected.result().items())  # doctest: +NORMALIZE_WHITESPACE
[(WindowKey(start_ms=60000, page='/'), Counts(views=2, dwell_ms=30)),
 (WindowKey(start_ms=120000, page='/docs'), Counts(views=1, dwell_ms=5))]
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa

WINDOW_MS = 60_000


@dataclass(frozen=True, order=True)
class WindowKey:
    """One output key: a window (by its start, ms since the epoch) and a page."""

    start_ms: int
    page: str

    def __str__(self) -> str:
        return f"{format_instant(self.start_ms)} {self.page}"


@dataclass(frozen=True)
class Counts:
    """The aggregates of one (window, page)."""

    views: int
    dwell_ms: int


def format_instant(ms: int) -> str:
    """``2025-03-14T09:03:00Z``: an instant in ms, in UTC, to the second.

    >>> format_instant(1_741_942_980_000)
    '2025-03-14T09:03:00Z'
    """
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_instant(text: str) -> int:
    """ms since the epoch of an ISO-8601 instant with an offset (``Z`` or ``+00:00``).

    >>> parse_instant("2025-03-14T09:03:00Z")
    1741942980000
    """
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"instant {text!r} has no UTC offset")
    return round(moment.timestamp() * 1000)


class ExpectedAggregates:
    """Aggregates of page views added chunk by chunk (:meth:`add`), read with :meth:`result`.

    Each chunk is reduced to one row per (window, page) when added, so memory stays a few
    rows per window and page, however many views pass through.
    """

    def __init__(self):
        self._partials: list[pa.Table] = []
        self.views = 0

    def add(self, views: pa.RecordBatch | pa.Table) -> None:
        """Count ``views`` (columns ``page``, ``ts`` (timestamp or int64 ms), ``duration_ms``)."""
        ts = views.column("ts")
        if pa.types.is_timestamp(ts.type):
            ts = ts.cast(pa.timestamp("ms", tz=ts.type.tz)).cast(pa.int64())
        ts = ts.to_numpy(zero_copy_only=False)
        table = pa.table({"start_ms": ts - ts % WINDOW_MS,  # numpy's % floors, as Spark does
                          "page": views.column("page"),
                          "duration_ms": views.column("duration_ms")})
        grouped = table.group_by(["start_ms", "page"]).aggregate(
            [([], "count_all"), ("duration_ms", "sum")])
        self._partials.append(pa.table({
            "start_ms": grouped["start_ms"], "page": grouped["page"],
            "views": grouped["count_all"], "dwell_ms": grouped["duration_ms_sum"]}))
        self.views += len(table)

    def result(self) -> dict[WindowKey, Counts]:
        """``{(window, page): Counts}`` of every view added so far."""
        if not self._partials:
            return {}
        merged = pa.concat_tables(self._partials).group_by(["start_ms", "page"]).aggregate(
            [("views", "sum"), ("dwell_ms", "sum")])
        columns = (merged.column(name).to_pylist()
                   for name in ("start_ms", "page", "views_sum", "dwell_ms_sum"))
        return {WindowKey(start, page): Counts(views, dwell)
                for start, page, views, dwell in zip(*columns, strict=True)}
