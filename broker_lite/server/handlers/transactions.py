"""The transaction APIs: AddPartitionsToTxn (0-5), AddOffsetsToTxn (0-4), EndTxn (0-4),
TxnOffsetCommit (0-4), WriteTxnMarkers (1), ListTransactions (0-1), DescribeTransactions (0).

The producer-facing ones are served by the transaction coordinator
(:mod:`broker_lite.coordinator.transaction`), TxnOffsetCommit by the group coordinator, and
WriteTxnMarkers by the partition leaders the coordinator sends markers to.

- AddPartitionsToTxn v0-3 adds one transaction's partitions; when some named partition does not
  exist, it answers UNKNOWN_TOPIC_OR_PARTITION for those and OPERATION_NOT_ATTEMPTED for the
  others, without adding any. v4+ is the batched form brokers send (several transactions; with
  ``verify_only`` it only checks that the partitions are in the transaction).
- PRODUCER_FENCED is answered INVALID_PRODUCER_EPOCH to clients older than KIP-588
  (InitProducerId before v4, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn before v2).
- TxnOffsetCommit writes the offsets as transactional records of the producer (see
  :mod:`broker_lite.coordinator.group.txn_offset_commit`).

Authorization, as Kafka's: the producer-facing APIs need Write on the transactional id
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED); AddPartitionsToTxn v0-3 also Write on each topic
(TOPIC_AUTHORIZATION_FAILED; internal topics are never added, and the other partitions are
OPERATION_NOT_ATTEMPTED), AddOffsetsToTxn and TxnOffsetCommit Read on the group
(GROUP_AUTHORIZATION_FAILED), TxnOffsetCommit Read on each topic. The broker-to-broker forms
need ClusterAction on the cluster (AddPartitionsToTxn v4+; WriteTxnMarkers, or Alter), else
CLUSTER_AUTHORIZATION_FAILED. ListTransactions lists, and DescribeTransactions describes, only
the transactional ids the principal may Describe (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for one
named), showing the partitions of topics it may Describe.
"""

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from broker_lite.common.vocabulary import NO_PARTITION_LEADER_EPOCH, TopicPartition
from broker_lite.coordinator import INTERNAL_TOPICS
from broker_lite.coordinator.group.offsets import OffsetAndMetadata
from broker_lite.coordinator.group.txn_offset_commit import handle_txn_commit_offsets
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RequestContext
from ..errors import not_served_error
from ..services import HandlerServices
from .delayed_replication import DelayedReplication

UNKNOWN_MEMBER_ID = ""
WRITE, READ, DESCRIBE = AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE
CLUSTER_ACTION = AclOperation.CLUSTER_ACTION
TOPIC, GROUP = ResourceType.TOPIC, ResourceType.GROUP
TRANSACTIONAL_ID, CLUSTER = ResourceType.TRANSACTIONAL_ID, ResourceType.CLUSTER
TXN_REFUSED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def _may_write(context: RequestContext, transactional_id: str) -> bool:
    return context.authorize(WRITE, TRANSACTIONAL_ID, transactional_id)


def _answer(error: ErrorCode) -> dict:
    """AddOffsetsToTxn's and EndTxn's response."""
    return {"throttle_time_ms": 0, "error_code": error}


def fenced_error(error: ErrorCode, version: int, first_fenced_version: int) -> ErrorCode:
    """PRODUCER_FENCED as a client of ``version`` understands it."""
    if error == ErrorCode.PRODUCER_FENCED and version < first_fenced_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error


def _unknown_partitions(services: HandlerServices, partitions: list[TopicPartition]
                        ) -> set[TopicPartition]:
    counts = {topic: services.cluster.partition_count(topic) or 0
              for topic in {tp.topic for tp in partitions}}
    return {tp for tp in partitions if not 0 <= tp.partition < counts[tp.topic]}


# -- AddPartitionsToTxn ---------------------------------------------------------------------


def add_partitions_to_txn(context: RequestContext, body: dict) -> dict:
    if context.version >= 4:
        return _add_partitions_batched(context, body)
    transactional_id = body["v3_and_below_transactional_id"]
    partitions = [TopicPartition(t["name"], p) for t in body["v3_and_below_topics"]
                  for p in t["partitions"]]
    if not _may_write(context, transactional_id):
        errors = dict.fromkeys(partitions, TXN_REFUSED)
    else:
        writable = context.authorized_names(
            WRITE, TOPIC, (tp.topic for tp in partitions if tp.topic not in INTERNAL_TOPICS))
        errors = _add_partitions(context.services, transactional_id,
                                 body["v3_and_below_producer_id"],
                                 body["v3_and_below_producer_epoch"], partitions,
                                 refused={tp.topic for tp in partitions} - writable)
    errors = {tp: fenced_error(e, context.version, 2) for tp, e in errors.items()}
    return {"throttle_time_ms": 0,
            "results_by_topic_v3_and_below": _topic_results(errors)}


