"""DeleteRecords: move partitions' log start offsets forward, from each partition's leader.

``delete_records(cluster, {tp: offset})`` asks each leader to delete the records of its
partitions below ``offset`` (:data:`HIGH_WATERMARK`, -1, meaning the partition's high watermark),
as Kafka's ``Admin.deleteRecords``. One request per leader broker, all sent concurrently;
partitions whose leader moved are retried against the new one until the client's deadline.

The answer is per partition, as Kafka's ``DeleteRecordsResult.lowWatermarks()``: the new log
start offset (the low watermark), or the error for that partition (an offset beyond the high
watermark is OFFSET_OUT_OF_RANGE, an unknown partition UNKNOWN_TOPIC_OR_PARTITION); one failing
partition does not fail the others.
"""

from __future__ import annotations

from functools import partial

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey
from broker_lite.protocol.enums import DELETE_RECORDS_HIGH_WATERMARK

from ..cluster.cluster import Cluster
from ..cluster.metadata import BrokerInfo
from ..errors import KafkaClientError, KafkaTimeoutError, error_for, error_of
from ..retry import Deadline, retry

HIGH_WATERMARK = DELETE_RECORDS_HIGH_WATERMARK  # the client's name for it

Outcome = int | KafkaClientError


def delete_records_request(offsets: dict[TopicPartition, int], timeout_ms: int) -> dict:
    """A DeleteRecords body (every version has the same fields)."""
    topics: dict[str, list[dict]] = {}
    for tp, offset in sorted(offsets.items()):
        topics.setdefault(tp.topic, []).append({"partition_index": tp.partition,
                                                "offset": offset})
    return {"topics": [{"name": name, "partitions": parts} for name, parts in topics.items()],
            "timeout_ms": timeout_ms}


def parse_delete_records_response(body: dict, requested) -> dict[TopicPartition, Outcome]:
    """Per requested partition: its low watermark, or the error."""
    results: dict[TopicPartition, Outcome] = {}
    for topic in body["topics"]:
        for p in topic["partitions"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            if tp in requested:
                error = error_for(p["error_code"], where=str(tp))
                results[tp] = p["low_watermark"] if error is None else error
    for tp in requested:
        results.setdefault(tp, error_of(-1, "no answer for this partition", where=str(tp)))
    return results


def delete_records(cluster: Cluster, offsets: dict[TopicPartition, int]
                   ) -> dict[TopicPartition, Outcome]:
    """Delete the records of each partition below its offset; the low watermark or the error of
    each (retriable errors that outlast the deadline as a :class:`KafkaTimeoutError`)."""
    deadline = cluster.deadline()
    pending, results = dict(offsets), {}
    last_errors: dict[TopicPartition, KafkaClientError] = {}

    def attempt() -> dict[TopicPartition, Outcome]:
        by_leader, errors = cluster.leaders(pending, deadline)
        work = {node: partial(_delete_on, cluster, broker,
                              {tp: pending[tp] for tp in parts}, deadline)
                for node, (broker, parts) in by_leader.items()}
        for node, outcome in cluster.run_per_broker(work).items():
            for tp in by_leader[node][1]:
                found = outcome if isinstance(outcome, KafkaClientError) else outcome[tp]
                if isinstance(found, KafkaClientError) and found.retriable:
                    errors[tp] = found
                else:
                    results[tp] = found
                    del pending[tp]
        for tp, error in errors.items():
            if not error.retriable:
                results[tp] = error
                del pending[tp]
        last_errors.clear()
        last_errors.update((tp, errors[tp]) for tp in pending)
        if pending:
            raise next(iter(last_errors.values()))
        return results

    what = f"delete_records for {len(offsets)} partition(s)"
    try:
        return retry(what, deadline, cluster.backoff(), attempt, cluster.on_retriable)
    except KafkaTimeoutError:
        for tp in pending:
            results[tp] = KafkaTimeoutError(
                f"{what} did not complete within {deadline.timeout_ms:.0f} ms; last error: "
                f"{last_errors.get(tp)}", last_error=last_errors.get(tp))
        return results


def _delete_on(cluster: Cluster, broker: BrokerInfo, offsets: dict[TopicPartition, int],
               deadline: Deadline) -> dict[TopicPartition, Outcome]:
    conn = cluster.connection(broker.host, broker.port, broker.node_id)
    timeout_ms = int(deadline.remaining_s() * 1000)
    _, body = conn.request(ApiKey.DELETE_RECORDS,
                           lambda version: delete_records_request(offsets, timeout_ms), deadline)
    return parse_delete_records_response(body, offsets)
