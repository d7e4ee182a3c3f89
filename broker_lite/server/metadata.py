"""What a broker tells clients about the cluster, read from ZooKeeper: the live brokers, the
controller, and each topic's partitions with their leader, replicas and in-sync replicas.

ZooKeeper is the source of truth for all of it, so every broker answers Metadata alike wherever
the partitions live; a client then sends each partition's requests to its leader.
"""

from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from broker_lite.zk.admin import get_partition_state, get_topic_assignment, list_topics
from broker_lite.zk.errors import UnknownTopicError
from broker_lite.zk.layout import ControllerZNode, PartitionState
from broker_lite.zk.registration import get_broker, live_broker_ids


@dataclass(frozen=True)
class BrokerInfo:
    broker_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class PartitionInfo:
    partition: int
    replicas: tuple[int, ...]
    state: PartitionState | None  # None until the controller has elected a leader


class ClusterMetadata:
    def __init__(self, client: KazooClient, listener_name: str = "PLAINTEXT"):
        self.client = client
        self.listener_name = listener_name

    def brokers(self) -> list[BrokerInfo]:
        result = []
        for broker_id in live_broker_ids(self.client):
            registration = get_broker(self.client, broker_id)
            if registration is None:
                continue  # gone since the listing
            endpoint = next((e for e in registration.endpoints
                             if e.listener_name == self.listener_name), None) \
                or registration.plaintext_endpoint
            if endpoint is not None:
                result.append(BrokerInfo(broker_id, endpoint.host, endpoint.port,
                                         registration.rack))
        return result

    def controller_id(self) -> int:
        try:
            data, _ = self.client.get(ControllerZNode.path())
        except NoNodeError:
            return -1
        return ControllerZNode.decode(data).broker_id

    def topic_names(self) -> list[str]:
        return list_topics(self.client)

    def partitions(self, topic: str) -> list[PartitionInfo] | None:
        """The topic's partitions in order, or None when the topic does not exist."""
        try:
            assignment = get_topic_assignment(self.client, topic)
        except (UnknownTopicError, NoNodeError):
            return None
        return [
            PartitionInfo(p, tuple(replicas), get_partition_state(self.client, topic, p))
            for p, replicas in sorted(assignment.partitions.items())
        ]
