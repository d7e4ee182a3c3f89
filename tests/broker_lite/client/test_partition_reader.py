"""The client's partition reader: range reads fetch by fetch, rounds over many partitions,
oversized batches, CRCs (and ``check.crcs=false``), read_committed, control batches, positions
inside compressed batches, and out-of-range positions handed to the caller's hook.

Against a scripted broker where a real one cannot produce the situation (batches cut by old
brokers, corrupt bytes, stalls), against a real broker_lite where it can."""

import threading
import time
import uuid

import pyarrow as pa
import pytest
from scripted_broker import ScriptedBroker, ScriptedLog, serve_logs

from broker_lite.client import (
    InvalidArgumentError,
    KafkaClient,
    KafkaTimeoutError,
    OffsetOutOfRangeError,
    OutOfRange,
    PartitionReader,
    RecordTooLargeError,
    TopicPartition,
)
from broker_lite.client.errors import CorruptMessageError, error_for
from broker_lite.client.types import FetchedPartition
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import BatchReader, CompressionType
from broker_lite.records.record_batch import RECORDS_OFFSET
from broker_lite.server.testing import bootstrap
from broker_lite.zk.testing import wait_until

TOPIC = "events"
TP = TopicPartition(TOPIC, 0)
TP1 = TopicPartition(TOPIC, 1)


@pytest.fixture
def scripted():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({TOPIC: 2},
                                                           topic_ids={TOPIC: uuid.uuid4()})
        yield broker


def serve(broker, *logs: ScriptedLog, **answer) -> None:
    broker.handlers.update(serve_logs(TOPIC, dict(enumerate(logs)), **answer))


def client_for(broker, **settings) -> KafkaClient:
    return KafkaClient({"bootstrap.servers": broker.bootstrap, "retry.backoff.ms": "5",
                        **settings})


def fetched(broker, field: str, partition: int = 0) -> list[int]:
    """``field`` of ``partition`` in every Fetch the broker got, in order."""
    return [p[field] for body in broker.requests_for(ApiKey.FETCH)
            for t in body["topics"] for p in t["partitions"] if p["partition"] == partition]


def pairs(chunks) -> list[tuple[bytes, bytes]]:
    return [(r.key, r.value) for chunk in chunks for r in chunk.records()]


# -- fetch by fetch -------------------------------------------------------------------------------


def test_a_range_is_read_fetch_by_fetch_from_where_the_complete_batches_end(scripted):
    log = ScriptedLog([5] * 40, compression=CompressionType.LZ4)
    limit = int(len(log.batches[0][1]) * 2.5)  # every answer ends inside a batch
    serve(scripted, log)
    with client_for(scripted, **{"max.partition.fetch.bytes": str(limit)}) as client:
        chunks = list(client.read_range(TP, 12, 171))
    assert pairs(chunks) == log.records[12:171]
    for chunk in chunks:
        reader = BatchReader(chunk.data)
        list(reader)
        assert not reader.incomplete  # the partial tail was left for the next fetch
        assert len(chunk.data) <= limit
    assert [(c.start, c.next_position) for c in chunks][:2] == [(12, 20), (20, 30)]
    assert fetched(scripted, "fetch_offset") == [12, *range(20, 171, 10)]
    rows = pa.Table.from_batches([c.to_arrow() for c in chunks])
    assert rows.column("offset").to_pylist() == list(range(12, 171))


def test_an_oversized_batch_grows_the_limit_until_it_comes_whole_then_the_limit_is_back(scripted):
    log = ScriptedLog([60] + [5] * 20, value_bytes=200)  # the first batch is ~13 KB
    serve(scripted, log, whole_first_batch=False)  # a broker from before KIP-74
    with client_for(scripted, **{"max.partition.fetch.bytes": "4096"}) as client:
        chunks = list(client.read_range(TP, 0, 160))
    assert [r.offset for c in chunks for r in c.records()] == list(range(160))
    assert fetched(scripted, "partition_max_bytes")[:5] == [4096, 8192, 16384, 4096, 4096]
    with client_for(scripted, **{"max.partition.fetch.bytes": "4096",
                                 "fetch.max.bytes": "8192"}) as client:
        with pytest.raises(RecordTooLargeError, match=r"events-0 at offset 0 is larger than "
                                                      r"fetch\.max\.bytes"):
            list(client.read_range(TP, 0, 61))


