"""Finding the coordinator of a key: FindCoordinator, its answer remembered until it moves.

Groups (key type 0) and transactional ids (key type 1) each have a coordinator, a broker found
with FindCoordinator on any broker. :class:`Coordinators` remembers the coordinator of each key
until a request there fails with NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a lost connection or
a timeout; the next attempt looks it up again. :meth:`Coordinators.call` runs one request at the
coordinator and retries retriable errors (those, COORDINATOR_LOAD_IN_PROGRESS, ...) with backoff
until the deadline.

FindCoordinator v0 knows only groups; v1-3 carry one key and its type; v4+ (KIP-699) carry a
list of keys and answer one entry per key.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from broker_lite.protocol import ApiKey
from broker_lite.protocol.enums import CoordinatorType

from ..errors import (
    CoordinatorNotAvailableError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NotCoordinatorError,
    UnsupportedVersionError,
    error_for,
)
from ..retry import Deadline, retry
from .cluster import Cluster
from .connection import BrokerConnection
from .metadata import BrokerInfo

FIRST_BATCHED_FIND_COORDINATOR = 4  # CoordinatorKeys instead of Key
_COORDINATOR_MOVED = (NotCoordinatorError, CoordinatorNotAvailableError, KafkaConnectionError,
                      KafkaTimeoutError)


@dataclass(frozen=True)
class KeyType:
    """A FindCoordinator key type: its code, what its keys are called in messages, and the
    first FindCoordinator version that can look it up."""

    code: int
    name: str
    first_version: int = 0

    def where(self, key: str) -> str:
        return f"{self.name} {key}"


GROUP = KeyType(CoordinatorType.GROUP, "group")
TRANSACTIONAL_ID = KeyType(CoordinatorType.TRANSACTION, "transactional id", first_version=1)


def find_coordinator_request(key_type: KeyType, key: str, version: int) -> dict:
    if version < key_type.first_version:
        raise UnsupportedVersionError(
            f"finding the coordinator of a {key_type.name} needs FindCoordinator "
            f"v{key_type.first_version}+, the broker speaks v{version}")
    if version >= FIRST_BATCHED_FIND_COORDINATOR:
        return {"key_type": key_type.code, "coordinator_keys": [key]}
    return {"key": key, "key_type": key_type.code}


def parse_find_coordinator(body: dict, key_type: KeyType, key: str, version: int) -> BrokerInfo:
    """The coordinator's node, or the error (retriable while none is available)."""
    where = key_type.where(key)
    if version >= FIRST_BATCHED_FIND_COORDINATOR:
        entry = next((c for c in body["coordinators"] if c["key"] == key), None)
        if entry is None:
            raise CoordinatorNotAvailableError(
                f"the FindCoordinator response has no coordinator for {where}")
    else:
        entry = body
    error = error_for(entry["error_code"], entry.get("error_message"), where=where)
    if error is not None:
        raise error
    return BrokerInfo(entry["node_id"], entry["host"], entry["port"])


class Coordinators:
    """The coordinator of each key of one :class:`KeyType`, looked up with FindCoordinator and
    remembered until it moves (thread-safe).

    Parameters
    ----------
    cluster : Cluster
    key_type : KeyType
        :data:`GROUP` or :data:`TRANSACTIONAL_ID`.
    """

    def __init__(self, cluster: Cluster, key_type: KeyType):
        self.cluster = cluster
        self.key_type = key_type
        self._known: dict[str, BrokerInfo] = {}
        self._lock = threading.Lock()

    def call(self, what: str, key: str, api_key: ApiKey, body,
             parse: Callable[[int, dict], object], deadline: Deadline | None = None):
        """Send ``body`` (a dict, or a function of the version) to the coordinator of ``key``;
        return ``parse(version, response)``, retrying retriable errors until ``deadline`` (by
        default the cluster's request timeout from now)."""
        deadline = deadline or self.cluster.deadline()

        def attempt():
            conn = self.connection(key, deadline)
            version, response = conn.request(api_key, body, deadline)
            return parse(version, response)

        return retry(what, deadline, self.cluster.backoff(), attempt,
                     lambda error: self.on_retriable(key, error))

    def connection(self, key: str, deadline: Deadline) -> BrokerConnection:
        """The connection to the coordinator of ``key``, looked up unless known."""
        with self._lock:
            known = self._known.get(key)
        if known is None:
            version, body = self.cluster.request_any(
                ApiKey.FIND_COORDINATOR,
                lambda v: find_coordinator_request(self.key_type, key, v), deadline)
            known = parse_find_coordinator(body, self.key_type, key, version)
            with self._lock:
                self._known[key] = known
        return self.cluster.connection(known.host, known.port, known.node_id)

    def on_retriable(self, key: str, error: KafkaClientError) -> None:
        """A request for ``key`` failed with the retriable ``error``: forget the coordinator
        when the error says it moved."""
        self.cluster.on_retriable(error)
        if isinstance(error, _COORDINATOR_MOVED):
            with self._lock:
                self._known.pop(key, None)
