"""A small Kafka client for any Kafka-protocol cluster (Kafka 2.x / 3.x, broker_lite).

Modules, one concept each: :mod:`.config` (settings), :mod:`.errors` (exceptions and the error
code table), :mod:`.versions` (API version negotiation), :mod:`.connection` (one broker
connection), :mod:`.throttling` (broker quotas, KIP-219), :mod:`.metadata` (cluster metadata),
:mod:`.cluster` (connections and routing), :mod:`.retry` (deadlines and backoff),
:mod:`.fetcher` (Fetch), :mod:`.partition_reader` (reading partitions forward from positions:
the one read loop), :mod:`.offsets` (ListOffsets), :mod:`.group_offsets` (OffsetCommit /
OffsetFetch), :mod:`.admin` (topic administration; groups, configs and ACLs in
:mod:`.groups_admin`, :mod:`.configs_admin`, :mod:`.acls_admin`), :mod:`.partitioner` (Kafka's
default partitioner), :mod:`.batching` (cutting rows into batches), :mod:`.producer` (idempotent and
transactional producing), :mod:`.sender` (delivering its batches), :mod:`.transactions` (the
transaction coordinator's APIs), :mod:`.client`, the :class:`KafkaClient` facade, whose
docstring states the retry policy, and :mod:`.shared`, which lends clients over connections
shared by the successive work of a process. Modules import one way: the facade builds on the
others, and none of them imports it but :mod:`.shared`.
"""

from broker_lite.vocabulary import TopicPartition

from .admin import Admin, NewTopic
from .client import KafkaClient
from .config import ClientConfig
from .errors import (
    ERROR_CLASSES,
    BrokerNotAvailableError,
    ClientClosedError,
    ConcurrentTransactionsError,
    ConfigError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    GroupCoordinatorError,
    InvalidArgumentError,
    InvalidResponseError,
    InvalidTxnStateError,
    KafkaApiError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    NotCoordinatorError,
    NotLeaderError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    OutOfOrderSequenceError,
    ProducerFencedError,
    RecordTooLargeError,
    SaslAuthenticationFailedError,
    SslAuthenticationError,
    TopicAlreadyExistsError,
    TransactionalIdNotFoundError,
    TransactionStateError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    error_for,
)
from .metadata import BrokerInfo, PartitionMetadata, TopicMetadata
from .partition_reader import (
    LOG_END,
    FetchedChunk,
    OutOfRange,
    PartitionReader,
    raise_out_of_range,
)
from .partitioner import murmur2, partitions_for_keys
from .producer import Producer
from .shared import shared_client
from .transactions import (
    TransactionDescription,
    TransactionHandle,
    TransactionState,
    describe_transaction,
    end_transaction,
)
from .types import (
    EARLIEST,
    LATEST,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    FetchedPartition,
    OffsetAndMetadata,
    OffsetAndTimestamp,
)

__all__ = [
    "EARLIEST", "ERROR_CLASSES", "LATEST", "READ_COMMITTED", "READ_UNCOMMITTED", "Admin",
    "BrokerInfo", "BrokerNotAvailableError", "ClientClosedError", "ClientConfig", "ConfigError",
    "CoordinatorLoadInProgressError", "CoordinatorNotAvailableError", "FetchedPartition",
    "GroupCoordinatorError", "InvalidArgumentError", "InvalidResponseError", "KafkaApiError",
    "KafkaClient", "KafkaClientError", "KafkaConnectionError", "KafkaTimeoutError",
    "LeaderNotAvailableError", "NewTopic", "NotCoordinatorError", "NotLeaderError",
    "NotLeaderOrFollowerError", "OffsetAndMetadata", "OffsetAndTimestamp", "OffsetOutOfRangeError",
    "PartitionMetadata", "RecordTooLargeError", "TopicAlreadyExistsError", "TopicMetadata",
    "TopicPartition", "UnknownTopicOrPartitionError", "UnsupportedVersionError", "error_for",
    "SaslAuthenticationFailedError", "SslAuthenticationError",
    # producing
    "ConcurrentTransactionsError", "InvalidTxnStateError", "OutOfOrderSequenceError",
    "Producer", "ProducerFencedError", "TransactionDescription", "TransactionHandle",
    "TransactionState", "TransactionStateError", "TransactionalIdNotFoundError",
    "describe_transaction", "end_transaction", "murmur2", "partitions_for_keys",
    # reading
    "LOG_END", "FetchedChunk", "OutOfRange", "PartitionReader", "raise_out_of_range",
    # connections shared by the successive work of a process
    "shared_client",
]
