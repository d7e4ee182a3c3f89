"""Kafka 2.x's ZooKeeper layout: one definition per znode, each with its path, encoder and decoder.

The tree (``[x]`` is a variable name, ``->`` the data; ``E`` ephemeral, ``S`` sequential)::

    /cluster/id                                  -> {"version":"1","id":"<22 chars>"}
    /controller                              E   -> {"version":1,"brokerid":1,"timestamp":"<ms>"}
    /controller_epoch                            -> 1
    /brokers/ids/[id]                        E   -> {"listener_security_protocol_map":{...},
                                                     "endpoints":[...],"jmx_port":-1,"host":"h",
                                                     "timestamp":"<ms>","port":9092,"version":4}
    /brokers/seqid                               (its version numbers generated broker ids)
    /brokers/topics/[topic]                      -> {"version":3,"topic_id":"<22 chars>",
                                                     "partitions":{"0":[1,2]},
                                                     "adding_replicas":{},"removing_replicas":{}}
    /brokers/topics/[topic]/partitions/[p]/state -> {"controller_epoch":1,"leader":1,"version":1,
                                                     "leader_epoch":0,"isr":[1]}
    /config/topics/[topic]                       -> {"version":1,
                                                     "config":{"cleanup.policy":"compact"}}
    /config/brokers/[id]                         -> {"version":1,
                                                     "config":{"log.retention.ms":"60000"}}
    /config/brokers/<default>                    (the same, for every broker)
    /config/users/[sanitized user]               -> {"version":1,"config":{"SCRAM-SHA-256":
                                                     "salt=..,stored_key=..,server_key=..,
                                                     iterations=4096"}} (see .users)
    /config/changes/config_change_[seq]      S   -> {"version":2,"entity_path":"topics/<topic>"}
                                                    ("brokers/<id>", "brokers/<default>",
                                                    "users/<sanitized user>")
    /admin/delete_topics/[topic]                 (no data)
    /admin/reassign_partitions                   -> {"version":1,"partitions":[{"topic":"t",
                                                     "partition":0,"replicas":[1,2]}]}
    /admin/preferred_replica_election            -> {"version":1,"partitions":[{"topic":"t",
                                                     "partition":0}]}
    /isr_change_notification/isr_change_[seq] S  -> {"version":1,"partitions":[{"topic":"t",
                                                     "partition":0}]}
    /latest_producer_id_block                    -> {"version":1,"broker":1,"block_start":"0",
                                                     "block_end":"999"}
    /consumers/[group]/ids/[consumer_id]     E   -> {"version":1,"subscription":{"topic":1},
                                                     "pattern":"static","timestamp":"<ms>"}
    /consumers/[group]/owners/[topic]/[p]    E   -> <consumer thread id>
    /consumers/[group]/offsets/[topic]/[p]       -> <offset>
    /kafka-acl/[ResourceType]/[name]             -> {"version":1,"acls":[{"principal":"User:alice",
                                                     "permissionType":"Allow","operation":"Read",
                                                     "host":"*"}]}
    /kafka-acl-extended/prefixed/[ResourceType]/[name]  (the same, for PREFIXED patterns)
    /kafka-acl-changes/acl_changes_[seq]     S   -> TOPIC:events  (a LITERAL pattern changed)
    /kafka-acl-extended-changes/acl_changes_[seq]
                                             S   -> {"version":1,"resourceType":"TOPIC",
                                                     "name":"events-","patternType":"PREFIXED"}

JSON is written as Kafka's Jackson writes it: compact, UTF-8, keys in the order Kafka's Scala maps
put them (the orders above), so the bytes match a real broker's. Decoders accept any key order and
raise :class:`MalformedZnodeError` naming the path when the data does not fit.

>>> TopicPartitionStateZNode.encode(PartitionState(leader=1, leader_epoch=0, isr=(1,),
...                                                controller_epoch=1))
b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}'
>>> TopicPartitionStateZNode.path("events", 0)
'/brokers/topics/events/partitions/0/state'
"""

