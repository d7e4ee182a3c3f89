"""Fetch: raw record batches from partition leaders, and bounded reads of offset ranges.

Requests are sessionless full fetches (session id 0, epoch -1: the broker keeps no fetch session,
KIP-227), one per leader broker, sent to all leaders concurrently. Each names every partition's
fetch offset, its leader epoch from the metadata (Fetch 9+, so a broker with a newer epoch answers
FENCED_LEADER_EPOCH instead of serving a stale view) and ``max.partition.fetch.bytes``; the whole
response is capped by ``fetch.max.bytes``. Topics travel by name up to Fetch 12 and by topic id
from 13, when the metadata gives ids.

Record data is never decoded: only batch headers are read (:class:`broker_lite.records.BatchReader`)
to find where complete batches end and which offset comes next.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Iterator
from functools import partial

from broker_lite.protocol import ZERO_UUID, ApiKey
from broker_lite.records import BatchReader, RecordsError

from .cluster import Cluster
from .errors import (
    CorruptMessageError,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    RecordTooLargeError,
    error_for,
)
from .metadata import BrokerInfo
from .retry import Deadline, timed_out
from .types import (
    READ_COMMITTED,
    FetchedPartition,
    TopicPartition,
    isolation_level_code,
)

LAST_FETCH_BY_NAME = 12  # Fetch 13+ names topics by id only


def fetch_request(partitions: dict[TopicPartition, tuple[int, int]],
                  topic_ids: dict[str, uuid.UUID], *, max_wait_ms: int, min_bytes: int,
                  max_bytes: int, partition_max_bytes: int, isolation_level: int) -> dict:
    """A sessionless Fetch body; ``partitions`` maps each to (fetch offset, leader epoch)."""
    topics: dict[str, list[dict]] = {}
    for tp, (offset, epoch) in sorted(partitions.items()):
        topics.setdefault(tp.topic, []).append({
            "partition": tp.partition, "current_leader_epoch": epoch, "fetch_offset": offset,
            "last_fetched_epoch": -1, "log_start_offset": -1,
            "partition_max_bytes": partition_max_bytes,
        })
    return {
        "replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes,
        "max_bytes": max_bytes, "isolation_level": isolation_level,
        "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
        "topics": [{"topic": name, "topic_id": topic_ids.get(name, ZERO_UUID), "partitions": parts}
                   for name, parts in topics.items()],
    }


def parse_fetch_response(body: dict, requested: Iterable[TopicPartition],
                         names_by_id: dict[uuid.UUID, str]
                         ) -> dict[TopicPartition, FetchedPartition]:
    """A Fetch response body as one :class:`FetchedPartition` per requested partition; a
    partition the broker left out gets an :class:`InvalidResponseError`."""
    requested = set(requested)
    top_error = error_for(body.get("error_code", 0), where="Fetch")
    results: dict[TopicPartition, FetchedPartition] = {}
    for topic in body["responses"]:
        name = topic["topic"] or names_by_id.get(topic.get("topic_id", ZERO_UUID), "")
        for p in topic["partitions"]:
            tp = TopicPartition(name, p["partition_index"])
            if tp not in requested:
                continue
            records = p["records"]
            results[tp] = FetchedPartition(
                records=bytes(records) if records is not None else b"",
                high_watermark=p["high_watermark"],
                last_stable_offset=p["last_stable_offset"],
                log_start_offset=p["log_start_offset"],
                aborted_transactions=[(a["producer_id"], a["first_offset"])
                                      for a in p["aborted_transactions"] or ()],
                error=top_error or error_for(p["error_code"], where=str(tp)),
            )
    for tp in requested - results.keys():
        results[tp] = FetchedPartition.failed(
            top_error or InvalidResponseError(f"the Fetch response has no data for {tp}"))
    return results


class Fetcher:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.config = cluster.config

    def fetch(self, offsets: dict[TopicPartition, int], *, max_wait_ms: int, min_bytes: int,
              isolation_level: str | int,
              partition_max_bytes: int | None = None) -> dict[TopicPartition, FetchedPartition]:
        """Fetch every partition from its leader; see :meth:`KafkaClient.fetch`."""
        for tp, offset in offsets.items():
            if offset < 0:
                raise InvalidArgumentError(f"fetch offset of {tp} must be >= 0, got {offset}")
        isolation = isolation_level_code(isolation_level)
        request = partial(fetch_request, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                          max_bytes=self.config.fetch_max_bytes, isolation_level=isolation,
                          partition_max_bytes=partition_max_bytes
                          or self.config.max_partition_fetch_bytes)
        cluster = self.cluster
        deadline, backoff = cluster.deadline(max_wait_ms), cluster.backoff()
        pending, results = dict(offsets), {}
        last: dict[TopicPartition, KafkaClientError] = {}

        def settle(tp: TopicPartition, outcome: FetchedPartition | KafkaClientError) -> None:
            if isinstance(outcome, KafkaClientError):
                outcome = FetchedPartition.failed(outcome)
            error = outcome.error
            if error is not None and error.retriable:
                cluster.on_retriable(error)
                last[tp] = error
            else:
                results[tp] = outcome
                del pending[tp]

        while pending:
            try:
                by_leader, unroutable = cluster.leaders(pending, deadline)
            except KafkaClientError as exc:  # the metadata could not be refreshed
                if not exc.retriable:
                    raise
                by_leader, unroutable = {}, dict.fromkeys(pending, exc)
            for tp, error in unroutable.items():
                settle(tp, error)
            work = {node: partial(self._fetch_from, broker, {tp: (pending[tp], epoch)
                                                             for tp, epoch in parts.items()},
                                  request, deadline)
                    for node, (broker, parts) in by_leader.items()}
            for node, outcome in cluster.run_per_broker(work).items():
                for tp in by_leader[node][1]:
                    settle(tp, outcome if isinstance(outcome, KafkaClientError) else outcome[tp])
            if pending and not backoff.wait(deadline):
                break
        for tp in pending:
            results[tp] = FetchedPartition.failed(timed_out(f"fetch of {tp}", deadline,
                                                            last.get(tp)))
        return results

    def _fetch_from(self, broker: BrokerInfo, partitions: dict[TopicPartition, tuple[int, int]],
                    request, deadline: Deadline) -> dict[TopicPartition, FetchedPartition]:
        topic_ids = {}
        for tp in partitions:
            topic = self.cluster.metadata.topic(tp.topic)
            topic_ids[tp.topic] = topic.topic_id if topic is not None else ZERO_UUID
        by_id = ZERO_UUID not in topic_ids.values()
        conn = self.cluster.connection(broker.host, broker.port, broker.node_id)
        _, body = conn.request(
            ApiKey.FETCH,
            lambda version: request(partitions, topic_ids if version > LAST_FETCH_BY_NAME else {}),
            deadline, max_version=None if by_id else LAST_FETCH_BY_NAME)
        return parse_fetch_response(body, partitions, {v: k for k, v in topic_ids.items()})

    def iter_records_bytes(self, tp: TopicPartition, start: int, end: int, *,
                           isolation_level: str | int,
                           max_wait_ms: int = 0) -> Iterator[FetchedPartition]:
        """Read ``tp`` from ``start`` until ``end`` (exclusive) is passed, or the high watermark
        (the last stable offset for read_committed) is reached; see
        :meth:`KafkaClient.iter_records_bytes`."""
        if start < 0 or end < start:
            raise InvalidArgumentError(f"bad offset range [{start}, {end}) for {tp}")
        committed = isolation_level_code(isolation_level) == isolation_level_code(READ_COMMITTED)
        partition_max = self.config.max_partition_fetch_bytes
        offset, stalled = start, None
        while offset < end:
            fetched = self.fetch({tp: offset}, max_wait_ms=max_wait_ms, min_bytes=1,
                                 isolation_level=isolation_level,
                                 partition_max_bytes=partition_max)[tp]
            if fetched.error is not None:
                raise fetched.error
            limit = fetched.high_watermark
            if committed and fetched.last_stable_offset >= 0:
                limit = fetched.last_stable_offset
            reader = BatchReader(fetched.records)
            next_offset = offset
            try:
                for batch in reader:
                    next_offset = max(next_offset, batch.next_offset)
            except RecordsError as exc:
                raise CorruptMessageError(f"corrupt record data from {tp} at offset {offset}: "
                                          f"{exc}", where=str(tp)) from exc
            if reader.position == 0:
                if fetched.records:  # one batch beyond the limit, from a broker that cuts it
                    partition_max = self._grow(tp, offset, partition_max)
                    continue
                if offset >= limit:
                    return  # nothing at or after the high watermark / LSO: the end
                # below the limit yet nothing came back: ask again, for a bounded time
                stalled = stalled or (self.cluster.deadline(), self.cluster.backoff())
                if not stalled[1].wait(stalled[0]):
                    raise timed_out(f"reading {tp} at offset {offset} (below the limit {limit})",
                                    stalled[0], None)
                continue
            if next_offset <= offset:
                raise InvalidResponseError(
                    f"the Fetch response for {tp} at offset {offset} ends at {next_offset}")
            stalled = None
            records = fetched.records
            if reader.incomplete:
                records = records[:reader.position]
            yield dataclasses.replace(fetched, records=records)
            offset = next_offset
            if offset >= limit:
                return

    def _grow(self, tp: TopicPartition, offset: int, partition_max: int) -> int:
        if partition_max >= self.config.fetch_max_bytes:
            raise RecordTooLargeError(
                f"the record batch of {tp} at offset {offset} is larger than fetch.max.bytes "
                f"({self.config.fetch_max_bytes}) and the broker does not send it whole")
        return min(partition_max * 2, self.config.fetch_max_bytes)
