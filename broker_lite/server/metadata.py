"""What a broker tells clients about the cluster, read from ZooKeeper: the live brokers, the
controller, and each topic's partitions with their leader, replicas and in-sync replicas.

ZooKeeper is the source of truth for all of it, so every broker answers Metadata alike wherever
the partitions live; a client then sends each partition's requests to its leader.
:class:`ClusterMetadata` (the handlers' :class:`~.services.ClusterView`) reads it anew on every
call.

A broker that answers is alive, so the live brokers always include this one
(:attr:`ClusterMetadata.local_broker`, set once it has registered) even while ZooKeeper does not
show it (its registration is being renewed after a lost session): a Metadata answer never lists
zero brokers, which would leave a client nowhere to send its next request. At start-up the broker
serves no request before :meth:`ClusterMetadata.shows_itself` holds: ZooKeeper lists it and
names a controller.
"""

import uuid
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.zk.admin import (
    get_partition_state,
    get_topic_assignment,
    list_topics,
    validate_topic_name,
)
from broker_lite.zk.errors import (
    InvalidTopicError,
    MalformedZnodeError,
    UnknownTopicError,
)
from broker_lite.zk.layout import ControllerZNode, PartitionState
from broker_lite.zk.registration import get_broker, live_broker_ids

NO_TOPIC_ID = uuid.UUID(int=0)


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


@dataclass(frozen=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID  # the zero UUID for a topic created without one
    partitions: list[PartitionInfo]


class ClusterMetadata:
    """The cluster from ZooKeeper; brokers are given at their endpoints of one listener (by
    default ``listener_name``, this broker's first)."""

    def __init__(self, client: KazooClient, listener_name: str = "PLAINTEXT"):
        self.client = client
        self.listener_name = listener_name
        self.local_broker: BrokerInfo | None = None  # this broker, once registered
        self.local_endpoints: dict[str, BrokerInfo] = {}  # by listener, once registered
        self._names_by_id: dict[uuid.UUID, str] = {}

    def brokers(self, listener: str | None = None) -> list[BrokerInfo]:
        """The live brokers by id: those registered in ZooKeeper, and this one, at their
        endpoints of ``listener`` (those without one are left out, as Kafka's metadata cache
        leaves them out of that listener's answers)."""
        listener = listener or self.listener_name
        registered = self.registered_brokers(listener)
        local = self.local_endpoints.get(listener) or \
            (self.local_broker if listener == self.listener_name else None)
        if local is None or any(b.broker_id == local.broker_id for b in registered):
            return registered
        return sorted([*registered, local], key=lambda b: b.broker_id)

    def shows_itself(self) -> bool:
        """ZooKeeper lists this broker among the live brokers and names a controller: what a
        client's first Metadata answer needs (the controller is elected on a thread of its
        own, a moment after registration)."""
        local = self.local_broker
        return local is not None \
            and any(b.broker_id == local.broker_id for b in self.registered_brokers()) \
            and self.controller_id() >= 0

    def registered_brokers(self, listener: str | None = None) -> list[BrokerInfo]:
        """The brokers registered under ``/brokers/ids``, by id, at their endpoint of
        ``listener`` (the default listener: or their first PLAINTEXT one)."""
        listener = listener or self.listener_name
        result = []
        for broker_id in live_broker_ids(self.client):
            registration = get_broker(self.client, broker_id)
            if registration is None:
                continue  # gone since the listing
            endpoint = next((e for e in registration.endpoints
                             if e.listener_name == listener), None)
            if endpoint is None and listener == self.listener_name:
                endpoint = registration.plaintext_endpoint
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

    def topic(self, topic: str) -> TopicInfo | None:
        """The topic's id and partitions, or None when the topic does not exist."""
        try:
            assignment = get_topic_assignment(self.client, topic)
        except (UnknownTopicError, NoNodeError):
            return None
        partitions = [
            PartitionInfo(p, tuple(replicas), get_partition_state(self.client, topic, p))
            for p, replicas in sorted(assignment.partitions.items())
        ]
        return TopicInfo(topic, assignment.topic_id or NO_TOPIC_ID, partitions)

    def partitions(self, topic: str) -> list[PartitionInfo] | None:
        """The topic's partitions in order, or None when the topic does not exist."""
        info = self.topic(topic)
        return info.partitions if info is not None else None

    def partition_count(self, topic: str) -> int | None:
        try:
            validate_topic_name(topic)  # a name that is no topic's is not looked up
            return len(get_topic_assignment(self.client, topic).partitions)
        except (InvalidTopicError, UnknownTopicError, MalformedZnodeError):
            return None

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        return get_partition_state(self.client, topic, partition)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with ``topic_id`` (Fetch 13+ names topics by id)."""
        name = self._names_by_id.get(topic_id)
        if name is not None and self.client.exists(f"/brokers/topics/{name}"):
            return name
        for name in self.topic_names():  # a topic created since: refresh the whole map
            try:
                found = get_topic_assignment(self.client, name).topic_id
            except (UnknownTopicError, NoNodeError):
                continue
            if found is not None:
                self._names_by_id[found] = name
        return self._names_by_id.get(topic_id)


def serving_leaders(partitions: PartitionManager, topic: str,
                    infos: list[PartitionInfo]) -> list[bool]:
    """For each partition, whether it has an elected leader that serves it already, when that
    leader is this broker: ZooKeeper shows an election before this broker's own watch has taken
    the partition on, and a client sent here in between would get NOT_LEADER_OR_FOLLOWER (and
    a Produce with acks=0 would be lost without a word). This broker's side is read at one
    moment, so a new topic's partitions are served all or none."""
    local = partitions.served_states(topic, [info.partition for info in infos])
    return [_serving(info.state, here, partitions.broker_id)
            for info, here in zip(infos, local, strict=True)]


def _serving(state: PartitionState | None, local: PartitionState | None, broker_id: int) -> bool:
    if state is None or state.leader < 0:
        return False
    if state.leader != broker_id:
        return True
    return local is not None and local.leader_epoch >= state.leader_epoch
