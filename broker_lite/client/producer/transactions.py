"""Kafka transactions from the producer's side (KIP-98): the coordinator's APIs and their states.

A transactional producer talks to the transaction coordinator of its ``transactional.id`` (the
broker found with FindCoordinator, key type 1):

========================  ==================================================================
InitProducerId            gets the producer id and a new epoch; fences any older instance with
                          the same transactional id and aborts its open transaction
AddPartitionsToTxn        before the first write to a partition in a transaction
EndTxn                    commit or abort: the coordinator writes the markers
DescribeTransactions      the coordinator's view of a transaction (Kafka 3.0+, KIP-664)
========================  ==================================================================

EndTxn names the transaction by transactional id, producer id and epoch, not by connection, so
any client can end a transaction another producer opened: :func:`end_transaction` is how one
process commits the transactions that others wrote (the Spark driver, for its tasks).

Coordinator answers that say "ask again" are retried with backoff until ``request.timeout.ms``:
COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR (the coordinator is looked up again),
COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS (markers of the previous transaction
still being written), and lost connections. PRODUCER_FENCED and INVALID_PRODUCER_EPOCH raise
:class:`ProducerFencedError`.

The producer's own state is a table, :data:`ALLOWED` (which operation may start in which
state), with the transitions in :class:`TransactionManager`::

    UNINITIALIZED --init--> READY --begin--> IN_TRANSACTION --commit--> COMMITTING --> READY
                                                  |   \\--abort--> ABORTING --> READY
                                         send fails  \\
                                                  v   fenced (any operation)
                                           ABORTABLE_ERROR --abort--> ABORTING     FATAL_ERROR

A commit or abort that timed out stays in COMMITTING / ABORTING and may be called again.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from broker_lite.common.vocabulary import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode

from ..cluster.cluster import Cluster, ClusterUser
from ..cluster.coordinators import TRANSACTIONAL_ID, Coordinators
from ..errors import (
    ClientClosedError,
    CoordinatorNotAvailableError,
    InvalidArgumentError,
    KafkaClientError,
    KafkaTimeoutError,
    ProducerFencedError,
    TransactionStateError,
    UnsupportedVersionError,
    error_for,
)
from ..retry import Backoff, Deadline

FIRST_INIT_PRODUCER_ID_WITH_CURRENT = 3  # KIP-360: the producer's current id and epoch


class TransactionState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable error"
    FATAL_ERROR = "fatal error"


S = TransactionState

#: Operation -> the states it may start from (any operation in FATAL_ERROR raises the error
#: that made it fatal).
ALLOWED: dict[str, frozenset[TransactionState]] = {
    "init_transactions": frozenset({S.UNINITIALIZED}),
    "begin_transaction": frozenset({S.READY}),
    "send": frozenset({S.IN_TRANSACTION}),
    "commit_transaction": frozenset({S.IN_TRANSACTION, S.COMMITTING}),
    "abort_transaction": frozenset({S.IN_TRANSACTION, S.ABORTABLE_ERROR, S.ABORTING}),
}

_HINTS = {
    S.UNINITIALIZED: "call init_transactions() first",
    S.READY: "call begin_transaction() first",
    S.IN_TRANSACTION: "a transaction is in progress",
    S.COMMITTING: "a commit is in progress: call commit_transaction() again",
    S.ABORTING: "an abort is in progress: call abort_transaction() again",
    S.ABORTABLE_ERROR: "the transaction failed: call abort_transaction()",
}


@dataclass(frozen=True)
class TransactionHandle:
    """What another process needs to end a transaction this producer opened (picklable):
    pass it to :func:`end_transaction`. ``partitions`` are those written in the transaction
    (none: there is nothing to end)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class TransactionDescription:
    """A transaction as its coordinator describes it (DescribeTransactions). ``state`` is the
    coordinator's name for it: ``Empty``, ``Ongoing``, ``PrepareCommit``, ``PrepareAbort``,
    ``CompleteCommit``, ``CompleteAbort``, ``Dead``, ``PrepareEpochFence``."""

    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int
    partitions: tuple[TopicPartition, ...]


# -- request bodies and answers (sans I/O) -------------------------------------------------------


