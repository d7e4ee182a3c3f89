"""Topic administration through ZooKeeper, as Kafka's ``AdminZkClient`` does it.

These functions only write znodes; the controller and the replicas act on them:

* :func:`create_topic` writes ``/config/topics/[topic]`` and then ``/brokers/topics/[topic]``
  (the assignment, round robin over the live brokers); the controller elects the leaders.
* :func:`delete_topic` creates ``/admin/delete_topics/[topic]``; the controller deletes.
* :func:`add_partitions` rewrites ``/brokers/topics/[topic]`` with more partitions.
* :func:`set_topic_config` rewrites ``/config/topics/[topic]`` and announces the change with a
  sequential ``/config/changes/config_change_`` znode; :func:`set_broker_config` does the same
  for the dynamic configs of a broker, ``/config/brokers/[id]``, or of all of them,
  ``/config/brokers/<default>``.

:func:`plan_topic` and :func:`check_new_partitions` make the checks of Kafka's CreateTopics and
CreatePartitions requests (``ZkAdminManager``) before anything is written, in Kafka's order and
with its messages; :func:`create_topic` checks as Kafka's ``AdminZkClient.validateTopicCreate``.

Topic names follow Kafka's rules: 1 to 249 of ``[a-zA-Z0-9._-]``, not ``.`` or ``..``, and not
equal to an existing name once ``.`` and ``_`` are considered the same (metric names replace
``.`` with ``_``, so such topics would share metrics).

>>> validate_topic_name("events.v1")
>>> validate_topic_name("a/b")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
broker_lite.zk.errors.InvalidTopicError: topic name 'a/b' is illegal: it contains a character ...
"""

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.config.resolution import validate_topic_overrides

from .assignment import assign_replicas
from .errors import (
    ConflictingTopicSettingsError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    ReassignmentInProgressError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
)
from .layout import (
    TOPICS_PATH,
    ConfigEntityChangeNotificationSequenceZNode,
    ConfigEntityZNode,
    DeleteTopicsTopicZNode,
    PartitionState,
    TopicAssignment,
    TopicPartitionStateZNode,
    TopicZNode,
)
from .registration import live_broker_ids

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")


def validate_topic_name(name: str) -> None:
    """Raise :class:`InvalidTopicError` unless Kafka accepts ``name`` as a topic name."""
    if not name:
        raise InvalidTopicError("topic name is illegal: it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError(f"topic name cannot be '.' or '..', got {name!r}")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopicError(f"topic name is illegal: it can't be longer than "
                                f"{MAX_NAME_LENGTH} characters, got {len(name)}: {name!r}")
    if not _LEGAL.match(name):
        raise InvalidTopicError(f"topic name {name!r} is illegal: it contains a character other "
                                f"than ASCII alphanumerics, '.', '_' and '-'")


def _is_legal_name(name: str) -> bool:
    """Whether ``name`` is a legal topic name (an illegal one makes no znode path)."""
    try:
        validate_topic_name(name)
    except InvalidTopicError:
        return False
    return True


def _validate_config(config: Mapping[str, str]) -> dict[str, str]:
    """Topic overrides as strings, checked by the same parser the broker's logs use."""
    as_strings = {str(k): str(v) for k, v in config.items()}
    validate_topic_overrides(BrokerConfig(), as_strings)  # raises ConfigError naming a property
    return as_strings


def _write_config(client: KazooClient, topic: str, config: Mapping[str, str]) -> None:
    _write_entity_config(client, "topics", topic, config)


def _write_entity_config(client: KazooClient, entity_type: str, name: str,
                         config: Mapping[str, str]) -> None:
    path = ConfigEntityZNode.path(entity_type, name)
    data = ConfigEntityZNode.encode(config)
    try:
        client.set(path, data)
    except NoNodeError:
        try:
            client.create(path, data, makepath=True)
        except NodeExistsError:
            client.set(path, data)


