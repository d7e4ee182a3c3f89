"""``broker-lite dump-log`` on segments and indexes a live broker wrote (records from
confluent-kafka, with every codec), on copies of them damaged on purpose, and on legacy
(v0 / v1) message sets."""

import re
import shutil
import struct
import time
from pathlib import Path

import crc32c
import pytest
from confluent_kafka import Producer

from broker_lite.common.tiers import needs
from broker_lite.records import CompressionType, build_message_set
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.tools.testing import run_tool

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = 1_700_000_000_000
PROPERTIES = {"log.index.interval.bytes": "1",  # every batch but the first gets index entries
              "transaction.state.log.num.partitions": "3",
              "offsets.topic.num.partitions": "3"}
FIELD = re.compile(r"(\w+): (\[[^\]]*\]|\S+)")


@pytest.fixture
@needs("broker", "zookeeper")
def brokers(zookeeper_connect, tmp_path):
    started = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield started
    stop_brokers(started)


def segment(broker, topic: str, suffix: str = ".log") -> Path:
    return Path(broker.config.log_dirs[0]) / f"{topic}-0" / f"00000000000000000000{suffix}"


def fields(line: str) -> dict[str, str]:
    return dict(FIELD.findall(line))


def dump(*options) -> tuple:
    result = run_tool("dump-log", *map(str, options))
    return result.returncode, result.stdout.splitlines(), result.stderr


def produce_one_batch_per_codec(servers: str, topic: str) -> None:
    """Per codec one batch of three records (keys, headers, timestamps set), in codec order."""
    for i, codec in enumerate(CODECS):
        producer = Producer({"bootstrap.servers": servers, "compression.type": codec,
                             "enable.idempotence": True, "linger.ms": 5000,
                             "batch.num.messages": 3, "log_level": 3})
        for j in range(3):
            producer.produce(topic, partition=0, key=f"k{i}{j}".encode(),
                             value=f"{codec} value {j}".encode() * 4,
                             headers=[("h1", b"x"), ("h2", b"y")] if j == 1 else None,
                             timestamp=BASE_TS + 1000 * i + j)
        assert producer.flush(30) == 0


def test_batches_of_every_codec(brokers):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "codecs")
    path = segment(broker, "codecs")
    status, lines, stderr = dump("--files", path)
    assert status == 0, stderr
    assert lines[:2] == [f"Dumping {path}", "Log starting offset: 0"]
    batches = [fields(line) for line in lines[2:]]
    assert [b["compresscodec"] for b in batches] == CODECS
    assert [(int(b["baseOffset"]), int(b["lastOffset"]), int(b["count"])) for b in batches] == \
        [(3 * i, 3 * i + 2, 3) for i in range(5)]
    assert [int(b["CreateTime"]) for b in batches] == [BASE_TS + 1000 * i + 2 for i in range(5)]
    data = path.read_bytes()
    position = 0
    for b in batches:
        assert int(b["position"]) == position
        size = int(b["size"])
        # the CRC printed is the stored one, and it is the CRC-32C of attributes .. end
        assert int(b["crc"]) == struct.unpack_from(">I", data, position + 17)[0] == \
            crc32c.crc32c(data[position + 21:position + size])
        position += size
        assert (b["magic"], b["isvalid"], b["isTransactional"], b["isControl"]) == \
            ("2", "true", "false", "false")
        assert b["deleteHorizonMs"] == "OptionalLong.empty"
        assert b["partitionLeaderEpoch"] == "0"
        assert int(b["producerId"]) >= 0
        assert (b["baseSequence"], b["lastSequence"]) == ("0", "2")
    assert position == len(data)
    assert "position: 0 CreateTime: 1700000000002 size: " in lines[2]


