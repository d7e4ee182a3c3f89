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

A partition whose log dir is offline (KIP-112) is answered KAFKA_STORAGE_ERROR, alone: the
other partitions of the request are read as ever (a waiting fetch is completed by another
partition's append on a request thread of its own).

A fetch naming a ``current_leader_epoch`` (v9+) older than the partition's is answered
FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH (KIP-320): the fetcher's metadata is stale.

Consumers fetching with version 11 or later (which carries their ``rack_id``) may read from a
follower, up to the follower's high watermark (KIP-392). With ``replica.selector.class`` set to
Kafka's ``RackAwareReplicaSelector``, the leader answers a consumer whose rack holds no replica
of its own but an in-sync follower that has the fetch offset with ``preferred_read_replica`` (the
most caught-up such follower) and no records, at once; the consumer then fetches there.

A fetch with a ``replica_id`` of 0 or more comes from a follower (:mod:`broker_lite.replication`):
it reads up to the log end offset, not the high watermark, whatever the isolation level, and
only from a broker that replicates the partition (else NOT_LEADER_OR_FOLLOWER). Its fetch
offset is the follower's log end offset: the leader records it (once, when the request arrives,
not again while it waits), which may add the follower to the ISR and move the high watermark,
and answers with the high watermark after that.
"""

from broker_lite.common.vocabulary import INT32_MAX, NO_PARTITION_LEADER_EPOCH, TopicPartition
from broker_lite.config.definitions import RACK_AWARE_REPLICA_SELECTOR
from broker_lite.log import KafkaStorageError, OffsetOutOfRangeError
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, IsolationLevel, ResourceType
from broker_lite.zk.layout import NO_LEADER

from ..dispatcher import RESPONDS_LATER, DelayedResponse, RequestContext
from ..errors import not_served_error
from ..services import HandlerServices
from . import down_conversion

FIRST_RACK_VERSION = 11  # Fetch v11+: rack_id, preferred_read_replica (KIP-392)


def handle(context: RequestContext, body: dict):
    services = context.services
    names = _readable(context, body, _topic_names(services, body, context.version))
    responses, total, failed = _read(services, body, context.version, names,
                                     update_fetch_state=True)
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


def _read(services: HandlerServices, body: dict, version: int, names: list, *,
          update_fetch_state: bool = False) -> tuple[list, int, bool]:
    budget = body["max_bytes"] if version >= 3 else INT32_MAX
    replica_id = body.get("replica_id", -1)
    reader = _Reader(services, version, replica_id, body.get("rack_id") or None,
                     update_fetch_state)
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
                                                 total == 0, body["isolation_level"], reader)
            failed |= response["error_code"] != 0 or response["preferred_read_replica"] >= 0
            total += size
            partitions.append(response)
        responses.append({"topic": name if isinstance(name, str) else topic.get("topic", ""),
                          "topic_id": topic["topic_id"], "partitions": partitions})
    return responses, total, failed


def _error(request: dict, error: ErrorCode) -> dict:
    return {"partition_index": request["partition"], "error_code": error,
            "high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1,
            "aborted_transactions": None, "preferred_read_replica": -1, "records": b""}


class _Reader:
    """Who fetches: a follower (``replica_id`` >= 0) or a consumer, with its rack (v11+)."""

    def __init__(self, services: HandlerServices, version: int, replica_id: int,
                 client_rack: str | None, update_fetch_state: bool):
        self.version = version
        self.replica_id = replica_id
        self.update_fetch_state = update_fetch_state
        self.from_follower = replica_id >= 0
        # a consumer speaking v11+ may read any replica (Kafka: it has client metadata)
        self.may_read_follower = not self.from_follower and version >= FIRST_RACK_VERSION
        self.client_rack = client_rack if self.may_read_follower and \
            services.config["replica.selector.class"] == RACK_AWARE_REPLICA_SELECTOR else None
        self._racks: dict[int, str | None] | None = None
        self._services = services

    def rack_of(self, broker_id: int) -> str | None:
        if self._racks is None:
            self._racks = {b.broker_id: b.rack for b in self._services.cluster.brokers()}
        return self._racks.get(broker_id)


def _read_partition(services: HandlerServices, topic: str, request: dict, budget: int,
                    first: bool, isolation_level: int, reader: _Reader) -> tuple[dict, int]:
    index = request["partition"]
    response = {"partition_index": index, "error_code": 0, "high_watermark": -1,
                "last_stable_offset": -1, "log_start_offset": -1, "aborted_transactions": None,
                "preferred_read_replica": -1, "records": b""}
    partition = services.partitions.partition(TopicPartition(topic, index))
    if partition is None or partition.leader == NO_LEADER or \
            not (partition.is_leader or reader.may_read_follower):
        response["error_code"] = not_served_error(services.cluster, topic, index)
        return response, 0
    requested_epoch = request.get("current_leader_epoch", NO_PARTITION_LEADER_EPOCH)
    response["error_code"] = _epoch_error(requested_epoch, partition.leader_epoch) or \
        down_conversion.partition_error(partition.log.config, reader.version)
    if response["error_code"]:
        return response, 0
    log = partition.log
    if log.offline:  # its log dir failed (KIP-112)
        response["error_code"] = ErrorCode.KAFKA_STORAGE_ERROR
        return response, 0
    committed = isolation_level == IsolationLevel.READ_COMMITTED and not reader.from_follower
    if reader.client_rack is not None:
        preferred = partition.preferred_read_replica(reader.client_rack, request["fetch_offset"],
                                                     reader.rack_of)
        if preferred is not None:
            response.update(preferred_read_replica=preferred, high_watermark=log.high_watermark,
                            last_stable_offset=log.last_stable_offset,
                            log_start_offset=log.log_start_offset,
                            aborted_transactions=[] if committed else None)
            return response, 0
    leader_end = log.log_end_offset
    limit = min(request["partition_max_bytes"], max(budget, 0))
    region, last_stable = None, None
    if limit > 0 or first:
        try:
            if committed:
                read = log.read_committed(request["fetch_offset"], max(limit, 1),
                                          min_one_batch=first)
                region, last_stable = read.region, read.last_stable_offset
                response.update(aborted_transactions=[
                    {"producer_id": txn.producer_id, "first_offset": txn.first_offset}
                    for txn in read.aborted_transactions])
            else:
                region = log.read(request["fetch_offset"], max(limit, 1),
                                  max_offset=None if reader.from_follower
                                  else log.high_watermark, min_one_batch=first)
        except OffsetOutOfRangeError:
            response["error_code"] = ErrorCode.OFFSET_OUT_OF_RANGE
            return response, 0
        except KafkaStorageError:  # its log dir failed meanwhile
            response["error_code"] = ErrorCode.KAFKA_STORAGE_ERROR
            return response, 0
    if reader.from_follower and reader.update_fetch_state and \
            not partition.update_follower_fetch_state(
                reader.replica_id, fetch_offset=request["fetch_offset"],
                log_start_offset=request.get("log_start_offset", -1),
                leader_end_offset=leader_end):
        if region is not None:
            region.close()
        response["error_code"] = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return response, 0
    if reader.from_follower:  # its log start may be the low watermark a DeleteRecords awaits
        services.purgatory.delete_records.check_and_complete(partition.topic_partition)
    response.update(high_watermark=log.high_watermark, log_start_offset=log.log_start_offset,
                    last_stable_offset=log.last_stable_offset if last_stable is None
                    else last_stable)
    if committed:
        response["aborted_transactions"] = response["aborted_transactions"] or []
    if region is None:
        return response, 0
    if down_conversion.client_magic(reader.version) is not None:
        return down_conversion.answer_down_converted(response, region, request["fetch_offset"],
                                                     reader.version)
    response["records"] = region
    return response, region.size


def _epoch_error(requested: int, current: int) -> ErrorCode:
    """KIP-320's fencing of a fetcher whose leader epoch is not the partition's."""
    if requested in (NO_PARTITION_LEADER_EPOCH, current):
        return ErrorCode.NONE
    return ErrorCode.FENCED_LEADER_EPOCH if requested < current else \
        ErrorCode.UNKNOWN_LEADER_EPOCH


def _release(responses: list) -> None:
    """Close the file regions of a response that will not be sent."""
    for topic in responses:
        for partition in topic["partitions"]:
            records = partition["records"]
            if hasattr(records, "close"):
                records.close()
