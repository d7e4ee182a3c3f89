"""Fetch: record data of the partitions this broker leads, straight from the segment files.

Each partition contributes whole batches from its fetch offset up to its high watermark, within
``partition_max_bytes`` and the request's ``max_bytes`` (the first batch found always whole, so a
consumer progresses past a batch larger than its limits). The data travels as file regions, sent
with ``sendfile``. When fewer than ``min_bytes`` are available the request waits (long poll) until
an append brings enough or ``max_wait_ms`` passes: it waits in the purgatory as a
:class:`DelayedFetch`, holding no thread. Fetch sessions (KIP-227) are not kept: every
response has session id 0, which tells clients to send full fetch requests.

The isolation level decides how far a consumer reads (KIP-98):

- READ_UNCOMMITTED (0): up to the high watermark, open and aborted transactions included;
  ``aborted_transactions`` is null.
- READ_COMMITTED (1): up to the last stable offset, the start of the earliest open transaction;
  ``aborted_transactions`` lists (producer id, first offset) of the aborted transactions that
  overlap the returned batches, whose records the consumer drops (it stops dropping a producer's
  records at that producer's ABORT marker).

Authorization, as Kafka's: a consumer needs Read on each topic (else its partitions are
TOPIC_AUTHORIZATION_FAILED), a replica (replica id >= 0) ClusterAction on the cluster (else
every partition is).

Every response carries the partition's last stable offset, whatever the isolation level, as
Kafka's does. Fetch v0-v3 reads message formats v0/v1: what is read is down-converted for it
(:mod:`.down_conversion`).
"""

from broker_lite.log import OffsetOutOfRangeError
from broker_lite.protocol import ErrorCode
from broker_lite.security.acl import AclOperation, ResourceType
from broker_lite.vocabulary import INT32_MAX, TopicPartition

from ..dispatcher import RESPONDS_LATER, DelayedResponse, RequestContext
from ..errors import not_served_error
from ..services import HandlerServices
from . import down_conversion

READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def handle(context: RequestContext, body: dict):
    services = context.services
    names = _readable(context, body, _topic_names(services, body, context.version))
    responses, total, failed = _read(services, body, context.version, names)
    if total >= body["min_bytes"] or failed or body["max_wait_ms"] <= 0 \
            or services.purgatory.stopping:
        return _response(responses)
    _release(responses)
    fetch = DelayedFetch(context, body, names)
    services.purgatory.fetch.try_complete_else_watch(fetch, fetch.partitions)
    return RESPONDS_LATER


class DelayedFetch(DelayedResponse):
    """A Fetch waiting for ``min_bytes`` (Kafka's DelayedFetch): watched under its partitions,
    it re-reads them after each append to one of them, and answers as soon as there is enough
    (or a partition fails), or with what there is once ``max_wait_ms`` passed."""

    def __init__(self, context: RequestContext, body: dict, names: list):
        super().__init__(context, max(body["max_wait_ms"], 0))
        self.body = body
        self.names = names
        self.partitions = [TopicPartition(name, request["partition"])
                           for name, topic in zip(names, body["topics"], strict=True)
                           if isinstance(name, str) for request in topic["partitions"]]

    def _read(self) -> tuple[list, int, bool]:
        return _read(self.context.services, self.body, self.context.version, self.names)

    def try_complete(self) -> bool:
        responses, total, failed = self._read()
        _release(responses)  # read again when answering: by then there may be more
        return (total >= self.body["min_bytes"] or failed) and self.force_complete()

    def response(self) -> dict:
        return _response(self._read()[0])


def _response(responses: list) -> dict:
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": responses}


REFUSED = object()  # stands for the name of a topic the principal may not read


