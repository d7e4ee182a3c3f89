"""Fetch against a scripted broker serving a log built here: request fields (sessionless, limits
per partition, leader epochs, topic ids), partition errors returned rather than raised, and
leader errors followed."""

import time
import uuid

import pytest
from scripted_broker import ScriptedBroker, ScriptedLog, sequence, serve_logs

from broker_lite.client import (
    InvalidResponseError,
    KafkaClient,
    KafkaTimeoutError,
    OffsetOutOfRangeError,
    TopicPartition,
)
from broker_lite.client.consumer.fetcher import fetch_request, parse_fetch_response
from broker_lite.client.errors import TopicAuthorizationFailedError
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import iter_records

TOPIC = "events"
TP = TopicPartition(TOPIC, 0)
TOPIC_ID = uuid.uuid4()


@pytest.fixture
def scripted():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({TOPIC: 1}, topic_ids={TOPIC: TOPIC_ID})
        yield broker


def client_for(broker, **settings) -> KafkaClient:
    return KafkaClient({"bootstrap.servers": broker.bootstrap, "retry.backoff.ms": "5",
                        **settings})


# -- sans I/O -------------------------------------------------------------------------------------


def test_fetch_request_is_sessionless_with_limits_and_epochs():
    body = fetch_request({TopicPartition("b", 1): (5, 7), TopicPartition("a", 0): (9, -1)},
                         {"a": TOPIC_ID}, max_wait_ms=250, min_bytes=3, max_bytes=1000,
                         partition_max_bytes=100, isolation_level=1)
    assert (body["replica_id"], body["session_id"], body["session_epoch"]) == (-1, 0, -1)
    assert (body["max_wait_ms"], body["min_bytes"], body["max_bytes"], body["isolation_level"]) \
        == (250, 3, 1000, 1)
    assert [(t["topic"], t["topic_id"]) for t in body["topics"]] == \
        [("a", TOPIC_ID), ("b", uuid.UUID(int=0))]
    assert body["topics"][1]["partitions"] == [{
        "partition": 1, "current_leader_epoch": 7, "fetch_offset": 5, "last_fetched_epoch": -1,
        "log_start_offset": -1, "partition_max_bytes": 100}]


def test_parse_fetch_response_by_name_and_by_id():
    body = {"error_code": 0, "responses": [{"topic": "", "topic_id": TOPIC_ID, "partitions": [
        {"partition_index": 0, "error_code": 0, "high_watermark": 10, "last_stable_offset": 8,
         "log_start_offset": 2, "aborted_transactions": [{"producer_id": 4, "first_offset": 6}],
         "records": memoryview(bytearray(b"abc"))}]}]}
    got = parse_fetch_response(body, [TP, TopicPartition(TOPIC, 1)], {TOPIC_ID: TOPIC})
    records = got[TP].records
    assert bytes(records) == b"abc"
    # a view of the received bytes, not a copy, and not a way to change them
    assert records.obj is body["responses"][0]["partitions"][0]["records"].obj
    assert records.readonly
    assert (got[TP].high_watermark, got[TP].last_stable_offset, got[TP].log_start_offset,
            got[TP].aborted_transactions, got[TP].error) == (10, 8, 2, [(4, 6)], None)
    left_out = got[TopicPartition(TOPIC, 1)].error
    assert isinstance(left_out, InvalidResponseError) and left_out.retriable  # asked again


def test_a_top_level_fetch_error_applies_to_every_partition():
    body = {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "responses": []}
    got = parse_fetch_response(body, [TP], {})
    assert isinstance(got[TP].error, TopicAuthorizationFailedError)


# -- over a socket --------------------------------------------------------------------------------


def test_fetch_sends_limits_epochs_and_topic_ids(scripted):
    log = ScriptedLog([3, 3])
    scripted.handlers[ApiKey.FETCH] = log.fetch_handler()
    with client_for(scripted, **{"max.partition.fetch.bytes": "777",
                                 "fetch.max.bytes": "5000"}) as client:
        fetched = client.fetch({TP: 0}, max_wait_ms=12, min_bytes=34)[TP]
    assert [r.offset for r in iter_records(fetched.records)] == [0, 1, 2]  # then a cut batch
    (header, body), = [(h, b) for h, b in scripted.requests if h.api_key == ApiKey.FETCH]
    assert header.api_version == 17  # topic ids known: the newest version
    topic = body["topics"][0]
    assert topic["topic_id"] == TOPIC_ID
    assert (body["max_wait_ms"], body["min_bytes"], body["max_bytes"]) == (12, 34, 5000)
    assert topic["partitions"][0]["partition_max_bytes"] == 777
    assert topic["partitions"][0]["current_leader_epoch"] == 0


