"""Request handlers without sockets or ZooKeeper: a broker's services built from real local
pieces (the logs in a temporary directory, the partition manager, the group coordinator on a
manual timer, the purgatory, the local marker writer) and small fakes of what reaches ZooKeeper
(the cluster view, the topic admin, the transaction coordinator, the producer ids, the
offsets of ZooKeeper-based groups). Dynamic broker configs the fake admin stores are put in
force as a broker does on their notification.

Requests go through the protocol codec both ways, as the dispatcher passes them: a body is
encoded at the version given and decoded again (so it has every field of that version, with
its default when the test leaves it out), and the response must encode at that version.

Requests come from ``User:ANONYMOUS`` unless a call names another principal (the network layer
puts the authenticated one there); with :meth:`Harness.acls` the broker decides by ACLs the
test grants (Kafka's AclAuthorizer's decisions, without ZooKeeper).
"""

import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.broker import BrokerConfig
from broker_lite.coordinator import GroupConfig, OffsetConfig
from broker_lite.coordinator.common.internal_topic import leader_log_of
from broker_lite.coordinator.common.timer import ManualTimer
from broker_lite.coordinator.consumer.config import ConsumerGroupConfig
from broker_lite.coordinator.consumer.coordinator import ConsumerGroupCoordinator
from broker_lite.coordinator.consumer.service import TopicsOfCluster
from broker_lite.coordinator.group.offsets_topic import OFFSETS_TOPIC
from broker_lite.coordinator.transaction.coordinator import InitProducerIdResult
from broker_lite.coordinator.transaction.service import LocalMarkers
from broker_lite.log.manager import LogManager
from broker_lite.protocol import (
    ErrorCode,
    encode_request,
    encode_response,
    parse_request,
)
from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.replication.partition_manager import PartitionManager
from broker_lite.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
)
from broker_lite.server.apis import handlers
from broker_lite.server.authorizer.acl_authorizer import AclDeleteResult, AclError
from broker_lite.server.authorizer.cache import AclCache, VersionedAcls
from broker_lite.server.config_changes import DynamicBrokerConfigs
from broker_lite.server.dispatcher import RESPONDS_LATER, RequestContext, supported_versions
from broker_lite.server.features import features
from broker_lite.server.metadata import BrokerInfo, PartitionInfo, TopicInfo
from broker_lite.server.network import CloseConnection
from broker_lite.server.network.authenticator import ANONYMOUS
from broker_lite.server.purgatory import Purgatory
from broker_lite.server.services import HandlerServices
from broker_lite.zk.admin import TopicPlan, TopicSpec
from broker_lite.zk.layout import PartitionState
from broker_lite.zk.testing import wait_until

BROKER_ID = 1  # this broker
OTHER_BROKER = 2
CLUSTER_ID = "handler-tests"
BASE_MS = 1_700_000_000_000
OFFSETS_PARTITIONS = 2  # partition 0 is led here, partition 1 by the other broker
ANSWER_TIMEOUT_S = 60  # longest a request answered later is waited for


class FakeCluster:
    """A :class:`~broker_lite.server.services.ClusterView` of topics the test declares."""

    def __init__(self):
        self.broker_list = [BrokerInfo(BROKER_ID, "127.0.0.1", 9092, None),
                            BrokerInfo(OTHER_BROKER, "127.0.0.1", 9093, "rack-b")]
        self.controller = BROKER_ID
        self.topics: dict[str, TopicInfo] = {}

    def add(self, name: str, states: Sequence[PartitionState | None]) -> TopicInfo:
        partitions = [PartitionInfo(p, (state.leader,) if state else (BROKER_ID,), state)
                      for p, state in enumerate(states)]
        info = self.topics[name] = TopicInfo(name, uuid.uuid4(), partitions)
        return info

    def brokers(self, listener: str | None = None) -> list[BrokerInfo]:
        return list(self.broker_list)

    def controller_id(self) -> int:
        return self.controller

    def topic_names(self) -> list[str]:
        return sorted(self.topics)

    def topic(self, name: str) -> TopicInfo | None:
        return self.topics.get(name)

    def partitions(self, name: str) -> list[PartitionInfo] | None:
        info = self.topics.get(name)
        return info.partitions if info is not None else None

    def partition_count(self, name: str) -> int | None:
        info = self.topics.get(name)
        return len(info.partitions) if info is not None else None

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        return self.topics[topic].partitions[partition].state

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return next((n for n, info in self.topics.items() if info.topic_id == topic_id), None)