def _readable(context: RequestContext, body: dict, names: list[str | None]) -> list:
    """``names`` with :data:`REFUSED` for each topic the principal may not read: a consumer
    needs Read on it, a replica (a replica id of 0 or more) ClusterAction on the cluster."""
    replica_id = body["replica_state"]["replica_id"] if context.version >= 15 \
        else body["replica_id"]
    if replica_id >= 0:
        allowed = context.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
        return [name if allowed else REFUSED for name in names]
    readable = context.authorized_names(AclOperation.READ, ResourceType.TOPIC,
                                        (n for n in names if n is not None))
    return [REFUSED if name is not None and name not in readable else name for name in names]


def _topic_names(services: HandlerServices, body: dict, version: int) -> list[str | None]:
    """The name of each topic fetched (Fetch 13+ names topics by id only; None: unknown)."""
    if version < 13:
        return [topic["topic"] for topic in body["topics"]]
    return [services.cluster.topic_name(topic["topic_id"]) for topic in body["topics"]]


def _read(services: HandlerServices, body: dict, version: int,
          names: list) -> tuple[list, int, bool]:
    budget = body["max_bytes"] if version >= 3 else INT32_MAX
    total, failed = 0, False
    responses = []
    for name, topic in zip(names, body["topics"], strict=True):
        partitions = []
        for request in topic["partitions"]:
            if name is None:
                response, size = _error(request, ErrorCode.UNKNOWN_TOPIC_ID), 0
            elif name is REFUSED:
                response, size = _error(request, ErrorCode.TOPIC_AUTHORIZATION_FAILED), 0
            else:
                response, size = _read_partition(services, name, request, budget - total,
                                                 total == 0, body["isolation_level"], version)
            failed |= response["error_code"] != 0
            total += size
            partitions.append(response)
        responses.append({"topic": name if isinstance(name, str) else topic.get("topic", ""),
                          "topic_id": topic["topic_id"], "partitions": partitions})
    return responses, total, failed


def _error(request: dict, error: ErrorCode) -> dict:
    return {"partition_index": request["partition"], "error_code": error,
            "high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1,
            "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}


def _read_partition(services: HandlerServices, topic: str, request: dict, budget: int,
                    first: bool, isolation_level: int, version: int) -> tuple[dict, int]:
    index = request["partition"]
    response = {"partition_index": index, "error_code": 0, "high_watermark": -1,
                "last_stable_offset": -1, "log_start_offset": -1, "aborted_transactions": None,
                "preferred_read_replica": -1, "records": b""}
    log = services.partitions.leader_log(topic, index)
    if log is None:
        response["error_code"] = not_served_error(services.cluster, topic, index)
        return response, 0
    response["error_code"] = down_conversion.partition_error(log.config, version)
    if response["error_code"]:
        return response, 0
    high_watermark = log.high_watermark
    committed = isolation_level == READ_COMMITTED
    response.update(high_watermark=high_watermark, last_stable_offset=log.last_stable_offset,
                    log_start_offset=log.log_start_offset,
                    aborted_transactions=[] if committed else None)
    limit = min(request["partition_max_bytes"], max(budget, 0))
    if limit <= 0 and not first:
        return response, 0
    try:
        if committed:
            read = log.read_committed(request["fetch_offset"], max(limit, 1),
                                      min_one_batch=first)
            region = read.region
            response.update(last_stable_offset=read.last_stable_offset, aborted_transactions=[
                {"producer_id": txn.producer_id, "first_offset": txn.first_offset}
                for txn in read.aborted_transactions])
        else:
            region = log.read(request["fetch_offset"], max(limit, 1), max_offset=high_watermark,
                              min_one_batch=first)
    except OffsetOutOfRangeError:
        response["error_code"] = ErrorCode.OFFSET_OUT_OF_RANGE
        return response, 0
    if region is None:
        return response, 0
    if down_conversion.client_magic(version) is not None:
        return down_conversion.answer_down_converted(response, region, request["fetch_offset"],
                                                     version)
    response["records"] = region
    return response, region.size


def _release(responses: list) -> None:
    """Close the file regions of a response that will not be sent."""
    for topic in responses:
        for partition in topic["partitions"]:
            records = partition["records"]
            if hasattr(records, "close"):
                records.close()
