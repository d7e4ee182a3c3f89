"""Older Kafka releases' APIs, so that a broker_lite broker can stand in for one in tests.

A client meets brokers of every release from Kafka 2.1 (the oldest Kafka 4's clients still
speak to, KIP-896) on. broker_lite serves the versions of Kafka 3.9 (:mod:`.apis`); given a
:class:`KafkaRelease`, a :class:`~.broker.Broker` advertises and serves only what that release
does: its APIs, each up to the release's highest version (and never above broker_lite's own),
and it refuses ApiVersions the way that release did: from Kafka 2.4 on the refusal names
ApiVersions' own range (KIP-511), before it names nothing. A request of an API or version not
advertised closes the connection, as any Kafka broker does. Behaviour stays broker_lite's (a
Kafka 3.9 broker answering an old version), which is what clients of those versions expect.

This is a test's tool, not a setting: ``server.properties`` cannot choose it.

The ranges are each release's ApiVersions answer (Kafka's ``ApiKeys`` of that release, a
ZooKeeper-mode broker; every API from version 0), for the APIs broker_lite serves; a test
compares them with kafka-python's recordings of real brokers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from broker_lite.protocol import ApiKey

from .dispatcher import ApiHandler

K = ApiKey


@dataclass(frozen=True)
class KafkaRelease:
    """A Kafka release as its brokers' ApiVersions answer shows it."""

    name: str
    highest: Mapping[ApiKey, int]  # API -> the highest version served (all from 0)
    names_api_versions_in_refusal: bool  # KIP-511 (Kafka 2.4)

    def handlers(self, served: Mapping[ApiKey, ApiHandler]) -> dict[ApiKey, ApiHandler]:
        """``served`` narrowed to this release: its APIs only, each up to its version."""
        return {key: replace(handler, max_version=min(handler.max_version, self.highest[key]))
                for key, handler in served.items() if key in self.highest}

    def __str__(self) -> str:
        return f"Kafka {self.name}"


KAFKA_2_1 = KafkaRelease("2.1", {
    K.PRODUCE: 7, K.FETCH: 10, K.LIST_OFFSETS: 4, K.METADATA: 7, K.CONTROLLED_SHUTDOWN: 1,
    K.OFFSET_COMMIT: 6, K.OFFSET_FETCH: 5, K.FIND_COORDINATOR: 2, K.JOIN_GROUP: 3,
    K.HEARTBEAT: 2, K.LEAVE_GROUP: 2, K.SYNC_GROUP: 2, K.DESCRIBE_GROUPS: 2, K.LIST_GROUPS: 2,
    K.SASL_HANDSHAKE: 1, K.API_VERSIONS: 2, K.CREATE_TOPICS: 3, K.DELETE_TOPICS: 3,
    K.DELETE_RECORDS: 1, K.INIT_PRODUCER_ID: 1, K.OFFSET_FOR_LEADER_EPOCH: 2,
    K.ADD_PARTITIONS_TO_TXN: 1, K.ADD_OFFSETS_TO_TXN: 1, K.END_TXN: 1, K.WRITE_TXN_MARKERS: 0,
    K.TXN_OFFSET_COMMIT: 2, K.DESCRIBE_ACLS: 1, K.CREATE_ACLS: 1, K.DELETE_ACLS: 1,
    K.DESCRIBE_CONFIGS: 2, K.ALTER_CONFIGS: 1, K.SASL_AUTHENTICATE: 0, K.CREATE_PARTITIONS: 1,
    K.DELETE_GROUPS: 1,
}, names_api_versions_in_refusal=False)

