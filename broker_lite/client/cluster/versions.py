"""API version negotiation: which version of each API to speak with one broker.

A connection starts with ApiVersions; the broker lists, per API key, the versions it serves. For
each API the client uses, the version spoken is the highest one inside both ranges: the broker's,
and the client's own (:data:`CLIENT_VERSIONS`, the versions whose request bodies and response
fields this package handles, within what :mod:`broker_lite.protocol` has schemas for). An API
whose ranges do not overlap, or that the broker does not list, fails with
:class:`UnsupportedVersionError` when it is used, naming both ranges; the rest of the connection
stays usable.

ApiVersions itself is asked for at the client's highest version, before the client knows the
broker's, and its answer is read as Kafka's Java client reads it (``ApiVersionsResponse.parse``
and ``NetworkClient.handleApiVersionsResponse``):

* :func:`read_api_versions`: at the version asked, and at version 0 when that fails: a broker
  that does not serve the version asked answers UNSUPPORTED_VERSION in version 0 (Kafka's
  brokers do), or in an encoding of its own (librdkafka's mock cluster: v3's one-byte array
  length, v0's entries, v1's throttle time), which the first reading may already take;
* :func:`retry_version`: after UNSUPPORTED_VERSION the request is sent again at the highest
  ApiVersions version the answer lists (Kafka 2.4+ lists it, KIP-511), or at 0 when it lists
  none (older brokers answer with an empty list). Unlike Java's client, the version asked next
  is always lower than the one before, so a broker that names a version it then refuses cannot
  keep the client asking.

>>> table = negotiate([{"api_key": 1, "min_version": 0, "max_version": 11}], "b1:9092")
>>> table.version(ApiKey.FETCH)
11
>>> table.version(ApiKey.METADATA)  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
broker_lite.client.errors.UnsupportedVersionError: broker b1:9092 does not serve Metadata
(this client speaks versions 1-12, which Kafka 0.10.0 or later serves)
"""

from __future__ import annotations

from broker_lite.protocol import API_SCHEMAS, ApiKey, ProtocolError, parse_response

from ..errors import UnsupportedVersionError

#: API -> (lowest, highest) version this client speaks, within the versions
#: :mod:`broker_lite.protocol` has schemas for (a test checks it, rather than this module building
#: every schema to clip the ranges: an API's schemas are built when the client first speaks it).
CLIENT_VERSIONS: dict[ApiKey, tuple[int, int]] = {
    ApiKey.API_VERSIONS: (0, 3),
    ApiKey.METADATA: (1, 12),  # v0 cannot ask for "all topics" distinctly
    ApiKey.FETCH: (4, 17),  # v4: isolation level, last stable offset, aborted transactions
    ApiKey.LIST_OFFSETS: (1, 10),  # v0 answers with old-style offset lists
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.OFFSET_COMMIT: (2, 9),  # v0 commits to ZooKeeper
    ApiKey.OFFSET_FETCH: (1, 9),  # v0 reads from ZooKeeper
    ApiKey.CREATE_TOPICS: (0, 7),
    ApiKey.DELETE_TOPICS: (0, 6),
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.DESCRIBE_CONFIGS: (0, 4),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    # the classic group protocol, for group members that are not consumers (the schema
    # registry's election: broker_lite.registry.election)
    ApiKey.JOIN_GROUP: (1, 9),  # v1+: rebalance timeout
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.LIST_GROUPS: (0, 5),  # v4+: states filter; v5+: types filter
    ApiKey.DESCRIBE_GROUPS: (0, 5),
    ApiKey.DELETE_GROUPS: (0, 2),
    ApiKey.CONSUMER_GROUP_DESCRIBE: (0, 1),  # the consumer groups of KIP-848
    ApiKey.PRODUCE: (3, 11),  # v3: record batches, transactional id
    ApiKey.INIT_PRODUCER_ID: (0, 5),  # v3+: epoch bump of a known producer (KIP-360)
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 3),  # v4+ is the batched broker-to-broker form
    ApiKey.END_TXN: (0, 4),  # v5 (KIP-890) returns a new epoch after each transaction
    ApiKey.DESCRIBE_TRANSACTIONS: (0, 0),
    ApiKey.DESCRIBE_ACLS: (0, 3),
    ApiKey.CREATE_ACLS: (0, 3),
    ApiKey.DELETE_ACLS: (0, 3),
    ApiKey.SASL_HANDSHAKE: (1, 1),  # v0 sent the mechanism's messages as raw frames
    ApiKey.SASL_AUTHENTICATE: (0, 2),  # v1+: session lifetime (KIP-368)
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (3, 4),  # v3+: replica id (followers truncating)
    ApiKey.CONTROLLED_SHUTDOWN: (2, 3),  # v2+: broker epoch
    ApiKey.ELECT_LEADERS: (1, 2),  # v1+: election type
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: (0, 0),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: (0, 0),
    ApiKey.WRITE_TXN_MARKERS: (1, 1),  # a transaction coordinator's, to other brokers
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
    # share groups' administration (KIP-932)
    ApiKey.SHARE_GROUP_DESCRIBE: (1, 1),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: (0, 0),
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: (0, 0),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: (0, 0),
    # the share-group state APIs: a share-partition leader's, to share coordinators
    ApiKey.READ_SHARE_GROUP_STATE: (0, 0),
    ApiKey.WRITE_SHARE_GROUP_STATE: (0, 0),
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: (0, 0),
    ApiKey.DELETE_SHARE_GROUP_STATE: (0, 0),
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: (0, 0),
}


