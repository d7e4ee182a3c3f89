"""Fetch: raw record batches from partition leaders, one request per leader broker.

Requests are sessionless full fetches (session id 0, epoch -1: the broker keeps no fetch session,
KIP-227), one per leader broker, sent to all leaders concurrently. Each names every partition's
fetch offset, its leader epoch from the metadata (Fetch 9+, so a broker with a newer epoch answers
FENCED_LEADER_EPOCH instead of serving a stale view) and its byte limit
(``max.partition.fetch.bytes``, or a larger one the caller asks for); the whole response is capped
by ``fetch.max.bytes``. Topics travel by name up to Fetch 12 and by topic id from 13, when the
metadata gives ids.

Record data is not looked at here: reading it, position by position, is
:mod:`.partition_reader`'s work. Nor is it copied: each partition's records are a read-only view
into the response as it was received, as Kafka's Java consumer keeps its fetched ``MemoryRecords``
over the response buffer.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from functools import partial

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ZERO_UUID, ApiKey
from broker_lite.protocol.enums import CONSUMER_REPLICA_ID

from ..cluster.cluster import Cluster
from ..cluster.metadata import BrokerInfo
from ..config import ClientConfig
from ..errors import (
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    error_for,
)
from ..retry import Deadline, timed_out, worth_reporting
from ..types import FetchedPartition, isolation_level_code

LAST_FETCH_BY_NAME = 12  # Fetch 13+ names topics by id only


def fetch_request(partitions: dict[TopicPartition, tuple[int, int]],
                  topic_ids: dict[str, uuid.UUID], *, max_wait_ms: int, min_bytes: int,
                  max_bytes: int, partition_max_bytes: int, isolation_level: int,
                  larger_limits: Mapping[TopicPartition, int] | None = None) -> dict:
    """A sessionless Fetch body; ``partitions`` maps each to (fetch offset, leader epoch), and
    each asks for ``partition_max_bytes`` unless ``larger_limits`` names another limit for it."""
    topics: dict[str, list[dict]] = {}
    larger_limits = larger_limits or {}
    for tp, (offset, epoch) in sorted(partitions.items()):
        topics.setdefault(tp.topic, []).append({
            "partition": tp.partition, "current_leader_epoch": epoch, "fetch_offset": offset,
            "last_fetched_epoch": -1, "log_start_offset": -1,
            "partition_max_bytes": larger_limits.get(tp, partition_max_bytes),
        })
    return {
        "replica_id": CONSUMER_REPLICA_ID, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes,
        "max_bytes": max_bytes, "isolation_level": isolation_level,
        "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
        "topics": [{"topic": name, "topic_id": topic_ids.get(name, ZERO_UUID), "partitions": parts}
                   for name, parts in topics.items()],
    }


def parse_fetch_response(body: dict, requested: Iterable[TopicPartition],
                         names_by_id: dict[uuid.UUID, str]
                         ) -> dict[TopicPartition, FetchedPartition]:
    """A Fetch response body as one :class:`FetchedPartition` per requested partition.

    A partition the broker left out gets a retriable :class:`InvalidResponseError`, so that it
    is asked for again: Kafka's Java client ignores a full fetch response that lacks partitions
    and fetches again (``FetchSessionHandler.verifyFullFetchResponsePartitions``); a broker
    throttling the client answers with no partitions at all (KIP-219), and one with fetch
    sessions leaves out those without news (KIP-227)."""
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
                records=memoryview(records if records is not None else b"").toreadonly(),
                high_watermark=p["high_watermark"],
                last_stable_offset=p["last_stable_offset"],
                log_start_offset=p["log_start_offset"],
                aborted_transactions=[(a["producer_id"], a["first_offset"])
                                      for a in p["aborted_transactions"] or ()],
                error=top_error or error_for(p["error_code"], where=str(tp)),
            )
    for tp in requested - results.keys():
        results[tp] = FetchedPartition.failed(top_error or InvalidResponseError(
            f"the Fetch response left out {tp}", retriable=True))
    return results


class Fetcher:
    """Fetches over ``cluster``'s connections, with the byte limits of ``config`` (by default
    the cluster's)."""

    def __init__(self, cluster: Cluster, config: ClientConfig | None = None):
        self.cluster = cluster
        self.config = config or cluster.config

    def fetch(self, offsets: dict[TopicPartition, int], *, max_wait_ms: int, min_bytes: int,
              isolation_level: str | int,
              partition_max_bytes: Mapping[TopicPartition, int] | None = None
              ) -> dict[TopicPartition, FetchedPartition]:
        """Fetch every partition from its leader; see :meth:`KafkaClient.fetch`.
        ``partition_max_bytes`` gives partitions a byte limit other than
        ``max.partition.fetch.bytes``."""
        for tp, offset in offsets.items():
            if offset < 0:
                raise InvalidArgumentError(f"fetch offset of {tp} must be >= 0, got {offset}")
        isolation = isolation_level_code(isolation_level)
        request = partial(fetch_request, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                          max_bytes=self.config.fetch_max_bytes, isolation_level=isolation,
                          partition_max_bytes=self.config.max_partition_fetch_bytes,
                          larger_limits=partition_max_bytes)
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
                last[tp] = worth_reporting(error, last.get(tp), deadline)
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
