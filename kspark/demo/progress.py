"""Showing the demo's progress while the query runs: a live tqdm line on stderr, or, with
``quiet`` (CI logs), one plain line per micro-batch on stdout.

The live line counts the records the query has read against those the feed will send, with the
figures of the moment::

    records in 186k/300k  62%|████████████▍       | [00:31, produced 240k, out 320, lag 54,012,
    batch 2.3 s, watermark 09:05:40]

(one line on the terminal)

``produced``: page views acknowledged by the broker; ``out``: records the sink wrote; ``lag``:
the source group's lag (:mod:`.lag`); ``batch``: the last micro-batch's duration;
``watermark``: the event time up to which windows are closed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from tqdm import tqdm

from .aggregates import format_instant
from .batches import Batch


@dataclass(frozen=True)
class Snapshot:
    """The figures shown at one moment."""

    produced: int
    records_in: int
    records_out: int
    lag: int | None
    last_batch: Batch | None
    watermark_ms: int | None


def _watermark(ms: int | None) -> str:
    return "-" if not ms else format_instant(ms)[11:19]


class ProgressDisplay:
    """A live progress line (``quiet=False``) or a line per micro-batch (``quiet=True``)."""

    def __init__(self, total: int, quiet: bool, out: TextIO | None = None):
        self.quiet = quiet
        self.out = out or sys.stdout
        self.total = total
        self._bar = None if quiet else tqdm(
            total=total, desc=self._counts(0), dynamic_ncols=True, file=sys.stderr, leave=True,
            bar_format="{desc} {percentage:3.0f}%|{bar:20}| [{elapsed}{postfix}]")

    def _counts(self, records_in: int) -> str:
        return f"records in {_short(records_in)}/{_short(self.total)}"

    def show(self, snapshot: Snapshot, new_batches: list[Batch]) -> None:
        if self.quiet:
            for batch in new_batches:
                print(f"batch {batch.id}: {batch.input_rows:,} records in, "
                      f"{batch.output_rows:,} out, {batch.duration_ms / 1000:.1f} s; "
                      f"produced {snapshot.produced:,}, lag "
                      f"{'-' if snapshot.lag is None else f'{snapshot.lag:,}'}, watermark "
                      f"{_watermark(batch.watermark_ms)}", file=self.out, flush=True)
            return
        last = snapshot.last_batch
        self._bar.set_postfix_str(
            f"produced {_short(snapshot.produced)}, out {snapshot.records_out:,}, lag "
            f"{'-' if snapshot.lag is None else f'{snapshot.lag:,}'}, batch "
            f"{'-' if last is None else f'{last.duration_ms / 1000:.1f} s'}, watermark "
            f"{_watermark(snapshot.watermark_ms)}", refresh=False)
        self._bar.set_description_str(self._counts(snapshot.records_in), refresh=False)
        self._bar.n = snapshot.records_in
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _short(count: int) -> str:
    """A count in three digits at most: ``950``, ``22.5k``, ``300k``, ``1.25M``.

    >>> [_short(n) for n in (0, 950, 22_500, 300_004, 1_250_000)]
    ['0', '950', '22.5k', '300k', '1.25M']
    """
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return str(count)