#: API -> the first Kafka release that serves this client's lowest version of it, for the
#: messages of brokers that do not (a test checks it against recordings of real brokers).
FIRST_KAFKA_RELEASE: dict[ApiKey, str] = {
    ApiKey.API_VERSIONS: "0.10.0", ApiKey.METADATA: "0.10.0", ApiKey.FETCH: "0.11.0",
    ApiKey.LIST_OFFSETS: "0.10.1", ApiKey.FIND_COORDINATOR: "0.8.2", ApiKey.OFFSET_COMMIT: "0.9",
    ApiKey.OFFSET_FETCH: "0.8.2", ApiKey.CREATE_TOPICS: "0.10.1", ApiKey.DELETE_TOPICS: "0.10.1",
    ApiKey.CREATE_PARTITIONS: "1.0", ApiKey.DELETE_RECORDS: "0.11.0",
    ApiKey.DESCRIBE_CONFIGS: "0.11.0", ApiKey.INCREMENTAL_ALTER_CONFIGS: "2.3",
    ApiKey.LIST_GROUPS: "0.9", ApiKey.DESCRIBE_GROUPS: "0.9", ApiKey.DELETE_GROUPS: "1.1",
    ApiKey.JOIN_GROUP: "0.10.1", ApiKey.SYNC_GROUP: "0.9", ApiKey.HEARTBEAT: "0.9",
    ApiKey.LEAVE_GROUP: "0.9",
    ApiKey.PRODUCE: "0.11.0", ApiKey.INIT_PRODUCER_ID: "0.11.0",
    ApiKey.ADD_PARTITIONS_TO_TXN: "0.11.0", ApiKey.END_TXN: "0.11.0",
    ApiKey.DESCRIBE_TRANSACTIONS: "3.0", ApiKey.DESCRIBE_ACLS: "0.11.0",
    ApiKey.CREATE_ACLS: "0.11.0", ApiKey.DELETE_ACLS: "0.11.0", ApiKey.SASL_HANDSHAKE: "1.0",
    ApiKey.SASL_AUTHENTICATE: "1.0", ApiKey.OFFSET_FOR_LEADER_EPOCH: "2.3",
    ApiKey.CONTROLLED_SHUTDOWN: "2.2", ApiKey.ELECT_LEADERS: "2.4",
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: "2.4", ApiKey.LIST_PARTITION_REASSIGNMENTS: "2.4",
    ApiKey.WRITE_TXN_MARKERS: "2.8", ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: "2.7",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: "2.7",
    ApiKey.CONSUMER_GROUP_DESCRIBE: "3.8",  # early access in 3.8, generally available in 4.0
    # share groups (KIP-932): their first versions that clients of Kafka 4.1 on speak
    ApiKey.SHARE_GROUP_DESCRIBE: "4.1", ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: "4.1",
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: "4.1", ApiKey.DELETE_SHARE_GROUP_OFFSETS: "4.1",
    ApiKey.READ_SHARE_GROUP_STATE: "4.1", ApiKey.WRITE_SHARE_GROUP_STATE: "4.1",
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: "4.1", ApiKey.DELETE_SHARE_GROUP_STATE: "4.1",
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: "4.1",
}