def test_in_a_round_only_the_partition_with_the_oversized_batch_asks_for_more(scripted):
    big, small = ScriptedLog([60] + [5] * 20, value_bytes=200), ScriptedLog([2, 2, 2])
    serve(scripted, big, small, whole_first_batch=False)
    with client_for(scripted, **{"max.partition.fetch.bytes": "4096"}) as client:
        reader = PartitionReader(client, {TP: 0, TP1: 0})
        got = {}
        for _ in range(5):
            for chunk in reader.poll(0):
                got.setdefault(chunk.tp.partition, []).extend(r.offset for r in chunk.records())
    assert got[0][:61] == list(range(61)) and got[1] == list(range(6))
    assert fetched(scripted, "partition_max_bytes", 0)[:4] == [4096, 8192, 16384, 4096]
    assert set(fetched(scripted, "partition_max_bytes", 1)) == {4096}


def test_read_committed_stops_at_the_last_stable_offset(scripted):
    log = ScriptedLog([4] * 5)
    serve(scripted, log, last_stable_offset=8, aborted=[{"producer_id": 77, "first_offset": 4}])
    with client_for(scripted) as client:
        chunks = list(client.read_range(TP, 0, isolation_level="read_committed"))
        assert all(c.fetched.aborted_transactions == [(77, 4)] for c in chunks)
        assert [r.offset for c in chunks for r in c.records()] == list(range(8))
        assert fetched(scripted, "fetch_offset")[-1] < 8  # nothing asked at or past the LSO
        assert {b["isolation_level"] for b in scripted.requests_for(ApiKey.FETCH)} == {1}
        uncommitted = list(client.read_range(TP, 0))
        assert max(r.offset for c in uncommitted for r in c.records()) == 19


def test_an_empty_answer_below_the_high_watermark_times_out_instead_of_hanging(scripted):
    def nothing(header, body):
        return {"responses": [{"topic": TOPIC, "topic_id": body["topics"][0]["topic_id"],
                               "partitions": [{
                                   "partition_index": 0, "error_code": 0, "high_watermark": 10,
                                   "last_stable_offset": 10, "log_start_offset": 0,
                                   "aborted_transactions": None, "records": b""}]}]}

    scripted.handlers[ApiKey.FETCH] = nothing
    with client_for(scripted, **{"request.timeout.ms": "300"}) as client:
        with pytest.raises(KafkaTimeoutError, match="reading events-0 at offset 4"):
            list(client.read_range(TP, 4, 8))
    assert len(scripted.requests_for(ApiKey.FETCH)) > 1


def test_a_lagging_high_watermark_in_a_fetch_answer_is_checked_before_out_of_range(scripted):
    """A new leader's first answers carry a high watermark that lags (0 here, no records),
    while ListOffsets says the log reaches 3: the read asks again and gets everything, rather
    than taking the range for out of range (data loss)."""
    log = ScriptedLog([3])
    serve(scripted, log)
    served = scripted.handlers[ApiKey.FETCH]
    lagging = [2]  # answers still to lag

    def fetch(header, body):
        if lagging[0]:
            lagging[0] -= 1
            return {"responses": [{"topic": TOPIC, "topic_id": t["topic_id"], "partitions": [
                {"partition_index": p["partition"], "error_code": 0, "high_watermark": 0,
                 "last_stable_offset": 0, "log_start_offset": 0, "aborted_transactions": None,
                 "records": b""} for p in t["partitions"]]} for t in body["topics"]]}
        return served(header, body)

    scripted.handlers[ApiKey.FETCH] = fetch
    with client_for(scripted) as client:
        assert pairs(client.read_range(TP, 0, 3)) == log.records
    assert lagging == [0] and len(scripted.requests_for(ApiKey.LIST_OFFSETS)) >= 2


def test_bad_ranges_are_refused(scripted):
    with client_for(scripted) as client:
        with pytest.raises(InvalidArgumentError, match=r"\[5, 3\)"):
            client.read_range(TP, 5, 3)
        with pytest.raises(InvalidArgumentError, match=">= 0"):
            PartitionReader(client, {TP: -1})
        assert list(client.read_range(TP, 5, 5)) == []  # an empty range asks nothing
    assert scripted.requests_for(ApiKey.FETCH) == []


# -- CRCs -----------------------------------------------------------------------------------------


