"""Fetch and bounded range reads against a scripted broker serving a log built here: request
fields (sessionless, limits, leader epochs, topic ids), partial trailing batches refetched from
the next offset, oversized batches from brokers that cut them, the last stable offset under
read_committed, leader errors followed, and stalls that end in a timeout instead of a hang."""

import uuid

import pytest
from scripted_broker import ScriptedBroker, sequence

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import BatchReader, CompressionType, build_batch, iter_records
from broker_lite.client import (
    InvalidResponseError,
    KafkaClient,
    KafkaTimeoutError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    TopicPartition,
)
from broker_lite.client.errors import TopicAuthorizationFailedError
from broker_lite.client.fetcher import fetch_request, parse_fetch_response

TOPIC = "events"
TP = TopicPartition(TOPIC, 0)
TOPIC_ID = uuid.uuid4()


class ScriptedLog:
    """Batches of ``sizes[i]`` records each, offsets from 0, compressed like real topics."""

    def __init__(self, sizes, *, value_bytes=100, compression=CompressionType.NONE):
        self.batches, self.records, offset = [], [], 0
        for n in sizes:
            records = [(b"k%d" % (offset + i), b"v%d-" % (offset + i) + b"x" * value_bytes)
                       for i in range(n)]
            self.batches.append((offset, build_batch(records, timestamp=1000 + offset,
                                                     base_offset=offset, compression=compression)))
            self.records += records
            offset += n
        self.data = b"".join(b for _, b in self.batches)
        self.high_watermark = offset

    def locate(self, offset: int) -> tuple[int, int] | None:
        """(index, byte position) of the batch holding ``offset``; None past the end."""
        pos = 0
        for index, (_, batch) in enumerate(self.batches):
            end = self.batches[index + 1][0] if index + 1 < len(self.batches) \
                else self.high_watermark
            if offset < end:
                return index, pos
            pos += len(batch)
        return None

    def fetch_handler(self, *, whole_first_batch=True, last_stable_offset=None, aborted=None,
                      error=0):
        """Serve Fetch as Kafka does: ``partition_max_bytes`` bytes from the batch holding the
        fetch offset (so the last batch may be cut short), the first batch whole unless
        ``whole_first_batch`` is False (brokers before KIP-74)."""
        def handle(header, body):
            part = body["topics"][0]["partitions"][0]
            offset, limit = part["fetch_offset"], part["partition_max_bytes"]
            found = self.locate(offset)
            records, code, pos = b"", error, 0
            if offset > self.high_watermark:
                code = ErrorCode.OFFSET_OUT_OF_RANGE
            elif found is not None and not code:
                index, pos = found
                first = len(self.batches[index][1])
                size = max(limit, first) if whole_first_batch else limit
                records = self.data[pos:pos + size]
            lso = self.high_watermark if last_stable_offset is None else last_stable_offset
            if body["isolation_level"] == 1:  # read_committed: nothing at or past the LSO
                stable = self.locate(lso)
                stable_end = stable[1] if stable is not None else len(self.data)
                records = records[:max(stable_end - pos, 0)]
            return {"responses": [{"topic": TOPIC, "topic_id": body["topics"][0]["topic_id"],
                                   "partitions": [{
                                       "partition_index": 0, "error_code": code,
                                       "high_watermark": self.high_watermark,
                                       "last_stable_offset": lso, "log_start_offset": 0,
                                       "aborted_transactions": aborted, "records": records}]}]}
        return handle


@pytest.fixture
def scripted():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({TOPIC: 1}, topic_ids={TOPIC: TOPIC_ID})
        yield broker


def client_for(broker, **settings) -> KafkaClient:
    return KafkaClient({"bootstrap.servers": broker.bootstrap, "retry.backoff.ms": "5",
                        **settings})


def fetch_offsets(broker) -> list[int]:
    return [b["topics"][0]["partitions"][0]["fetch_offset"]
            for b in broker.requests_for(ApiKey.FETCH)]


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
         "records": memoryview(b"abc")}]}]}
    got = parse_fetch_response(body, [TP, TopicPartition(TOPIC, 1)], {TOPIC_ID: TOPIC})
    assert got[TP].records == b"abc" and isinstance(got[TP].records, bytes)
    assert (got[TP].high_watermark, got[TP].last_stable_offset, got[TP].log_start_offset,
            got[TP].aborted_transactions, got[TP].error) == (10, 8, 2, [(4, 6)], None)
    assert isinstance(got[TopicPartition(TOPIC, 1)].error, InvalidResponseError)  # left out


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