def _check_assignment(assignment: Mapping[int, Sequence[int]],
                      first_partition: int) -> dict[int, tuple[int, ...]]:
    result = {int(p): tuple(replicas) for p, replicas in sorted(assignment.items())}
    if not result:
        raise InvalidReplicaAssignmentError("the replica assignment has no partitions")
    expected = list(range(first_partition, first_partition + len(result)))
    if list(result) != expected:
        raise InvalidReplicaAssignmentError(
            f"partitions must be numbered {expected[0] if expected else first_partition} onwards "
            f"without gaps, got {list(result)}")
    sizes = {len(replicas) for replicas in result.values()}
    if 0 in sizes or len(sizes) > 1:
        raise InvalidReplicaAssignmentError(
            f"every partition needs the same, non-zero number of replicas: {result}")
    for partition, replicas in result.items():
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"partition {partition} lists a broker twice: {list(replicas)}")
    return result


def _colliding_topic(client: KazooClient, name: str) -> str | None:
    """An existing topic whose name equals ``name`` once ``.`` and ``_`` are the same."""
    normalized = name.replace(".", "_")
    return next((existing for existing in client.get_children(TOPICS_PATH)
                 if existing != name and existing.replace(".", "_") == normalized), None)


def validate_topic_creation(client: KazooClient, name: str,
                            assignment: Mapping[int, Sequence[int]],
                            config: Mapping[str, str]) -> dict[str, str]:
    """Kafka's ``validateTopicCreate``: the checks a new topic passes before its znodes are
    written; its overrides as strings. Raises :class:`InvalidTopicError`,
    :class:`TopicExistsError` (also while the name is queued for deletion),
    :class:`InvalidReplicaAssignmentError` or ``ConfigError``."""
    validate_topic_name(name)
    if is_marked_for_deletion(client, name):
        raise TopicExistsError(f'Topic "{name}" is queued for deletion.')
    if client.exists(TopicZNode.path(name)) is not None:
        raise TopicExistsError(f'Topic "{name}" already exists.')
    colliding = _colliding_topic(client, name)
    if colliding is not None:
        raise InvalidTopicError(f"Topic '{name}' collides with existing topic: {colliding}")
    if len({len(replicas) for replicas in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError(
            "All partitions should have the same number of replicas")
    for replicas in assignment.values():
        if not replicas:
            raise InvalidReplicaAssignmentError("Every partition needs at least one replica")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate replica assignment found: {dict(assignment)}")
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentError(
            "partitions should be a consecutive 0-based integer sequence")
    return _validate_config(config)


def create_topic(client: KazooClient, name: str, partitions: int, replication_factor: int,
                 config: Mapping[str, str] | None = None, *,
                 replica_assignment: Mapping[int, Sequence[int]] | None = None,
                 start_index: int = -1) -> dict[int, tuple[int, ...]]:
    """Create a topic; returns its assignment (partition -> replicas, leader first).

    ``replica_assignment`` replaces the round robin (``partitions`` and ``replication_factor``
    must then agree with it); ``start_index`` fixes the round robin's first broker.
    Raises :class:`InvalidPartitionsError`, :class:`InvalidReplicationFactorError` (more
    replicas than live brokers), or an error of :func:`validate_topic_creation`.
    """
    if replica_assignment is None:
        assignment = assign_replicas(live_broker_ids(client), partitions, replication_factor,
                                     start_index=start_index)
    else:
        assignment = {int(p): tuple(replicas) for p, replicas in replica_assignment.items()}
    overrides = validate_topic_creation(client, name, assignment, config or {})
    if len(assignment) != partitions or len(assignment[0]) != replication_factor:
        raise InvalidReplicaAssignmentError(
            f"the assignment has {len(assignment)} partitions of {len(assignment[0])} "
            f"replicas, not {partitions} of {replication_factor}")
    _write_config(client, name, overrides)
    try:
        # every new topic gets its id, as since Kafka 2.8 (Fetch 13+ names topics by id)
        client.create(TopicZNode.path(name),
                      TopicZNode.encode(TopicAssignment(assignment, topic_id=uuid.uuid4())),
                      makepath=True)
    except NodeExistsError:
        raise TopicExistsError(f'Topic "{name}" already exists.') from None
    return dict(sorted(assignment.items()))


def delete_topic(client: KazooClient, name: str) -> None:
    """Queue the topic for deletion by the controller (``/admin/delete_topics/[topic]``)."""
    if client.exists(TopicZNode.path(name)) is None:
        raise UnknownTopicError(f"topic {name!r} does not exist")
    try:
        client.create(DeleteTopicsTopicZNode.path(name), DeleteTopicsTopicZNode.encode(),
                      makepath=True)
    except NodeExistsError:
        raise TopicAlreadyMarkedForDeletionError(
            f"topic {name!r} is already marked for deletion") from None


def add_partitions(client: KazooClient, name: str, partition_count: int, *,
                   replica_assignment: Mapping[int, Sequence[int]] | None = None
                   ) -> dict[int, tuple[int, ...]]:
    """Grow the topic to ``partition_count`` partitions; returns the new partitions' replicas.

    New partitions keep partition 0's replica count and continue its round robin (Kafka's start
    index: the first live broker with an id not below partition 0's leader).
    """
    path = TopicZNode.path(name)
    while True:
        try:
            data, stat = client.get(path)
        except NoNodeError:
            raise UnknownTopicError(f"topic {name!r} does not exist") from None
        if is_marked_for_deletion(client, name):
            raise TopicAlreadyMarkedForDeletionError(f"topic {name!r} is being deleted")
        current = TopicZNode.decode(data, path)
        existing = len(current.partitions)
        if partition_count <= existing:
            raise InvalidPartitionsError(f"topic {name!r} has {existing} partitions; the new "
                                         f"count {partition_count} must be larger")
        replication_factor = len(current.partitions[0])
        if replica_assignment is None:
            brokers = live_broker_ids(client)
            start = next((i for i, b in enumerate(brokers) if b >= current.partitions[0][0]), 0)
            added = assign_replicas(brokers, partition_count - existing, replication_factor,
                                    start_index=start, start_partition=existing)
        else:
            added = _check_assignment(replica_assignment, existing)
            if len(added) != partition_count - existing or any(
                    len(r) != replication_factor for r in added.values()):
                raise InvalidReplicaAssignmentError(
                    f"expected {partition_count - existing} new partitions of "
                    f"{replication_factor} replicas, got {added}")
        grown = TopicAssignment({**current.partitions, **added}, current.adding_replicas,
                                current.removing_replicas, current.topic_id)
        try:
            client.set(path, TopicZNode.encode(grown), version=stat.version)
        except BadVersionError:
            continue  # changed since we read it: decide again on the new assignment
        return added


def set_topic_config(client: KazooClient, name: str, config: Mapping[str, str]) -> None:
    """Replace the topic's config overrides and notify the brokers through ``/config/changes``."""
    if client.exists(TopicZNode.path(name)) is None:
        raise UnknownTopicError(f"topic {name!r} does not exist")
    _write_config(client, name, _validate_config(config))
    _notify_config_change(client, f"topics/{name}")


def _notify_config_change(client: KazooClient, entity_path: str) -> None:
    """Tell every broker that the config of ``entity_path`` (``topics/t``, ``brokers/1``)
    changed: a sequential ``/config/changes/config_change_`` znode (Kafka's
    ``createConfigChangeNotification``)."""
    client.create(ConfigEntityChangeNotificationSequenceZNode.PATH_PREFIX,
                  ConfigEntityChangeNotificationSequenceZNode.encode(entity_path),
                  sequence=True, makepath=True)


def set_broker_config(client: KazooClient, entity: str, config: Mapping[str, str]) -> None:
    """Replace the dynamic configs of a broker (``entity``: its id) or of every broker
    (:data:`~.layout.DEFAULT_ENTITY`) in ``/config/brokers/[entity]``, and notify the brokers
    (Kafka's ``AdminZkClient.changeBrokerConfig``). The values are written as given: the
    broker checks them (:mod:`broker_lite.config.dynamic`)."""
    _write_entity_config(client, "brokers", entity, {str(k): str(v) for k, v in config.items()})
    _notify_config_change(client, f"brokers/{entity}")


def get_broker_config(client: KazooClient, entity: str) -> dict[str, str]:
    """The dynamic configs of a broker or of every broker (empty without a znode)."""
    return _entity_config(client, "brokers", entity)


# -- the checks of CreateTopics and CreatePartitions requests ------------------------------------


@dataclass(frozen=True)
class TopicSpec:
    """A topic as a CreateTopics request asks for it: a partition count and replication factor
    (-1: the broker's ``num.partitions`` / ``default.replication.factor``), or an explicit
    assignment of replicas to partitions instead; and its config overrides (a None value is
    refused, as Kafka refuses it)."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignment: Sequence[tuple[int, Sequence[int]]] = ()
    configs: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicPlan:
    """What :func:`create_topic` is to write for a :class:`TopicSpec` that passed the checks."""

    assignment: dict[int, tuple[int, ...]]
    overrides: dict[str, str]

    @property
    def partitions(self) -> int:
        return len(self.assignment)

    @property
    def replication_factor(self) -> int:
        return len(self.assignment[0])


def plan_topic(client: KazooClient, spec: TopicSpec, *, default_partitions: int,
               default_replication_factor: int) -> TopicPlan:
    """The checks of a CreateTopics request's topic, in Kafka's order (``ZkAdminManager``),
    then :func:`validate_topic_creation`; raises what they raise, and
    :class:`ConflictingTopicSettingsError`."""
    name = spec.name
    nulls = [k for k, v in spec.configs.items() if v is None]
    if nulls:
        raise ConfigError(f"Null value not supported for topic configs: {', '.join(nulls)}")
    if _is_legal_name(name) and client.exists(TopicZNode.path(name)) is not None:
        raise TopicExistsError(f"Topic '{name}' already exists.")
    if spec.assignment:
        if spec.num_partitions != -1 or spec.replication_factor != -1:
            raise ConflictingTopicSettingsError(
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time.")
        assignment = {int(p): tuple(replicas) for p, replicas in spec.assignment}
        if len(assignment) != len(spec.assignment):
            raise InvalidReplicaAssignmentError(
                "partitions should be a consecutive 0-based integer sequence")
    else:
        partitions = default_partitions if spec.num_partitions == -1 else spec.num_partitions
        replication_factor = default_replication_factor if spec.replication_factor == -1 \
            else spec.replication_factor
        if partitions <= 0:
            raise InvalidPartitionsError("Number of partitions must be larger than 0.")
        brokers = live_broker_ids(client)
        _check_replication_factor(replication_factor, len(brokers))
        assignment = assign_replicas(brokers, partitions, replication_factor)
    # a config given without a value (null) sets no override, as the handler tests' admin has it
    given = {key: value for key, value in spec.configs.items() if value is not None}
    overrides = validate_topic_creation(client, name, assignment, given)
    return TopicPlan(assignment, overrides)


def _check_replication_factor(replication_factor: int, live_brokers: int) -> None:
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > live_brokers:
        raise InvalidReplicationFactorError(f"Replication factor: {replication_factor} larger "
                                            f"than available brokers: {live_brokers}.")


def check_new_partitions(client: KazooClient, name: str, count: int,
                         assignment: Sequence[Sequence[int]] | None = None
                         ) -> dict[int, tuple[int, ...]] | None:
    """The checks of a CreatePartitions request's topic, in Kafka's order and with its
    messages: grow ``name`` to ``count`` partitions, the new ones assigned ``assignment`` (one
    replica list per new partition) or by the round robin (None). The manual assignment by
    partition, or None. Raises :class:`TopicAlreadyMarkedForDeletionError`,
    :class:`UnknownTopicError`, :class:`ReassignmentInProgressError`,
    :class:`InvalidPartitionsError`, :class:`InvalidReplicationFactorError` or
    :class:`InvalidReplicaAssignmentError`."""
    if is_marked_for_deletion(client, name):
        raise TopicAlreadyMarkedForDeletionError("The topic is queued for deletion.")
    try:
        current = get_topic_assignment(client, name)
    except UnknownTopicError:
        raise UnknownTopicError(f"The topic '{name}' does not exist.") from None
    if current.adding_replicas or current.removing_replicas:
        raise ReassignmentInProgressError(
            f"A partition reassignment is in progress for the topic '{name}'.")
    existing = len(current.partitions)
    if count < existing:
        raise InvalidPartitionsError(f"Topic currently has {existing} partitions, which is "
                                     f"higher than the requested {count}.")
    if count == existing:
        raise InvalidPartitionsError(f"Topic already has {existing} partitions.")
    replication_factor = len(current.partitions[min(current.partitions)])
    brokers = live_broker_ids(client)
    if assignment is None:
        _check_replication_factor(replication_factor, len(brokers))
        return None
    added = [tuple(replicas) for replicas in assignment]
    unknown = sorted({b for replicas in added for b in replicas} - set(brokers))
    if unknown:
        raise InvalidReplicaAssignmentError(f"Unknown broker(s) in replica assignment: "
                                            f"{', '.join(map(str, unknown))}.")
    if len(added) != count - existing:
        raise InvalidReplicaAssignmentError(
            f"Increasing the number of partitions by {count - existing} but {len(added)} "
            f"assignments provided.")
    by_partition = {existing + i: replicas for i, replicas in enumerate(added)}
    odd = {p: r for p, r in by_partition.items() if len(r) != replication_factor}
    if odd:
        raise InvalidReplicaAssignmentError(
            f"Inconsistent replication factor between partitions, partition 0 has "
            f"{replication_factor} while partitions {list(odd)} have replication factors "
            f"{[len(r) for r in odd.values()]}, respectively.")
    for partition, replicas in by_partition.items():
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate brokers not allowed in replica assignment: "
                f"{', '.join(map(str, replicas))} for partition id {partition}.")
    return by_partition


# -- reading ------------------------------------------------------------------------------------


def is_marked_for_deletion(client: KazooClient, name: str) -> bool:
    """``/admin/delete_topics/[topic]`` exists: the controller has yet to delete the topic."""
    return client.exists(DeleteTopicsTopicZNode.path(name)) is not None


def list_topics(client: KazooClient) -> list[str]:
    return sorted(client.get_children(TOPICS_PATH))


def get_topic_assignment(client: KazooClient, name: str) -> TopicAssignment:
    path = TopicZNode.path(name)
    try:
        return TopicZNode.decode(client.get(path)[0], path)
    except NoNodeError:
        raise UnknownTopicError(f"topic {name!r} does not exist") from None


def get_topic_config(client: KazooClient, name: str) -> dict[str, str]:
    """The topic's overrides (empty without a ``/config/topics/[topic]`` znode)."""
    return _entity_config(client, "topics", name)


def _entity_config(client: KazooClient, entity_type: str, name: str) -> dict[str, str]:
    path = ConfigEntityZNode.path(entity_type, name)
    try:
        return ConfigEntityZNode.decode(client.get(path)[0], path)
    except NoNodeError:
        return {}


def get_partition_state(client: KazooClient, name: str, partition: int) -> PartitionState | None:
    path = TopicPartitionStateZNode.path(name, partition)
    try:
        return TopicPartitionStateZNode.decode(client.get(path)[0], path)
    except NoNodeError:
        return None
