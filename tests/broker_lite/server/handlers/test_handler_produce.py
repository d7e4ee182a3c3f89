"""Produce: each partition's batches appended to the log this broker leads, every partition
answered on its own; acks=0 answers nothing (or drops the connection on a failure)."""

import pytest

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch, iter_batches
from broker_lite.server.network import CloseConnection
from broker_lite.zk.layout import PartitionState

from .handler_support import BROKER_ID, OTHER_BROKER

VERSION = 9


def batch(*values: bytes, **options) -> bytes:
    return build_batch([(b"key", v) for v in values], timestamp=1_000, **options)


def produce(harness, partitions: dict[tuple[str, int], bytes | None], *, acks: int = -1,
            transactional_id: str | None = None, version: int = VERSION):
    by_topic: dict[str, list[dict]] = {}
    for (topic, index), records in partitions.items():
        by_topic.setdefault(topic, []).append({"index": index, "records": records})
    return harness.call(ApiKey.PRODUCE, version, {
        "transactional_id": transactional_id, "acks": acks, "timeout_ms": 1000,
        "topic_data": [{"name": t, "partition_data": p} for t, p in by_topic.items()]})


def answers(response) -> dict[tuple[str, int], dict]:
    return {(t["name"], p["index"]): p for t in response["responses"]
            for p in t["partition_responses"]}


def test_batches_are_appended_and_answered_with_their_offsets(harness):
    harness.topic("events", [BROKER_ID, BROKER_ID])
    first = answers(produce(harness, {("events", 0): batch(b"a", b"b"),
                                      ("events", 1): batch(b"c")}))
    assert {tp: (a["error_code"], a["base_offset"], a["log_start_offset"])
            for tp, a in first.items()} == {("events", 0): (0, 0, 0), ("events", 1): (0, 0, 0)}
    second = answers(produce(harness, {("events", 0): batch(b"d")}))
    assert second[("events", 0)]["base_offset"] == 2
    assert second[("events", 0)]["log_append_time_ms"] == -1  # CreateTime
    log = harness.log("events", 0)
    assert log.log_end_offset == 3 and log.high_watermark == 3
    assert harness.log("events", 1).log_end_offset == 1


def test_each_partition_is_answered_on_its_own(harness):
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    response = answers(produce(harness, {
        ("events", 0): batch(b"kept"),
        ("events", 1): batch(b"elsewhere"),     # led by broker 2
        ("events", 2): batch(b"no such"),       # past the partition count
        ("missing", 0): batch(b"no topic"),
        ("__consumer_offsets", 0): batch(b"internal"),
    }))
    assert {tp: a["error_code"] for tp, a in response.items()} == {
        ("events", 0): ErrorCode.NONE,
        ("events", 1): ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ("events", 2): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("__consumer_offsets", 0): ErrorCode.INVALID_TOPIC_EXCEPTION,
    }
    assert response[("__consumer_offsets", 0)]["error_message"] == \
        "Cannot append to internal topic __consumer_offsets"
    assert all(a["base_offset"] == -1 for tp, a in response.items() if tp != ("events", 0))
    assert harness.log("events", 0).log_end_offset == 1


