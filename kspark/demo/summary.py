"""The demo's closing summary: what went in and out, how long it took, and the verification.

>>> print("\\n".join(Summary(page_views=1000, heartbeats=2, partitions=2, records_in=1002,
...                          records_out=40, batch_durations_ms=[4000, 1000],
...                          dropped_by_watermark=0, wall_s=20.0, query_s=10.0).lines()))
Summary
  records produced   1,000 page views + 2 heartbeats, 2 partitions
  records in         1,002 (sum of numInputRows)
  output records     40 (one per window and page)
  micro-batches      2: 2.5 s on average, 4.0 s the longest
  late rows dropped  0
  wall time          20.0 s (the query 10.0 s)
  throughput         200 records/s in micro-batches, 50 records/s from start to end
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """Figures of one run: ``query_s`` runs from the query's start to its last batch; the
    throughput in micro-batches is the records read over the time the batches took (the query
    waits for records between them)."""

    page_views: int
    heartbeats: int
    partitions: int
    records_in: int
    records_out: int
    batch_durations_ms: list[int]
    dropped_by_watermark: int
    wall_s: float
    query_s: float

    def lines(self) -> list[str]:
        durations = self.batch_durations_ms
        batches = (f"{len(durations)}: {sum(durations) / len(durations) / 1000:.1f} s on "
                   f"average, {max(durations) / 1000:.1f} s the longest") if durations else "0"
        rows = [
            ("records produced", f"{self.page_views:,} page views + {self.heartbeats} "
                                 f"heartbeats, {self.partitions} partitions"),
            ("records in", f"{self.records_in:,} (sum of numInputRows)"),
            ("output records", f"{self.records_out:,} (one per window and page)"),
            ("micro-batches", batches),
            ("late rows dropped", f"{self.dropped_by_watermark:,}"),
            ("wall time", f"{self.wall_s:.1f} s (the query {self.query_s:.1f} s)"),
            ("throughput", f"{_rate(self.records_in, sum(durations) / 1000)} records/s in "
                           f"micro-batches, {_rate(self.records_in, self.wall_s)} records/s from "
                           "start to end"),
        ]
        return ["Summary", *(f"  {name:<18} {text}" for name, text in rows)]


def _rate(records: int, seconds: float) -> str:
    return f"{records / seconds:,.0f}" if seconds > 0 else "-"
