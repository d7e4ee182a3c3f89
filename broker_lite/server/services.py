"""What request handlers work with (``context.services``): this broker's pieces, each typed by
what the handlers use of it.

Local pieces that need no network (the config, the logs, the partitions held, the group
coordinator, the purgatory) are the real classes: a test builds them on a temporary directory.
What reaches ZooKeeper or other brokers is an interface (a :class:`typing.Protocol`) that a test
replaces with a small fake; no handler sees a ZooKeeper client.

==============  =========================  ===================================================
field           type                       in a broker
==============  =========================  ===================================================
config          BrokerConfig               server.properties
logs            LogManager                 the partition logs on disk
partitions      PartitionManager           the partitions held here: state, leader logs
cluster         :class:`ClusterView`       :class:`~.metadata.ClusterMetadata` (ZooKeeper) in a
                                           :class:`~.metadata_cache.MetadataCache`
admin           :class:`TopicAdmin`        :class:`~.admin.ZkTopicAdmin` (``zk.admin``)
groups          ConsumerGroupCoordinator   the group coordinator (both protocols)
transactions    :class:`Transactions`      the transaction coordinator
markers         :class:`MarkerWriter`      transaction markers appended to local logs
producer_ids    :class:`ProducerIds`       ``ZkProducerIdManager``: blocks from ZooKeeper
controller      :class:`ControllerRequests`  this broker's controller role (``zk.controller``)
zk_offsets      :class:`ZkGroupOffsets`    ``ZkConsumerOffsets``: ``/consumers/[group]/offsets``
purgatory       Purgatory                  where requests wait (delayed operations)
api_versions    list of dict               the APIs and versions served (ApiVersions)
cluster_id      str or None                known once the broker has registered
authorizer      :class:`~.authorizer.      ``authorizer.class.name``: None (everything
                Authorizer` or None        allowed) or the ZooKeeper-backed AclAuthorizer
share           ShareService or None       share groups (KIP-932): their coordinators and
                                           share-partitions
features        list of Feature            the feature levels ApiVersions tells (v3+)
==============  =========================  ===================================================
"""

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.broker import BrokerConfig
from broker_lite.controller.controller import Outcome, Reassignment
from broker_lite.coordinator.consumer.coordinator import ConsumerGroupCoordinator
from broker_lite.coordinator.share.service import ShareService
from broker_lite.coordinator.transaction.coordinator import (
    InitProducerIdResult,
    TransactionDescription,
)
from broker_lite.log.manager import LogManager
from broker_lite.protocol import ErrorCode
from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.zk.admin import TopicPlan, TopicSpec
from broker_lite.zk.layout import PartitionState

from .authorizer import Authorizer
from .features import Feature
from .metadata import BrokerInfo, PartitionInfo, TopicInfo
from .purgatory import Purgatory


class ClusterView(Protocol):
    """The cluster as every broker sees it: live brokers, the controller, topics and their
    partitions with leaders (Metadata, FindCoordinator, and whether a partition exists)."""

    def brokers(self, listener: str | None = None) -> list[BrokerInfo]:
        """The live brokers, at their endpoints of ``listener`` (None: this broker's first
        listener); a broker without that listener is left out."""

    def controller_id(self) -> int:
        """The controller's broker id, -1 while there is none."""

    def topic_names(self) -> list[str]: ...

    def topic(self, name: str) -> TopicInfo | None:
        """The topic's id and partitions, or None when it does not exist."""

    def partitions(self, name: str) -> list[PartitionInfo] | None:
        """The topic's partitions in order, or None when it does not exist."""

    def partition_count(self, name: str) -> int | None:
        """How many partitions the topic has, or None when it does not exist."""

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        """The partition's leader, epoch and ISR; None until a leader was elected."""

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with ``topic_id``, or None."""


class TopicAdmin(Protocol):
    """Creating, deleting and growing topics, their config overrides, the dynamic broker
    configs, and the users' configs (SCRAM credentials). Each method raises
    the specific errors of :mod:`broker_lite.zk.errors` (or ``ConfigError``) for what it
    refuses, with Kafka's messages; the controller acts on what is written."""

    def create_topic(self, spec: TopicSpec, *, validate_only: bool = False) -> TopicPlan:
        """Check ``spec`` as Kafka does and, unless ``validate_only``, create the topic."""

    def delete_topic(self, name: str) -> None:
        """Queue the topic for deletion."""

    def is_marked_for_deletion(self, name: str) -> bool: ...

    def create_partitions(self, name: str, count: int,
                          assignment: Sequence[Sequence[int]] | None = None, *,
                          validate_only: bool = False) -> list[int]:
        """Grow the topic to ``count`` partitions; the numbers of the new ones."""

    def topic_config(self, name: str) -> dict[str, str]:
        """The topic's overrides (empty when it has none)."""

    def alter_topic_config(self, name: str, overrides: dict[str, str]) -> None:
        """Replace the topic's overrides; every broker applies them."""

    def broker_config(self, entity: str) -> dict[str, str]:
        """The dynamic configs stored for a broker (``entity``: its id) or for every broker
        (``<default>``), as stored (empty when there are none)."""

    def alter_broker_config(self, entity: str, configs: dict[str, str]) -> None:
        """Replace them; every broker concerned applies them, this one at once."""

    def users_with_config(self) -> list[str]:
        """The users with a config (``/config/users``), by name."""

    def user_config(self, user: str) -> dict[str, str]:
        """The user's config, its SCRAM credentials among it (empty when it has none)."""

    def alter_user_config(self, user: str, config: dict[str, str]) -> None:
        """Replace it; every broker reads the user's credentials again, this one at once."""

    def group_config(self, group_id: str) -> dict[str, str]:
        """A group's stored configs (share groups', KIP-932; empty when it has none)."""

    def alter_group_config(self, group_id: str, configs: dict[str, str]) -> None:
        """Replace them; every broker reads them again."""