def test_a_corrupt_batch_is_an_error_naming_topic_partition_and_offset(scripted):
    log = ScriptedLog([5] * 4)
    assert log.corrupt(2) == 10
    serve(scripted, log)
    with client_for(scripted) as client:
        with pytest.raises(CorruptMessageError,
                           match=r"corrupt record batch in events-0 at offset 10: .*CRC") as info:
            list(client.read_range(TP, 0, 20))
        assert not info.value.retriable  # fetching again gives the same bytes
        assert pairs(client.read_range(TP, 0, 10)) == log.records[:10]  # before it: fine


def test_check_crcs_false_passes_a_corrupt_batch_through(scripted):
    log = ScriptedLog([5] * 4)
    log.corrupt(2)
    serve(scripted, log)
    with client_for(scripted, **{"check.crcs": "false"}) as client:
        values = [value for _, value in pairs(client.read_range(TP, 0, 20))]
    assert len(values) == 20
    assert values[14].endswith(b"xy") and values[:14] == [v for _, v in log.records[:14]]


def test_without_crc_checks_a_batch_that_does_not_decode_is_still_named(scripted):
    log = ScriptedLog([5] * 4)
    start = sum(len(b) for _, b in log.batches[:2])
    data = bytearray(log.data)
    data[start + RECORDS_OFFSET] = 0x7E  # the first record's length: past the batch's end
    log.data = bytes(data)
    serve(scripted, log)
    with client_for(scripted, **{"check.crcs": "false"}) as client:
        (chunk,) = client.read_range(TP, 0, 20)
        for decode in (chunk.to_arrow, lambda: list(chunk.records())):
            with pytest.raises(CorruptMessageError,
                               match="corrupt record batch in events-0 at offset 10: "):
                decode()


def test_a_round_that_fails_moves_no_position(scripted):
    good, bad = ScriptedLog([3, 3]), ScriptedLog([3, 3])
    bad.corrupt(1)
    serve(scripted, good, bad)
    with client_for(scripted) as client:
        reader = PartitionReader(client, {TP: 0, TP1: 0})
        with pytest.raises(CorruptMessageError, match="events-1 at offset 3"):
            reader.poll(0)
        assert reader.positions == {TP: 0, TP1: 0}


def test_a_failed_partition_is_raised_or_told_and_asked_again_while_the_others_read_on(scripted):
    serve(scripted, ScriptedLog([3]), ScriptedLog([3]))
    error = error_for(ErrorCode.KAFKA_STORAGE_ERROR, where=str(TP1))
    told = []
    with client_for(scripted) as client:
        strict = PartitionReader(client, {TP: 0, TP1: 0})
        fetched = strict.fetch(0)
        fetched[TP1] = FetchedPartition.failed(error)
        with pytest.raises(type(error)):
            strict.accept(fetched)
        assert strict.positions == {TP: 0, TP1: 0}

        lenient = PartitionReader(client, {TP: 0, TP1: 0},
                                  on_error=lambda tp, failure: told.append((tp, failure)))
        fetched = lenient.fetch(0)
        fetched[TP1] = FetchedPartition.failed(error)
        assert [chunk.tp for chunk in lenient.accept(fetched)] == [TP]
        assert told == [(TP1, error)] and lenient.positions == {TP: 3, TP1: 0}
        assert [chunk.tp for chunk in lenient.poll(0)] == [TP1]  # asked again: it comes now
        assert lenient.positions == {TP: 3, TP1: 3}


# -- out of range ---------------------------------------------------------------------------------


def test_without_a_hook_out_of_range_is_raised(scripted):
    serve(scripted, ScriptedLog([3]))
    with client_for(scripted) as client:
        with pytest.raises(OffsetOutOfRangeError,
                           match="events-0 ends at offset 3, before offsets 9 to 11"):
            list(client.read_range(TP, 9, 12))
        with pytest.raises(OffsetOutOfRangeError,
                           match="events-0 ends at offset 3, before offsets 3 to 99"):
            list(client.read_range(TP, 3, 100))  # the end is not there either
        assert list(client.read_range(TP, 3)) == []  # at the end of the log: the end


