"""API keys, and the registry of the APIs this package has schemas for.

:class:`ApiKey` numbers every API of Kafka's protocol (Kafka's ``ApiKeys`` enum, 3.9 era), whether
or not broker_lite implements it. :data:`API_SCHEMAS` maps the ones with declared schemas to their
request and response :class:`~broker_lite.protocol.schema.Message`, each carrying the spec's
``valid_versions`` and ``flexible_versions``. Which versions the broker advertises in ApiVersions
is decided by the server, not here.

>>> api = API_SCHEMAS[ApiKey.METADATA]
>>> api.name, str(api.request.valid_versions), str(api.request.flexible_versions)
('Metadata', '0-12', '9+')
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from . import messages as m
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


API_SCHEMAS: dict[ApiKey, Api] = {
    api.key: api
    for api in (
        _api(ApiKey.PRODUCE, m.PRODUCE_REQUEST, m.PRODUCE_RESPONSE),
        _api(ApiKey.FETCH, m.FETCH_REQUEST, m.FETCH_RESPONSE),
        _api(ApiKey.LIST_OFFSETS, m.LIST_OFFSETS_REQUEST, m.LIST_OFFSETS_RESPONSE),
        _api(ApiKey.METADATA, m.METADATA_REQUEST, m.METADATA_RESPONSE),
        _api(ApiKey.OFFSET_COMMIT, m.OFFSET_COMMIT_REQUEST, m.OFFSET_COMMIT_RESPONSE),
        _api(ApiKey.OFFSET_FETCH, m.OFFSET_FETCH_REQUEST, m.OFFSET_FETCH_RESPONSE),
        _api(ApiKey.FIND_COORDINATOR, m.FIND_COORDINATOR_REQUEST, m.FIND_COORDINATOR_RESPONSE),
        _api(ApiKey.JOIN_GROUP, m.JOIN_GROUP_REQUEST, m.JOIN_GROUP_RESPONSE),
        _api(ApiKey.HEARTBEAT, m.HEARTBEAT_REQUEST, m.HEARTBEAT_RESPONSE),
        _api(ApiKey.LEAVE_GROUP, m.LEAVE_GROUP_REQUEST, m.LEAVE_GROUP_RESPONSE),
        _api(ApiKey.SYNC_GROUP, m.SYNC_GROUP_REQUEST, m.SYNC_GROUP_RESPONSE),
        _api(ApiKey.DESCRIBE_GROUPS, m.DESCRIBE_GROUPS_REQUEST, m.DESCRIBE_GROUPS_RESPONSE),
        _api(ApiKey.LIST_GROUPS, m.LIST_GROUPS_REQUEST, m.LIST_GROUPS_RESPONSE),
        _api(ApiKey.SASL_HANDSHAKE, m.SASL_HANDSHAKE_REQUEST, m.SASL_HANDSHAKE_RESPONSE),
        _api(ApiKey.API_VERSIONS, m.API_VERSIONS_REQUEST, m.API_VERSIONS_RESPONSE),
        _api(ApiKey.SASL_AUTHENTICATE, m.SASL_AUTHENTICATE_REQUEST,
             m.SASL_AUTHENTICATE_RESPONSE),
        _api(ApiKey.CREATE_TOPICS, m.CREATE_TOPICS_REQUEST, m.CREATE_TOPICS_RESPONSE),
        _api(ApiKey.DELETE_TOPICS, m.DELETE_TOPICS_REQUEST, m.DELETE_TOPICS_RESPONSE),
        _api(ApiKey.DELETE_RECORDS, m.DELETE_RECORDS_REQUEST, m.DELETE_RECORDS_RESPONSE),
        _api(ApiKey.INIT_PRODUCER_ID, m.INIT_PRODUCER_ID_REQUEST, m.INIT_PRODUCER_ID_RESPONSE),
        _api(ApiKey.OFFSET_FOR_LEADER_EPOCH, m.OFFSET_FOR_LEADER_EPOCH_REQUEST,
             m.OFFSET_FOR_LEADER_EPOCH_RESPONSE),
        _api(ApiKey.DESCRIBE_CONFIGS, m.DESCRIBE_CONFIGS_REQUEST, m.DESCRIBE_CONFIGS_RESPONSE),
        _api(ApiKey.ALTER_CONFIGS, m.ALTER_CONFIGS_REQUEST, m.ALTER_CONFIGS_RESPONSE),
        _api(ApiKey.CREATE_PARTITIONS, m.CREATE_PARTITIONS_REQUEST, m.CREATE_PARTITIONS_RESPONSE),
        _api(ApiKey.DELETE_GROUPS, m.DELETE_GROUPS_REQUEST, m.DELETE_GROUPS_RESPONSE),
        _api(ApiKey.INCREMENTAL_ALTER_CONFIGS, m.INCREMENTAL_ALTER_CONFIGS_REQUEST,
             m.INCREMENTAL_ALTER_CONFIGS_RESPONSE),
        _api(ApiKey.OFFSET_DELETE, m.OFFSET_DELETE_REQUEST, m.OFFSET_DELETE_RESPONSE),
        _api(ApiKey.DESCRIBE_CLUSTER, m.DESCRIBE_CLUSTER_REQUEST, m.DESCRIBE_CLUSTER_RESPONSE),
        _api(ApiKey.DESCRIBE_PRODUCERS, m.DESCRIBE_PRODUCERS_REQUEST,
             m.DESCRIBE_PRODUCERS_RESPONSE),
        _api(ApiKey.ADD_PARTITIONS_TO_TXN, m.ADD_PARTITIONS_TO_TXN_REQUEST,
             m.ADD_PARTITIONS_TO_TXN_RESPONSE),
        _api(ApiKey.ADD_OFFSETS_TO_TXN, m.ADD_OFFSETS_TO_TXN_REQUEST,
             m.ADD_OFFSETS_TO_TXN_RESPONSE),
        _api(ApiKey.END_TXN, m.END_TXN_REQUEST, m.END_TXN_RESPONSE),
        _api(ApiKey.WRITE_TXN_MARKERS, m.WRITE_TXN_MARKERS_REQUEST, m.WRITE_TXN_MARKERS_RESPONSE),
        _api(ApiKey.TXN_OFFSET_COMMIT, m.TXN_OFFSET_COMMIT_REQUEST, m.TXN_OFFSET_COMMIT_RESPONSE),
        _api(ApiKey.DESCRIBE_TRANSACTIONS, m.DESCRIBE_TRANSACTIONS_REQUEST,
             m.DESCRIBE_TRANSACTIONS_RESPONSE),
        _api(ApiKey.LIST_TRANSACTIONS, m.LIST_TRANSACTIONS_REQUEST, m.LIST_TRANSACTIONS_RESPONSE),
        _api(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, m.DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST,
             m.DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE),
        _api(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, m.ALTER_USER_SCRAM_CREDENTIALS_REQUEST,
             m.ALTER_USER_SCRAM_CREDENTIALS_RESPONSE),
    )
}


def api_for(api_key: int) -> Api | None:
    """The registered API for a raw key (an int from the wire, or an :class:`ApiKey`), or None."""
    return API_SCHEMAS.get(api_key)
