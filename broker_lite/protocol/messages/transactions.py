"""The transaction APIs (KIP-98): a producer's calls to its transaction coordinator, the
coordinator's markers to partition leaders, and the admin views of transactions.

====================  ===  ==================================================================
API                   key  what it does
====================  ===  ==================================================================
AddPartitionsToTxn    24   add partitions to the producer's transaction (v4+: batched form
                           brokers use, several transactions in one request, KIP-890)
AddOffsetsToTxn       25   add a group's ``__consumer_offsets`` partition to the transaction
EndTxn                26   commit or abort the transaction
WriteTxnMarkers       27   coordinator -> leader: write COMMIT / ABORT control batches
TxnOffsetCommit       28   producer -> group coordinator: commit offsets inside a transaction
DescribeTransactions  65   the state of transactional ids (KIP-664)
ListTransactions      66   the transactional ids a coordinator knows (KIP-664; v1 KIP-994)
====================  ===  ==================================================================
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, A, F, Request, Response

# -- AddPartitionsToTxn -------------------------------------------------------------------------

_ADD_PARTITIONS_TOPIC = [
    F("Name", STRING, "0+"),
    A("Partitions", INT32, "0+"),
]

ADD_PARTITIONS_TO_TXN_REQUEST = Request("AddPartitionsToTxnRequest", 24, "0-5", "3+", [
    A("Transactions", "AddPartitionsToTxnTransaction", "4+", [
        F("TransactionalId", STRING, "4+"),
        F("ProducerId", INT64, "4+"),
        F("ProducerEpoch", INT16, "4+"),
        F("VerifyOnly", BOOL, "4+", default=False),
        A("Topics", "AddPartitionsToTxnTopic", "4+", _ADD_PARTITIONS_TOPIC),
    ]),
    F("V3AndBelowTransactionalId", STRING, "0-3"),
    F("V3AndBelowProducerId", INT64, "0-3"),
    F("V3AndBelowProducerEpoch", INT16, "0-3"),
    A("V3AndBelowTopics", "AddPartitionsToTxnTopic", "0-3", _ADD_PARTITIONS_TOPIC),
])

_ADD_PARTITIONS_TOPIC_RESULT = [
    F("Name", STRING, "0+"),
    A("ResultsByPartition", "AddPartitionsToTxnPartitionResult", "0+", [
        F("PartitionIndex", INT32, "0+"),
        F("PartitionErrorCode", INT16, "0+"),
    ]),
]

ADD_PARTITIONS_TO_TXN_RESPONSE = Response("AddPartitionsToTxnResponse", 24, "0-5", "3+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "4+", ignorable=True),
    A("ResultsByTransaction", "AddPartitionsToTxnResult", "4+", [
        F("TransactionalId", STRING, "4+"),
        A("TopicResults", "AddPartitionsToTxnTopicResult", "4+", _ADD_PARTITIONS_TOPIC_RESULT),
    ]),
    A("ResultsByTopicV3AndBelow", "AddPartitionsToTxnTopicResult", "0-3",
      _ADD_PARTITIONS_TOPIC_RESULT),
])

# -- AddOffsetsToTxn ----------------------------------------------------------------------------

ADD_OFFSETS_TO_TXN_REQUEST = Request("AddOffsetsToTxnRequest", 25, "0-4", "3+", [
    F("TransactionalId", STRING, "0+"),
    F("ProducerId", INT64, "0+"),
    F("ProducerEpoch", INT16, "0+"),
    F("GroupId", STRING, "0+"),
])

ADD_OFFSETS_TO_TXN_RESPONSE = Response("AddOffsetsToTxnResponse", 25, "0-4", "3+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
])

# -- EndTxn -------------------------------------------------------------------------------------

END_TXN_REQUEST = Request("EndTxnRequest", 26, "0-5", "3+", [
    F("TransactionalId", STRING, "0+"),
    F("ProducerId", INT64, "0+"),
    F("ProducerEpoch", INT16, "0+"),
    F("Committed", BOOL, "0+"),
])

END_TXN_RESPONSE = Response("EndTxnResponse", 26, "0-5", "3+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    F("ProducerId", INT64, "5+", default=-1, ignorable=True),
    F("ProducerEpoch", INT16, "5+", default=-1, ignorable=True),
])

# -- WriteTxnMarkers ----------------------------------------------------------------------------

WRITE_TXN_MARKERS_REQUEST = Request("WriteTxnMarkersRequest", 27, "0-1", "1+", [
    A("Markers", "WritableTxnMarker", "0+", [
        F("ProducerId", INT64, "0+"),
        F("ProducerEpoch", INT16, "0+"),
        F("TransactionResult", BOOL, "0+"),
        A("Topics", "WritableTxnMarkerTopic", "0+", [
            F("Name", STRING, "0+"),
            A("PartitionIndexes", INT32, "0+"),
        ]),
        F("CoordinatorEpoch", INT32, "0+"),
    ]),
])

WRITE_TXN_MARKERS_RESPONSE = Response("WriteTxnMarkersResponse", 27, "0-1", "1+", [
    A("Markers", "WritableTxnMarkerResult", "0+", [
        F("ProducerId", INT64, "0+"),
        A("Topics", "WritableTxnMarkerTopicResult", "0+", [
            F("Name", STRING, "0+"),
            A("Partitions", "WritableTxnMarkerPartitionResult", "0+", [
                F("PartitionIndex", INT32, "0+"),
                F("ErrorCode", INT16, "0+"),
            ]),
        ]),
    ]),
])

# -- TxnOffsetCommit ----------------------------------------------------------------------------

TXN_OFFSET_COMMIT_REQUEST = Request("TxnOffsetCommitRequest", 28, "0-4", "3+", [
    F("TransactionalId", STRING, "0+"),
    F("GroupId", STRING, "0+"),
    F("ProducerId", INT64, "0+"),
    F("ProducerEpoch", INT16, "0+"),
    F("GenerationId", INT32, "3+", default=-1),
    F("MemberId", STRING, "3+", default=""),
    F("GroupInstanceId", STRING, "3+", nullable="3+", default=None),
    A("Topics", "TxnOffsetCommitRequestTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "TxnOffsetCommitRequestPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("CommittedOffset", INT64, "0+"),
            F("CommittedLeaderEpoch", INT32, "2+", default=-1, ignorable=True),
            F("CommittedMetadata", STRING, "0+", nullable="0+"),
        ]),
    ]),
])

TXN_OFFSET_COMMIT_RESPONSE = Response("TxnOffsetCommitResponse", 28, "0-4", "3+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Topics", "TxnOffsetCommitResponseTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "TxnOffsetCommitResponsePartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
        ]),
    ]),
])

# -- DescribeTransactions -----------------------------------------------------------------------

DESCRIBE_TRANSACTIONS_REQUEST = Request("DescribeTransactionsRequest", 65, "0", "0+", [
    A("TransactionalIds", STRING, "0+"),
])

DESCRIBE_TRANSACTIONS_RESPONSE = Response("DescribeTransactionsResponse", 65, "0", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("TransactionStates", "TransactionState", "0+", [
        F("ErrorCode", INT16, "0+"),
        F("TransactionalId", STRING, "0+"),
        F("TransactionState", STRING, "0+"),
        F("TransactionTimeoutMs", INT32, "0+"),
        F("TransactionStartTimeMs", INT64, "0+"),
        F("ProducerId", INT64, "0+"),
        F("ProducerEpoch", INT16, "0+"),
        A("Topics", "TopicData", "0+", [
            F("Topic", STRING, "0+"),
            A("Partitions", INT32, "0+"),
        ]),
    ]),
])

# -- ListTransactions ---------------------------------------------------------------------------

LIST_TRANSACTIONS_REQUEST = Request("ListTransactionsRequest", 66, "0-1", "0+", [
    A("StateFilters", STRING, "0+"),
    A("ProducerIdFilters", INT64, "0+"),
    F("DurationFilter", INT64, "1+", default=-1),
])

LIST_TRANSACTIONS_RESPONSE = Response("ListTransactionsResponse", 66, "0-1", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    F("ErrorCode", INT16, "0+"),
    A("UnknownStateFilters", STRING, "0+"),
    A("TransactionStates", "TransactionState", "0+", [
        F("TransactionalId", STRING, "0+"),
        F("ProducerId", INT64, "0+"),
        F("TransactionState", STRING, "0+"),
    ]),
])


__all__ = [
    "ADD_OFFSETS_TO_TXN_REQUEST",
    "ADD_OFFSETS_TO_TXN_RESPONSE",
    "ADD_PARTITIONS_TO_TXN_REQUEST",
    "ADD_PARTITIONS_TO_TXN_RESPONSE",
    "DESCRIBE_TRANSACTIONS_REQUEST",
    "DESCRIBE_TRANSACTIONS_RESPONSE",
    "END_TXN_REQUEST",
    "END_TXN_RESPONSE",
    "LIST_TRANSACTIONS_REQUEST",
    "LIST_TRANSACTIONS_RESPONSE",
    "TXN_OFFSET_COMMIT_REQUEST",
    "TXN_OFFSET_COMMIT_RESPONSE",
    "WRITE_TXN_MARKERS_REQUEST",
    "WRITE_TXN_MARKERS_RESPONSE",
]