def test_partitions_held_here_but_not_led_are_not_written(harness):
    # ZooKeeper shows this broker elected before it has taken the partition on
    harness.cluster.add("elected", [PartitionState(BROKER_ID, 0, (BROKER_ID,), 1)])
    # this broker follows: it holds the log, broker 2 leads
    follower = PartitionState(OTHER_BROKER, 3, (OTHER_BROKER, BROKER_ID), 1)
    harness.cluster.add("followed", [follower])
    harness.partitions.on_partition_assigned("followed", 0, follower, [OTHER_BROKER, BROKER_ID])
    response = answers(produce(harness, {("elected", 0): batch(b"v"),
                                         ("followed", 0): batch(b"v")}))
    assert {tp: a["error_code"] for tp, a in response.items()} == {
        ("elected", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ("followed", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER}
    assert harness.log("followed", 0).log_end_offset == 0


def test_bad_batches_fail_their_partition_only(harness):
    harness.topic("events", [BROKER_ID, BROKER_ID])
    corrupt = bytearray(batch(b"v"))
    corrupt[-1] ^= 0xFF  # the CRC no longer matches
    response = answers(produce(harness, {("events", 0): bytes(corrupt),
                                         ("events", 1): batch(b"fine")}))
    assert response[("events", 0)]["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert response[("events", 0)]["error_message"]
    assert response[("events", 1)]["error_code"] == ErrorCode.NONE
    assert harness.log("events", 0).log_end_offset == 0


def test_producer_state_errors(harness):
    harness.topic("events", [BROKER_ID])
    idempotent = {"producer_id": 7, "producer_epoch": 0}
    assert answers(produce(harness, {("events", 0): batch(b"a", base_sequence=0, **idempotent)})
                   )[("events", 0)]["error_code"] == ErrorCode.NONE
    gap = answers(produce(harness, {("events", 0): batch(b"b", base_sequence=5, **idempotent)}))
    assert gap[("events", 0)]["error_code"] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    fenced = answers(produce(harness, {("events", 0): batch(
        b"c", base_sequence=1, producer_id=7, producer_epoch=-1)}))
    assert fenced[("events", 0)]["error_code"] == ErrorCode.INVALID_PRODUCER_EPOCH


def test_log_append_time_is_answered_for_topics_that_keep_it(harness):
    harness.topic("stamped", [BROKER_ID], config={"message.timestamp.type": "LogAppendTime"})
    response = answers(produce(harness, {("stamped", 0): batch(b"v")}))
    assert response[("stamped", 0)]["log_append_time_ms"] == harness.clock()


def test_invalid_acks_fail_every_partition(harness):
    harness.topic("events", [BROKER_ID])
    response = answers(produce(harness, {("events", 0): batch(b"v")}, acks=2))
    assert response[("events", 0)]["error_code"] == ErrorCode.INVALID_REQUIRED_ACKS
    assert harness.log("events", 0).log_end_offset == 0


def test_acks_zero_answers_nothing_and_drops_the_connection_on_a_failure(harness):
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    assert produce(harness, {("events", 0): batch(b"v")}, acks=0) is None
    assert harness.log("events", 0).log_end_offset == 1
    with pytest.raises(CloseConnection, match="events-1"):
        produce(harness, {("events", 1): batch(b"v")}, acks=0)


def test_the_transaction_coordinator_checks_transactional_batches(harness):
    harness.topic("events", [BROKER_ID])
    transactions = harness.services.transactions
    records = batch(b"v", producer_id=9, producer_epoch=0, base_sequence=0,
                    is_transactional=True)
    transactions.produce_error = ErrorCode.INVALID_TXN_STATE
    refused = answers(produce(harness, {("events", 0): records}, transactional_id="txn"))
    assert refused[("events", 0)]["error_code"] == ErrorCode.INVALID_TXN_STATE
    assert transactions.verified == [("txn", "events", 0)]
    transactions.produce_error = ErrorCode.NONE
    accepted = answers(produce(harness, {("events", 0): records}, transactional_id="txn"))
    assert accepted[("events", 0)]["error_code"] == ErrorCode.NONE
    log = harness.log("events", 0)
    assert log.last_stable_offset == 0  # the transaction is open
    [written] = list(iter_batches(log.read(0, 1 << 20).read()))
    assert written.is_transactional and written.producer_id == 9


@pytest.mark.parametrize("version", [7, 8, 11])
def test_records_refused_by_a_rule_are_named_in_record_errors(harness, version):
    harness.topic("compacted", [BROKER_ID, BROKER_ID], config={"cleanup.policy": "compact"})
    bad = build_batch([(b"k0", b"a"), (None, b"b"), (b"k2", b"c"), (None, b"d")], timestamp=1)
    response = answers(produce(harness, {("compacted", 0): bad,
                                         ("compacted", 1): batch(b"fine")}, version=version))
    refused, other = response[("compacted", 0)], response[("compacted", 1)]
    assert (refused["error_code"], refused["base_offset"]) == (ErrorCode.INVALID_RECORD, -1)
    assert (other["error_code"], other["base_offset"]) == (ErrorCode.NONE, 0)
    if version >= 8:  # before, the response has room for the error code alone
        message = ("Compacted topic cannot accept message without key in topic partition "
                   "compacted-0.")
        assert refused["record_errors"] == [
            {"batch_index": 1, "batch_index_error_message": message},
            {"batch_index": 3, "batch_index_error_message": message}]
        assert refused["error_message"].startswith(
            "One or more records have been rejected due to 2 record errors in total")
        assert refused["log_start_offset"] == 0
    assert harness.log("compacted", 0).log_end_offset == 0



def test_timestamps_out_of_the_topic_bounds_are_invalid_timestamp(harness):
    harness.topic("bounded", [BROKER_ID], config={"message.timestamp.before.max.ms": "3600000"})
    response = answers(produce(harness, {("bounded", 0): batch(b"ancient")}))  # timestamp 1000
    refused = response[("bounded", 0)]
    assert refused["error_code"] == ErrorCode.INVALID_TIMESTAMP
    assert [e["batch_index"] for e in refused["record_errors"]] == [0]
    assert refused["error_message"] == \
        "One or more records have been rejected due to invalid timestamp"