def test_records_and_their_data(brokers):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "deep")
    path = segment(broker, "deep")
    status, deep, stderr = dump("--files", path, "--deep-iteration")
    assert status == 0, stderr
    records = [line for line in deep if line.startswith("|")]
    assert len(records) == 15
    first, second = fields(records[0]), fields(records[1])
    assert records[0].startswith("| offset: 0 CreateTime: 1700000000000 keySize: 3 ")
    assert (first["valueSize"], first["sequence"], first["headerKeys"]) == ("48", "0", "[]")
    assert (second["offset"], second["headerKeys"]) == ("1", "[h1,h2]")
    assert fields(records[14])["CreateTime"] == str(BASE_TS + 4002)

    status, data, _ = dump("--files", path, "--print-data-log")
    records = [line for line in data if line.startswith("|")]
    assert records[4].endswith(" key: k11 payload: " + "gzip value 1" * 4)
    status, bare, _ = dump("--files", path, "--print-data-log", "--skip-record-metadata")
    assert [line for line in bare if line.startswith("|")][14] == \
        "| key: k42 payload: " + "zstd value 2" * 4


def test_offset_and_time_indexes(brokers):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "indexed")
    stop_brokers(brokers)  # index entries reach the files when the log is flushed or closed
    _, log_lines, _ = dump("--files", segment(broker, "indexed"))
    batches = [fields(line) for line in log_lines[2:]]

    index = segment(broker, "indexed", ".index")
    status, lines, stderr = dump("--files", index)
    assert status == 0, stderr
    assert lines == [f"Dumping {index}"] + [
        f"offset: {b['lastOffset']} position: {b['position']}" for b in batches[1:]]

    time_index = segment(broker, "indexed", ".timeindex")
    status, lines, stderr = dump("--files", time_index)
    assert status == 0, stderr
    assert lines == [f"Dumping {time_index}"] + [
        f"timestamp: {b['CreateTime']} offset: {b['lastOffset']}" for b in batches[1:]]

    status, lines, stderr = dump("--files", f"{index},{time_index}", "--verify-index-only")
    assert (status, lines, stderr) == (0, [f"Dumping {index}", f"Dumping {time_index}"], "")
    status, lines, _ = dump("--files", f"{index},{time_index}", "--index-sanity-check")
    assert lines == [f"Dumping {index}", f"{index} passed sanity check.",
                     f"Dumping {time_index}", f"{time_index} passed sanity check."]


def copy_segment(broker, topic: str, tmp_path: Path) -> Path:
    """Copies of the segment files, taken after a clean shutdown (so the indexes are on disk);
    the broker's own stay untouched."""
    stop_brokers([broker])
    target = tmp_path / "copy" / f"{topic}-0"
    target.mkdir(parents=True)
    for suffix in (".log", ".index", ".timeindex"):
        shutil.copy(segment(broker, topic, suffix), target)
    return target / "00000000000000000000.log"


def test_index_entries_that_do_not_match_the_segment(brokers, tmp_path):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "badindex")
    log = copy_segment(broker, "badindex", tmp_path)
    index, time_index = log.with_suffix(".index"), log.with_suffix(".timeindex")
    raw = bytearray(index.read_bytes())
    struct.pack_into(">i", raw, 8 + 4, 1)  # the second entry points into the first batch
    index.write_bytes(bytes(raw))
    raw = bytearray(time_index.read_bytes())
    struct.pack_into(">q", raw, 0, BASE_TS + 5)  # the first entry's timestamp is wrong
    time_index.write_bytes(bytes(raw))

    status, _lines, stderr = dump("--files", f"{index},{time_index}", "--verify-index-only")
    assert status == 1
    assert f"Mismatches in :{index.absolute()}\n  Index offset: 8, log offset: -1\n" in stderr
    assert f"Found timestamp mismatch in :{time_index.absolute()}\n" \
           f"  Index timestamp: {BASE_TS + 5}, log timestamp: {BASE_TS + 1002}\n" in stderr
    assert f"broker-lite dump-log: error: {index.absolute()}: 1 index entries do not match " \
           "the segment" in stderr

    raw = bytearray(index.read_bytes())
    struct.pack_into(">i", raw, 8, 0)  # the second entry's offset is below the first one's
    index.write_bytes(bytes(raw))
    status, _lines, stderr = dump("--files", index, "--index-sanity-check")
    assert status == 1
    assert f"{index} failed the sanity check: offsets are not increasing" in stderr