class CoordinatorTopic(Protocol):
    """A coordinator's internal topic: its name, the partition holding a key, creating it on
    first use (FindCoordinator)."""

    topic: str

    def partition_for(self, key: str) -> int: ...

    def create_topic(self) -> None: ...


class Transactions(CoordinatorTopic, Protocol):
    """What the handlers ask the transaction coordinator (see
    :class:`~broker_lite.coordinator.transaction.TransactionCoordinator`)."""

    def verify_produce(self, transactional_id: str, topic: str, partition: int,
                       records) -> ErrorCode: ...

    def handle_init_producer_id(self, transactional_id: str, timeout_ms: int,
                                expected: tuple[int, int] | None = None
                                ) -> InitProducerIdResult: ...

    def handle_add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                              partitions: Iterable[TopicPartition]) -> ErrorCode: ...

    def verify_partition(self, transactional_id: str, producer_id: int, producer_epoch: int,
                         partition: TopicPartition) -> ErrorCode: ...

    def handle_end_txn(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       committed: bool) -> ErrorCode: ...

    def handle_list_transactions(self, states: Iterable[str], producer_ids: Iterable[int],
                                 duration_ms: int = -1
                                 ) -> tuple[ErrorCode, list[str], list[tuple[str, int, str]]]:
        """(error, unknown state filters, matching transactions as (id, producer id, state))."""

    def handle_describe_transaction(self, transactional_id: str
                                    ) -> tuple[ErrorCode, TransactionDescription | None]: ...


class MarkerWriter(Protocol):
    """Transaction markers appended to the partitions led here
    (:class:`~broker_lite.coordinator.transaction.service.LocalMarkers`)."""

    replication_timeout_ms: int | None  # how long markers wait for the ISR (None: not at all)

    def append(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
               committed: bool, targets: Iterable[TopicPartition]
               ) -> tuple[dict[TopicPartition, ErrorCode], dict[TopicPartition, int]]:
        """Append a COMMIT or ABORT marker to each target led here: the error of each, and
        the offset the high watermark must reach for each marker appended."""

    def settle(self, producer_id: int, committed: bool,
               errors: Mapping[TopicPartition, ErrorCode]) -> None:
        """The appended markers are replicated where ``errors`` say NONE."""


class ProducerIds(Protocol):
    def generate(self) -> int:
        """A producer id unique in the cluster. Raises ``ProducerIdsUnavailableError`` while
        none can be had (retriable), ``ProducerIdsExhaustedError`` when none is left."""


class ControllerRequests(Protocol):
    """What the controller answers (:class:`~broker_lite.controller.controller.Controller`); only
    while ``active`` (this broker holds ``/controller``)."""

    active: bool

    def controlled_shutdown(self, broker_id: int, broker_epoch: int
                            ) -> tuple[ErrorCode, list[TopicPartition]]: ...

    def elect_leaders(self, partitions: list[TopicPartition] | None, election_type: int, *,
                      timeout_s: float = 60.0) -> dict[TopicPartition, Outcome]: ...

    def alter_reassignments(self, targets: dict[TopicPartition, tuple[int, ...] | None], *,
                            timeout_s: float = 60.0) -> dict[TopicPartition, Outcome]: ...

    def list_reassignments(self, partitions: list[TopicPartition] | None = None, *,
                           timeout_s: float = 60.0) -> dict[TopicPartition, Reassignment]:
        """Raises :class:`NotControllerError` once the role is lost."""


class ZkGroupOffsets(Protocol):
    """The committed offsets of ZooKeeper-based consumer groups
    (:class:`~broker_lite.zk.consumer_offsets.ZkConsumerOffsets`)."""

    def read(self, group: str, tp: TopicPartition) -> int | None:
        """The offset ``group`` committed for ``tp``, None when there is none."""

    def write(self, group: str, offsets: Mapping[TopicPartition, int]) -> None: ...


@dataclass(eq=False)
class HandlerServices:
    """The broker as its request handlers see it (the table in the module docstring)."""

    config: BrokerConfig
    logs: LogManager
    partitions: PartitionManager
    cluster: ClusterView
    admin: TopicAdmin
    groups: ConsumerGroupCoordinator
    transactions: Transactions
    markers: MarkerWriter
    producer_ids: ProducerIds
    zk_offsets: ZkGroupOffsets
    purgatory: Purgatory
    api_versions: list[dict]
    cluster_id: str | None = None
    authorizer: Authorizer | None = None
    controller: ControllerRequests | None = None
    share: ShareService | None = None  # share groups (KIP-932)
    features: Sequence[Feature] = ()  # the feature levels ApiVersions tells (.features)

    @property
    def broker_id(self) -> int:
        """This broker's id; -1 until it is known (a generated ``broker.id``)."""
        return self.partitions.broker_id