class FakeAdmin:
    """A :class:`~broker_lite.server.services.TopicAdmin` over a :class:`FakeCluster`: topics
    it creates are led by the other broker (so they are ready at once); it raises ``refusal``
    when one is set."""

    def __init__(self, cluster: FakeCluster):
        self.cluster = cluster
        self.created: list[TopicSpec] = []
        self.configs: dict[str, dict[str, str]] = {}
        self.deleted: list[str] = []
        self.refusal: Exception | None = None
        self.broker_configs: dict[str, dict[str, str]] = {}  # entity -> dynamic configs
        self.on_broker_config_changed: Callable[[], object] | None = None
        self.user_configs: dict[str, dict[str, str]] = {}
        self.group_configs: dict[str, dict[str, str]] = {}  # group -> its configs

    def _refuse(self) -> None:
        if self.refusal is not None:
            raise self.refusal

    def create_topic(self, spec: TopicSpec, *, validate_only: bool = False) -> TopicPlan:
        self._refuse()
        partitions = 1 if spec.num_partitions == -1 else spec.num_partitions
        plan = TopicPlan({p: (OTHER_BROKER,) for p in range(partitions)},
                         {k: v for k, v in spec.configs.items() if v is not None})
        if not validate_only:
            self.created.append(spec)
            self.configs[spec.name] = plan.overrides
            self.cluster.add(spec.name, [PartitionState(OTHER_BROKER, 0, (OTHER_BROKER,), 1)]
                             * partitions)
        return plan

    def delete_topic(self, name: str) -> None:
        self._refuse()
        self.deleted.append(name)
        del self.cluster.topics[name]

    def is_marked_for_deletion(self, name: str) -> bool:
        return False

    def create_partitions(self, name: str, count: int,
                          assignment: Sequence[Sequence[int]] | None = None, *,
                          validate_only: bool = False) -> list[int]:
        """Grown as create_topic creates: the new partitions led by the other broker."""
        self._refuse()
        info = self.cluster.topics[name]
        new = list(range(len(info.partitions), count))
        if not validate_only:
            states = [p.state for p in info.partitions] + \
                [PartitionState(OTHER_BROKER, 0, (OTHER_BROKER,), 1)] * len(new)
            self.cluster.add(name, states)
        return new

    def topic_config(self, name: str) -> dict[str, str]:
        return dict(self.configs.get(name, {}))

    def alter_topic_config(self, name: str, overrides: dict[str, str]) -> None:
        self._refuse()
        self.configs[name] = dict(overrides)

    def broker_config(self, entity: str) -> dict[str, str]:
        return dict(self.broker_configs.get(entity, {}))

    def alter_broker_config(self, entity: str, configs: dict[str, str]) -> None:
        """Stored, and applied to the broker's config as the broker does on a notification."""
        self._refuse()
        self.broker_configs[entity] = dict(configs)
        if self.on_broker_config_changed is not None:
            self.on_broker_config_changed()

    def users_with_config(self) -> list[str]:
        return sorted(self.user_configs)

    def user_config(self, user: str) -> dict[str, str]:
        return dict(self.user_configs.get(user, {}))

    def alter_user_config(self, user: str, config: dict[str, str]) -> None:
        self._refuse()
        self.user_configs[user] = dict(config)

    def group_config(self, group_id: str) -> dict[str, str]:
        return dict(self.group_configs.get(group_id, {}))

    def alter_group_config(self, group_id: str, configs: dict[str, str]) -> None:
        self._refuse()
        self.group_configs[group_id] = dict(configs)


class FakeTransactions:
    """The transaction coordinator as Produce and InitProducerId see it: ``verify_produce``
    answers ``produce_error``; ``handle_init_producer_id`` answers ``init_result``."""

    topic = "__transaction_state"

    def __init__(self):
        self.produce_error = ErrorCode.NONE
        self.verified: list[tuple] = []
        self.init_result = InitProducerIdResult(ErrorCode.NONE, 4000, 0)
        self.topics_created = 0
        self.calls = []
        self.transactions = {}

    def partition_for(self, key: str) -> int:
        return 0

    def create_topic(self) -> None:
        self.topics_created += 1

    def verify_produce(self, transactional_id, topic, partition, records) -> ErrorCode:
        self.verified.append((transactional_id, topic, partition))
        return self.produce_error

    def handle_init_producer_id(self, transactional_id, timeout_ms, expected=None):
        return self.init_result

    # what the transaction APIs ask: every call recorded, answered NONE; ``transactions`` are
    # the open ones, {transactional id: TransactionDescription}

    calls: list[tuple]
    transactions: dict

    def verify_partition(self, transactional_id, producer_id, epoch, partition) -> ErrorCode:
        self.calls.append(("verify", transactional_id, partition))
        return ErrorCode.NONE

    def handle_add_partitions(self, transactional_id, producer_id, epoch, partitions):
        self.calls.append(("add", transactional_id, tuple(partitions)))
        return ErrorCode.NONE

    def handle_end_txn(self, transactional_id, producer_id, epoch, committed):
        self.calls.append(("end", transactional_id, committed))
        return ErrorCode.NONE

    def handle_list_transactions(self, states, producer_ids, duration_ms=-1):
        return ErrorCode.NONE, [], sorted((t.transactional_id, t.producer_id,
                                           t.state.kafka_name)
                                          for t in self.transactions.values())

    def handle_describe_transaction(self, transactional_id):
        found = self.transactions.get(transactional_id)
        return (ErrorCode.NONE, found) if found else (ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, None)


