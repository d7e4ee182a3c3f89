"""Deleting records: DeleteRecords (key 21), which moves partitions' log start offsets forward.
"""

from ..schema import INT16, INT32, INT64, STRING, A, F, Request, Response

DELETE_RECORDS_REQUEST = Request("DeleteRecordsRequest", 21, "0-2", "2+", [
    A("Topics", "DeleteRecordsTopic", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "DeleteRecordsPartition", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("Offset", INT64, "0+"),
        ]),
    ]),
    F("TimeoutMs", INT32, "0+"),
])

DELETE_RECORDS_RESPONSE = Response("DeleteRecordsResponse", 21, "0-2", "2+", [
    F("ThrottleTimeMs", INT32, "0+"),
    A("Topics", "DeleteRecordsTopicResult", "0+", [
        F("Name", STRING, "0+"),
        A("Partitions", "DeleteRecordsPartitionResult", "0+", [
            F("PartitionIndex", INT32, "0+"),
            F("LowWatermark", INT64, "0+"),
            F("ErrorCode", INT16, "0+"),
        ]),
    ]),
])


__all__ = [
    "DELETE_RECORDS_REQUEST",
    "DELETE_RECORDS_RESPONSE",
]
