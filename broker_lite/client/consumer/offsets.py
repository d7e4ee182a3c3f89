"""ListOffsets: partition offsets by time, from each partition's leader.

A spec per partition: :data:`EARLIEST` (-2, the log start offset), :data:`LATEST` (-1, the high
watermark, or the last stable offset under read_committed), or a timestamp in ms (>= 0: the
first offset whose record timestamp is >= it; the broker answers offset -1 when there is none,
returned here as None). One request per leader broker, all sent concurrently; partitions whose
leader moved are retried against the new one.
"""

from __future__ import annotations

from functools import partial

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey
from broker_lite.protocol.enums import CONSUMER_REPLICA_ID

from ..cluster.cluster import Cluster
from ..cluster.metadata import BrokerInfo
from ..errors import (
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    UnsupportedVersionError,
    error_for,
)
from ..retry import Deadline, retry
from ..types import EARLIEST, LATEST, OffsetAndTimestamp, isolation_level_code

FIRST_VERSION_WITH_ISOLATION = 2


def list_offsets_request(partitions: dict[TopicPartition, tuple[int, int]], *, version: int,
                         isolation_level: int, timeout_ms: int) -> dict:
    """A ListOffsets body; ``partitions`` maps each to (spec, leader epoch)."""
    if isolation_level and version < FIRST_VERSION_WITH_ISOLATION:
        raise UnsupportedVersionError(
            f"read_committed offsets need ListOffsets v{FIRST_VERSION_WITH_ISOLATION}+, the "
            f"broker speaks v{version}")
    topics: dict[str, list[dict]] = {}
    for tp, (spec, epoch) in sorted(partitions.items()):
        topics.setdefault(tp.topic, []).append({
            "partition_index": tp.partition, "current_leader_epoch": epoch, "timestamp": spec,
            "max_num_offsets": 1,
        })
    return {"replica_id": CONSUMER_REPLICA_ID, "isolation_level": isolation_level,
            "timeout_ms": timeout_ms,
            "topics": [{"name": name, "partitions": parts} for name, parts in topics.items()]}


def parse_list_offsets_response(body: dict, requested) -> dict[
        TopicPartition, OffsetAndTimestamp | KafkaClientError | None]:
    """Per requested partition: the offset and timestamp found, None for a timestamp spec
    with no record that late, or the error."""
    results: dict[TopicPartition, OffsetAndTimestamp | KafkaClientError | None] = {}
    for topic in body["topics"]:
        for p in topic["partitions"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            if tp not in requested:
                continue
            error = error_for(p["error_code"], where=str(tp))
            if error is not None:
                results[tp] = error
            elif p["offset"] < 0:
                results[tp] = None
            else:
                results[tp] = OffsetAndTimestamp(p["offset"], p["timestamp"])
    for tp in requested:
        if tp not in results:
            results[tp] = InvalidResponseError(f"the ListOffsets response has no offset for {tp}")
    return results


def check_spec(tp: TopicPartition, spec: int) -> int:
    if not isinstance(spec, int) or (spec < 0 and spec not in (EARLIEST, LATEST)):
        raise InvalidArgumentError(
            f"offset spec of {tp} must be EARLIEST (-2), LATEST (-1) or a timestamp in ms "
            f">= 0, got {spec!r}")
    return spec


class OffsetLookup:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def list_offsets(self, specs: dict[TopicPartition, int], isolation_level: str | int
                     ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        specs = {tp: check_spec(tp, spec) for tp, spec in specs.items()}
        isolation = isolation_level_code(isolation_level)
        if not specs:
            return {}
        cluster = self.cluster
        deadline = cluster.deadline()
        pending, results = dict(specs), {}

        def attempt() -> dict[TopicPartition, OffsetAndTimestamp | None]:
            by_leader, errors = cluster.leaders(pending, deadline)
            work = {node: partial(self._list_from, broker,
                                  {tp: (pending[tp], epoch) for tp, epoch in parts.items()},
                                  isolation, deadline)
                    for node, (broker, parts) in by_leader.items()}
            for node, outcome in cluster.run_per_broker(work).items():
                for tp in by_leader[node][1]:
                    found = outcome if isinstance(outcome, KafkaClientError) else outcome[tp]
                    if isinstance(found, KafkaClientError):
                        errors[tp] = found
                    else:
                        results[tp] = found
                        del pending[tp]
            for error in errors.values():
                if not error.retriable:
                    raise error
                cluster.on_retriable(error)
            if pending:
                raise next(iter(errors.values()))
            return results

        return retry(f"list_offsets for {len(specs)} partition(s)", deadline, cluster.backoff(),
                     attempt, cluster.on_retriable)

    def _list_from(self, broker: BrokerInfo, partitions: dict[TopicPartition, tuple[int, int]],
                   isolation: int, deadline: Deadline):
        conn = self.cluster.connection(broker.host, broker.port, broker.node_id)
        timeout_ms = int(deadline.remaining_s() * 1000)
        _, body = conn.request(ApiKey.LIST_OFFSETS, lambda version: list_offsets_request(
            partitions, version=version, isolation_level=isolation, timeout_ms=timeout_ms),
            deadline)
        return parse_list_offsets_response(body, partitions)