class FakeProducerIds:
    """Consecutive producer ids from 1000, or ``failure`` raised."""

    def __init__(self):
        self.next_id = 1000
        self.failure: Exception | None = None

    def generate(self) -> int:
        if self.failure is not None:
            raise self.failure
        self.next_id += 1
        return self.next_id - 1


class FakeZkOffsets:
    """The committed offsets of ZooKeeper-based groups, {(group, topic partition): offset};
    ``failure`` raised when set, as a lost ZooKeeper session raises."""

    def __init__(self):
        self.offsets: dict[tuple[str, TopicPartition], int] = {}
        self.failure: Exception | None = None

    def read(self, group: str, tp: TopicPartition) -> int | None:
        if self.failure is not None:
            raise self.failure
        return self.offsets.get((group, tp))

    def write(self, group: str, offsets) -> None:
        if self.failure is not None:
            raise self.failure
        self.offsets.update({(group, tp): offset for tp, offset in offsets.items()})


class CachedAcls(AclCache):
    """An :class:`~broker_lite.server.authorizer.Authorizer` over the ACLs a test grants, kept
    here (no ZooKeeper): AclAuthorizer's decisions; the ACL APIs read and change them."""

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return self.bindings(binding_filter)

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclError | None]:
        for binding in bindings:
            current = self.get(binding.pattern)
            entries = current.entries if current is not None else frozenset()
            self.update(binding.pattern, VersionedAcls(entries | {binding.entry}))
        return [None] * len(bindings)

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        results = [AclDeleteResult() for _ in filters]
        for result, binding_filter in zip(results, filters, strict=True):
            for binding in self.bindings(binding_filter):
                current = self.get(binding.pattern)
                if current is None or binding.entry not in current.entries:
                    continue  # deleted for an earlier filter
                self.update(binding.pattern, VersionedAcls(current.entries - {binding.entry}))
                result.deleted.append((binding, None))
        return results


class Answer:
    """The way back of a request handled here (a :class:`~broker_lite.server.dispatcher.
    Responder`): the response body given later, or the connection closed."""

    def __init__(self):
        self._future: Future = Future()

    def respond(self, body: dict | None) -> None:
        self._future.set_result(body)

    def close_connection(self, reason: str) -> None:
        self._future.set_exception(CloseConnection(reason))

    def result(self, timeout_s: float) -> dict | None:
        return self._future.result(timeout=timeout_s)


