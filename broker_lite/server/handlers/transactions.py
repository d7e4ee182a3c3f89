"""The transaction APIs: AddPartitionsToTxn (0-5), AddOffsetsToTxn (0-4), EndTxn (0-4),
TxnOffsetCommit (0-4), WriteTxnMarkers (1), ListTransactions (0-1), DescribeTransactions (0).

The producer-facing ones are served by the transaction coordinator
(:mod:`broker_lite.coordinator.transactions`), TxnOffsetCommit by the group coordinator, and
WriteTxnMarkers by the partition leaders the coordinator sends markers to.

- AddPartitionsToTxn v0-3 adds one transaction's partitions; when some named partition does not
  exist, it answers UNKNOWN_TOPIC_OR_PARTITION for those and OPERATION_NOT_ATTEMPTED for the
  others, without adding any. v4+ is the batched form brokers send (several transactions; with
  ``verify_only`` it only checks that the partitions are in the transaction).
- PRODUCER_FENCED is answered INVALID_PRODUCER_EPOCH to clients older than KIP-588
  (InitProducerId before v4, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn before v2).
- TxnOffsetCommit writes the offsets as transactional records of the producer (see
  :mod:`broker_lite.coordinator.txn_offset_commit`).
"""

from broker_lite.coordinator.offsets import OffsetAndMetadata
from broker_lite.coordinator.txn_offset_commit import handle_txn_commit_offsets
from broker_lite.protocol import ErrorCode
from broker_lite.vocabulary import TopicPartition

from ..dispatcher import RequestContext
from ..errors import not_served_error
from ..services import HandlerServices

NO_LEADER_EPOCH = -1
UNKNOWN_MEMBER_ID = ""


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
    partitions = [TopicPartition(t["name"], p) for t in body["v3_and_below_topics"]
                  for p in t["partitions"]]
    errors = _add_partitions(context.services, body["v3_and_below_transactional_id"],
                             body["v3_and_below_producer_id"],
                             body["v3_and_below_producer_epoch"], partitions)
    errors = {tp: fenced_error(e, context.version, 2) for tp, e in errors.items()}
    return {"throttle_time_ms": 0,
            "results_by_topic_v3_and_below": _topic_results(errors)}


def _add_partitions(services: HandlerServices, transactional_id: str, producer_id: int, epoch: int,
                    partitions: list[TopicPartition], verify_only: bool = False
                    ) -> dict[TopicPartition, ErrorCode]:
    unknown = _unknown_partitions(services, partitions)
    if unknown:
        return {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown
                else ErrorCode.OPERATION_NOT_ATTEMPTED for tp in partitions}
    coordinator = services.transactions
    if verify_only:
        return {tp: coordinator.verify_partition(transactional_id, producer_id, epoch, tp)
                for tp in partitions}
    error = coordinator.handle_add_partitions(transactional_id, producer_id, epoch, partitions)
    return dict.fromkeys(partitions, error)


def _add_partitions_batched(context: RequestContext, body: dict) -> dict:
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
    services = context.services
    offsets_partition = TopicPartition(services.groups.topic,
                                       services.groups.partition_for(body["group_id"]))
    error = services.transactions.handle_add_partitions(
        body["transactional_id"], body["producer_id"], body["producer_epoch"],
        [offsets_partition])
    return {"throttle_time_ms": 0, "error_code": fenced_error(error, context.version, 2)}


# -- EndTxn ---------------------------------------------------------------------------------


def end_txn(context: RequestContext, body: dict) -> dict:
    error = context.services.transactions.handle_end_txn(
        body["transactional_id"], body["producer_id"], body["producer_epoch"], body["committed"])
    return {"throttle_time_ms": 0, "error_code": fenced_error(error, context.version, 2)}


# -- TxnOffsetCommit ------------------------------------------------------------------------


def txn_offset_commit(context: RequestContext, body: dict) -> dict:
    version = context.version
    coordinator = context.services.groups
    now = coordinator.clock_ms()
    errors: dict[TopicPartition, ErrorCode] = {}
    requested = [TopicPartition(t["name"], p["partition_index"])
                 for t in body["topics"] for p in t["partitions"]]
    unknown = _unknown_partitions(context.services, requested)
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for topic in body["topics"]:
        for partition in topic["partitions"]:
            tp = TopicPartition(topic["name"], partition["partition_index"])
            if tp in unknown:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = OffsetAndMetadata(
                partition["committed_offset"],
                partition["committed_leader_epoch"] if version >= 2 else NO_LEADER_EPOCH,
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


# -- WriteTxnMarkers ------------------------------------------------------------------------


def write_txn_markers(context: RequestContext, body: dict) -> dict:
    services = context.services
    results = []
    for marker in body["markers"]:
        targets = [TopicPartition(t["name"], p) for t in marker["topics"]
                   for p in t["partition_indexes"]]
        errors = services.markers.write(marker["producer_id"], marker["producer_epoch"],
                                        marker["coordinator_epoch"], marker["transaction_result"],
                                        targets)
        for tp, error in errors.items():
            if error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                errors[tp] = not_served_error(services.cluster, tp.topic, tp.partition)
        by_topic: dict[str, list[dict]] = {}
        for tp, error in errors.items():
            by_topic.setdefault(tp.topic, []).append(
                {"partition_index": tp.partition, "error_code": error})
        results.append({"producer_id": marker["producer_id"], "topics": [
            {"name": name, "partitions": partitions} for name, partitions in by_topic.items()]})
    return {"markers": results}


# -- ListTransactions / DescribeTransactions ------------------------------------------------


def list_transactions(context: RequestContext, body: dict) -> dict:
    error, unknown, found = context.services.transactions.handle_list_transactions(
        body["state_filters"], body["producer_id_filters"],
        body["duration_filter"] if context.version >= 1 else -1)
    return {"throttle_time_ms": 0, "error_code": error, "unknown_state_filters": unknown,
            "transaction_states": [
                {"transactional_id": txn_id, "producer_id": producer_id,
                 "transaction_state": state} for txn_id, producer_id, state in found]}


def describe_transactions(context: RequestContext, body: dict) -> dict:
    coordinator = context.services.transactions
    states = []
    for transactional_id in body["transactional_ids"]:
        error, described = coordinator.handle_describe_transaction(transactional_id)
        if described is None:
            states.append({"error_code": error, "transactional_id": transactional_id,
                           "transaction_state": "", "transaction_timeout_ms": 0,
                           "transaction_start_time_ms": -1, "producer_id": -1,
                           "producer_epoch": -1, "topics": []})
            continue
        by_topic: dict[str, list[int]] = {}
        for tp in described.partitions:
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
