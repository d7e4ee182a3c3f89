"""The driver's commit decision for a micro-batch, recorded durably in the broker.

Exactly-once writing is a two-phase commit: tasks write inside Kafka transactions and leave them
open; the driver first records that the batch commits, then ends every task's transaction. If
the driver dies in between, Spark runs the batch again after a restart; the record tells the new
run that the decision was already taken, so its tasks write nothing and its commit finishes the
recorded transactions instead.

The record is an offset commit, stored by the group coordinator in ``__consumer_offsets`` on any
Kafka broker: group ``kpy-sink-<query id>``, partition 0 of a topic the batch wrote, offset = the
batch id, metadata = JSON::

    {"batch": 7, "txns": [[0, 4001, 2], [1, 4002, 0]]}   # task partition, producer id, epoch

When the list would not fit the broker's ``offset.metadata.max.bytes`` (4096 by default), only
the task partitions are kept (``{"batch": 7, "partitions": [0, 1]}``) and the producer ids and
epochs are looked up with DescribeTransactions when needed.
"""

import json
import logging
from dataclasses import dataclass

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.client.producer.transactions import TransactionHandle, describe_transaction

logger = logging.getLogger(__name__)

MAX_METADATA_BYTES = 3000  # well under Kafka's default offset.metadata.max.bytes


@dataclass(frozen=True)
class Decision:
    batch_id: int
    transactions: tuple[tuple[int, int, int], ...] = ()  # (task partition, producer id, epoch)
    partitions: tuple[int, ...] = ()  # when producer ids and epochs were not recorded


SINK_GROUP_PREFIX = "kpy-sink-"


def decision_group(query_id: str) -> str:
    return f"{SINK_GROUP_PREFIX}{query_id}"


def record(client: KafkaClient, query_id: str, batch_id: int, topic: str,
           transactions: list[tuple[int, int, int]]) -> None:
    """Durably record that ``batch_id`` commits ``transactions``."""
    text = json.dumps({"batch": batch_id, "txns": [list(t) for t in sorted(transactions)]},
                      separators=(",", ":"))
    if len(text) > MAX_METADATA_BYTES:
        text = json.dumps({"batch": batch_id,
                           "partitions": sorted(p for p, _, _ in transactions)},
                          separators=(",", ":"))
    client.commit(decision_group(query_id), {TopicPartition(topic, 0): batch_id}, text)


def latest(client: KafkaClient, query_id: str) -> Decision | None:
    """The latest recorded decision of the query, if any."""
    found = client.committed(decision_group(query_id), None, with_metadata=True)
    decisions = []
    for committed in found.values():
        try:
            entry = json.loads(committed.metadata)
            decisions.append(Decision(
                int(entry["batch"]),
                tuple(tuple(int(x) for x in t) for t in entry.get("txns", ())),
                tuple(int(p) for p in entry.get("partitions", ()))))
        except (ValueError, KeyError, TypeError):
            logger.warning("ignoring an unreadable sink decision of query %s: %r", query_id,
                           committed.metadata)
    return max(decisions, key=lambda d: d.batch_id, default=None)


def handles(client: KafkaClient, decision: Decision, transactional_id) -> list[TransactionHandle]:
    """The transactions a decision commits; ``transactional_id(partition)`` names them."""
    if decision.transactions:
        return [TransactionHandle(transactional_id(p), pid, epoch)
                for p, pid, epoch in decision.transactions]
    result = []
    for partition in decision.partitions:
        described = describe_transaction(client, transactional_id(partition))
        if described is None:
            raise RuntimeError("the broker cannot describe transactions (DescribeTransactions: "
                               f"Kafka 3.0 or later), so batch {decision.batch_id} cannot be "
                               "finished")
        result.append(TransactionHandle(described.transactional_id, described.producer_id,
                                        described.producer_epoch))
    return result
