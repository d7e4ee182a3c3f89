"""Kafka's internal compacted topics (``__consumer_offsets``, ``__transaction_state``): creating
one, its partition count, and the leader log of each of its partitions.

An internal topic is created on first use, as Kafka does, with its configured partition count and
topic configs (``cleanup.policy=compact`` at least: only the latest record of each key matters).
Kafka refuses to create it while fewer brokers are alive than its replication factor setting (3
by default). Here it is created with as many replicas as there are live brokers, up to that
factor, with a warning, so one broker on a laptop needs no configuration.

Keys are placed by the topic's partition count once it exists, even when the setting was changed
since: moving keys between partitions would lose them.
"""

import logging
from collections.abc import Callable

from kazoo.client import KazooClient

from broker_lite.log import Log
from broker_lite.zk.admin import create_topic, get_topic_assignment
from broker_lite.zk.errors import TopicExistsError, UnknownTopicError
from broker_lite.zk.registration import live_broker_ids

logger = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
#: Kafka's internal topics: clients may read them but never produce to them.
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC})

# (the leader log of a partition, its leader epoch), or None when this broker does not lead it
LeaderLog = Callable[[int], tuple[Log, int] | None]


class InternalTopicUnavailableError(RuntimeError):
    """The topic cannot be created now (no live broker): COORDINATOR_NOT_AVAILABLE."""


def create_internal_topic(client: KazooClient, topic: str, *, num_partitions: int,
                          replication_factor: int, replication_setting: str,
                          configs: dict[str, str], min_insync_replicas: int | None = None
                          ) -> bool:
    """Create ``topic`` unless it exists; whether this call created it. ``replication_setting``
    names the broker setting of ``replication_factor`` (for the warning when fewer brokers are
    alive). ``min_insync_replicas``, when given, becomes the topic's ``min.insync.replicas``,
    at most its replica count (a single broker could otherwise never write it)."""
    brokers = live_broker_ids(client)
    if not brokers:
        raise InternalTopicUnavailableError(f"no live broker to host {topic}")
    replicas = min(replication_factor, len(brokers))
    if replicas < replication_factor:
        logger.warning("creating %s with replication factor %d: only %d brokers are alive "
                       "(%s is %d)", topic, replicas, len(brokers), replication_setting,
                       replication_factor)
    if min_insync_replicas is not None:
        configs = {**configs, "min.insync.replicas": str(min(min_insync_replicas, replicas))}
    try:
        create_topic(client, topic, num_partitions, replicas, configs)
    except TopicExistsError:
        return False  # created meanwhile by another broker or request
    logger.info("created %s with %d partitions", topic, num_partitions)
    return True


def internal_topic_partition_count(client: KazooClient, topic: str) -> int | None:
    """The partition count of ``topic``, or None while it does not exist."""
    try:
        return len(get_topic_assignment(client, topic).partitions)
    except UnknownTopicError:
        return None


def leader_log_of(partitions, topic: str) -> LeaderLog:
    """The :data:`LeaderLog` of ``topic`` on this broker, as ``partitions`` (its
    PartitionManager) knows it."""

    def leader_log(partition: int) -> tuple[Log, int] | None:
        state = partitions.state(topic, partition)
        log = partitions.leader_log(topic, partition)
        return (log, state.leader_epoch) if log is not None and state is not None else None

    return leader_log


class PartitionCount:
    """The partition count of an internal topic that keys are placed by: the topic's once it
    exists (asked until it does, then never again), ``configured`` until then.

    Parameters
    ----------
    topic : str
    configured : int
        The count the topic is (or will be) created with.
    topic_partition_count : callable
        The topic's partition count as created, or None while it does not exist.
    """

    def __init__(self, topic: str, configured: int,
                 topic_partition_count: Callable[[], int | None]):
        self.topic = topic
        self.configured = configured
        self._topic_partition_count = topic_partition_count
        self._count: int | None = None

    def resolve(self) -> int:
        if self._count is None:
            count = self._topic_partition_count()
            if count is not None and count > 0:
                self._count = count
                if count != self.configured:
                    logger.info("%s has %d partitions (configured: %d); keys are placed by "
                                "the topic's", self.topic, count, self.configured)
        return self._count or self.configured
