"""The demo's verification (output records read as window counts, compared with the expected
ones) and its accounting of micro-batches, on hand-made inputs."""

import json

import pyarrow as pa

from broker_lite.client import partitions_for_keys
from kspark.demo.aggregates import Counts, WindowKey, format_instant
from kspark.demo.batches import MicroBatches, batch_of
from kspark.demo.summary import Summary
from kspark.demo.verify import (
    check_aggregates,
    check_records,
    check_written_once,
    parse_output,
)

START = 1_741_942_800_000
PARTITIONS = 3


def record(start_ms: int, page: str, views: int, dwell: int, *, offset: int,
           partition: int | None = None, key: str | None = None) -> dict:
    window_start = format_instant(start_ms)
    key = f"{window_start} {page}" if key is None else key
    if partition is None:
        partition = int(partitions_for_keys(pa.array([key.encode()]), PARTITIONS)[0])
    value = {"window_start": window_start, "window_end": format_instant(start_ms + 60_000),
             "page": page, "views": views, "dwell_ms": dwell}
    return {"key": key.encode(), "value": json.dumps(value).encode(), "partition": partition,
            "offset": offset}


def table(*records: dict) -> pa.Table:
    return pa.Table.from_pylist(list(records), schema=pa.schema([
        ("key", pa.binary()), ("value", pa.binary()), ("partition", pa.int32()),
        ("offset", pa.int64())]))


def test_one_record_per_window_reads_as_its_counts():
    output = parse_output(table(record(START, "/", 3, 30, offset=0),
                                record(START, "/docs", 1, 5, offset=1)), PARTITIONS)
    assert output.latest == {WindowKey(START, "/"): Counts(3, 30),
                             WindowKey(START, "/docs"): Counts(1, 5)}
    check = check_written_once(output)
    assert check.ok
    assert str(check) == ("each window written once: OK (2 records, 2 keys, each in its murmur2 "
                          "partition)")


def test_a_key_written_twice_fails_and_its_last_record_in_offset_order_counts():
    first = record(START, "/", 3, 30, offset=4)
    second = record(START, "/", 5, 50, offset=9)
    output = parse_output(table(second, first), PARTITIONS)  # read out of order
    assert output.latest == {WindowKey(START, "/"): Counts(5, 50)}
    assert output.duplicated == [WindowKey(START, "/")]
    check = check_written_once(output)
    assert not check.ok
    assert str(check).startswith("each window written once: FAILED (1 keys written more than "
                                 "once, e.g. 2025-03-14T09:00:00Z /")


def test_keys_outside_their_murmur2_partition_and_malformed_records_fail():
    right = record(START, "/", 1, 1, offset=0)
    wrong = record(START, "/docs", 1, 1, offset=0)
    wrong["partition"] = (wrong["partition"] + 1) % PARTITIONS
    not_json = dict(right, value=b"{not json", offset=1)
    wrong_key = record(START, "/a", 1, 1, offset=2, key="something else")
    output = parse_output(table(right, wrong, not_json, wrong_key), PARTITIONS)
    assert len(output.misplaced) == 1 and "/docs" in output.misplaced[0]
    assert len(output.malformed) == 2
    assert any("does not name the window" in m for m in output.malformed)
    check = check_written_once(output)
    assert not check.ok
    assert "1 keys outside their murmur2 partition" in check.detail
    assert "2 malformed records" in check.detail


def test_no_output_records():
    output = parse_output(table(), PARTITIONS)
    assert output.latest == {} and output.records == 0
    assert check_written_once(output).ok


def test_equal_aggregates_pass_and_count_the_windows():
    counts = {WindowKey(START, "/"): Counts(3, 30), WindowKey(START + 60_000, "/"): Counts(1, 2)}
    assert str(check_aggregates(counts, dict(counts))) == "aggregates match: OK (2 windows)"


def test_differences_fail_with_a_summary_of_each_kind():
    expected = {WindowKey(START, "/"): Counts(3, 30), WindowKey(START, "/a"): Counts(1, 1),
                WindowKey(START, "/b"): Counts(2, 2)}
    written = {WindowKey(START, "/"): Counts(3, 31), WindowKey(START, "/b"): Counts(2, 2),
               WindowKey(START, "/c"): Counts(7, 7)}
    check = check_aggregates(expected, written)
    assert not check.ok
    assert str(check) == (
        "aggregates match: FAILED (3 of 4 windows differ: "
        "1 missing, e.g. 2025-03-14T09:00:00Z /a (1 views, 1 ms); "
        "1 unexpected, e.g. 2025-03-14T09:00:00Z /c (7 views, 7 ms); "
        "1 with other counts, e.g. 2025-03-14T09:00:00Z / (3 views, 31 ms, expected 3 views, "
        "30 ms))")


def test_records_in_must_equal_records_produced():
    assert str(check_records(1_004, 1_000, 4)) == (
        "records in == records produced: OK (1,004 read, 1,000 page views + 4 heartbeats "
        "produced)")
    assert not check_records(1_005, 1_000, 4).ok
    assert not check_records(1_003, 1_000, 4).ok


def progress(batch_id, rows, *, ran=True, out=0, watermark="1970-01-01T00:00:00.000Z",
             dropped=0):
    durations = {"triggerExecution": 1500, "latestOffset": 3}
    if ran:
        durations["addBatch"] = 1200
    return {"batchId": batch_id, "numInputRows": rows, "durationMs": durations,
            "sink": {"numOutputRows": out}, "eventTime": {"watermark": watermark},
            "stateOperators": [{"numRowsDroppedByWatermark": dropped}]}


def test_micro_batches_are_counted_once_and_idle_triggers_not_at_all():
    batches = MicroBatches()
    new = batches.update([progress(0, 100, out=2), progress(1, 0, ran=False)])
    assert [b.id for b in new] == [0]
    new = batches.update([progress(0, 100, out=2), progress(1, 50, out=-1, dropped=3,
                                                            watermark="2025-03-14T09:11:00.000Z")])
    assert [b.id for b in new] == [1]
    assert (batches.count, batches.records_in, batches.records_out) == (2, 150, 2)
    assert batches.dropped_by_watermark == 3
    assert batches.watermark_ms == START + 11 * 60_000
    assert batches.durations_ms == [1500, 1500]
    assert batches.last.id == 1
    assert batch_of(progress(5, 0, ran=False)) is None


def test_the_summary_names_every_figure():
    lines = Summary(page_views=300_000, heartbeats=4, partitions=4, records_in=300_004,
                    records_out=400, batch_durations_ms=[20_000, 3_000, 2_000],
                    dropped_by_watermark=0, wall_s=60.0, query_s=40.0).lines()
    text = "\n".join(lines)
    for figure in ("300,000 page views + 4 heartbeats", "300,004", "400", "3: 8.3 s on average",
                   "20.0 s the longest", "60.0 s (the query 40.0 s)",
                   "12,000 records/s in micro-batches", "5,000 records/s from start to end"):
        assert figure in text