def batch_positions(log: Path) -> list[tuple[int, int]]:
    _, lines, _ = dump("--files", log)
    return [(int(fields(line)["position"]), int(fields(line)["size"])) for line in lines[2:]]


def test_a_batch_that_fails_its_crc(brokers, tmp_path):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "flipped")
    log = copy_segment(broker, "flipped", tmp_path)
    (_, _), (second, size), *_ = batch_positions(log)
    raw = bytearray(log.read_bytes())
    raw[second + size - 3] ^= 0x40  # a bit of the second batch's (gzip) data
    log.write_bytes(bytes(raw))

    status, lines, stderr = dump("--files", log)
    assert status == 1
    assert [fields(line)["isvalid"] for line in lines[2:]] == \
        ["true", "false", "true", "true", "true"]
    assert f"broker-lite dump-log: error: {log}: record batch at position {second} " \
           "(base offset 3) is corrupt: stored CRC-32C" in stderr


def test_bytes_that_are_not_a_batch(brokers, tmp_path):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "garbled")
    log = copy_segment(broker, "garbled", tmp_path)
    (_, _), (second, _), *_ = batch_positions(log)
    raw = bytearray(log.read_bytes())
    struct.pack_into(">i", raw, second + 8, 3)  # the second batch's length field
    log.write_bytes(bytes(raw))

    status, lines, stderr = dump("--files", log, "--deep-iteration")
    assert status == 1
    assert len([line for line in lines if line.startswith("baseOffset:")]) == 1
    assert f"broker-lite dump-log: error: {log}: corrupt data at position {second}: " \
           f"entry at position {second} has size 3" in stderr


def test_a_torn_write_at_the_end(brokers, tmp_path):
    broker = brokers[0]
    produce_one_batch_per_codec(bootstrap(broker), "torn")
    log = copy_segment(broker, "torn", tmp_path)
    *_, (last, size) = batch_positions(log)
    with open(log, "r+b") as f:
        f.truncate(last + size - 10)

    status, lines, stderr = dump("--files", log)
    assert status == 1
    assert len(lines) == 2 + 4 + 1
    assert lines[-1] == f"Found {size - 10} invalid bytes at the end of {log.name}"
    assert f"{size - 10} bytes at position {last} are not a whole batch" in stderr
    status, lines, _ = dump("--files", log, "--max-bytes", last)  # a limit: no tail to judge
    assert status == 0 and len(lines) == 2 + 4


def test_transaction_markers_and_aborted_transactions(brokers):
    broker = brokers[0]
    producer = Producer({"bootstrap.servers": bootstrap(broker), "transactional.id": "dump",
                         "log_level": 3})
    producer.init_transactions(30)
    for value, commit in ((b"kept", True), (b"dropped", False)):
        producer.begin_transaction()
        producer.produce("txn", partition=0, value=value)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)

    status, lines, stderr = dump("--files", segment(broker, "txn"), "--deep-iteration")
    assert status == 0, stderr
    batches = [fields(line) for line in lines if line.startswith("baseOffset:")]
    assert [(b["baseOffset"], b["isTransactional"], b["isControl"]) for b in batches] == [
        ("0", "true", "false"), ("1", "true", "true"), ("2", "true", "false"),
        ("3", "true", "true")]
    markers = [line for line in lines if "endTxnMarker" in line]
    assert [re.search(r"endTxnMarker: (\w+) coordinatorEpoch: \d+$", m).group(1)
            for m in markers] == ["COMMIT", "ABORT"]
    assert markers[0].startswith("| offset: 1 CreateTime: ")

    txn_index = segment(broker, "txn", ".txnindex")
    status, lines, stderr = dump("--files", txn_index)
    assert status == 0, stderr
    producer_id = batches[2]["producerId"]
    assert lines == [f"Dumping {txn_index}", f"version: 0 producerId: {producer_id} "
                     "firstOffset: 2 lastOffset: 3 lastStableOffset: 4"]


