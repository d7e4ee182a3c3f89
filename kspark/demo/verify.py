"""Checking the demo's result against what was produced, with figures computed without Spark.

Three checks, each printed as ``<what>: OK (<detail>)`` or ``<what>: FAILED (<diff summary>)``:

``records in == records produced``
    The query read every record the feed sent (page views and heartbeats), no more and no less:
    the sum of ``numInputRows`` over the micro-batches.
``each window written once``
    The output topic, read back read_committed (aborted writes are invisible), holds one record
    per (window, page) key, in the partition Kafka's default partitioner (murmur2) gives the
    key. In append mode a window is written once; a second record would mean a micro-batch's
    output was committed twice.
``aggregates match``
    Per key, the counts written equal those :class:`.aggregates.ExpectedAggregates` computes from
    the generated page views. Were a key written more than once, the last record in its
    partition's offset order would count: the sink commits micro-batches in order, and a key
    always goes to the same partition, so offset order is the order of updates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from broker_lite.client import partitions_for_keys

from .aggregates import Counts, WindowKey, parse_instant

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXAMPLES = 3  # differences named in a failure's summary


@dataclass(frozen=True)
class Check:
    """One line of the verification."""

    name: str
    ok: bool
    detail: str

    def __str__(self) -> str:
        return f"{self.name}: {'OK' if self.ok else 'FAILED'} ({self.detail})"


def read_output(spark: SparkSession, bootstrap_servers: str, topic: str) -> pa.Table:
    """Every committed record of ``topic`` (``key, value, partition, offset``), read_committed."""
    return (spark.read.format("kpy")
            .option("kafka.bootstrap.servers", bootstrap_servers)
            .option("subscribe", topic)
            .option("kafka.isolation.level", "read_committed")
            .load()
            .select("key", "value", "partition", "offset")
            .toArrow())


def check_records(records_in: int, page_views: int, heartbeats: int) -> Check:
    """The query read exactly the records produced."""
    produced = page_views + heartbeats
    detail = f"{records_in:,} read, {page_views:,} page views + {heartbeats} heartbeats produced"
    return Check("records in == records produced", records_in == produced, detail)


@dataclass(frozen=True)
class Output:
    """The output topic's records as aggregates: the last per key, and what was wrong."""

    latest: dict[WindowKey, Counts]
    records: int
    duplicated: list[WindowKey]  # keys written more than once
    misplaced: list[str]  # keys outside their murmur2 partition
    malformed: list[str]  # records that are not a window's counts


def parse_output(records: pa.Table, partitions: int) -> Output:
    """Read the output records (``key, value, partition, offset``) as window counts."""
    records = records.sort_by([("partition", "ascending"), ("offset", "ascending")])
    keys = records.column("key")
    placed = partitions_for_keys(keys, partitions) if len(records) else np.array([])
    latest: dict[WindowKey, Counts] = {}
    seen: dict[WindowKey, int] = {}
    misplaced, malformed = [], []
    for key, value, partition, expected_partition in zip(
            keys.to_pylist(), records.column("value").to_pylist(),
            records.column("partition").to_pylist(), placed.tolist(), strict=True):
        text = None if key is None else key.decode("utf-8", "replace")
        try:
            window = json.loads(value)
            found = WindowKey(parse_instant(window["window_start"]), window["page"])
            counts = Counts(int(window["views"]), int(window["dwell_ms"]))
            if text != f"{window['window_start']} {window['page']}":
                raise ValueError(f"key {text!r} does not name the window")
        except (ValueError, TypeError, KeyError) as exc:
            malformed.append(f"{text!r}: {exc}")
            continue
        if partition != expected_partition:
            misplaced.append(f"{text} in partition {partition}, not {expected_partition}")
        seen[found] = seen.get(found, 0) + 1
        latest[found] = counts
    return Output(latest, len(records), sorted(k for k, n in seen.items() if n > 1),
                  misplaced, malformed)


def check_written_once(output: Output) -> Check:
    problems = [(len(output.duplicated), "keys written more than once", output.duplicated),
                (len(output.misplaced), "keys outside their murmur2 partition", output.misplaced),
                (len(output.malformed), "malformed records", output.malformed)]
    failed = [(n, what, examples) for n, what, examples in problems if n]
    if not failed:
        return Check("each window written once", True,
                     f"{output.records:,} records, {len(output.latest):,} keys, each in its "
                     "murmur2 partition")
    return Check("each window written once", False, "; ".join(
        f"{n} {what}, e.g. {', '.join(map(str, examples[:EXAMPLES]))}"
        for n, what, examples in failed))


def check_aggregates(expected: Mapping[WindowKey, Counts],
                     written: Mapping[WindowKey, Counts]) -> Check:
    """The counts written per (window, page) equal the expected ones, key for key."""
    missing = sorted(set(expected) - set(written))
    unexpected = sorted(set(written) - set(expected))
    different = sorted(k for k in set(expected) & set(written) if expected[k] != written[k])
    if not (missing or unexpected or different):
        return Check("aggregates match", True, f"{len(expected):,} windows")
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing, e.g. " + ", ".join(
            f"{k} ({_counts(expected[k])})" for k in missing[:EXAMPLES]))
    if unexpected:
        parts.append(f"{len(unexpected)} unexpected, e.g. " + ", ".join(
            f"{k} ({_counts(written[k])})" for k in unexpected[:EXAMPLES]))
    if different:
        parts.append(f"{len(different)} with other counts, e.g. " + ", ".join(
            f"{k} ({_counts(written[k])}, expected {_counts(expected[k])})"
            for k in different[:EXAMPLES]))
    wrong = len(missing) + len(unexpected) + len(different)
    return Check("aggregates match", False,
                 f"{wrong:,} of {len(set(expected) | set(written)):,} windows differ: "
                 + "; ".join(parts))


def _counts(counts: Counts) -> str:
    return f"{counts.views:,} views, {counts.dwell_ms:,} ms"