def api_name(api_key: int) -> str:
    api = API_SCHEMAS.get(api_key)
    return api.name if api is not None else f"API {api_key}"


class ApiVersionTable:
    """The outcome of negotiating with one broker: per usable API, the range of versions both
    sides speak (the highest is spoken); per unusable one, why."""

    def __init__(self, shared: dict[ApiKey, tuple[int, int]], problems: dict[ApiKey, str]):
        self.shared = shared
        self.problems = problems

    def version(self, api_key: ApiKey, max_version: int | None = None) -> int:
        """The version to speak, at most ``max_version`` when given (a request that needs an
        older version, e.g. Fetch by topic name rather than topic id)."""
        if api_key not in self.shared:
            raise UnsupportedVersionError(self.problems.get(
                api_key, f"{api_name(api_key)} is not used by this client"))
        low, high = self.shared[api_key]
        if max_version is None or max_version >= high:
            return high
        if max_version < low:
            raise UnsupportedVersionError(
                f"{api_name(api_key)} version {max_version} or lower is needed, but the broker "
                f"and this client share only versions {low}-{high}")
        return max_version


def negotiate(advertised: list[dict], broker: str) -> ApiVersionTable:
    """Negotiate with the ``api_keys`` list of an ApiVersions response from ``broker``."""
    theirs = {entry["api_key"]: (entry["min_version"], entry["max_version"])
              for entry in advertised}
    shared, problems = {}, {}
    for key, (our_low, our_high) in CLIENT_VERSIONS.items():
        needs = f"Kafka {FIRST_KAFKA_RELEASE[key]} or later"
        if key not in theirs:
            problems[key] = (f"broker {broker} does not serve {api_name(key)} (this client "
                             f"speaks versions {our_low}-{our_high}, which {needs} serves)")
            continue
        their_low, their_high = theirs[key]
        low, high = max(our_low, their_low), min(our_high, their_high)
        if low > high:
            problems[key] = (f"broker {broker} serves {api_name(key)} versions "
                             f"{their_low}-{their_high}, this client speaks {our_low}-{our_high}: "
                             f"none in common ({needs} serves them)")
        else:
            shared[key] = (low, high)
    return ApiVersionTable(shared, problems)


def read_api_versions(frame: bytes | bytearray, asked: int) -> tuple[int, dict]:
    """``(version read, body)`` of an ApiVersions response ``frame`` (header and body, without
    the size) to a request of version ``asked``: read at ``asked``, else at version 0, as
    Kafka's ``ApiVersionsResponse.parse`` does. Raises :class:`ProtocolError` (the one of the
    reading at ``asked``, naming the field) when neither reading succeeds.

    >>> from broker_lite.protocol import encode_response
    >>> v0 = b"".join(encode_response(ApiKey.API_VERSIONS, 0, 5, {
    ...     "error_code": 35,  # UNSUPPORTED_VERSION
    ...     "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 2}]}))[4:]
    >>> version, body = read_api_versions(v0, 3)
    >>> version, body["error_code"], retry_version(3, body)
    (0, 35, 2)
    """
    try:
        return asked, parse_response(ApiKey.API_VERSIONS, asked, frame)[1]
    except ProtocolError as exc:
        if asked == 0:
            raise
        first = exc
    try:
        return 0, parse_response(ApiKey.API_VERSIONS, 0, frame)[1]
    except ProtocolError:
        raise first from None


def retry_version(asked: int, body: dict) -> int:
    """The ApiVersions version to ask next after ``body`` refused version ``asked`` with
    UNSUPPORTED_VERSION: the highest the broker lists for ApiVersions, 0 when it lists none,
    and always below ``asked``."""
    listed = next((entry["max_version"] for entry in body.get("api_keys") or ()
                   if entry["api_key"] == ApiKey.API_VERSIONS), 0)
    return max(0, min(listed, asked - 1))
