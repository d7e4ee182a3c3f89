"""DescribeProducers (key 61): the producers a partition leader remembers (KIP-664).

For each partition: every producer id in its producer state with its epoch, last sequence and
timestamp, the coordinator epoch of its last transaction marker, and the first offset of its
open transaction (-1 when none), which is how hanging transactions are found.
"""

from ..schema import INT16, INT32, INT64, STRING, A, F, Request, Response

DESCRIBE_PRODUCERS_REQUEST = Request("DescribeProducersRequest", 61, "0", "0+", [
    A("Topics", "TopicRequest", "0+", [
        F("Name", STRING, "0+"),
        A("PartitionIndexes", INT32, "0+"),
    ]),
])

DESCRIBE_PRODUCERS_RESPONSE = Response("DescribeProducersResponse", 61, "0", "0+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Topics", "TopicResponse", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "PartitionResponse", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("ErrorMessage", STRING, "0+", nullable="0+", default=None),
            A("ActiveProducers", "ProducerState", "0+", [
                F("ProducerId", INT64, "0+"),
                F("ProducerEpoch", INT32, "0+"),
                F("LastSequence", INT32, "0+", default=-1),
                F("LastTimestamp", INT64, "0+", default=-1),
                F("CoordinatorEpoch", INT32, "0+"),
                F("CurrentTxnStartOffset", INT64, "0+", default=-1),
            ]),
        ]),
    ]),
])


__all__ = [
    "DESCRIBE_PRODUCERS_REQUEST",
    "DESCRIBE_PRODUCERS_RESPONSE",
]
