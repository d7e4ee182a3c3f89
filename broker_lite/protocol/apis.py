"""API keys, and the registry of the APIs this package has schemas for.

:class:`ApiKey` numbers every API of Kafka's protocol (Kafka's ``ApiKeys`` enum, 3.9 era, and
the share-group APIs up to Kafka 4.2's), whether or not broker_lite implements it.
:data:`API_SCHEMAS` maps the ones with declared schemas to their request and response
:class:`~broker_lite.protocol.schema.Message`, each carrying the spec's
``valid_versions`` and ``flexible_versions``; an API's schemas are built when it is first looked
up. Which versions the broker advertises in ApiVersions is decided by the server, not here.

>>> api = API_SCHEMAS[ApiKey.METADATA]
>>> api.name, str(api.request.valid_versions), str(api.request.flexible_versions)
('Metadata', '0-12', '9+')
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar, overload

from .schema import Message


class ApiKey(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    LEADER_AND_ISR = 4
    STOP_REPLICA = 5
    UPDATE_METADATA = 6
    CONTROLLED_SHUTDOWN = 7
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    WRITE_TXN_MARKERS = 27
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    ALTER_REPLICA_LOG_DIRS = 34
    DESCRIBE_LOG_DIRS = 35
    SASL_AUTHENTICATE = 36
    CREATE_PARTITIONS = 37
    CREATE_DELEGATION_TOKEN = 38
    RENEW_DELEGATION_TOKEN = 39
    EXPIRE_DELEGATION_TOKEN = 40
    DESCRIBE_DELEGATION_TOKEN = 41
    DELETE_GROUPS = 42
    ELECT_LEADERS = 43
    INCREMENTAL_ALTER_CONFIGS = 44
    ALTER_PARTITION_REASSIGNMENTS = 45
    LIST_PARTITION_REASSIGNMENTS = 46
    OFFSET_DELETE = 47
    DESCRIBE_CLIENT_QUOTAS = 48
    ALTER_CLIENT_QUOTAS = 49
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    VOTE = 52
    BEGIN_QUORUM_EPOCH = 53
    END_QUORUM_EPOCH = 54
    DESCRIBE_QUORUM = 55
    ALTER_PARTITION = 56
    UPDATE_FEATURES = 57
    ENVELOPE = 58
    FETCH_SNAPSHOT = 59
    DESCRIBE_CLUSTER = 60
    DESCRIBE_PRODUCERS = 61
    BROKER_REGISTRATION = 62
    BROKER_HEARTBEAT = 63
    UNREGISTER_BROKER = 64
    DESCRIBE_TRANSACTIONS = 65
    LIST_TRANSACTIONS = 66
    ALLOCATE_PRODUCER_IDS = 67
    CONSUMER_GROUP_HEARTBEAT = 68
    CONSUMER_GROUP_DESCRIBE = 69
    CONTROLLER_REGISTRATION = 70
    GET_TELEMETRY_SUBSCRIPTIONS = 71
    PUSH_TELEMETRY = 72
    ASSIGN_REPLICAS_TO_DIRS = 73
    LIST_CLIENT_METRICS_RESOURCES = 74
    DESCRIBE_TOPIC_PARTITIONS = 75
    SHARE_GROUP_HEARTBEAT = 76
    SHARE_GROUP_DESCRIBE = 77
    SHARE_FETCH = 78
    SHARE_ACKNOWLEDGE = 79
    ADD_RAFT_VOTER = 80
    REMOVE_RAFT_VOTER = 81
    UPDATE_RAFT_VOTER = 82
    INITIALIZE_SHARE_GROUP_STATE = 83
    READ_SHARE_GROUP_STATE = 84
    WRITE_SHARE_GROUP_STATE = 85
    DELETE_SHARE_GROUP_STATE = 86
    READ_SHARE_GROUP_STATE_SUMMARY = 87
    STREAMS_GROUP_HEARTBEAT = 88
    STREAMS_GROUP_DESCRIBE = 89
    DESCRIBE_SHARE_GROUP_OFFSETS = 90
    ALTER_SHARE_GROUP_OFFSETS = 91
    DELETE_SHARE_GROUP_OFFSETS = 92


@dataclass(frozen=True)
class Api:
    """One API: its key, its spec name (``"Metadata"``), and its request and response schemas."""

    key: ApiKey
    name: str
    request: Message
    response: Message

    @property
    def valid_versions(self):
        return self.request.valid_versions

    @property
    def flexible_versions(self):
        return self.request.flexible_versions


def _api(key: ApiKey, request: Message, response: Message) -> Api:
    name = request.name[: -len("Request")]
    if request.api_key != key or response.api_key != key or response.name != name + "Response":
        raise ValueError(f"schemas {request.name} / {response.name} do not belong to {key!r}")
    return Api(key, name, request, response)


_T = TypeVar("_T")

#: The module of :mod:`.messages` that declares each API's schemas, as ``<KEY>_REQUEST`` and
#: ``<KEY>_RESPONSE`` (``METADATA_REQUEST`` for ``ApiKey.METADATA``).
_DECLARED_IN: dict[ApiKey, str] = {
    ApiKey.PRODUCE: "produce",
    ApiKey.FETCH: "fetch",
    ApiKey.LIST_OFFSETS: "offsets",
    ApiKey.METADATA: "metadata",
    ApiKey.OFFSET_COMMIT: "group_offsets",
    ApiKey.OFFSET_FETCH: "group_offsets",
    ApiKey.FIND_COORDINATOR: "groups",
    ApiKey.JOIN_GROUP: "groups",
    ApiKey.HEARTBEAT: "groups",
    ApiKey.LEAVE_GROUP: "groups",
    ApiKey.SYNC_GROUP: "groups",
    ApiKey.DESCRIBE_GROUPS: "groups",
    ApiKey.LIST_GROUPS: "groups",
    ApiKey.SASL_HANDSHAKE: "sasl",
    ApiKey.API_VERSIONS: "api_versions",
    ApiKey.SASL_AUTHENTICATE: "sasl",
    ApiKey.CREATE_TOPICS: "topics",
    ApiKey.DELETE_TOPICS: "topics",
    ApiKey.DELETE_RECORDS: "records_admin",
    ApiKey.INIT_PRODUCER_ID: "producer_ids",
    ApiKey.OFFSET_FOR_LEADER_EPOCH: "offsets",
    ApiKey.DESCRIBE_CONFIGS: "configs",
    ApiKey.ALTER_CONFIGS: "configs",
    ApiKey.CREATE_PARTITIONS: "topics",
    ApiKey.DELETE_GROUPS: "groups",
    ApiKey.INCREMENTAL_ALTER_CONFIGS: "configs",
    ApiKey.OFFSET_DELETE: "group_offsets",
    ApiKey.DESCRIBE_CLUSTER: "metadata",
    ApiKey.DESCRIBE_PRODUCERS: "producers",
    ApiKey.ADD_PARTITIONS_TO_TXN: "transactions",
    ApiKey.ADD_OFFSETS_TO_TXN: "transactions",
    ApiKey.END_TXN: "transactions",
    ApiKey.WRITE_TXN_MARKERS: "transactions",
    ApiKey.TXN_OFFSET_COMMIT: "transactions",
    ApiKey.DESCRIBE_TRANSACTIONS: "transactions",
    ApiKey.LIST_TRANSACTIONS: "transactions",
    ApiKey.DESCRIBE_ACLS: "acls",
    ApiKey.CREATE_ACLS: "acls",
    ApiKey.DELETE_ACLS: "acls",
    ApiKey.CONTROLLED_SHUTDOWN: "replication",
    ApiKey.ELECT_LEADERS: "replication",
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: "replication",
    ApiKey.LIST_PARTITION_REASSIGNMENTS: "replication",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: "scram_credentials",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: "scram_credentials",
    # share groups (KIP-932)
    ApiKey.SHARE_GROUP_HEARTBEAT: "share_groups",
    ApiKey.SHARE_GROUP_DESCRIBE: "share_groups",
    ApiKey.SHARE_FETCH: "share_groups",
    ApiKey.SHARE_ACKNOWLEDGE: "share_groups",
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: "share_groups",
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: "share_groups",
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: "share_groups",
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: "share_state",
    ApiKey.READ_SHARE_GROUP_STATE: "share_state",
    ApiKey.WRITE_SHARE_GROUP_STATE: "share_state",
    ApiKey.DELETE_SHARE_GROUP_STATE: "share_state",
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: "share_state",
    # the consumer group protocol (KIP-848)
    ApiKey.CONSUMER_GROUP_HEARTBEAT: "consumer_groups",
    ApiKey.CONSUMER_GROUP_DESCRIBE: "consumer_groups",
}


class ApiSchemas(Mapping[int, Api]):
    """API key -> :class:`Api`, for every API of :data:`_DECLARED_IN`, looked up by
    :class:`ApiKey` or by the raw key from the wire. An API's schemas are built (its module of
    :mod:`.messages` imported) when it is first looked up, so that a process which speaks a few
    APIs (a client looking up offsets, say) does not build the other forty; iterating builds
    them all."""

    def __init__(self, declared_in: dict[ApiKey, str]):
        self._declared_in = declared_in
        self._built: dict[int, Api] = {}

    def __getitem__(self, api_key: int) -> Api:
        api = self._built.get(api_key)
        if api is None:
            if api_key not in self._declared_in:
                raise KeyError(api_key)
            key = ApiKey(api_key)
            name = f"{__package__}.messages.{self._declared_in[key]}"
            __import__(name)  # as an import statement does, so -X importtime lists it
            module = sys.modules[name]
            api = _api(key, getattr(module, f"{key.name}_REQUEST"),
                       getattr(module, f"{key.name}_RESPONSE"))
            api = self._built.setdefault(api_key, api)  # a thread that built it first wins
        return api

    @overload
    def get(self, api_key: int, /) -> Api | None: ...

    @overload
    def get(self, api_key: int, default: Api | _T, /) -> Api | _T: ...

    def get(self, api_key: int, default: object = None) -> object:
        api = self._built.get(api_key)  # the usual case (every request a broker reads)
        if api is not None:
            return api
        return self[api_key] if api_key in self._declared_in else default

    def __contains__(self, api_key: object) -> bool:
        return api_key in self._declared_in

    def __iter__(self) -> Iterator[ApiKey]:
        return iter(self._declared_in)

    def __len__(self) -> int:
        return len(self._declared_in)

    def __repr__(self) -> str:
        return f"ApiSchemas({len(self)} APIs, {len(self._built)} built)"


API_SCHEMAS = ApiSchemas(_DECLARED_IN)


def api_for(api_key: int) -> Api | None:
    """The registered API for a raw key (an int from the wire, or an :class:`ApiKey`), or None."""
    return API_SCHEMAS.get(api_key)