KAFKA_2_8 = KafkaRelease("2.8", {
    K.PRODUCE: 9, K.FETCH: 12, K.LIST_OFFSETS: 6, K.METADATA: 11, K.CONTROLLED_SHUTDOWN: 3,
    K.OFFSET_COMMIT: 8, K.OFFSET_FETCH: 7, K.FIND_COORDINATOR: 3, K.JOIN_GROUP: 7,
    K.HEARTBEAT: 4, K.LEAVE_GROUP: 4, K.SYNC_GROUP: 5, K.DESCRIBE_GROUPS: 5, K.LIST_GROUPS: 4,
    K.SASL_HANDSHAKE: 1, K.API_VERSIONS: 3, K.CREATE_TOPICS: 7, K.DELETE_TOPICS: 6,
    K.DELETE_RECORDS: 2, K.INIT_PRODUCER_ID: 4, K.OFFSET_FOR_LEADER_EPOCH: 4,
    K.ADD_PARTITIONS_TO_TXN: 3, K.ADD_OFFSETS_TO_TXN: 3, K.END_TXN: 3, K.WRITE_TXN_MARKERS: 1,
    K.TXN_OFFSET_COMMIT: 3, K.DESCRIBE_ACLS: 2, K.CREATE_ACLS: 2, K.DELETE_ACLS: 2,
    K.DESCRIBE_CONFIGS: 4, K.ALTER_CONFIGS: 2, K.SASL_AUTHENTICATE: 2, K.CREATE_PARTITIONS: 3,
    K.DELETE_GROUPS: 2, K.ELECT_LEADERS: 2, K.INCREMENTAL_ALTER_CONFIGS: 1,
    K.ALTER_PARTITION_REASSIGNMENTS: 0, K.LIST_PARTITION_REASSIGNMENTS: 0, K.OFFSET_DELETE: 0,
    K.DESCRIBE_USER_SCRAM_CREDENTIALS: 0, K.ALTER_USER_SCRAM_CREDENTIALS: 0,
    K.DESCRIBE_CLUSTER: 0, K.DESCRIBE_PRODUCERS: 0,
}, names_api_versions_in_refusal=True)

KAFKA_3_9 = KafkaRelease("3.9", {
    K.PRODUCE: 11, K.FETCH: 17, K.LIST_OFFSETS: 9, K.METADATA: 12, K.CONTROLLED_SHUTDOWN: 3,
    K.OFFSET_COMMIT: 9, K.OFFSET_FETCH: 9, K.FIND_COORDINATOR: 6, K.JOIN_GROUP: 9,
    K.HEARTBEAT: 4, K.LEAVE_GROUP: 5, K.SYNC_GROUP: 5, K.DESCRIBE_GROUPS: 5, K.LIST_GROUPS: 5,
    K.SASL_HANDSHAKE: 1, K.API_VERSIONS: 4, K.CREATE_TOPICS: 7, K.DELETE_TOPICS: 6,
    K.DELETE_RECORDS: 2, K.INIT_PRODUCER_ID: 5, K.OFFSET_FOR_LEADER_EPOCH: 4,
    K.ADD_PARTITIONS_TO_TXN: 5, K.ADD_OFFSETS_TO_TXN: 4, K.END_TXN: 4, K.WRITE_TXN_MARKERS: 1,
    K.TXN_OFFSET_COMMIT: 4, K.DESCRIBE_ACLS: 3, K.CREATE_ACLS: 3, K.DELETE_ACLS: 3,
    K.DESCRIBE_CONFIGS: 4, K.ALTER_CONFIGS: 2, K.SASL_AUTHENTICATE: 2, K.CREATE_PARTITIONS: 3,
    K.DELETE_GROUPS: 2, K.ELECT_LEADERS: 2, K.INCREMENTAL_ALTER_CONFIGS: 1,
    K.ALTER_PARTITION_REASSIGNMENTS: 0, K.LIST_PARTITION_REASSIGNMENTS: 0, K.OFFSET_DELETE: 0,
    K.DESCRIBE_USER_SCRAM_CREDENTIALS: 0, K.ALTER_USER_SCRAM_CREDENTIALS: 0,
    K.DESCRIBE_CLUSTER: 1, K.DESCRIBE_PRODUCERS: 0, K.DESCRIBE_TRANSACTIONS: 0,
    K.LIST_TRANSACTIONS: 1,
    # the consumer group protocol's preview (KIP-848, generally available in 4.0)
    K.CONSUMER_GROUP_HEARTBEAT: 0, K.CONSUMER_GROUP_DESCRIBE: 0,
}, names_api_versions_in_refusal=True)

#: The releases by name.
RELEASES: dict[str, KafkaRelease] = {r.name: r for r in (KAFKA_2_1, KAFKA_2_8, KAFKA_3_9)}
