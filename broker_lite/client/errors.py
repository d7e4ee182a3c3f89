"""The client's exceptions, and the one table from Kafka error codes to them.

Every exception is a :class:`KafkaClientError`, which carries

* ``error_code`` -- the Kafka :class:`~broker_lite.protocol.ErrorCode` when there is one;
* ``retriable`` -- whether the same request may succeed later, as Kafka marks it (its
  ``RetriableException`` hierarchy, i.e. ``ErrorCode.retriable``); connection failures are
  retriable too;
* ``invalid_metadata`` -- whether the client's cluster metadata is probably out of date (Kafka's
  ``InvalidMetadataException``: the leader moved, the topic changed, the broker went away), so a
  retry first refreshes it.

Errors a broker returns in a response are :class:`KafkaApiError` subclasses, built with
:func:`error_for` from :data:`ERROR_CLASSES`; a code without a class of its own gives a plain
:class:`KafkaApiError` with that code.

>>> error = error_for(6, where="events-0")
>>> type(error).__name__, error.retriable, error.invalid_metadata
('NotLeaderError', True, True)
>>> str(error_for(1, "out of range", where="events-0"))
'OFFSET_OUT_OF_RANGE (1) for events-0: out of range'
>>> error_for(0) is None
True
"""

from __future__ import annotations

from broker_lite.protocol import ErrorCode


class KafkaClientError(Exception):
    """Base class of every error raised by :mod:`broker_lite.client`."""

    error_code: ErrorCode | None = None
    retriable: bool = False
    invalid_metadata: bool = False

    def __init__(self, message: str = "", *, error_code: int | None = None,
                 retriable: bool | None = None):
        super().__init__(message)
        if error_code is not None:
            self.error_code = ErrorCode.of(error_code)
            if retriable is None and type(self).error_code is None:
                retriable = self.error_code.retriable
        if retriable is not None:
            self.retriable = retriable


# -- client-side errors ---------------------------------------------------------------------------


