"""Consumer group administration: ListGroups, DescribeGroups (ConsumerGroupDescribe for the
consumer groups of KIP-848) and DeleteGroups.

Each broker coordinates some of the groups and lists only those, so :meth:`GroupsAdmin.list_groups`
asks every broker of the cluster metadata and merges the answers (as Kafka's admin client does).
DescribeGroups and DeleteGroups go to the coordinator of each group (FindCoordinator, see
:mod:`.coordinators`), which is retried while it is loading or has moved.

A group the coordinator does not know is described with state ``Dead`` and no members (Kafka's
answer, not an error); deleting it answers GROUP_ID_NOT_FOUND, deleting a group with members
NON_EMPTY_GROUP. Those per-group outcomes are returned, not raised, so one call can report on
several groups.

Members of ``consumer`` groups carry a ConsumerProtocolAssignment, decoded here into the
partitions each member was given. Every version of it starts the same way::

    version      int16     0 and up
    assignment   [topic]   int32 count, then per topic:
      topic        string    int16 length, UTF-8
      partitions   [int32]   int32 count, then the partition numbers
    user_data    bytes     (and, from version 1, more fields): not read

>>> import struct
>>> data = struct.pack(">hih6sii", 1, 1, 6, b"events", 1, 2) + b"user data"
>>> decode_consumer_assignment(data)
(TopicPartition(topic='events', partition=2),)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ProtocolError, Reader

from ..cluster.cluster import Cluster
from ..cluster.connection import BrokerConnection
from ..cluster.coordinators import GROUP, Coordinators
from ..cluster.metadata import BrokerInfo
from ..errors import (
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    UnsupportedVersionError,
    error_for,
)
from ..retry import retry

T = TypeVar("T")
CONSUMER_PROTOCOL_TYPE = "consumer"
DEAD = "Dead"  # the state of a group the coordinator does not know
FIRST_LIST_GROUPS_WITH_STATES = 4  # StatesFilter in the request, GroupState in the answer
FIRST_LIST_GROUPS_WITH_TYPES = 5  # TypesFilter in the request, GroupType in the answer
CLASSIC, CONSUMER = "classic", "consumer"  # the group types of KIP-848


@dataclass(frozen=True)
class GroupListing:
    """A group as ListGroups lists it; ``state`` is None from brokers before ListGroups v4,
    ``group_type`` (``classic``, ``consumer``: KIP-848) before v5."""

    group_id: str
    protocol_type: str
    state: str | None = None
    group_type: str | None = None

    @property
    def is_consumer_group(self) -> bool:
        """A group of Kafka consumers, or one that only holds committed offsets (no protocol)."""
        return self.protocol_type in (CONSUMER_PROTOCOL_TYPE, "")


@dataclass(frozen=True)
class MemberDescription:
    """A member of a group. ``assignment`` is the partitions it was given (consumer groups),
    None when the assignment is not a consumer protocol one."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[TopicPartition, ...] | None


