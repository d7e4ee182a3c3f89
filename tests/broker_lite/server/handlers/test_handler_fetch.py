"""Fetch: whole batches from the logs this broker leads, per-partition errors, fetches by topic
id, read_committed, and the long poll that an append ends."""

import time
import uuid

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch, iter_batches

from .handler_support import BROKER_ID, OTHER_BROKER, records_of

READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def fetch_body(partitions: dict, *, max_wait_ms: int = 0, min_bytes: int = 1,
               isolation_level: int = READ_UNCOMMITTED, by_id: dict | None = None) -> dict:
    """``partitions``: {(topic, partition): fetch offset}; ``by_id``: {topic: topic id} for
    Fetch 13+."""
    by_topic: dict[str, list[dict]] = {}
    for (topic, partition), offset in partitions.items():
        by_topic.setdefault(topic, []).append(
            {"partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
             "log_start_offset": -1, "partition_max_bytes": 1 << 20})
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes,
            "max_bytes": 8 << 20, "isolation_level": isolation_level, "session_id": 0,
            "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": topic, "topic_id": (by_id or {}).get(topic, uuid.UUID(int=0)),
                        "partitions": p} for topic, p in by_topic.items()]}


def answers(response) -> dict[tuple[str, int], dict]:
    return {(t["topic"], p["partition_index"]): p for t in response["responses"]
            for p in t["partitions"]}


def values(answer: dict) -> list[bytes]:
    """The values of the records fetched, transaction markers left out."""
    return [r.value for b in iter_batches(records_of(answer["records"]))
            if not b.is_control_batch for r in b]


def append(harness, topic: str, *vals: bytes, partition: int = 0, **options) -> None:
    # stamped now: a batch much older than the log's clock would roll a segment (segment.ms)
    harness.log(topic, partition).append(
        build_batch([(b"k", v) for v in vals], timestamp=harness.clock(), **options),
        partition_leader_epoch=0)


def test_records_from_the_fetch_offset_to_the_high_watermark(harness):
    harness.topic("events", [BROKER_ID])
    append(harness, "events", b"a", b"b")
    append(harness, "events", b"c")
    response = harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 0}))
    assert (response["error_code"], response["session_id"]) == (0, 0)
    answer = answers(response)[("events", 0)]
    assert (answer["error_code"], answer["high_watermark"], answer["last_stable_offset"],
            answer["log_start_offset"], answer["aborted_transactions"]) == (0, 3, 3, 0, None)
    assert values(answer) == [b"a", b"b", b"c"]
    later = answers(harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 2})))
    assert values(later[("events", 0)]) == [b"c"]  # the batch holding offset 2
    at_end = answers(harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 3})))
    assert at_end[("events", 0)]["records"] == b""


def test_errors_are_per_partition(harness):
    harness.topic("events", [BROKER_ID, OTHER_BROKER])
    append(harness, "events", b"a")
    response = answers(harness.call(ApiKey.FETCH, 11, fetch_body({
        ("events", 0): 0, ("events", 1): 0, ("events", 7): 0, ("missing", 0): 0})))
    assert {tp: a["error_code"] for tp, a in response.items()} == {
        ("events", 0): ErrorCode.NONE,
        ("events", 1): ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ("events", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert values(response[("events", 0)]) == [b"a"]
    assert response[("events", 1)]["high_watermark"] == -1


def test_an_offset_past_the_log_end_is_out_of_range(harness):
    harness.topic("events", [BROKER_ID])
    append(harness, "events", b"a")
    response = answers(harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 5})))
    assert response[("events", 0)]["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE


def test_fetch_13_names_topics_by_id(harness):
    info = harness.topic("events", [BROKER_ID])
    append(harness, "events", b"a")
    unknown = uuid.uuid4()
    response = harness.call(ApiKey.FETCH, 13, fetch_body(
        {("events", 0): 0, ("gone", 0): 0}, by_id={"events": info.topic_id, "gone": unknown}))
    known, missing = response["responses"]
    assert (known["topic_id"], values(known["partitions"][0])) == (info.topic_id, [b"a"])
    assert missing["topic_id"] == unknown
    assert missing["partitions"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID


def test_read_committed_stops_at_the_open_transaction_and_lists_aborted_ones(harness):
    harness.topic("txns", [BROKER_ID])
    append(harness, "txns", b"aborted", producer_id=5, producer_epoch=0, base_sequence=0,
           is_transactional=True)
    assert harness.services.markers.write(5, 0, 0, False, [TopicPartition("txns", 0)]) == \
        {TopicPartition("txns", 0): ErrorCode.NONE}
    append(harness, "txns", b"plain")
    append(harness, "txns", b"open", producer_id=6, producer_epoch=0, base_sequence=0,
           is_transactional=True)
    committed = answers(harness.call(ApiKey.FETCH, 11, fetch_body(
        {("txns", 0): 0}, isolation_level=READ_COMMITTED)))[("txns", 0)]
    assert (committed["high_watermark"], committed["last_stable_offset"]) == (4, 3)
    assert committed["aborted_transactions"] == [{"producer_id": 5, "first_offset": 0}]
    assert values(committed) == [b"aborted", b"plain"]  # the consumer drops the aborted one
    uncommitted = answers(harness.call(ApiKey.FETCH, 11, fetch_body({("txns", 0): 0})))
    assert values(uncommitted[("txns", 0)]) == [b"aborted", b"plain", b"open"]
    assert uncommitted[("txns", 0)]["last_stable_offset"] == 3


def test_a_waiting_fetch_returns_when_a_produce_appends(harness):
    harness.topic("events", [BROKER_ID])
    started = time.monotonic()
    waiting = harness.call_later(ApiKey.FETCH, 11,
                                 fetch_body({("events", 0): 0}, max_wait_ms=30_000))
    time.sleep(0.2)
    assert not waiting.done()  # no data yet: it waits
    harness.call(ApiKey.PRODUCE, 9, {"acks": 1, "timeout_ms": 1000, "topic_data": [
        {"name": "events", "partition_data": [
            {"index": 0, "records": build_batch([(b"k", b"new")], timestamp=1)}]}]})
    answer = answers(waiting.result(timeout=10))[("events", 0)]
    assert values(answer) == [b"new"]
    assert time.monotonic() - started < 15  # well before its 30 s


def test_a_waiting_fetch_without_data_answers_empty_after_max_wait(harness):
    harness.topic("events", [BROKER_ID])
    started = time.monotonic()
    response = harness.call(ApiKey.FETCH, 11, fetch_body({("events", 0): 0}, max_wait_ms=300))
    assert time.monotonic() - started >= 0.3
    assert answers(response)[("events", 0)]["records"] == b""


def test_a_stopping_broker_ends_waiting_fetches(harness):
    harness.topic("events", [BROKER_ID])
    waiting = harness.call_later(ApiKey.FETCH, 11,
                                 fetch_body({("events", 0): 0}, max_wait_ms=60_000))
    time.sleep(0.2)
    harness.purgatory.stop()
    assert answers(waiting.result(timeout=10))[("events", 0)]["records"] == b""