class ConfigError(KafkaClientError, ValueError):
    """An unknown setting or a bad value; ``key`` is the setting as the user spelled it."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


class InvalidArgumentError(KafkaClientError, ValueError):
    """A bad argument to a client method (a negative offset spec, an empty group id, ...)."""


class ClientClosedError(KafkaClientError):
    """The client (or connection) was closed."""


class KafkaTimeoutError(KafkaClientError):
    """An operation did not complete in time: a broker did not answer within the request
    timeout, or retries did not succeed before the operation's deadline. ``last_error`` is the
    error of the last attempt, when there was one."""

    error_code = ErrorCode.REQUEST_TIMED_OUT
    retriable = True

    def __init__(self, message: str = "", *, last_error: KafkaClientError | None = None,
                 error_code: int | None = None):
        super().__init__(message, error_code=error_code)
        self.last_error = last_error


class KafkaConnectionError(KafkaClientError):
    """The connection to a broker failed or was closed mid-request; the next request opens a
    new one."""

    error_code = ErrorCode.NETWORK_EXCEPTION
    retriable = True
    invalid_metadata = True


class BrokerNotAvailableError(KafkaConnectionError):
    """No connection could be opened to a broker (refused, unreachable, unresolvable, or not
    within ``socket.connection.setup.timeout.ms``). Retriable here, unlike Kafka's
    BROKER_NOT_AVAILABLE response code: the broker may come back."""

    error_code = ErrorCode.BROKER_NOT_AVAILABLE


class InvalidResponseError(KafkaClientError):
    """A response that does not decode, or answers another request; the connection is reset."""


class UnsupportedVersionError(KafkaClientError):
    """The broker and this client have no version of an API in common."""

    error_code = ErrorCode.UNSUPPORTED_VERSION


class RecordTooLargeError(KafkaClientError):
    """A record too large to produce (over ``max.request.size``, or refused by the broker's
    ``message.max.bytes`` on its own), or a record batch larger than the client may fetch
    (``fetch.max.bytes``) from a broker that does not return oversized first batches whole."""

    error_code = ErrorCode.MESSAGE_TOO_LARGE


# -- errors returned by brokers -------------------------------------------------------------------


class KafkaApiError(KafkaClientError):
    """An error code in a broker's response. ``where`` names what it concerns (a partition,
    a topic, a group)."""

    def __init__(self, message: str = "", *, error_code: int | None = None, where: str = ""):
        super().__init__(message, error_code=error_code)
        self.where = where


def _api_error(name: str, code: ErrorCode, *, base: type = KafkaApiError,
               invalid_metadata: bool = False, doc: str = "") -> type[KafkaApiError]:
    return type(name, (base,), {
        "error_code": code, "retriable": code.retriable, "invalid_metadata": invalid_metadata,
        "__doc__": doc or f"{code.name} ({int(code)}): {code.message}", "__module__": __name__,
    })


E = ErrorCode

UnknownServerError = _api_error("UnknownServerError", E.UNKNOWN_SERVER_ERROR)
OffsetOutOfRangeError = _api_error(
    "OffsetOutOfRangeError", E.OFFSET_OUT_OF_RANGE,
    doc="The fetch offset is below the log start offset or above the high watermark.")
CorruptMessageError = _api_error("CorruptMessageError", E.CORRUPT_MESSAGE)
UnknownTopicOrPartitionError = _api_error(
    "UnknownTopicOrPartitionError", E.UNKNOWN_TOPIC_OR_PARTITION, invalid_metadata=True,
    doc="The topic or partition does not exist (when the cluster metadata says so, retrying does "
        "not help, and such errors are raised with ``retriable`` False).")
InvalidFetchSizeError = _api_error("InvalidFetchSizeError", E.INVALID_FETCH_SIZE)
LeaderNotAvailableError = _api_error("LeaderNotAvailableError", E.LEADER_NOT_AVAILABLE,
                                     invalid_metadata=True)
NotLeaderError = _api_error("NotLeaderError", E.NOT_LEADER_OR_FOLLOWER, invalid_metadata=True)
NotLeaderOrFollowerError = NotLeaderError
ReplicaNotAvailableError = _api_error("ReplicaNotAvailableError", E.REPLICA_NOT_AVAILABLE,
                                      invalid_metadata=True)
OffsetMetadataTooLargeError = _api_error("OffsetMetadataTooLargeError",
                                         E.OFFSET_METADATA_TOO_LARGE)
InvalidTopicError = _api_error("InvalidTopicError", E.INVALID_TOPIC_EXCEPTION)
KafkaStorageError = _api_error("KafkaStorageError", E.KAFKA_STORAGE_ERROR, invalid_metadata=True)
TopicAuthorizationFailedError = _api_error("TopicAuthorizationFailedError",
                                           E.TOPIC_AUTHORIZATION_FAILED)
ClusterAuthorizationFailedError = _api_error("ClusterAuthorizationFailedError",
                                             E.CLUSTER_AUTHORIZATION_FAILED)
SecurityDisabledError = _api_error(
    "SecurityDisabledError", E.SECURITY_DISABLED,
    doc="SECURITY_DISABLED (54): the broker has no authorizer, so it keeps no ACLs.")
TopicAlreadyExistsError = _api_error("TopicAlreadyExistsError", E.TOPIC_ALREADY_EXISTS)
InvalidPartitionsError = _api_error("InvalidPartitionsError", E.INVALID_PARTITIONS)
InvalidReplicationFactorError = _api_error("InvalidReplicationFactorError",
                                           E.INVALID_REPLICATION_FACTOR)
InvalidReplicaAssignmentError = _api_error("InvalidReplicaAssignmentError",
                                           E.INVALID_REPLICA_ASSIGNMENT)
InvalidConfigurationError = _api_error("InvalidConfigurationError", E.INVALID_CONFIG)
NotControllerError = _api_error("NotControllerError", E.NOT_CONTROLLER, invalid_metadata=True)
InvalidRequestError = _api_error("InvalidRequestError", E.INVALID_REQUEST)
UnsupportedForMessageFormatError = _api_error("UnsupportedForMessageFormatError",
                                              E.UNSUPPORTED_FOR_MESSAGE_FORMAT)
PolicyViolationError = _api_error("PolicyViolationError", E.POLICY_VIOLATION)
ListenerNotFoundError = _api_error("ListenerNotFoundError", E.LISTENER_NOT_FOUND,
                                   invalid_metadata=True)
TopicDeletionDisabledError = _api_error("TopicDeletionDisabledError", E.TOPIC_DELETION_DISABLED)
FencedLeaderEpochError = _api_error("FencedLeaderEpochError", E.FENCED_LEADER_EPOCH,
                                    invalid_metadata=True)
UnknownLeaderEpochError = _api_error("UnknownLeaderEpochError", E.UNKNOWN_LEADER_EPOCH,
                                     invalid_metadata=True)
OffsetNotAvailableError = _api_error("OffsetNotAvailableError", E.OFFSET_NOT_AVAILABLE)
PreferredLeaderNotAvailableError = _api_error("PreferredLeaderNotAvailableError",
                                              E.PREFERRED_LEADER_NOT_AVAILABLE)
EligibleLeadersNotAvailableError = _api_error("EligibleLeadersNotAvailableError",
                                              E.ELIGIBLE_LEADERS_NOT_AVAILABLE)
ElectionNotNeededError = _api_error("ElectionNotNeededError", E.ELECTION_NOT_NEEDED)
NoReassignmentInProgressError = _api_error("NoReassignmentInProgressError",
                                           E.NO_REASSIGNMENT_IN_PROGRESS)
UnknownTopicIdError = _api_error("UnknownTopicIdError", E.UNKNOWN_TOPIC_ID, invalid_metadata=True)
InconsistentTopicIdError = _api_error("InconsistentTopicIdError", E.INCONSISTENT_TOPIC_ID,
                                      invalid_metadata=True)

SaslAuthenticationFailedError = _api_error(
    "SaslAuthenticationFailedError", E.SASL_AUTHENTICATION_FAILED,
    doc="SASL_AUTHENTICATION_FAILED (58): the broker refused the credentials (or the client "
        "refused the broker's SCRAM signature); the message is the broker's. Not retriable.")
UnsupportedSaslMechanismError = _api_error("UnsupportedSaslMechanismError",
                                           E.UNSUPPORTED_SASL_MECHANISM)
IllegalSaslStateError = _api_error("IllegalSaslStateError", E.ILLEGAL_SASL_STATE)
ResourceNotFoundError = _api_error("ResourceNotFoundError", E.RESOURCE_NOT_FOUND)
DuplicateResourceError = _api_error("DuplicateResourceError", E.DUPLICATE_RESOURCE)
UnacceptableCredentialError = _api_error("UnacceptableCredentialError",
                                         E.UNACCEPTABLE_CREDENTIAL)


class SslAuthenticationError(KafkaClientError):
    """The TLS handshake with a broker failed (its certificate is not trusted, its host name
    does not match, the broker refused this client's certificate): Kafka's
    ``SslAuthenticationException``, not retriable."""


class GroupCoordinatorError(KafkaApiError):
    """Base class of the errors about groups: finding their coordinator, and its answers."""


CoordinatorLoadInProgressError = _api_error(
    "CoordinatorLoadInProgressError", E.COORDINATOR_LOAD_IN_PROGRESS, base=GroupCoordinatorError)
CoordinatorNotAvailableError = _api_error(
    "CoordinatorNotAvailableError", E.COORDINATOR_NOT_AVAILABLE, base=GroupCoordinatorError)
NotCoordinatorError = _api_error("NotCoordinatorError", E.NOT_COORDINATOR,
                                 base=GroupCoordinatorError)
IllegalGenerationError = _api_error("IllegalGenerationError", E.ILLEGAL_GENERATION,
                                    base=GroupCoordinatorError)
InvalidGroupIdError = _api_error("InvalidGroupIdError", E.INVALID_GROUP_ID,
                                 base=GroupCoordinatorError)
UnknownMemberIdError = _api_error("UnknownMemberIdError", E.UNKNOWN_MEMBER_ID,
                                  base=GroupCoordinatorError)
RebalanceInProgressError = _api_error("RebalanceInProgressError", E.REBALANCE_IN_PROGRESS,
                                      base=GroupCoordinatorError)
InvalidCommitOffsetSizeError = _api_error("InvalidCommitOffsetSizeError",
                                          E.INVALID_COMMIT_OFFSET_SIZE, base=GroupCoordinatorError)
GroupAuthorizationFailedError = _api_error("GroupAuthorizationFailedError",
                                           E.GROUP_AUTHORIZATION_FAILED,
                                           base=GroupCoordinatorError)
GroupIdNotFoundError = _api_error("GroupIdNotFoundError", E.GROUP_ID_NOT_FOUND,
                                  base=GroupCoordinatorError)
UnstableOffsetCommitError = _api_error("UnstableOffsetCommitError", E.UNSTABLE_OFFSET_COMMIT,
                                       base=GroupCoordinatorError)

RecordListTooLargeError = _api_error("RecordListTooLargeError", E.RECORD_LIST_TOO_LARGE)
NotEnoughReplicasError = _api_error("NotEnoughReplicasError", E.NOT_ENOUGH_REPLICAS)
NotEnoughReplicasAfterAppendError = _api_error("NotEnoughReplicasAfterAppendError",
                                               E.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
InvalidRequiredAcksError = _api_error("InvalidRequiredAcksError", E.INVALID_REQUIRED_ACKS)
InvalidTimestampError = _api_error("InvalidTimestampError", E.INVALID_TIMESTAMP)
InvalidRecordError = _api_error("InvalidRecordError", E.INVALID_RECORD)


# -- producer state and transactions ---------------------------------------------------------------


class ProducerFencedError(KafkaApiError):
    """A newer producer with the same transactional id took over (InitProducerId bumped the
    epoch): this producer instance is fenced for good and must be closed (PRODUCER_FENCED, and
    INVALID_PRODUCER_EPOCH from brokers that answer a stale epoch with it)."""

    error_code = E.PRODUCER_FENCED


InvalidProducerEpochError = _api_error("InvalidProducerEpochError", E.INVALID_PRODUCER_EPOCH,
                                       base=ProducerFencedError)
OutOfOrderSequenceError = _api_error(
    "OutOfOrderSequenceError", E.OUT_OF_ORDER_SEQUENCE_NUMBER,
    doc="The broker saw a gap in the producer's sequence numbers: records may be missing.")
DuplicateSequenceError = _api_error("DuplicateSequenceError", E.DUPLICATE_SEQUENCE_NUMBER)
UnknownProducerIdError = _api_error("UnknownProducerIdError", E.UNKNOWN_PRODUCER_ID)
InvalidTxnStateError = _api_error(
    "InvalidTxnStateError", E.INVALID_TXN_STATE,
    doc="The transaction coordinator refused an operation in the transaction's current state "
        "(ending a transaction that has nothing in it, or that already ended the other way).")
InvalidProducerIdMappingError = _api_error("InvalidProducerIdMappingError",
                                           E.INVALID_PRODUCER_ID_MAPPING)
InvalidTransactionTimeoutError = _api_error("InvalidTransactionTimeoutError",
                                            E.INVALID_TRANSACTION_TIMEOUT)
ConcurrentTransactionsError = _api_error("ConcurrentTransactionsError", E.CONCURRENT_TRANSACTIONS)
TransactionCoordinatorFencedError = _api_error("TransactionCoordinatorFencedError",
                                               E.TRANSACTION_COORDINATOR_FENCED)
TransactionalIdAuthorizationFailedError = _api_error(
    "TransactionalIdAuthorizationFailedError", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
OperationNotAttemptedError = _api_error("OperationNotAttemptedError", E.OPERATION_NOT_ATTEMPTED)
TransactionalIdNotFoundError = _api_error("TransactionalIdNotFoundError",
                                          E.TRANSACTIONAL_ID_NOT_FOUND)
TransactionAbortableError = _api_error("TransactionAbortableError", E.TRANSACTION_ABORTABLE)


class TransactionStateError(KafkaClientError):
    """A transactional method called in the wrong state of this producer (``send`` outside a
    transaction, ``commit_transaction`` after an error that requires an abort, ...). ``state``
    is the producer's :class:`~broker_lite.client.producer.transactions.TransactionState` name."""

    def __init__(self, message: str, *, state: str = ""):
        super().__init__(message)
        self.state = state


#: Error code -> exception class, for every code with a class of its own.
ERROR_CLASSES: dict[ErrorCode, type[KafkaClientError]] = {
    cls.error_code: cls for cls in (
        UnknownServerError, OffsetOutOfRangeError, CorruptMessageError,
        SaslAuthenticationFailedError, UnsupportedSaslMechanismError, IllegalSaslStateError,
        UnknownTopicOrPartitionError, InvalidFetchSizeError, LeaderNotAvailableError,
        NotLeaderError, KafkaTimeoutError, BrokerNotAvailableError, ReplicaNotAvailableError,
        RecordTooLargeError, OffsetMetadataTooLargeError, KafkaConnectionError,
        CoordinatorLoadInProgressError, CoordinatorNotAvailableError, NotCoordinatorError,
        InvalidTopicError, IllegalGenerationError, InvalidGroupIdError, UnknownMemberIdError,
        RebalanceInProgressError, InvalidCommitOffsetSizeError, TopicAuthorizationFailedError,
        GroupAuthorizationFailedError, ClusterAuthorizationFailedError, UnsupportedVersionError,
        SecurityDisabledError,
        TopicAlreadyExistsError, InvalidPartitionsError, InvalidReplicationFactorError,
        InvalidReplicaAssignmentError, InvalidConfigurationError, NotControllerError,
        InvalidRequestError, UnsupportedForMessageFormatError, PolicyViolationError,
        KafkaStorageError, GroupIdNotFoundError, ListenerNotFoundError,
        TopicDeletionDisabledError, FencedLeaderEpochError, UnknownLeaderEpochError,
        OffsetNotAvailableError, UnstableOffsetCommitError, UnknownTopicIdError,
        InconsistentTopicIdError, RecordListTooLargeError, NotEnoughReplicasError,
        NotEnoughReplicasAfterAppendError, InvalidRequiredAcksError, InvalidTimestampError,
        InvalidRecordError, ProducerFencedError, InvalidProducerEpochError,
        OutOfOrderSequenceError, DuplicateSequenceError, UnknownProducerIdError,
        InvalidTxnStateError, InvalidProducerIdMappingError, InvalidTransactionTimeoutError,
        ConcurrentTransactionsError, TransactionCoordinatorFencedError,
        TransactionalIdAuthorizationFailedError, OperationNotAttemptedError,
        TransactionalIdNotFoundError, TransactionAbortableError,
        PreferredLeaderNotAvailableError, EligibleLeadersNotAvailableError,
        ElectionNotNeededError, NoReassignmentInProgressError, ResourceNotFoundError,
        DuplicateResourceError, UnacceptableCredentialError,
    )
}


def error_for(code: int, message: str | None = None, *, where: str = "") -> KafkaClientError | None:
    """The exception for an error code from a response (None for 0, no error).

    ``message`` is the broker's error message when the response has one (Kafka's default text
    otherwise); ``where`` names the partition, topic or group concerned.
    """
    if code == 0:
        return None
    error_code = ErrorCode.of(code)
    text = f"{error_code.name} ({code})" + (f" for {where}" if where else "")
    text += f": {message or error_code.message}"
    cls = ERROR_CLASSES.get(error_code)
    if cls is None:
        return KafkaApiError(text, error_code=code, where=where)
    if issubclass(cls, KafkaApiError):
        return cls(text, where=where)
    return cls(text)


def error_of(code: int, message: str | None = None, *, where: str = "") -> KafkaClientError:
    """:func:`error_for` a code that a caller has found to be an error: the exception to raise
    (ValueError for 0, which is none)."""
    error = error_for(code, message, where=where)
    if error is None:
        raise ValueError("error code 0 (NONE) is no error")
    return error


def final_error(error: KafkaClientError) -> KafkaClientError:
    """``error`` marked not retriable: the answer is final (say, the cluster metadata itself
    says that a topic does not exist)."""
    error.retriable = False
    return error