def test_the_hook_says_where_to_go_on_or_to_stop(scripted):
    log = ScriptedLog([3])
    serve(scripted, log)
    seen = []

    def restart(gone: OutOfRange) -> int | None:
        seen.append(gone)
        return gone.log_start if gone.position > gone.log_end else None

    with client_for(scripted) as client:
        reader = PartitionReader(client, {TP: 9}, on_out_of_range=restart)
        assert reader.poll(0) == []
        assert seen == [OutOfRange(TP, 9, 0, 3)] and reader.positions == {TP: 0}
        assert pairs(reader.poll(0)) == log.records
        chunks = list(client.read_range(TP, 1, 10, on_out_of_range=restart))
    assert pairs(chunks) == log.records[1:]  # what there is, then the hook stops it
    assert seen[1] == OutOfRange(TP, 3, 0, 3, end=10)


# -- against a real broker ------------------------------------------------------------------------


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def values(tag: str, n: int) -> pa.RecordBatch:
    return pa.record_batch({"value": [b"%s-%d" % (tag.encode(), i) for i in range(n)]})


@pytest.fixture
def client(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": "15000",
                      "retry.backoff.ms": "20"}) as client:
        yield client


def test_read_committed_drops_aborted_transactions_and_no_reader_sees_markers(client):
    topic = unique("txn")
    client.admin.create_topics([(topic, 1, 1)])
    tp = TopicPartition(topic, 0)
    with client.producer(transactional_id=unique("tx")) as producer:
        producer.init_transactions()
        for tag, n, commit in [("a", 3, True), ("b", 4, False), ("c", 2, True)]:
            producer.begin_transaction()
            producer.send_batch(topic, 0, values(tag, n))
            producer.commit_transaction() if commit else producer.abort_transaction()
    committed = list(client.read_range(tp, 0, isolation_level="read_committed"))
    assert [r.value for c in committed for r in c.records()] == \
        [b"a-0", b"a-1", b"a-2", b"c-0", b"c-1"]
    everything = list(client.read_range(tp, 0, isolation_level="read_uncommitted"))
    assert len([r for c in everything for r in c.records()]) == 9
    for chunks in (committed, everything):
        assert not any(b.is_control_batch for c in chunks for b in c.batches)
        assert sum(b.is_control_batch for c in chunks for b in BatchReader(c.data)) == 3
        assert chunks[-1].next_position == 12  # past the last marker


def test_a_position_inside_a_compressed_batch_cuts_its_earlier_records(client):
    topic = unique("lz4")
    client.admin.create_topics([(topic, 1, 1)])
    tp = TopicPartition(topic, 0)
    with client.producer(compression="lz4") as producer:
        producer.send_batch(topic, 0, values("v", 10))
    (chunk,) = client.read_range(tp, 4, 8)
    assert chunk.batches[0].base_offset == 0 and chunk.batches[0].compression.name == "LZ4"
    assert [r.offset for r in chunk.records()] == [4, 5, 6, 7]
    assert chunk.to_arrow().column("offset").to_pylist() == [4, 5, 6, 7]
    reader = PartitionReader(client, {tp: 6})
    (chunk,) = reader.poll(0)
    assert [r.value for r in chunk.records()] == [b"v-6", b"v-7", b"v-8", b"v-9"]
    assert reader.positions == {tp: 10}


def test_positions_below_the_log_start_or_past_its_end_go_to_the_hook(broker, client):
    topic = unique("retained")
    client.admin.create_topics([(topic, 1, 1, {"segment.bytes": "2048",
                                               "retention.bytes": "4096"})])
    tp = TopicPartition(topic, 0)
    with client.producer() as producer:
        for i in range(20):
            producer.send_batch(topic, 0, values(f"r{i}-" + "x" * 50, 10))
    broker.logs.enforce_retention()
    log_start = broker.logs.get(topic, 0).log_start_offset
    assert log_start > 0
    seen = []

    def earliest(gone: OutOfRange) -> int:
        seen.append(gone)
        return gone.log_start

    reader = PartitionReader(client, {tp: 0}, on_out_of_range=earliest)
    reader.poll(0)
    assert seen == [OutOfRange(tp, 0, log_start, 200)] and seen[0].below_start
    assert f"offsets 0 to {log_start - 1} of {tp} are gone" in str(seen[0])
    assert next(reader.poll(0)[0].records()).offset == log_start
    reader = PartitionReader(client, {tp: 250}, on_out_of_range=lambda gone: gone.log_end)
    assert reader.poll(0) == [] and reader.positions == {tp: 200}
    with pytest.raises(OffsetOutOfRangeError, match=f"for {tp}: offsets 0 to"):
        list(client.read_range(tp, 0, 200))
    assert len([r for c in client.read_range(tp, 0, 200, on_out_of_range=earliest)
                for r in c.records()]) == 200 - log_start
    assert seen[-1] == OutOfRange(tp, 0, log_start, 200, end=200)