def init_producer_id_request(transactional_id: str | None, timeout_ms: int, version: int,
                             producer_id: int = NO_PRODUCER_ID,
                             producer_epoch: int = NO_PRODUCER_EPOCH) -> dict:
    """An InitProducerId body; the current id and epoch travel from v3 on (KIP-360), older
    versions ask as a new instance would (which also bumps the epoch of a transactional id)."""
    body = {"transactional_id": transactional_id, "transaction_timeout_ms": timeout_ms}
    if version >= FIRST_INIT_PRODUCER_ID_WITH_CURRENT:
        body.update(producer_id=producer_id, producer_epoch=producer_epoch)
    return body


def parse_init_producer_id(body: dict, where: str) -> tuple[int, int]:
    _raise_for(body["error_code"], None, where)
    return body["producer_id"], body["producer_epoch"]


def add_partitions_request(transactional_id: str, producer_id: int, producer_epoch: int,
                           tps: Iterable[TopicPartition]) -> dict:
    """AddPartitionsToTxn v0-3 (v4+ is the batched broker-to-broker form)."""
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(tps):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return {"v3_and_below_transactional_id": transactional_id,
            "v3_and_below_producer_id": producer_id,
            "v3_and_below_producer_epoch": producer_epoch,
            "v3_and_below_topics": [{"name": name, "partitions": parts}
                                    for name, parts in by_topic.items()]}


def parse_add_partitions(body: dict, transactional_id: str
                         ) -> dict[TopicPartition, KafkaClientError | None]:
    """Each partition's outcome: None when added, else its error."""
    outcomes = {}
    for topic in body["results_by_topic_v3_and_below"]:
        for p in topic["results_by_partition"]:
            tp = TopicPartition(topic["name"], p["partition_index"])
            outcomes[tp] = _error(p["partition_error_code"], None,
                                  f"transactional id {transactional_id}, {tp}")
    return outcomes


def end_txn_request(transactional_id: str, producer_id: int, producer_epoch: int,
                    commit: bool) -> dict:
    return {"transactional_id": transactional_id, "producer_id": producer_id,
            "producer_epoch": producer_epoch, "committed": commit}


def parse_describe_transactions(body: dict, transactional_id: str) -> TransactionDescription:
    entry = next((s for s in body["transaction_states"]
                  if s["transactional_id"] == transactional_id), None)
    if entry is None:
        raise CoordinatorNotAvailableError(
            f"the DescribeTransactions response has no entry for {transactional_id}")
    _raise_for(entry["error_code"], None, f"transactional id {transactional_id}")
    return TransactionDescription(
        transactional_id, entry["transaction_state"], entry["producer_id"],
        entry["producer_epoch"], entry["transaction_timeout_ms"],
        entry["transaction_start_time_ms"],
        tuple(sorted(TopicPartition(t["topic"], p) for t in entry["topics"]
                     for p in t["partitions"])))


def _error(code: int, message: str | None, where: str) -> KafkaClientError | None:
    return error_for(code, message, where=where)


def _raise_for(code: int, message: str | None, where: str) -> None:
    error = error_for(code, message, where=where)
    if error is not None:
        raise error


# -- talking to coordinators ----------------------------------------------------------------------


#: Coordinator states of a transaction whose markers are still being written.
MARKERS_PENDING = frozenset({"PrepareCommit", "PrepareAbort"})


def end_transaction(client: ClusterUser, transactional_id: str, producer_id: int,
                    producer_epoch: int, commit: bool, *, wait_for_markers: bool = False) -> None:
    """Commit (``commit=True``) or abort the open transaction of ``transactional_id`` written by
    producer ``producer_id`` at ``producer_epoch``, from any client (EndTxn).

    The coordinator answers once it has recorded the decision; it writes the markers to the
    transaction's partitions afterwards, so read_committed readers may see the outcome a moment
    later. With ``wait_for_markers`` this returns only once the markers are written (the
    coordinator describes the transaction as complete), so that anything started afterwards
    sees the outcome.

    Repeating an end that already happened the same way succeeds (the coordinator answers a
    retried EndTxn as it answered the first). Raises :class:`ProducerFencedError` when a newer
    producer took the transactional id over (its transaction was then aborted),
    :class:`InvalidTxnStateError` when the transaction has nothing in it or ended the other way,
    :class:`KafkaTimeoutError` when the markers are not written within the request timeout.
    """
    _check_transactional_id(transactional_id)
    cluster = _cluster_of(client)
    coordinators = Coordinators(cluster, TRANSACTIONAL_ID)
    verb = "commit" if commit else "abort"

    def end() -> None:
        coordinators.call(
            f"{verb} of transaction {transactional_id} (producer {producer_id}, epoch "
            f"{producer_epoch})", transactional_id, ApiKey.END_TXN,
            end_txn_request(transactional_id, producer_id, producer_epoch, commit),
            lambda version, body: _raise_for(body["error_code"], None,
                                             f"transactional id {transactional_id}"))

    end()
    if wait_for_markers and not _wait_for_markers(cluster, transactional_id, producer_id):
        # A coordinator before Kafka 3.0 cannot describe the transaction (KIP-664), but it
        # answers the same EndTxn again with CONCURRENT_TRANSACTIONS while the markers are
        # being written and NONE once they are (TransactionCoordinator.handleEndTransaction,
        # PrepareCommit / CompleteCommit), and that answer is retried until then.
        end()