import base64
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from broker_lite.protocol.enums import PatternType, ResourceType
from broker_lite.security.acl import (
    AccessControlEntry,
    InvalidAclError,
    ResourcePattern,
    operation_name,
    parse_operation,
    parse_permission_type,
    parse_principal,
    parse_resource_type,
    permission_type_name,
    resource_type_name,
)

from .endpoints import EndPoint, parse_endpoints
from .errors import MalformedZnodeError


def _dump(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _load(data: bytes | None, path: str) -> dict:
    if not data:
        raise MalformedZnodeError(path, "no data")
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedZnodeError(path, f"not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise MalformedZnodeError(path, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _get(obj: Mapping, key: str, kind: type | tuple[type, ...], path: str):
    if key not in obj:
        raise MalformedZnodeError(path, f"missing field {key!r}")
    value = obj[key]
    # bool is an int in Python but never a number in these payloads
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _tuple(kind)):
        raise MalformedZnodeError(path, f"field {key!r} has the wrong type: {value!r}")
    return value


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _int(obj: Mapping, key: str, path: str) -> int:
    return _get(obj, key, int, path)


def _int_string(obj: Mapping, key: str, path: str) -> int:
    """A number Kafka writes as a JSON string (timestamps, producer id bounds)."""
    value = _get(obj, key, (str, int), path)
    try:
        return int(value)
    except ValueError:
        raise MalformedZnodeError(path, f"field {key!r} is not a number: {value!r}") from None


def _int_list(value: object, what: str, path: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise MalformedZnodeError(path, f"{what} must be a list of integers: {value!r}")
    return tuple(value)


def _partition_map(value: object, what: str, path: str) -> dict[int, tuple[int, ...]]:
    if not isinstance(value, dict):
        raise MalformedZnodeError(path, f"{what} must be an object: {value!r}")
    result = {}
    for key, replicas in value.items():
        try:
            partition = int(key)
        except ValueError:
            raise MalformedZnodeError(path, f"{what} key {key!r} is not a partition") from None
        result[partition] = _int_list(replicas, f"{what}[{key}]", path)
    return dict(sorted(result.items()))


def _decimal(data: bytes | None, path: str) -> int:
    try:
        return int((data or b"").decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise MalformedZnodeError(path, f"expected a decimal number, got {data!r}") from None


# -- paths without data of their own -------------------------------------------------------------

BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
CONSUMERS_PATH = "/consumers"
CONFIG_CHANGES_PATH = "/config/changes"
#: The entity name of the configs every broker (or client, user) shares: Kafka's
#: ``ZooKeeperInternals.DEFAULT_STRING``.
DEFAULT_ENTITY = "<default>"
DELETE_TOPICS_PATH = "/admin/delete_topics"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"
LOG_DIR_EVENT_NOTIFICATION_PATH = "/log_dir_event_notification"

# Kafka's ConfigType.all: the entity types with a /config/[type] directory.
CONFIG_ENTITY_TYPES = ("topics", "clients", "users", "brokers")


def config_entity_type_path(entity_type: str) -> str:
    return f"/config/{entity_type}"


def topic_partitions_path(topic: str) -> str:
    return f"{TopicZNode.path(topic)}/partitions"


def topic_partition_path(topic: str, partition: int) -> str:
    return f"{topic_partitions_path(topic)}/{partition}"


def consumer_ids_path(group: str) -> str:
    """The members of a ZooKeeper-based consumer group (children: ``ConsumerIdZNode``)."""
    return f"{CONSUMERS_PATH}/{group}/ids"


def consumer_owners_path(group: str, topic: str) -> str:
    """The owned partitions of one topic in a group (children: ``ConsumerOwnerZNode``)."""
    return f"{CONSUMERS_PATH}/{group}/owners/{topic}"


# -- /cluster/id ---------------------------------------------------------------------------------


class ClusterIdZNode:
    """The cluster id, written once by the first broker: 16 random bytes, URL-safe base64."""

    PATH = "/cluster/id"

    @staticmethod
    def path() -> str:
        return ClusterIdZNode.PATH

    @staticmethod
    def encode(cluster_id: str) -> bytes:
        return _dump({"version": "1", "id": cluster_id})

    @staticmethod
    def decode(data: bytes | None, path: str = PATH) -> str:
        return _get(_load(data, path), "id", str, path)


# -- /controller, /controller_epoch -------------------------------------------------------------


@dataclass(frozen=True)
class ControllerInfo:
    broker_id: int
    timestamp_ms: int


class ControllerZNode:
    """Ephemeral: the broker acting as controller, created by the winner of the election."""

    PATH = "/controller"

    @staticmethod
    def path() -> str:
        return ControllerZNode.PATH

    @staticmethod
    def encode(info: ControllerInfo) -> bytes:
        return _dump({"version": 1, "brokerid": info.broker_id,
                      "timestamp": str(info.timestamp_ms)})

    @staticmethod
    def decode(data: bytes | None, path: str = PATH) -> ControllerInfo:
        obj = _load(data, path)
        return ControllerInfo(_int(obj, "brokerid", path), _int_string(obj, "timestamp", path))


class ControllerEpochZNode:
    """How many times a controller was elected, as a plain decimal string."""

    PATH = "/controller_epoch"

    @staticmethod
    def path() -> str:
        return ControllerEpochZNode.PATH

    @staticmethod
    def encode(epoch: int) -> bytes:
        return str(epoch).encode("ascii")

    @staticmethod
    def decode(data: bytes | None, path: str = PATH) -> int:
        return _decimal(data, path)


# -- /brokers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerRegistration:
    """What ``/brokers/ids/[id]`` says about a live broker."""

    broker_id: int
    endpoints: tuple[EndPoint, ...]
    timestamp_ms: int
    rack: str | None = None
    jmx_port: int = -1
    version: int = 4

    @property
    def plaintext_endpoint(self) -> EndPoint | None:
        return next((e for e in self.endpoints if e.security_protocol == "PLAINTEXT"), None)


class BrokerIdZNode:
    """Ephemeral registration of a live broker (format version 4).

    ``host`` and ``port`` repeat the first PLAINTEXT endpoint for old clients (null and -1
    without one); ``rack`` appears only when set.
    """

    VERSION = 4

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BROKER_IDS_PATH}/{broker_id}"

    @staticmethod
    def encode(registration: BrokerRegistration) -> bytes:
        plaintext = registration.plaintext_endpoint
        obj = {
            "listener_security_protocol_map": {
                e.listener_name: e.security_protocol for e in registration.endpoints},
            "endpoints": [e.connection_string for e in registration.endpoints],
            "jmx_port": registration.jmx_port,
            "host": plaintext.host if plaintext else None,
            "timestamp": str(registration.timestamp_ms),
            "port": plaintext.port if plaintext else -1,
            "version": registration.version,
        }
        if registration.rack is not None:
            obj["rack"] = registration.rack
        return _dump(obj)

    @staticmethod
    def decode(data: bytes | None, path: str) -> BrokerRegistration:
        obj = _load(data, path)
        try:
            broker_id = int(path.rsplit("/", 1)[-1])
        except ValueError:
            raise MalformedZnodeError(path, "the znode name is not a broker id") from None
        version = _int(obj, "version", path)
        protocol_map = obj.get("listener_security_protocol_map")
        if protocol_map is not None and not isinstance(protocol_map, dict):
            raise MalformedZnodeError(path, "listener_security_protocol_map must be an object")
        if "endpoints" in obj:  # version 2 and later
            endpoints = _get(obj, "endpoints", list, path)
            if not all(isinstance(e, str) for e in endpoints):
                raise MalformedZnodeError(path, f"endpoints must be strings: {endpoints!r}")
            try:
                parsed = parse_endpoints(",".join(endpoints), protocol_map)
            except ValueError as exc:
                raise MalformedZnodeError(path, str(exc)) from None
        else:  # version 1: host and port of the one PLAINTEXT listener
            host = _get(obj, "host", str, path)
            parsed = (EndPoint("PLAINTEXT", host, _int(obj, "port", path), "PLAINTEXT"),)
        rack = obj.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise MalformedZnodeError(path, f"rack must be a string: {rack!r}")
        return BrokerRegistration(broker_id, parsed, _int_string(obj, "timestamp", path), rack,
                                  _int(obj, "jmx_port", path), version)


class BrokerSequenceIdZNode:
    """Broker id generation: each empty setData bumps the version, which becomes the new id
    (plus ``reserved.broker.max.id``). The data itself is unused."""

    PATH = "/brokers/seqid"

    @staticmethod
    def path() -> str:
        return BrokerSequenceIdZNode.PATH


@dataclass(frozen=True)
class TopicAssignment:
    """Replicas of each partition (the first is the preferred leader), plus the replicas being
    added or removed by a reassignment in progress."""

    partitions: Mapping[int, tuple[int, ...]]
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    topic_id: uuid.UUID | None = None


def encode_uuid(value: uuid.UUID) -> str:
    """Kafka's textual UUID: URL-safe base64 of the 16 bytes, without padding (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def decode_uuid(text: str, path: str) -> uuid.UUID:
    try:
        raw = base64.urlsafe_b64decode(text + "==")
        if len(raw) != 16:
            raise ValueError("not 16 bytes")
    except (ValueError, TypeError) as exc:
        raise MalformedZnodeError(path, f"topic_id {text!r} is not a UUID ({exc})") from None
    return uuid.UUID(bytes=raw)


class TopicZNode:
    """A topic's replica assignment: format version 3 (Kafka 2.8+) with its topic id, version 2
    (Kafka 2.4+, reassignment fields) without one; version 1 is read too."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TOPICS_PATH}/{topic}"

    @staticmethod
    def encode(assignment: TopicAssignment) -> bytes:
        def as_json(mapping: Mapping[int, Sequence[int]]) -> dict[str, list[int]]:
            return {str(p): list(replicas) for p, replicas in sorted(mapping.items())}

        head: dict = {"version": 2}
        if assignment.topic_id is not None:
            head = {"version": 3, "topic_id": encode_uuid(assignment.topic_id)}
        return _dump({
            **head,
            "partitions": as_json(assignment.partitions),
            "adding_replicas": as_json(assignment.adding_replicas),
            "removing_replicas": as_json(assignment.removing_replicas),
        })

    @staticmethod
    def decode(data: bytes | None, path: str) -> TopicAssignment:
        obj = _load(data, path)
        _int(obj, "version", path)
        partitions = _partition_map(_get(obj, "partitions", dict, path), "partitions", path)
        # version 1 has no reassignment fields
        adding = _partition_map(obj.get("adding_replicas", {}), "adding_replicas", path)
        removing = _partition_map(obj.get("removing_replicas", {}), "removing_replicas", path)
        topic_id = obj.get("topic_id")
        if topic_id is not None and not isinstance(topic_id, str):
            raise MalformedZnodeError(path, "topic_id is not a string")
        return TopicAssignment(partitions, adding, removing,
                               decode_uuid(topic_id, path) if topic_id else None)


@dataclass(frozen=True)
class PartitionState:
    """Leader and in-sync replicas of a partition; ``leader`` is -1 while it has none."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int


NO_LEADER = -1


class TopicPartitionStateZNode:
    """A partition's leader and ISR, written by the controller (and by leaders changing the ISR)."""

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return f"{topic_partition_path(topic, partition)}/state"

    @staticmethod
    def encode(state: PartitionState) -> bytes:
        return _dump({
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "version": 1,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        })

    @staticmethod
    def decode(data: bytes | None, path: str) -> PartitionState:
        obj = _load(data, path)
        return PartitionState(
            leader=_int(obj, "leader", path),
            leader_epoch=_int(obj, "leader_epoch", path),
            isr=_int_list(_get(obj, "isr", list, path), "isr", path),
            controller_epoch=_int(obj, "controller_epoch", path),
        )


# -- /config -------------------------------------------------------------------------------------


class ConfigEntityZNode:
    """Config overrides of one entity, e.g. ``/config/topics/[topic]``; values are strings."""

    @staticmethod
    def path(entity_type: str, name: str) -> str:
        return f"{config_entity_type_path(entity_type)}/{name}"

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        return _dump({"version": 1, "config": dict(config)})

    @staticmethod
    def decode(data: bytes | None, path: str) -> dict[str, str]:
        config = _get(_load(data, path), "config", dict, path)
        if not all(isinstance(v, str) for v in config.values()):
            raise MalformedZnodeError(path, f"config values must be strings: {config!r}")
        return config


class ConfigEntityChangeNotificationSequenceZNode:
    """A sequential notification that an entity's config changed (format version 2).

    ZooKeeper appends a 10-digit sequence number to :attr:`PATH_PREFIX`.
    """

    PATH_PREFIX = f"{CONFIG_CHANGES_PATH}/config_change_"

    @staticmethod
    def path(sequence: int) -> str:
        return f"{ConfigEntityChangeNotificationSequenceZNode.PATH_PREFIX}{sequence:010d}"

    @staticmethod
    def encode(entity_path: str) -> bytes:
        return _dump({"version": 2, "entity_path": entity_path})

    @staticmethod
    def decode(data: bytes | None, path: str) -> str:
        return _get(_load(data, path), "entity_path", str, path)


# -- /admin --------------------------------------------------------------------------------------


class DeleteTopicsTopicZNode:
    """A topic queued for deletion; the controller removes it once the topic is gone."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{DELETE_TOPICS_PATH}/{topic}"

    @staticmethod
    def encode() -> bytes:
        return b""


def _encode_partitions(partitions, **extra) -> list[dict]:
    return [{"topic": topic, "partition": partition, **{k: list(v[(topic, partition)])
                                                         for k, v in extra.items()}}
            for topic, partition in partitions]


def _decode_partitions(data: bytes | None, path: str, *fields: str) -> list[tuple]:
    """The ``partitions`` array of an admin or notification znode: (topic, partition, *fields)
    of each entry."""
    entries = _get(_load(data, path), "partitions", list, path)
    result = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise MalformedZnodeError(path, f"a partition entry is not an object: {entry!r}")
        values = tuple(_int_list(_get(entry, f, list, path), f, path) for f in fields)
        result.append((_get(entry, "topic", str, path), _int(entry, "partition", path), *values))
    return result


class ReassignPartitionsZNode:
    """Reassignments asked for through ZooKeeper (Kafka's deprecated route, still read by its
    ZooKeeper-mode controller): each partition's target replicas. The controller starts them
    and removes each entry as its reassignment completes, the znode with the last one."""

    PATH = "/admin/reassign_partitions"

    @staticmethod
    def encode(targets: Mapping[tuple[str, int], Sequence[int]]) -> bytes:
        return _dump({"version": 1, "partitions": _encode_partitions(sorted(targets),
                                                                     replicas=targets)})

    @staticmethod
    def decode(data: bytes | None, path: str = PATH) -> dict[tuple[str, int], tuple[int, ...]]:
        return {(t, p): replicas for t, p, replicas in _decode_partitions(data, path, "replicas")}


class PreferredReplicaElectionZNode:
    """Partitions whose preferred replica should lead again (Kafka's ZooKeeper route for
    ``kafka-leader-election.sh``); the controller deletes it once it has run the elections."""

    PATH = "/admin/preferred_replica_election"

    @staticmethod
    def encode(partitions: Sequence[tuple[str, int]]) -> bytes:
        return _dump({"version": 1, "partitions": _encode_partitions(sorted(partitions))})

    @staticmethod
    def decode(data: bytes | None, path: str = PATH) -> set[tuple[str, int]]:
        return {(t, p) for t, p in _decode_partitions(data, path)}


class IsrChangeNotificationSequenceZNode:
    """A sequential notice from a leader that it changed the ISR of these partitions, for the
    controller (which reads and deletes them; Kafka's ``ZkAlterPartitionManager``)."""

    PATH_PREFIX = f"{ISR_CHANGE_NOTIFICATION_PATH}/isr_change_"

    @staticmethod
    def encode(partitions: Sequence[tuple[str, int]]) -> bytes:
        return _dump({"version": 1, "partitions": _encode_partitions(sorted(partitions))})

    @staticmethod
    def decode(data: bytes | None, path: str) -> set[tuple[str, int]]:
        return {(t, p) for t, p in _decode_partitions(data, path)}


class LogDirEventNotificationSequenceZNode:
    """A sequential notice from a broker that one of its log dirs failed, for the controller:
    ``{"version":1,"broker":<id>,"event":1}`` (event 1: LogDirFailure), as Kafka's
    ``LogDirEventNotificationZNode`` writes it (KIP-112)."""

    PATH_PREFIX = f"{LOG_DIR_EVENT_NOTIFICATION_PATH}/log_dir_event_"
    LOG_DIR_FAILURE = 1

    @staticmethod
    def encode(broker_id: int, event: int = LOG_DIR_FAILURE) -> bytes:
        return _dump({"version": 1, "broker": broker_id, "event": event})

    @staticmethod
    def decode(data: bytes | None, path: str) -> tuple[int, int]:
        """The broker and the event (:data:`LOG_DIR_FAILURE`, the only one Kafka defines)."""
        obj = _load(data, path)
        return _int(obj, "broker", path), _int(obj, "event", path)


# -- /latest_producer_id_block --------------------------------------------------------------------


@dataclass(frozen=True)
class ProducerIdBlock:
    """Producer ids ``block_start`` to ``block_end`` (inclusive), owned by ``broker_id``."""

    broker_id: int
    block_start: int
    block_end: int


class ProducerIdBlockZNode:
    """The most recently allocated block of producer ids (bounds written as JSON strings).
    The znode exists from startup with no data until the first block is taken."""

    PATH = "/latest_producer_id_block"

    @staticmethod
    def path() -> str:
        return ProducerIdBlockZNode.PATH

    @staticmethod
    def encode(block: ProducerIdBlock) -> bytes:
        return _dump({"version": 1, "broker": block.broker_id,
                      "block_start": str(block.block_start), "block_end": str(block.block_end)})

    @staticmethod
    def decode(data: bytes | None, path: str = PATH) -> ProducerIdBlock | None:
        if not data:
            return None
        obj = _load(data, path)
        return ProducerIdBlock(_int(obj, "broker", path), _int_string(obj, "block_start", path),
                               _int_string(obj, "block_end", path))


# -- /consumers (ZooKeeper-based consumer groups) -------------------------------------------------


@dataclass(frozen=True)
class ConsumerRegistration:
    """A member of a ZooKeeper-based consumer group: topic -> stream count, and how the topics
    were chosen (``static``, or ``white_list``/``black_list`` for patterns)."""

    subscription: Mapping[str, int]
    pattern: str
    timestamp_ms: int


class ConsumerIdZNode:
    """Ephemeral registration of a consumer in a group."""

    @staticmethod
    def path(group: str, consumer_id: str) -> str:
        return f"{CONSUMERS_PATH}/{group}/ids/{consumer_id}"

    @staticmethod
    def encode(registration: ConsumerRegistration) -> bytes:
        return _dump({"version": 1, "subscription": dict(registration.subscription),
                      "pattern": registration.pattern,
                      "timestamp": str(registration.timestamp_ms)})

    @staticmethod
    def decode(data: bytes | None, path: str) -> ConsumerRegistration:
        obj = _load(data, path)
        subscription = _get(obj, "subscription", dict, path)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in subscription.values()):
            raise MalformedZnodeError(path,
                                      f"subscription counts must be integers: {subscription!r}")
        return ConsumerRegistration(subscription, _get(obj, "pattern", str, path),
                                    _int_string(obj, "timestamp", path))


class ConsumerOwnerZNode:
    """Ephemeral: the consumer thread (``<consumer_id>-<n>``) that owns a partition."""

    @staticmethod
    def path(group: str, topic: str, partition: int) -> str:
        return f"{CONSUMERS_PATH}/{group}/owners/{topic}/{partition}"

    @staticmethod
    def encode(consumer_thread_id: str) -> bytes:
        return consumer_thread_id.encode("utf-8")

    @staticmethod
    def decode(data: bytes | None, path: str) -> str:
        if not data:
            raise MalformedZnodeError(path, "no data")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedZnodeError(path, "not UTF-8") from None


class ConsumerOffsetZNode:
    """The next offset a group consumes from a partition, as a decimal string."""

    @staticmethod
    def path(group: str, topic: str, partition: int) -> str:
        return f"{CONSUMERS_PATH}/{group}/offsets/{topic}/{partition}"

    @staticmethod
    def encode(offset: int) -> bytes:
        return str(offset).encode("ascii")

    @staticmethod
    def decode(data: bytes | None, path: str) -> int:
        return _decimal(data, path)


# -- ACLs (Kafka's ZkAclStore, ResourceZNode, ZkAclChangeStore) --------------------------------

KAFKA_ACL_PATH = "/kafka-acl"
KAFKA_ACL_EXTENDED_PATH = "/kafka-acl-extended"
KAFKA_ACL_CHANGES_PATH = "/kafka-acl-changes"
KAFKA_ACL_EXTENDED_CHANGES_PATH = "/kafka-acl-extended-changes"
ACL_CHANGE_PREFIX = "acl_changes_"
# The resource types under each ACL root (AclEntry.RESOURCE_TYPES, created at startup).
ACL_RESOURCE_TYPES = tuple(t for t in ResourceType if t not in (ResourceType.UNKNOWN,
                                                                 ResourceType.ANY))


class AclStore:
    """Where the ACLs of one pattern type live: LITERAL patterns under ``/kafka-acl``, the
    others under ``/kafka-acl-extended/<pattern type, lower case>``; each root has a child per
    resource type (``Topic``, ``Group``, ...) holding a znode per pattern name."""

    @staticmethod
    def root(pattern_type: PatternType) -> str:
        if pattern_type == PatternType.LITERAL:
            return KAFKA_ACL_PATH
        if pattern_type == PatternType.PREFIXED:
            return f"{KAFKA_ACL_EXTENDED_PATH}/{pattern_type.name.lower()}"
        raise ValueError(f"no ACL store for pattern type {pattern_type.name}")

    @staticmethod
    def type_path(pattern_type: PatternType, resource_type: ResourceType) -> str:
        return f"{AclStore.root(pattern_type)}/{resource_type_name(resource_type)}"

    @staticmethod
    def changes_path(pattern_type: PatternType) -> str:
        """Where changes of such patterns are announced."""
        return KAFKA_ACL_CHANGES_PATH if pattern_type == PatternType.LITERAL \
            else KAFKA_ACL_EXTENDED_CHANGES_PATH


ACL_PATTERN_TYPES = (PatternType.LITERAL, PatternType.PREFIXED)
ACL_PATHS = (
    *(AclStore.type_path(p, t) for p in ACL_PATTERN_TYPES for t in ACL_RESOURCE_TYPES),
    KAFKA_ACL_CHANGES_PATH, KAFKA_ACL_EXTENDED_CHANGES_PATH,
)


class ResourceZNode:
    """The ACLs of one resource pattern (Kafka's ``ResourceZNode``, entries as ``AclEntry``
    writes them): PascalCase operation and permission names, ``version`` 1. Written with
    conditional updates on the znode's version, so concurrent changes from several brokers
    never lose one another."""

    @staticmethod
    def path(pattern: ResourcePattern) -> str:
        return f"{AclStore.type_path(pattern.pattern_type, pattern.resource_type)}/{pattern.name}"

    @staticmethod
    def encode(entries: Iterable[AccessControlEntry]) -> bytes:
        return _dump({"version": 1, "acls": [
            {"principal": e.principal, "permissionType": permission_type_name(e.permission_type),
             "operation": operation_name(e.operation), "host": e.host}
            for e in sorted(entries)]})

    @staticmethod
    def decode(data: bytes | None, path: str) -> frozenset[AccessControlEntry]:
        """The entries; none for an empty znode, as Kafka reads it."""
        if not data:
            return frozenset()
        obj = _load(data, path)
        if _int(obj, "version", path) != 1:
            raise MalformedZnodeError(path, f"unsupported ACL version {obj['version']}")
        entries = set()
        for item in _get(obj, "acls", list, path):
            if not isinstance(item, dict):
                raise MalformedZnodeError(path, f"an ACL is not a JSON object: {item!r}")
            principal = _get(item, "principal", str, path)
            try:
                parse_principal(principal)
                entries.add(AccessControlEntry(
                    principal, _get(item, "host", str, path),
                    parse_operation(_get(item, "operation", str, path)),
                    parse_permission_type(_get(item, "permissionType", str, path))))
            except InvalidAclError as exc:
                raise MalformedZnodeError(path, str(exc)) from None
        return frozenset(entries)


class AclChangeNotificationSequenceZNode:
    """A sequential announcement that the ACLs of a pattern changed; every broker re-reads
    that pattern's ACLs. ZooKeeper appends a 10-digit sequence number to
    ``<changes path>/acl_changes_``. LITERAL patterns go to ``/kafka-acl-changes`` as
    ``<ResourceType>:<name>`` (the type as Kafka 3.9 writes it, ``TOPIC``, read in any case),
    the others to ``/kafka-acl-extended-changes`` as JSON (``ExtendedAclChangeEvent``)."""

    @staticmethod
    def path_prefix(pattern_type: PatternType) -> str:
        return f"{AclStore.changes_path(pattern_type)}/{ACL_CHANGE_PREFIX}"

    @staticmethod
    def encode(pattern: ResourcePattern) -> bytes:
        if pattern.pattern_type == PatternType.LITERAL:
            return f"{pattern.resource_type.name}:{pattern.name}".encode()
        return _dump({"version": 1, "resourceType": pattern.resource_type.name,
                      "name": pattern.name, "patternType": pattern.pattern_type.name})

    @staticmethod
    def decode(data: bytes | None, path: str) -> ResourcePattern:
        if path.startswith(KAFKA_ACL_CHANGES_PATH + "/"):
            try:
                resource_type, sep, name = (data or b"").decode("utf-8").partition(":")
            except UnicodeDecodeError:
                raise MalformedZnodeError(path, "not UTF-8") from None
            if not sep:
                raise MalformedZnodeError(path, "expected a string in format "
                                                "ResourceType:ResourceName")
            pattern_type = PatternType.LITERAL
        else:
            obj = _load(data, path)
            if _int(obj, "version", path) > 1:
                raise MalformedZnodeError(path, f"unsupported ACL change event version "
                                                f"{obj['version']}")
            resource_type, name = _get(obj, "resourceType", str, path), _get(obj, "name", str,
                                                                              path)
            pattern_type = PatternType.__members__.get(_get(obj, "patternType", str, path),
                                                       PatternType.UNKNOWN)
        kind = ResourceType.__members__.get(resource_type.upper()) \
            or parse_resource_type(resource_type)
        if kind in (ResourceType.UNKNOWN, ResourceType.ANY) or not pattern_type.is_specific:
            raise MalformedZnodeError(path, f"no such resource pattern: {resource_type}, "
                                            f"{pattern_type.name}")
        return ResourcePattern(kind, name, pattern_type)


# Kafka's ZkData.PersistentZkPaths: created (empty) by every broker at startup.
PERSISTENT_PATHS = (
    CONSUMERS_PATH,
    BROKER_IDS_PATH,
    TOPICS_PATH,
    CONFIG_CHANGES_PATH,
    DELETE_TOPICS_PATH,
    BrokerSequenceIdZNode.PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
    ProducerIdBlockZNode.PATH,
    LOG_DIR_EVENT_NOTIFICATION_PATH,
    *(config_entity_type_path(t) for t in CONFIG_ENTITY_TYPES),
)