class Harness:
    """The services of broker 1, and requests to its handlers."""

    def __init__(self, tmp_path: Path, properties: dict[str, str] | None = None):
        self.timer = ManualTimer()
        self.config = BrokerConfig({"broker.id": str(BROKER_ID), "log.dirs": str(tmp_path),
                                    **(properties or {})})
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.logs = LogManager(self.config, clock=self.clock)
        self.partitions = PartitionManager(self.logs,
                                           lambda topic: self.topic_configs.get(topic, {}),
                                           BROKER_ID)
        self.cluster = FakeCluster()
        self.purgatory = Purgatory()
        self.groups = ConsumerGroupCoordinator(
            GroupConfig(min_session_timeout_ms=100, max_session_timeout_ms=30_000,
                        initial_rebalance_delay_ms=3000),
            OffsetConfig(num_partitions=OFFSETS_PARTITIONS),
            leader_log_of(self.partitions, OFFSETS_TOPIC),
            partition_count=lambda: OFFSETS_PARTITIONS, create_topic=self._create_offsets_topic,
            timer=self.timer, clock_ms=self.clock,
            on_appended=self.purgatory.notify_appended, topics=TopicsOfCluster(self.cluster),
            consumer_config=ConsumerGroupConfig(
                min_session_timeout_ms=1000, session_timeout_ms=1000,
                min_heartbeat_interval_ms=100, heartbeat_interval_ms=100, max_size=2)).start()
        self.offsets_topic_creations = 0
        self.acl_cache: CachedAcls | None = None  # what acls() set up
        self.partitions.add_leadership_listener(OFFSETS_TOPIC, self.groups)
        admin = FakeAdmin(self.cluster)
        self.dynamic_configs = DynamicBrokerConfigs(self.config, admin.broker_config,
                                                    lambda: BROKER_ID, self.logs)
        admin.on_broker_config_changed = self.dynamic_configs.reload
        self.services = HandlerServices(
            config=self.config, logs=self.logs, partitions=self.partitions, cluster=self.cluster,
            admin=admin, groups=self.groups, transactions=FakeTransactions(),
            markers=LocalMarkers(self.partitions, self.groups.on_transaction_completed, self.clock,
                                 self.purgatory.notify_appended),
            producer_ids=FakeProducerIds(), zk_offsets=FakeZkOffsets(), purgatory=self.purgatory,
            api_versions=supported_versions(handlers()), cluster_id=CLUSTER_ID,
            features=features(self.config))
        self.handlers = handlers()

    def _create_offsets_topic(self) -> None:
        self.offsets_topic_creations += 1

    def clock(self) -> int:
        return BASE_MS + int(self.timer.now_ms)

    def close(self) -> None:
        self.purgatory.stop()
        self.groups.shutdown()
        self.logs.shutdown()

    # -- the cluster --------------------------------------------------------------------------

    def topic(self, name: str, leaders: list[int], *, epoch: int = 0,
              config: dict[str, str] | None = None,
              followers: tuple[int, ...] = ()) -> TopicInfo:
        """A topic whose partition ``p`` is led by ``leaders[p]`` and followed by
        ``followers`` (out of the ISR); this broker holds (and so serves) those it leads."""
        self.topic_configs[name] = dict(config or {})
        states = [PartitionState(leader, epoch, (leader,), 1) for leader in leaders]
        info = self.cluster.add(name, states)
        for partition, state in enumerate(states):
            if state.leader == BROKER_ID:
                self.partitions.on_partition_assigned(name, partition, state,
                                                      [BROKER_ID, *followers])
        return info

    def log(self, topic: str, partition: int = 0):
        return self.logs.get(topic, partition)

    def offsets_topic(self) -> None:
        """``__consumer_offsets`` with partition 0 led here (its groups loaded) and partition 1
        led by the other broker."""
        self.topic(OFFSETS_TOPIC, [BROKER_ID, OTHER_BROKER],
                   config={"cleanup.policy": "compact"})
        wait_until(lambda: self.groups.manager.owned_partitions() == {0},
                   message="__consumer_offsets-0 loaded")

    def group_led_here(self) -> str:
        """A group id whose ``__consumer_offsets`` partition (0) this broker leads."""
        return next(g for g in (f"group-{i}" for i in range(20))
                    if self.groups.partition_for(g) == 0)

    # -- authorization ------------------------------------------------------------------------

    def acls(self, **settings) -> AclCache:
        """Decide requests by ACLs from now on (none yet: everything denied); ``settings`` are
        ``super_users`` and ``allow_everyone_if_no_acl_found``."""
        self.services.authorizer = self.acl_cache = CachedAcls(**settings)
        return self.acl_cache

    def grant(self, principal: str, operation: AclOperation, resource_type: ResourceType,
              name: str = "kafka-cluster", pattern_type: PatternType = PatternType.LITERAL,
              permission: AclPermissionType = AclPermissionType.ALLOW, host: str = "*") -> None:
        """Add one ACL (after :meth:`acls`)."""
        cache = self.acl_cache
        assert cache is not None, "acls() first"
        pattern = ResourcePattern(resource_type, name, pattern_type)
        current = cache.get(pattern)
        entries = current.entries if current else frozenset()
        cache.update(pattern, VersionedAcls(
            entries | {AccessControlEntry(principal, host, operation, permission)}))

    # -- requests -----------------------------------------------------------------------------

    def call(self, api_key: int, version: int, body: dict, *,
             principal: str = ANONYMOUS) -> dict | None:
        """Handle one request from ``principal`` as the dispatcher would; the response body
        (None: none sent), waited for when the handler answers later (raising
        ``CloseConnection`` when the answer is to close the connection)."""
        header, decoded = parse_request(memoryview(
            encode_request(api_key, version, 7, "handler-tests", body))[4:])
        handler = self.handlers[api_key]
        assert handler.min_version <= version <= handler.max_version
        answer = Answer()
        response: Any = handler.handle(RequestContext(header, self.services, "/127.0.0.1", answer,
                                                 principal=principal), decoded)
        if response is RESPONDS_LATER:
            response = answer.result(ANSWER_TIMEOUT_S)
        if response is not None:
            encode_response(api_key, version, 7, response)  # it must encode at this version
        return response

    def call_later(self, api_key: int, version: int, body: dict, **options) -> Future:
        """Handle a request that waits (a long poll, a JoinGroup) on a thread of its own."""
        future: Future = Future()

        def run() -> None:
            try:
                future.set_result(self.call(api_key, version, body, **options))
            except BaseException as exc:  # handed to the test
                future.set_exception(exc)

        threading.Thread(target=run, daemon=True).start()
        return future


def records_of(region) -> bytes:
    """The bytes of a Fetch response's records (a file region, or empty bytes)."""
    return region.read() if hasattr(region, "read") else bytes(region)
