"""A small Kafka client for any Kafka-protocol cluster (Kafka 2.x / 3.x, broker_lite).

Folders by role, one concept a module:

- the base: :mod:`.config` (settings), :mod:`.errors` (exceptions and the error code table),
  :mod:`.retry` (deadlines and backoff), :mod:`.types` (the values the client hands out);
- :mod:`.cluster`: connections (:mod:`.cluster.connection`, :mod:`.cluster.versions`,
  :mod:`.cluster.throttling`), cluster metadata and routing (:mod:`.cluster.metadata`,
  :mod:`.cluster.cluster`), coordinators (:mod:`.cluster.coordinators`);
- :mod:`.consumer`: Fetch (:mod:`.consumer.fetcher`), the one read loop
  (:mod:`.consumer.partition_reader`), ListOffsets (:mod:`.consumer.offsets`), committed
  offsets (:mod:`.consumer.group_offsets`);
- :mod:`.producer`: the partitioner, batching, idempotent and transactional producing, and the
  transaction coordinator's APIs;
- :mod:`.admin`: topics, groups, configs, ACLs, records, replicas and SCRAM credentials;
- :mod:`.zkgroup`: the ZooKeeper-era group consumer;
- :mod:`.client`, the :class:`KafkaClient` facade, whose docstring states the retry policy, and
  :mod:`.shared`, which lends clients over connections shared by the successive work of a
  process.

The folders import one way: cluster below consumer, producer and admin, which do not import
each other; the facade builds on them all, and none of them imports it.
"""

from broker_lite.common.lazy_exports import lazy_exports

# Each public name and the module it lives in. The package imports a module when one of its names
# is first asked for (PEP 562), so that a process that only reads (a Spark worker, say) does not
# load the producer, the admin clients and the transactions with it, and one that only looks up
# offsets (a Spark driver) does not load the read loop and the record codecs either.
_NAMES = {  # module: the public names it gives
    "broker_lite.common.vocabulary": ("TopicPartition",),
    ".admin.admin": ("Admin", "NewTopic"),
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
    ".cluster.metadata": ("BrokerInfo", "PartitionMetadata", "TopicMetadata"),
    ".consumer.partition_reader": ("FetchedChunk", "OutOfRange", "PartitionReader",
                                   "raise_out_of_range"),
    ".producer.partitioner": ("murmur2", "partitions_for_keys"),
    ".producer.producer": ("Producer",),
    ".shared": ("shared_client",),
    ".producer.transactions": ("TransactionDescription", "TransactionHandle", "TransactionState",
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