def test_fetch_by_name_when_the_metadata_has_no_topic_ids(scripted):
    scripted.handlers[ApiKey.METADATA] = scripted.metadata({TOPIC: 1})
    scripted.handlers[ApiKey.FETCH] = ScriptedLog([2]).fetch_handler()
    with client_for(scripted) as client:
        assert client.fetch({TP: 0})[TP].error is None
    (header, body), = [(h, b) for h, b in scripted.requests if h.api_key == ApiKey.FETCH]
    assert header.api_version == 12 and body["topics"][0]["topic"] == TOPIC


def test_offset_out_of_range_is_returned_not_raised(scripted):
    scripted.handlers[ApiKey.FETCH] = ScriptedLog([3]).fetch_handler()
    with client_for(scripted) as client:
        assert isinstance(client.fetch({TP: 9})[TP].error, OffsetOutOfRangeError)


def test_larger_limits_for_some_partitions(scripted):
    scripted.handlers[ApiKey.METADATA] = scripted.metadata({TOPIC: 2}, topic_ids={TOPIC: TOPIC_ID})
    scripted.handlers.update(serve_logs(TOPIC, {0: ScriptedLog([2]), 1: ScriptedLog([2])}))
    other = TopicPartition(TOPIC, 1)
    with client_for(scripted, **{"max.partition.fetch.bytes": "777"}) as client:
        client.fetch({TP: 0, other: 0}, partition_max_bytes={other: 4096})
    (body,) = scripted.requests_for(ApiKey.FETCH)
    assert {p["partition"]: p["partition_max_bytes"] for p in body["topics"][0]["partitions"]} \
        == {0: 777, 1: 4096}


def test_a_leader_error_refreshes_metadata_and_retries(scripted):
    log = ScriptedLog([3])
    scripted.handlers[ApiKey.FETCH] = sequence(
        log.fetch_handler(error=ErrorCode.NOT_LEADER_OR_FOLLOWER),
        log.fetch_handler(error=ErrorCode.FENCED_LEADER_EPOCH), log.fetch_handler())
    with client_for(scripted) as client:
        fetched = client.fetch({TP: 0})[TP]
    assert fetched.error is None and fetched.high_watermark == 3
    assert len(scripted.requests_for(ApiKey.FETCH)) == 3
    assert len(scripted.requests_for(ApiKey.METADATA)) == 3  # first, then after each error


def test_a_partition_left_out_of_a_response_is_asked_for_again(scripted):
    """As Java's client: a full response without the partition (here KIP-219's empty answer of
    a broker throttling the client) is not an error, the partition is fetched again."""
    log = ScriptedLog([3])
    scripted.handlers[ApiKey.FETCH] = sequence(
        {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": []},
        log.fetch_handler())
    with client_for(scripted) as client:
        fetched = client.fetch({TP: 0})[TP]
    assert fetched.error is None and fetched.high_watermark == 3
    assert len(scripted.requests_for(ApiKey.FETCH)) == 2


def test_a_persistent_leader_error_ends_as_a_timeout_in_the_partition(scripted):
    scripted.handlers[ApiKey.FETCH] = ScriptedLog([3]).fetch_handler(
        error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
    with client_for(scripted, **{"request.timeout.ms": "300"}) as client:
        fetched = client.fetch({TP: 0}, max_wait_ms=0)[TP]
    assert isinstance(fetched.error, KafkaTimeoutError)
    assert "fetch of events-0 did not complete" in str(fetched.error)
    assert "NOT_LEADER_OR_FOLLOWER" in str(fetched.error)


def test_a_metadata_refresh_cut_short_by_the_deadline_does_not_hide_the_leader_error(scripted):
    # The refresh after the first NOT_LEADER_OR_FOLLOWER hangs past the deadline: what the
    # partition reports is the error that sent it there, not the refresh that ran out of time.
    answer_metadata = scripted.handlers[ApiKey.METADATA]
    answered = []

    def metadata_then_hang(header, body):
        answered.append(True)
        if len(answered) > 1:
            time.sleep(1.0)
        return answer_metadata(header, body)

    scripted.handlers[ApiKey.METADATA] = metadata_then_hang
    scripted.handlers[ApiKey.FETCH] = ScriptedLog([3]).fetch_handler(
        error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
    with client_for(scripted, **{"request.timeout.ms": "300"}) as client:
        fetched = client.fetch({TP: 0}, max_wait_ms=0)[TP]
    assert isinstance(fetched.error, KafkaTimeoutError)
    assert len(answered) == 2
    assert "NOT_LEADER_OR_FOLLOWER" in str(fetched.error), fetched.error
