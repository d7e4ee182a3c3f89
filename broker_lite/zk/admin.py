"""Topic administration through ZooKeeper, as Kafka's ``AdminZkClient`` does it.

These functions only write znodes; the controller and the replicas act on them:

* :func:`create_topic` writes ``/config/topics/[topic]`` and then ``/brokers/topics/[topic]``
  (the assignment, round robin over the live brokers); the controller elects the leaders.
* :func:`delete_topic` creates ``/admin/delete_topics/[topic]``; the controller deletes.
* :func:`add_partitions` rewrites ``/brokers/topics/[topic]`` with more partitions.
* :func:`set_topic_config` rewrites ``/config/topics/[topic]`` and announces the change with a
  sequential ``/config/changes/config_change_`` znode.

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

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from ..config import BrokerConfig
from .assignment import assign_replicas
from .errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
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


def _validate_config(config: Mapping[str, str]) -> dict[str, str]:
    """Topic overrides as strings, checked by the same parser the broker's logs use."""
    as_strings = {str(k): str(v) for k, v in config.items()}
    BrokerConfig().log_config(as_strings)  # raises ConfigError naming a bad property
    return as_strings


def _write_config(client: KazooClient, topic: str, config: Mapping[str, str]) -> None:
    path = ConfigEntityZNode.path("topics", topic)
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


def create_topic(client: KazooClient, name: str, partitions: int, replication_factor: int,
                 config: Mapping[str, str] | None = None, *,
                 replica_assignment: Mapping[int, Sequence[int]] | None = None,
                 start_index: int = -1) -> dict[int, tuple[int, ...]]:
    """Create a topic; returns its assignment (partition -> replicas, leader first).

    ``replica_assignment`` replaces the round robin (``partitions`` and ``replication_factor``
    must then agree with it); ``start_index`` fixes the round robin's first broker.
    Raises :class:`InvalidTopicError`, :class:`TopicExistsError`,
    :class:`InvalidPartitionsError`, :class:`InvalidReplicationFactorError` (more replicas than
    live brokers), :class:`InvalidReplicaAssignmentError` or ``ConfigError``.
    """
    validate_topic_name(name)
    if client.exists(DeleteTopicsTopicZNode.path(name)) is not None:
        raise TopicExistsError(f"topic {name!r} is marked for deletion")
    if client.exists(TopicZNode.path(name)) is not None:
        raise TopicExistsError(f"topic {name!r} already exists")
    normalized = name.replace(".", "_")
    for existing in client.get_children(TOPICS_PATH):
        if existing != name and existing.replace(".", "_") == normalized:
            raise InvalidTopicError(f"topic {name!r} collides with existing topic {existing!r} "
                                    f"('.' and '_' are the same in metric names)")
    if replica_assignment is None:
        assignment = assign_replicas(live_broker_ids(client), partitions, replication_factor,
                                     start_index=start_index)
    else:
        assignment = _check_assignment(replica_assignment, 0)
        if len(assignment) != partitions or len(assignment[0]) != replication_factor:
            raise InvalidReplicaAssignmentError(
                f"the assignment has {len(assignment)} partitions of {len(assignment[0])} "
                f"replicas, not {partitions} of {replication_factor}")
    overrides = _validate_config(config or {})
    _write_config(client, name, overrides)
    try:
        # every new topic gets its id, as since Kafka 2.8 (Fetch 13+ names topics by id)
        client.create(TopicZNode.path(name),
                      TopicZNode.encode(TopicAssignment(assignment, topic_id=uuid.uuid4())),
                      makepath=True)
    except NodeExistsError:
        raise TopicExistsError(f"topic {name!r} already exists") from None
    return assignment


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
        if client.exists(DeleteTopicsTopicZNode.path(name)) is not None:
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
    client.create(ConfigEntityChangeNotificationSequenceZNode.PATH_PREFIX,
                  ConfigEntityChangeNotificationSequenceZNode.encode(f"topics/{name}"),
                  sequence=True, makepath=True)


# -- reading ------------------------------------------------------------------------------------


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
    path = ConfigEntityZNode.path("topics", name)
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
