"""Produce (key 0): record sets appended to partitions.

The ``records`` field of each partition holds a whole record set (v0/v1 message set or v2
batches); the codec hands it over as a memoryview into the request, uncopied.
"""

from ..schema import INT16, INT32, INT64, RECORDS, STRING, A, F, Request, Response, S

PRODUCE_REQUEST = Request("ProduceRequest", 0, "0-11", "9+", [
    F("TransactionalId", STRING, "3+", nullable="3+", default=None),
    F("Acks", INT16, "0+"),
    F("TimeoutMs", INT32, "0+"),
    A("TopicData", "TopicProduceData", "0+", [
        F("Name", STRING, "0+"),
        A("PartitionData", "PartitionProduceData", "0+", [
            F("Index", INT32, "0+"),
            F("Records", RECORDS, "0+", nullable="0+"),
        ]),
    ]),
])

PRODUCE_RESPONSE = Response("ProduceResponse", 0, "0-11", "9+", [
    A("Responses", "TopicProduceResponse", "0+", [
        F("Name", STRING, "0+"),
        A("PartitionResponses", "PartitionProduceResponse", "0+", [
            F("Index", INT32, "0+"),
            F("ErrorCode", INT16, "0+"),
            F("BaseOffset", INT64, "0+"),
            F("LogAppendTimeMs", INT64, "2+", default=-1, ignorable=True),
            F("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
            A("RecordErrors", "BatchIndexAndErrorMessage", "8+", [
                F("BatchIndex", INT32, "8+"),
                F("BatchIndexErrorMessage", STRING, "8+", nullable="8+", default=None),
            ], ignorable=True),
            F("ErrorMessage", STRING, "8+", nullable="8+", default=None, ignorable=True),
            S("CurrentLeader", "LeaderIdAndEpoch", "10+", [
                F("LeaderId", INT32, "10+", default=-1),
                F("LeaderEpoch", INT32, "10+", default=-1),
            ], tag=0, tagged="10+"),
        ]),
    ]),
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    A("NodeEndpoints", "NodeEndpoint", "10+", [
        F("NodeId", INT32, "10+"),
        F("Host", STRING, "10+"),
        F("Port", INT32, "10+"),
        F("Rack", STRING, "10+", nullable="10+", default=None),
    ], tag=0, tagged="10+"),
])


__all__ = [
    "PRODUCE_REQUEST",
    "PRODUCE_RESPONSE",
]
