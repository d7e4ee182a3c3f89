"""Quota throttling as the client sees it (KIP-219): which responses make the client hold back.

A broker whose client is over a quota (produce or fetch bytes, request time) says so in the
response's ``throttle_time_ms``. How the throttle is applied depends on the version of the API:

* before KIP-219 the broker delayed the response itself by the throttle time: the client has
  already waited when it reads ``throttle_time_ms``, and sends on at once;
* from the version listed in :data:`CLIENT_THROTTLES_FROM` ("Starting in version N, on quota
  violation, brokers send out responses before throttling", as Kafka's message specs put it)
  the broker answers at once and expects the client to send nothing more on that connection
  until the throttle time has passed; it may also stop reading from the connection (mute it)
  for that time, so a client that sends anyway only waits in the broker's socket buffer.

APIs added after KIP-219 follow it in every version; :func:`client_throttle_ms` covers them by
default (except OffsetForLeaderEpoch, on which Kafka's client never throttles itself).
Throttling is per broker connection, as in Kafka's ``NetworkClient``: a throttled broker does
not hold back requests to the others.

>>> from broker_lite.protocol import ApiKey
>>> client_throttle_ms(ApiKey.FETCH, 7, {"throttle_time_ms": 250})  # the broker delayed it
0
>>> client_throttle_ms(ApiKey.FETCH, 8, {"throttle_time_ms": 250})
250
"""

from __future__ import annotations

from broker_lite.protocol import ApiKey

#: API -> the first version whose responses the client throttles itself on (KIP-219).
CLIENT_THROTTLES_FROM: dict[ApiKey, int] = {
    ApiKey.PRODUCE: 6,
    ApiKey.FETCH: 8,
    ApiKey.LIST_OFFSETS: 3,
    ApiKey.METADATA: 6,
    ApiKey.OFFSET_COMMIT: 4,
    ApiKey.OFFSET_FETCH: 4,
    ApiKey.FIND_COORDINATOR: 2,
    ApiKey.JOIN_GROUP: 3,
    ApiKey.HEARTBEAT: 2,
    ApiKey.LEAVE_GROUP: 2,
    ApiKey.SYNC_GROUP: 2,
    ApiKey.DESCRIBE_GROUPS: 2,
    ApiKey.LIST_GROUPS: 2,
    ApiKey.API_VERSIONS: 2,
    ApiKey.CREATE_TOPICS: 3,
    ApiKey.DELETE_TOPICS: 2,
    ApiKey.INIT_PRODUCER_ID: 1,
    ApiKey.ADD_PARTITIONS_TO_TXN: 1,
    ApiKey.ADD_OFFSETS_TO_TXN: 1,
    ApiKey.END_TXN: 1,
    ApiKey.TXN_OFFSET_COMMIT: 1,
    ApiKey.DESCRIBE_CONFIGS: 2,
    ApiKey.ALTER_CONFIGS: 1,
    ApiKey.CREATE_PARTITIONS: 1,
    ApiKey.DELETE_GROUPS: 1,
    ApiKey.DELETE_RECORDS: 1,
    ApiKey.DESCRIBE_ACLS: 1,
    ApiKey.CREATE_ACLS: 1,
    ApiKey.DELETE_ACLS: 1,
    ApiKey.ALTER_REPLICA_LOG_DIRS: 1,
    ApiKey.DESCRIBE_LOG_DIRS: 1,
    ApiKey.CREATE_DELEGATION_TOKEN: 1,
    ApiKey.RENEW_DELEGATION_TOKEN: 1,
    ApiKey.EXPIRE_DELEGATION_TOKEN: 1,
    ApiKey.DESCRIBE_DELEGATION_TOKEN: 1,
}

#: APIs on which Kafka's client never throttles itself, in any version.
NEVER_CLIENT_THROTTLED = frozenset({ApiKey.OFFSET_FOR_LEADER_EPOCH})


def client_throttle_ms(api_key: int, version: int, body: dict) -> int:
    """How long the client must wait before its next request to the broker that sent ``body``
    (an ``api_key`` response of ``version``): its ``throttle_time_ms`` when the client throttles
    itself in that version, else 0."""
    throttle_ms = body.get("throttle_time_ms") or 0
    if throttle_ms <= 0 or api_key in NEVER_CLIENT_THROTTLED \
            or version < CLIENT_THROTTLES_FROM.get(api_key, 0):
        return 0
    return throttle_ms
