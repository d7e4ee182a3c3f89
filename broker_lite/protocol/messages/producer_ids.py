"""InitProducerId (key 22): a producer id and epoch for an idempotent or transactional producer.

Version 3 adds the producer's current id and epoch, so a producer can ask to resume (KIP-360).
"""

from ..schema import INT16, INT32, INT64, STRING, F, Request, Response

INIT_PRODUCER_ID_REQUEST = Request("InitProducerIdRequest", 22, "0-5", "2+", [
    F("TransactionalId", STRING, "0+", nullable="0+"),
    F("TransactionTimeoutMs", INT32, "0+"),
    F("ProducerId", INT64, "3+", default=-1),
    F("ProducerEpoch", INT16, "3+", default=-1),
])

INIT_PRODUCER_ID_RESPONSE = Response("InitProducerIdResponse", 22, "0-5", "2+", [
    F("ThrottleTimeMs", INT32, "0+", ignorable=True),
    F("ErrorCode", INT16, "0+"),
    F("ProducerId", INT64, "0+", default=-1),
    F("ProducerEpoch", INT16, "0+"),
])


__all__ = [
    "INIT_PRODUCER_ID_REQUEST",
    "INIT_PRODUCER_ID_RESPONSE",
]