def _wait_for_markers(cluster: Cluster, transactional_id: str, producer_id: int) -> bool:
    """Wait until the coordinator describes the transaction as complete; False when it cannot
    describe transactions."""
    deadline, backoff = cluster.deadline(), Backoff(5, 200)
    while True:
        described = describe_transaction(cluster, transactional_id)
        if described is None:
            return False
        if described.state not in MARKERS_PENDING or described.producer_id != producer_id:
            return True  # complete (or taken over since)
        if deadline.expired():
            raise KafkaTimeoutError(
                f"the markers of transaction {transactional_id} were not all written within "
                f"{deadline.timeout_ms} ms (the coordinator still describes it as "
                f"{described.state})")
        backoff.wait(deadline)


def describe_transaction(client: ClusterUser | Cluster,
                         transactional_id: str) -> TransactionDescription | None:
    """The coordinator's view of ``transactional_id`` (DescribeTransactions), or None when the
    coordinator does not serve DescribeTransactions (Kafka before 3.0). Raises
    :class:`TransactionalIdNotFoundError` for an id the coordinator does not know."""
    _check_transactional_id(transactional_id)
    coordinators = Coordinators(_cluster_of(client), TRANSACTIONAL_ID)
    try:
        return coordinators.call(
            f"describe_transaction({transactional_id!r})", transactional_id,
            ApiKey.DESCRIBE_TRANSACTIONS, {"transactional_ids": [transactional_id]},
            lambda version, body: parse_describe_transactions(body, transactional_id))
    except UnsupportedVersionError:
        return None


def _cluster_of(client: ClusterUser | Cluster) -> Cluster:
    """The connections of an open :class:`~broker_lite.client.KafkaClient` (or a
    :class:`Cluster` itself)."""
    if isinstance(client, Cluster):
        return client
    cluster = getattr(client, "cluster", None)
    if not isinstance(cluster, Cluster):
        raise InvalidArgumentError(f"expected a KafkaClient, got {type(client).__name__}")
    if client.closed:
        raise ClientClosedError("the client is closed")
    return cluster


def _check_transactional_id(transactional_id: str) -> None:
    if not isinstance(transactional_id, str) or not transactional_id:
        raise InvalidArgumentError(
            f"a transactional id must be a non-empty string, got {transactional_id!r}")


# -- one producer's transactions ------------------------------------------------------------------