# -- one fetch ahead ------------------------------------------------------------------------------


def counting_fetches(broker, *, hold_from: int = 0):
    """Wrap the broker's Fetch handler: (the fetch offsets it was asked for, in order; an event
    without which the answers from the ``hold_from``-th Fetch on are held back)."""
    serving, release = [], threading.Event()
    inner = broker.handlers[ApiKey.FETCH]

    def handle(header, body):
        serving.append(body["topics"][0]["partitions"][0]["fetch_offset"])
        if len(serving) > hold_from:
            release.wait(20)
        return inner(header, body)

    broker.handlers[ApiKey.FETCH] = handle
    return serving, release


def test_the_next_fetch_is_in_flight_while_the_caller_handles_a_chunk(scripted):
    """While the caller holds the first chunk, the broker already has the Fetch for the next
    one; and no third Fetch goes out before the caller takes the second chunk: one response
    handled, one in flight, no more."""
    log = ScriptedLog([10] * 6)
    serve(scripted, log)
    serving, release = counting_fetches(scripted)
    limit = int(len(log.batches[0][1]) * 2.5)  # two whole batches per fetch
    with client_for(scripted, **{"max.partition.fetch.bytes": str(limit)}) as client:
        chunks = client.read_range(TP, 0, 60)
        release.set()
        first = next(chunks)
        assert (first.start, first.next_position) == (0, 20)
        wait_until(lambda: len(serving) == 2, message="the next Fetch went out")
        time.sleep(0.3)
        assert serving == [0, 20]  # not a third one yet
        second = next(chunks)
        assert (second.start, second.next_position) == (20, 40)
        wait_until(lambda: len(serving) == 3, message="the third Fetch went out")
        assert pairs([first, second, *chunks]) == log.records
    assert serving == [0, 20, 40]


def test_a_caller_that_stops_early_leaves_the_connection_ready(scripted):
    """Closing the read while its next Fetch is in flight waits for that Fetch's answer, so the
    next request on the connection reads its own answer."""
    log = ScriptedLog([10] * 6)
    serve(scripted, log)
    serving, release = counting_fetches(scripted, hold_from=1)
    limit = int(len(log.batches[0][1]) * 2.5)
    with client_for(scripted, **{"max.partition.fetch.bytes": str(limit)}) as client:
        chunks = client.read_range(TP, 0, 60)
        next(chunks)
        wait_until(lambda: len(serving) == 2, message="the next Fetch went out")
        closing = threading.Thread(target=chunks.close)
        closing.start()
        time.sleep(0.3)
        assert closing.is_alive()  # waiting for the answer to the Fetch in flight
        release.set()
        closing.join(10)
        assert not closing.is_alive(), "the close still waiting 10 s after the answer"
        assert client.partitions(TOPIC) == [0, 1]  # the connection is in step
        assert pairs(client.read_range(TP, 50, 60)) == log.records[50:60]
    assert scripted.connections == 1


def test_fetches_of_megabytes_read_every_record_in_order(broker, client):
    """Answers of several MiB arrive in frames from Arrow's pool (see the connection's
    ``_frame_buffer``), decoded record by record and into Arrow alike."""
    topic = unique("large")
    client.admin.create_topics([(topic, 1, 1)])
    tp = TopicPartition(topic, 0)
    n, value = 40_000, b"v" * 200
    with client.producer() as producer:
        for start in range(0, n, 4_000):
            producer.send_batch(topic, 0, pa.record_batch(
                {"value": [b"%d:%s" % (i, value) for i in range(start, start + 4_000)]}))
    with KafkaClient({"bootstrap.servers": bootstrap(broker),
                      "max.partition.fetch.bytes": str(4 << 20)}) as reader:
        chunks = list(reader.read_range(tp, 0))
    assert max(len(c.data) for c in chunks) > 2 << 20  # frames past the pooled size
    rows = pa.concat_batches([c.to_arrow() for c in chunks])
    assert rows.column("offset").to_pylist() == list(range(n))
    assert rows.column("value").to_pylist() == [b"%d:%s" % (i, value) for i in range(n)]
    assert [r.value for c in chunks for r in c.records()][-1] == b"%d:%s" % (n - 1, value)