def _add_partitions(services: HandlerServices, transactional_id: str, producer_id: int, epoch: int,
                    partitions: list[TopicPartition], verify_only: bool = False,
                    refused: AbstractSet[str] = frozenset()) -> dict[TopicPartition, ErrorCode]:
    unknown = _unknown_partitions(services, partitions)
    if unknown or refused:
        return {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp.topic in refused
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown
                else ErrorCode.OPERATION_NOT_ATTEMPTED for tp in partitions}
    coordinator = services.transactions
    if verify_only:
        return {tp: coordinator.verify_partition(transactional_id, producer_id, epoch, tp)
                for tp in partitions}
    error = coordinator.handle_add_partitions(transactional_id, producer_id, epoch, partitions)
    return dict.fromkeys(partitions, error)


def _add_partitions_batched(context: RequestContext, body: dict) -> dict:
    if not context.authorize(CLUSTER_ACTION, CLUSTER):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                "results_by_transaction": []}
    results = []
    for txn in body["transactions"]:
        partitions = [TopicPartition(t["name"], p) for t in txn["topics"] for p in t["partitions"]]
        errors = _add_partitions(context.services, txn["transactional_id"], txn["producer_id"],
                                 txn["producer_epoch"], partitions, txn["verify_only"])
        results.append({"transactional_id": txn["transactional_id"],
                        "topic_results": _topic_results(errors)})
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE,
            "results_by_transaction": results}


def _topic_results(errors: dict[TopicPartition, ErrorCode]) -> list[dict]:
    by_topic: dict[str, list[dict]] = {}
    for tp, error in errors.items():
        by_topic.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "partition_error_code": error})
    return [{"name": name, "results_by_partition": results}
            for name, results in by_topic.items()]


# -- AddOffsetsToTxn ------------------------------------------------------------------------