@pytest.mark.broker
@pytest.mark.zookeeper
def test_producer_snapshot(zookeeper_connect, tmp_path):
    started = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    try:
        result = run_tool("console-producer", "--bootstrap-server", bootstrap(started),
                          "--topic", "snap", stdin="a\nb\nc\n")
        assert result.returncode == 0, result.stderr
        directory = segment(started[0], "snap").parent
    finally:
        stop_brokers(started)  # a clean shutdown snapshots the producer state
    snapshot = directory / "00000000000000000003.snapshot"
    status, lines, stderr = dump("--files", snapshot)
    assert status == 0, stderr
    assert lines[0] == f"Dumping {snapshot}"
    entry = fields(lines[1])
    assert int(entry["producerId"]) >= 0
    assert (entry["producerEpoch"], entry["coordinatorEpoch"],
            entry["currentTxnFirstOffset"]) == ("0", "-1", "OptionalLong.empty")
    assert (entry["firstSequence"], entry["lastSequence"], entry["lastOffset"],
            entry["offsetDelta"]) == ("0", "2", "2", "2")
    assert abs(int(entry["lastTimestamp"]) - time.time() * 1000) < 120_000


def test_legacy_message_sets(tmp_path):
    log = tmp_path / "00000000000000000010.log"
    v0 = build_message_set([(b"k", b"v0")], magic=0, base_offset=10)
    v1 = build_message_set([(None, b"a"), (b"kk", b"bb")], magic=1, timestamp=BASE_TS,
                           compression=CompressionType.GZIP, base_offset=11)
    log.write_bytes(v0 + v1)

    status, lines, stderr = dump("--files", log, "--print-data-log")
    assert status == 0, stderr
    assert lines[1] == "Log starting offset: 10"
    assert re.fullmatch(r"offset: 10 position: 0 NoTimestampType: -1 size: 29 magic: 0 "
                        r"compresscodec: none crc: \d+ isvalid: true", lines[2])
    assert re.fullmatch(r"\| offset: 10 NoTimestampType: -1 keySize: 1 valueSize: 2 "
                        r"isValid: true crc: \d+ key: k payload: v0", lines[3])
    assert re.fullmatch(rf"offset: 12 position: 29 CreateTime: {BASE_TS} size: {len(v1)} "
                        r"magic: 1 compresscodec: gzip crc: \d+ isvalid: true", lines[4])
    assert re.fullmatch(rf"\| offset: 11 CreateTime: {BASE_TS} keySize: -1 valueSize: 1 "
                        r"isValid: true crc: \d+ payload: a", lines[5])
    assert re.fullmatch(rf"\| offset: 12 CreateTime: {BASE_TS} keySize: 2 valueSize: 2 "
                        r"isValid: true crc: \d+ key: kk payload: bb", lines[6])
    assert len(lines) == 7
    assert "Non-consecutive offsets" not in stderr


def test_non_consecutive_offsets_are_reported(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(build_message_set([(None, b"a")], magic=1, base_offset=0)
                    + build_message_set([(None, b"b")], magic=1, base_offset=5))
    status, _, stderr = dump("--files", log, "--deep-iteration")
    assert status == 0  # compacted logs have gaps: a report, not a fault
    assert stderr == f"Non-consecutive offsets in {log.absolute()}\n  0 is followed by 5\n"


def test_missing_unknown_and_bad_usage(tmp_path):
    missing = tmp_path / "00000000000000000000.log"
    status, lines, stderr = dump("--files", missing)
    assert status == 1
    assert lines == [f"Dumping {missing}", "Log starting offset: 0"]
    assert f"broker-lite dump-log: error: {missing}: cannot open: No such file" in stderr

    other = tmp_path / "notes.txt"
    other.write_text("hello")
    status, lines, stderr = dump("--files", other)
    assert (status, stderr) == (0, f"Ignoring unknown file {other}\n")

    result = run_tool("dump-log", "--deep-iteration")
    assert result.returncode == 2
    assert "the following arguments are required: --files" in result.stderr