def test_iter_records_bytes_refetches_after_partial_trailing_batches(scripted):
    log = ScriptedLog([5] * 40, compression=CompressionType.LZ4)
    batch_size = len(log.batches[0][1])
    limit = int(batch_size * 2.5)  # every response ends inside a batch
    scripted.handlers[ApiKey.FETCH] = log.fetch_handler()
    with client_for(scripted, **{"max.partition.fetch.bytes": str(limit)}) as client:
        chunks = list(client.iter_records_bytes(TP, 12, 171))
    got = [(r.key, r.value) for c in chunks for r in iter_records(c.records)
           if 12 <= r.offset < 171]
    assert got == log.records[12:171]
    for chunk in chunks:
        reader = BatchReader(chunk.records)
        list(reader)
        assert not reader.incomplete  # the partial tail was cut off
        assert len(chunk.records) <= limit
    # each fetch starts where the previous complete batches ended: 10, 20, 30, ...
    assert fetch_offsets(scripted) == [12] + list(range(20, 171, 10))


def test_an_oversized_batch_cut_by_an_old_broker_is_fetched_with_a_growing_limit(scripted):
    log = ScriptedLog([60, 1], value_bytes=200)  # the first batch is ~13 KB
    scripted.handlers[ApiKey.FETCH] = log.fetch_handler(whole_first_batch=False)
    with client_for(scripted, **{"max.partition.fetch.bytes": "4096"}) as client:
        chunks = list(client.iter_records_bytes(TP, 0, 61))
    assert [r.offset for c in chunks for r in iter_records(c.records)] == list(range(61))
    limits = [b["topics"][0]["partitions"][0]["partition_max_bytes"]
              for b in scripted.requests_for(ApiKey.FETCH)]
    assert limits[:3] == [4096, 8192, 16384]
    with client_for(scripted, **{"max.partition.fetch.bytes": "4096",
                                 "fetch.max.bytes": "8192"}) as client:
        with pytest.raises(RecordTooLargeError, match="larger than fetch.max.bytes"):
            list(client.iter_records_bytes(TP, 0, 61))


def test_read_committed_stops_at_the_last_stable_offset_with_aborted_transactions(scripted):
    log = ScriptedLog([4] * 5)
    scripted.handlers[ApiKey.FETCH] = log.fetch_handler(
        last_stable_offset=8, aborted=[{"producer_id": 77, "first_offset": 4}])
    with client_for(scripted) as client:
        chunks = list(client.iter_records_bytes(TP, 0, 20, isolation_level="read_committed"))
        assert all(c.aborted_transactions == [(77, 4)] for c in chunks)
        assert max(r.offset for c in chunks for r in iter_records(c.records)) == 7
        assert fetch_offsets(scripted)[-1] < 8  # nothing asked at or past the LSO
        assert {b["isolation_level"] for b in scripted.requests_for(ApiKey.FETCH)} == {1}
        uncommitted = list(client.iter_records_bytes(TP, 0, 20))
        assert max(r.offset for c in uncommitted for r in iter_records(c.records)) == 19


def test_offset_out_of_range_is_returned_by_fetch_and_raised_by_iteration(scripted):
    log = ScriptedLog([3])
    scripted.handlers[ApiKey.FETCH] = log.fetch_handler()
    with client_for(scripted) as client:
        assert isinstance(client.fetch({TP: 9})[TP].error, OffsetOutOfRangeError)
        with pytest.raises(OffsetOutOfRangeError):
            list(client.iter_records_bytes(TP, 9, 12))
        assert list(client.iter_records_bytes(TP, 3, 100)) == []  # at the high watermark


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


def test_a_persistent_leader_error_ends_as_a_timeout_in_the_partition(scripted):
    scripted.handlers[ApiKey.FETCH] = ScriptedLog([3]).fetch_handler(
        error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
    with client_for(scripted, **{"request.timeout.ms": "300"}) as client:
        fetched = client.fetch({TP: 0}, max_wait_ms=0)[TP]
    assert isinstance(fetched.error, KafkaTimeoutError)
    assert "fetch of events-0 did not complete" in str(fetched.error)
    assert "NOT_LEADER_OR_FOLLOWER" in str(fetched.error)


def test_an_empty_answer_below_the_high_watermark_times_out_instead_of_hanging(scripted):
    def nothing(header, body):
        return {"responses": [{"topic": TOPIC, "topic_id": TOPIC_ID, "partitions": [{
            "partition_index": 0, "error_code": 0, "high_watermark": 10,
            "last_stable_offset": 10, "log_start_offset": 0, "aborted_transactions": None,
            "records": b""}]}]}

    scripted.handlers[ApiKey.FETCH] = nothing
    with client_for(scripted, **{"request.timeout.ms": "300"}) as client:
        with pytest.raises(KafkaTimeoutError, match="reading events-0 at offset 4"):
            list(client.iter_records_bytes(TP, 4, 8))
    assert len(scripted.requests_for(ApiKey.FETCH)) > 1