def add_offsets_to_txn(context: RequestContext, body: dict) -> dict:
    if not _may_write(context, body["transactional_id"]):
        return _answer(TXN_REFUSED)
    if not context.authorize(READ, GROUP, body["group_id"]):
        return _answer(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    services = context.services
    offsets_partition = TopicPartition(services.groups.topic,
                                       services.groups.partition_for(body["group_id"]))
    error = services.transactions.handle_add_partitions(
        body["transactional_id"], body["producer_id"], body["producer_epoch"],
        [offsets_partition])
    return _answer(fenced_error(error, context.version, 2))


# -- EndTxn ---------------------------------------------------------------------------------


def end_txn(context: RequestContext, body: dict) -> dict:
    if not _may_write(context, body["transactional_id"]):
        return _answer(TXN_REFUSED)
    error = context.services.transactions.handle_end_txn(
        body["transactional_id"], body["producer_id"], body["producer_epoch"], body["committed"])
    return _answer(fenced_error(error, context.version, 2))


# -- TxnOffsetCommit ------------------------------------------------------------------------


def txn_offset_commit(context: RequestContext, body: dict) -> dict:
    version = context.version
    coordinator = context.services.groups
    now = coordinator.clock_ms()
    errors: dict[TopicPartition, ErrorCode] = {}
    requested = [TopicPartition(t["name"], p["partition_index"])
                 for t in body["topics"] for p in t["partitions"]]
    refusal = _txn_offset_commit_refusal(context, body)
    readable = context.authorized_names(READ, TOPIC, {tp.topic for tp in requested}) \
        if refusal is None else set()
    unknown = _unknown_partitions(context.services, requested)
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for topic in body["topics"]:
        for partition in topic["partitions"]:
            tp = TopicPartition(topic["name"], partition["partition_index"])
            if refusal is not None or tp.topic not in readable:
                errors[tp] = refusal or ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if tp in unknown:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = OffsetAndMetadata(
                partition["committed_offset"],
                partition["committed_leader_epoch"] if version >= 2 else NO_PARTITION_LEADER_EPOCH,
                partition["committed_metadata"] or "", now)
    if offsets:
        errors.update(handle_txn_commit_offsets(
            coordinator, body["group_id"], body["producer_id"], body["producer_epoch"],
            body["member_id"] if version >= 3 else UNKNOWN_MEMBER_ID,
            body["group_instance_id"] if version >= 3 else None,
            body["generation_id"] if version >= 3 else -1, offsets))
    return {"throttle_time_ms": 0, "topics": [
        {"name": topic["name"], "partitions": [
            {"partition_index": p["partition_index"],
             "error_code": errors[TopicPartition(topic["name"], p["partition_index"])]}
            for p in topic["partitions"]]}
        for topic in body["topics"]]}


def _txn_offset_commit_refusal(context: RequestContext, body: dict) -> ErrorCode | None:
    if not _may_write(context, body["transactional_id"]):
        return TXN_REFUSED
    if not context.authorize(READ, GROUP, body["group_id"]):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None


# -- WriteTxnMarkers ------------------------------------------------------------------------


def write_txn_markers(context: RequestContext, body: dict):
    """Append each marker, then answer once the ISRs have them (Kafka writes markers with
    acks=all, waiting up to ``request.timeout.ms``: REQUEST_TIMED_OUT for the others), waiting
    in the purgatory rather than on a request handler."""
    services = context.services
    allowed = context.authorize(AclOperation.ALTER, CLUSTER, log_denied=False) or \
        context.authorize(CLUSTER_ACTION, CLUSTER)
    written = []
    for marker in body["markers"]:
        targets = [TopicPartition(t["name"], p) for t in marker["topics"]
                   for p in t["partition_indexes"]]
        if allowed:
            errors, ends = services.markers.append(
                marker["producer_id"], marker["producer_epoch"], marker["coordinator_epoch"],
                marker["transaction_result"], targets)
        else:
            errors, ends = dict.fromkeys(targets, ErrorCode.CLUSTER_AUTHORIZATION_FAILED), {}
        for tp, error in errors.items():
            if error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                errors[tp] = not_served_error(services.cluster, tp.topic, tp.partition)
        written.append(_WrittenMarker(marker["producer_id"], marker["transaction_result"],
                                      errors, ends))
    return DelayedTxnMarkers(context, services.markers.replication_timeout_ms, written).wait()


@dataclass
class _WrittenMarker:
    producer_id: int
    committed: bool
    errors: dict[TopicPartition, ErrorCode]  # of each target
    ends: dict[TopicPartition, int]  # the offset after each marker appended


class DelayedTxnMarkers(DelayedReplication[tuple[int, TopicPartition]]):
    """A WriteTxnMarkers request waiting for the ISRs of the partitions its markers went to.
    Once complete, the markers that made it settle their transactions' offsets (those in
    ``__consumer_offsets``), and the answer gives each partition's error."""

    def __init__(self, context: RequestContext, timeout_ms: int | None,
                 markers: list[_WrittenMarker]):
        """``timeout_ms`` None: the markers do not wait for the ISR."""
        super().__init__(context, timeout_ms or 0, {} if timeout_ms is None else {
            (index, tp): (tp, end)
            for index, marker in enumerate(markers) for tp, end in marker.ends.items()})
        self.markers = markers

    def replicated(self, key, done: bool, error: ErrorCode) -> None:
        if done:
            index, tp = key
            self.markers[index].errors[tp] = error

    def response(self) -> dict:
        for index, tp in self.pending:
            self.markers[index].errors[tp] = ErrorCode.REQUEST_TIMED_OUT
        results = []
        for marker in self.markers:
            self.context.services.markers.settle(marker.producer_id, marker.committed,
                                                 marker.errors)
            by_topic: dict[str, list[dict]] = {}
            for tp, error in marker.errors.items():
                by_topic.setdefault(tp.topic, []).append(
                    {"partition_index": tp.partition, "error_code": error})
            results.append({"producer_id": marker.producer_id, "topics": [
                {"name": name, "partitions": partitions}
                for name, partitions in by_topic.items()]})
        return {"markers": results}


# -- ListTransactions / DescribeTransactions ------------------------------------------------


def list_transactions(context: RequestContext, body: dict) -> dict:
    error, unknown, found = context.services.transactions.handle_list_transactions(
        body["state_filters"], body["producer_id_filters"],
        body["duration_filter"] if context.version >= 1 else -1)
    found = [txn for txn in found
             if context.authorize(DESCRIBE, TRANSACTIONAL_ID, txn[0], log_denied=False)]
    return {"throttle_time_ms": 0, "error_code": error, "unknown_state_filters": unknown,
            "transaction_states": [
                {"transactional_id": txn_id, "producer_id": producer_id,
                 "transaction_state": state} for txn_id, producer_id, state in found]}


def describe_transactions(context: RequestContext, body: dict) -> dict:
    coordinator = context.services.transactions
    states = []
    for transactional_id in body["transactional_ids"]:
        if context.authorize(DESCRIBE, TRANSACTIONAL_ID, transactional_id):
            error, described = coordinator.handle_describe_transaction(transactional_id)
        else:
            error, described = TXN_REFUSED, None
        if described is None:
            states.append({"error_code": error, "transactional_id": transactional_id,
                           "transaction_state": "", "transaction_timeout_ms": 0,
                           "transaction_start_time_ms": -1, "producer_id": -1,
                           "producer_epoch": -1, "topics": []})
            continue
        visible = context.authorized_names(DESCRIBE, TOPIC, {tp.topic for tp in
                                                              described.partitions})
        by_topic: dict[str, list[int]] = {}
        for tp in described.partitions:
            if tp.topic in visible:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
        states.append({
            "error_code": ErrorCode.NONE, "transactional_id": transactional_id,
            "transaction_state": described.state.kafka_name,
            "transaction_timeout_ms": described.timeout_ms,
            "transaction_start_time_ms": described.start_timestamp_ms,
            "producer_id": described.producer_id, "producer_epoch": described.producer_epoch,
            "topics": [{"topic": topic, "partitions": partitions}
                       for topic, partitions in by_topic.items()]})
    return {"throttle_time_ms": 0, "transaction_states": states}