@dataclass(frozen=True)
class GroupDescription:
    """A group as its coordinator describes it. ``protocol`` is the chosen protocol, for
    consumer groups the partition assignor (``range``, ``roundrobin``, ...)."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberDescription, ...]
    coordinator: BrokerInfo
    group_type: str = CLASSIC
    group_epoch: int | None = None  # consumer groups: their epoch, and their assignment's
    assignment_epoch: int | None = None

    @property
    def exists(self) -> bool:
        return self.state != DEAD


# -- requests and responses (sans I/O) ----------------------------------------------------------


def list_groups_request(version: int, states: Iterable[str] = ()) -> dict:
    states = list(states)
    if states and version < FIRST_LIST_GROUPS_WITH_STATES:
        raise UnsupportedVersionError(
            f"listing groups by state needs ListGroups v{FIRST_LIST_GROUPS_WITH_STATES}+, the "
            f"broker speaks v{version}")
    return {"states_filter": states, "types_filter": []}


def parse_list_groups(body: dict, version: int) -> list[GroupListing]:
    """The groups listed, or the error (COORDINATOR_LOAD_IN_PROGRESS is retriable)."""
    error = error_for(body["error_code"], where="ListGroups")
    if error is not None:
        raise error
    with_state = version >= FIRST_LIST_GROUPS_WITH_STATES
    with_type = version >= FIRST_LIST_GROUPS_WITH_TYPES
    return [GroupListing(g["group_id"], g["protocol_type"],
                         g.get("group_state") if with_state else None,
                         g.get("group_type") if with_type else None) for g in body["groups"]]


def describe_groups_request(group_ids: list[str]) -> dict:
    return {"groups": list(group_ids), "include_authorized_operations": False}


def _per_group(groups: list[dict], describe: Callable[[dict], GroupDescription]
               ) -> dict[str, GroupDescription | KafkaClientError]:
    """Per group of a describe response: ``describe(group)``, or the error answered for it."""
    described: dict[str, GroupDescription | KafkaClientError] = {}
    for group in groups:
        group_id = group["group_id"]
        error = error_for(group["error_code"], where=f"group {group_id}")
        described[group_id] = error if error is not None else describe(group)
    return described


def parse_describe_groups(body: dict, coordinator: BrokerInfo
                          ) -> dict[str, GroupDescription | KafkaClientError]:
    """Per group: its description, or the error the coordinator answered for it."""
    def describe(group: dict) -> GroupDescription:
        consumer = group["protocol_type"] == CONSUMER_PROTOCOL_TYPE
        members = tuple(
            MemberDescription(m["member_id"], m.get("group_instance_id"), m["client_id"],
                              m["client_host"],
                              _assignment(m["member_assignment"]) if consumer else None)
            for m in group["members"])
        return GroupDescription(group["group_id"], group["group_state"],
                                group["protocol_type"], group["protocol_data"], members,
                                coordinator)

    return _per_group(body["groups"], describe)


def consumer_group_describe_request(group_ids: list[str]) -> dict:
    return {"group_ids": list(group_ids), "include_authorized_operations": False}


def parse_consumer_group_describe(body: dict, coordinator: BrokerInfo
                                  ) -> dict[str, GroupDescription | KafkaClientError]:
    """Per group: its description (as a consumer group: the assignor as its protocol, each
    member's current assignment), or the error the coordinator answered for it."""
    def describe(group: dict) -> GroupDescription:
        members = tuple(MemberDescription(
            m["member_id"], m["instance_id"], m["client_id"], m["client_host"],
            tuple(TopicPartition(t["topic_name"], p)
                  for t in m["assignment"]["topic_partitions"] for p in t["partitions"]))
            for m in group["members"])
        return GroupDescription(
            group["group_id"], group["group_state"], CONSUMER_PROTOCOL_TYPE,
            group["assignor_name"], members, coordinator, CONSUMER, group["group_epoch"],
            group["assignment_epoch"])

    return _per_group(body["groups"], describe)


def delete_groups_request(group_ids: list[str]) -> dict:
    return {"groups_names": list(group_ids)}


def parse_delete_groups(body: dict) -> dict[str, KafkaClientError | None]:
    """Per group: None when deleted, else the error."""
    return {r["group_id"]: error_for(r["error_code"], where=f"group {r['group_id']}")
            for r in body["results"]}


def decode_consumer_assignment(data: bytes) -> tuple[TopicPartition, ...]:
    """The partitions of a ConsumerProtocolAssignment (see the module docstring); an empty
    assignment (a member that has not synced yet) has none. :class:`InvalidResponseError`
    when the bytes are not one."""
    if not data:
        return ()
    reader = Reader(memoryview(data))
    try:
        version = reader.int16()
        if version < 0:
            raise InvalidResponseError(f"consumer assignment version {version}")
        partitions = []
        for _ in range(_count(reader, "topics")):
            topic = reader.string()
            partitions += [TopicPartition(topic, reader.int32())
                           for _ in range(_count(reader, "partitions"))]
        return tuple(partitions)
    except ProtocolError as exc:
        raise InvalidResponseError(f"not a consumer protocol assignment: {exc}") from None


def _count(reader: Reader, what: str) -> int:
    count = reader.int32()
    if count < 0 or count > reader.end - reader.pos:  # each entry takes at least a byte
        raise InvalidResponseError(f"consumer assignment with {count} {what}")
    return count


def _assignment(data: bytes) -> tuple[TopicPartition, ...] | None:
    try:
        return decode_consumer_assignment(bytes(data))
    except InvalidResponseError:
        return None


# -- the client side ------------------------------------------------------------------------------


class GroupsAdmin:
    """Group administration over a client's connections; get one from
    :attr:`.admin.Admin.groups`."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.coordinators = Coordinators(cluster, GROUP)

    def list_groups(self, states: Iterable[str] = ()) -> list[GroupListing]:
        """Every group of the cluster, by id; with ``states`` (``Stable``, ``Empty``, ...)
        only groups in one of them (brokers with ListGroups v4+)."""
        states = list(states)
        deadline = self.cluster.deadline()

        def attempt() -> list[GroupListing]:
            self.cluster.refresh_metadata((), deadline)
            brokers = self.cluster.metadata.brokers()

            def ask(broker: BrokerInfo):
                def call() -> list[GroupListing]:
                    conn = self.cluster.connection(broker.host, broker.port, broker.node_id)
                    version, body = conn.request(
                        ApiKey.LIST_GROUPS, lambda v: list_groups_request(v, states), deadline)
                    return parse_list_groups(body, version)
                return call

            outcomes = self.cluster.run_per_broker({n: ask(b) for n, b in brokers.items()})
            errors = [o for o in outcomes.values() if isinstance(o, KafkaClientError)]
            if errors:  # a final error first; else retry the lot
                raise min(errors, key=lambda e: e.retriable)
            found = {g.group_id: g for listing in outcomes.values()
                     if not isinstance(listing, KafkaClientError) for g in listing}
            return [found[group_id] for group_id in sorted(found)]

        return retry("list_groups()", deadline, self.cluster.backoff(), attempt,
                     self.cluster.on_retriable)

    def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        """Each group's state, protocol and members, from its coordinator; a group it does not
        know has state ``Dead``. Raises the error of a group the coordinator refused."""
        group_ids = _check_groups(group_ids)
        return {group_id: self._describe(group_id) for group_id in group_ids}

    def _describe(self, group_id: str) -> GroupDescription:
        def parse(conn: BrokerConnection, response: dict) -> GroupDescription:
            coordinator = BrokerInfo(-1 if conn.node_id is None else conn.node_id, conn.host,
                                     conn.port)
            found = parse_describe_groups(response, coordinator).get(group_id)
            if found is None:
                raise InvalidResponseError(f"the DescribeGroups response has no group {group_id}")
            if isinstance(found, KafkaClientError):
                raise found
            return found

        described = self.at_coordinator(f"describe_groups({group_id!r})", group_id,
                                         ApiKey.DESCRIBE_GROUPS,
                                         describe_groups_request([group_id]), parse)
        if described.exists:
            return described
        # not a classic group: a consumer group of KIP-848 is described by its own API
        return self._describe_consumer_group(group_id) or described

    def _describe_consumer_group(self, group_id: str) -> GroupDescription | None:
        """The consumer group ``group_id``, or None when there is none (or the broker does not
        serve ConsumerGroupDescribe)."""
        def parse(conn: BrokerConnection, response: dict) -> GroupDescription | None:
            coordinator = BrokerInfo(-1 if conn.node_id is None else conn.node_id, conn.host,
                                     conn.port)
            found = parse_consumer_group_describe(response, coordinator).get(group_id)
            if isinstance(found, KafkaClientError) and found.retriable:
                raise found
            return found if isinstance(found, GroupDescription) else None

        try:
            return self.at_coordinator(
                f"describe_consumer_group({group_id!r})", group_id,
                ApiKey.CONSUMER_GROUP_DESCRIBE, consumer_group_describe_request([group_id]),
                parse)
        except UnsupportedVersionError:
            return None

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, KafkaClientError | None]:
        """Delete groups (with their committed offsets); per group None when deleted, or the
        error: NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND when there is none."""
        group_ids = _check_groups(group_ids)
        return {group_id: self._delete(group_id) for group_id in group_ids}

    def _delete(self, group_id: str) -> KafkaClientError | None:
        def parse(conn: BrokerConnection, response: dict) -> KafkaClientError | None:
            results = parse_delete_groups(response)
            if group_id not in results:
                raise InvalidResponseError(f"the DeleteGroups response has no group {group_id}")
            error = results[group_id]
            if error is not None and error.retriable:
                raise error  # the coordinator moved or is loading: ask again
            return error

        return self.at_coordinator(f"delete_groups({group_id!r})", group_id,
                                    ApiKey.DELETE_GROUPS, delete_groups_request([group_id]), parse)

    def at_coordinator(self, what: str, group_id: str, api_key: ApiKey, body: dict,
                        parse: Callable[[BrokerConnection, dict], T]) -> T:
        """``parse(connection, response)`` of ``body`` sent to the group's coordinator,
        retrying retriable errors (looking the coordinator up again when it moved)."""
        deadline = self.cluster.deadline()

        def attempt() -> T:
            conn = self.coordinators.connection(group_id, deadline)
            _, response = conn.request(api_key, body, deadline)
            return parse(conn, response)

        return retry(what, deadline, self.cluster.backoff(), attempt,
                     lambda error: self.coordinators.on_retriable(group_id, error))


def _check_groups(group_ids: Iterable[str]) -> list[str]:
    group_ids = list(dict.fromkeys(group_ids))
    for group_id in group_ids:
        if not isinstance(group_id, str) or not group_id:
            raise InvalidArgumentError(f"a group id must be a non-empty string, got {group_id!r}")
    return group_ids