class TransactionManager:
    """The transactional state of one producer: its id and epoch, the state of the table
    above, the partitions of the open transaction. Not thread-safe: the producer serialises
    calls."""

    def __init__(self, cluster: Cluster, transactional_id: str, timeout_ms: int):
        _check_transactional_id(transactional_id)
        self.cluster = cluster
        self.transactional_id = transactional_id
        self.timeout_ms = timeout_ms
        self.coordinators = Coordinators(cluster, TRANSACTIONAL_ID)
        self.state = S.UNINITIALIZED
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self.partitions: set[TopicPartition] = set()
        self.error: KafkaClientError | None = None  # why ABORTABLE_ERROR / FATAL_ERROR

    @property
    def where(self) -> str:
        return f"transactional id {self.transactional_id}"

    # -- the table ------------------------------------------------------------------------------

    def require(self, operation: str) -> None:
        """Raise unless ``operation`` may start in the current state."""
        if self.state is S.FATAL_ERROR and self.error is not None:  # set with the state
            raise self.error
        if self.state not in ALLOWED[operation]:
            error = TransactionStateError(
                f"{operation}() is not possible now ({self.where} is {self.state.value}): "
                f"{_HINTS[self.state]}", state=self.state.name)
            raise error from self.error

    def fail(self, error: KafkaClientError) -> None:
        """After a failed write or transactional request: fenced is fatal, anything else makes
        the transaction abortable (unless already fatal)."""
        if self.state is S.FATAL_ERROR:
            return
        if isinstance(error, ProducerFencedError):
            self.state, self.error = S.FATAL_ERROR, error
        elif self.state is S.IN_TRANSACTION:
            self.state, self.error = S.ABORTABLE_ERROR, error

    # -- operations -----------------------------------------------------------------------------

    def init(self, deadline: Deadline | None = None) -> None:
        """InitProducerId at the coordinator: a new epoch (the first, or the one after an
        abort whose writes were in doubt, KIP-360)."""
        current = (self.producer_id, self.producer_epoch)

        def body(version: int) -> dict:
            return init_producer_id_request(self.transactional_id, self.timeout_ms, version,
                                            *current)

        try:
            self.producer_id, self.producer_epoch = self.coordinators.call(
                f"InitProducerId of {self.where}", self.transactional_id,
                ApiKey.INIT_PRODUCER_ID, body,
                lambda version, response: parse_init_producer_id(response, self.where),
                deadline)
        except ProducerFencedError as exc:
            self.state, self.error = S.FATAL_ERROR, exc
            raise
        self.partitions = set()
        self.state, self.error = S.READY, None

    def begin(self) -> None:
        self.require("begin_transaction")
        self.partitions = set()
        self.state = S.IN_TRANSACTION

    def add_partitions(self, tps: Iterable[TopicPartition]) -> None:
        """AddPartitionsToTxn for the partitions not yet in the transaction."""
        new = set(tps) - self.partitions
        if not new:
            return

        def parse(version: int, body: dict) -> None:
            outcomes = parse_add_partitions(body, self.transactional_id)
            self.partitions.update(tp for tp, error in outcomes.items() if error is None)
            errors = [e for tp, e in sorted(outcomes.items()) if e is not None and
                      e.error_code != ErrorCode.OPERATION_NOT_ATTEMPTED]
            final = next((e for e in errors if not e.retriable), None)
            if final is not None or errors:
                raise final or errors[0]
            missing = new - self.partitions
            if missing:
                raise CoordinatorNotAvailableError(
                    f"the AddPartitionsToTxn response lacks {sorted(map(str, missing))}")

        try:
            self.coordinators.call(
                f"AddPartitionsToTxn of {self.where}", self.transactional_id,
                ApiKey.ADD_PARTITIONS_TO_TXN,
                lambda version: add_partitions_request(
                    self.transactional_id, self.producer_id, self.producer_epoch,
                    new - self.partitions), parse)
        except KafkaClientError as exc:
            self.fail(exc)
            raise

    def end(self, commit: bool) -> None:
        """EndTxn. An empty transaction ends without asking the coordinator, which would
        refuse to end a transaction that has nothing in it (as the Java client does)."""
        operation = "commit_transaction" if commit else "abort_transaction"
        self.require(operation)
        self.state = S.COMMITTING if commit else S.ABORTING
        if self.partitions:
            try:
                end_txn_body = end_txn_request(self.transactional_id, self.producer_id,
                                               self.producer_epoch, commit)
                self.coordinators.call(
                    f"{operation}() of {self.where}", self.transactional_id, ApiKey.END_TXN,
                    end_txn_body,
                    lambda version, body: _raise_for(body["error_code"], None, self.where))
            except ProducerFencedError as exc:
                self.state, self.error = S.FATAL_ERROR, exc
                raise
            except KafkaClientError as exc:
                if not exc.retriable:  # the coordinator refused: nothing sensible is left
                    self.state, self.error = S.FATAL_ERROR, exc
                raise
        self.partitions = set()
        self.state, self.error = S.READY, None

    def handle(self) -> TransactionHandle:
        return TransactionHandle(self.transactional_id, self.producer_id, self.producer_epoch,
                                 tuple(sorted(self.partitions)))
