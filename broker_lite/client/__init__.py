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

from broker_lite.lazy_exports import lazy_exports

# Each public name and the module it lives in. The package imports a module when one of its names
# is first asked for (PEP 562), so that a process that only reads (a Spark worker, say) does not
# load the producer, the admin clients and the transactions with it, and one that only looks up
# offsets (a Spark driver) does not load the read loop and the record codecs either.
_NAMES = {  # module: the public names it gives
    "broker_lite.vocabulary": ("TopicPartition",),
    ".admin": ("Admin", "NewTopic"),
    ".client": ("KafkaClient",),
    ".config": ("ClientConfig",),
    ".errors": ("ERROR_CLASSES", "BrokerNotAvailableError", "ClientClosedError",
        "ConcurrentTransactionsError", "ConfigError", "CoordinatorLoadInProgressError",
        "CoordinatorNotAvailableError", "GroupCoordinatorError", "InvalidArgumentError",
        "InvalidResponseError", "InvalidTxnStateError", "KafkaApiError", "KafkaClientError",
        "KafkaConnectionError", "KafkaTimeoutError", "LeaderNotAvailableError",
        "NotCoordinatorError", "NotLeaderError", "NotLeaderOrFollowerError",
        "OffsetOutOfRangeError", "OutOfOrderSequenceError", "ProducerFencedError",
        "RecordTooLargeError", "SaslAuthenticationFailedError", "SslAuthenticationError",
        "TopicAlreadyExistsError", "TransactionalIdNotFoundError", "TransactionStateError",
        "UnknownTopicOrPartitionError", "UnsupportedVersionError", "error_for"),
    ".metadata": ("BrokerInfo", "PartitionMetadata", "TopicMetadata"),
    ".partition_reader": ("FetchedChunk", "OutOfRange", "PartitionReader", "raise_out_of_range"),
    ".partitioner": ("murmur2", "partitions_for_keys"),
    ".producer": ("Producer",),
    ".shared": ("shared_client",),
    ".transactions": ("TransactionDescription", "TransactionHandle", "TransactionState",
        "describe_transaction", "end_transaction"),
    ".types": ("EARLIEST", "LATEST", "LOG_END", "READ_COMMITTED", "READ_UNCOMMITTED",
        "FetchedPartition", "OffsetAndMetadata", "OffsetAndTimestamp"),
}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

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
