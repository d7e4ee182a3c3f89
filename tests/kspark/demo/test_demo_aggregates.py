"""The demo's sample page views (deterministic, well formed, boundedly out of order) and the
counts the demo expects, computed without Spark."""

import json
from collections import Counter, defaultdict
from datetime import datetime
from itertools import pairwise

import numpy as np
import pyarrow as pa
import pytest

from kspark.demo.aggregates import (
    WINDOW_MS,
    Counts,
    ExpectedAggregates,
    WindowKey,
    format_instant,
    parse_instant,
)
from kspark.demo.generator import (
    CHUNKS,
    EVENT_SPAN_MS,
    EVENT_START_MS,
    HEARTBEAT_TS_MS,
    MAX_LATENESS_MS,
    PAGES,
    PageViews,
    heartbeats,
    to_kafka_rows,
)
from kspark.demo.pipeline import WATERMARK_DELAY, WINDOW


def _ms(interval: str) -> int:
    count, unit = interval.split()
    return int(count) * {"second": 1000, "seconds": 1000, "minute": 60_000}[unit]


def _table(views: PageViews) -> pa.Table:
    return pa.Table.from_batches(list(views.chunks()))


def _ts_ms(column) -> np.ndarray:
    return column.cast(pa.int64()).to_numpy()


# -- the generator ---------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_records_and_another_seed_others():
    first = [to_kafka_rows(c) for c in PageViews(3_000, seed=11).chunks()]
    again = [to_kafka_rows(c) for c in PageViews(3_000, seed=11).chunks()]
    other = [to_kafka_rows(c) for c in PageViews(3_000, seed=12).chunks()]
    assert all(a.equals(b) for a, b in zip(first, again, strict=True))
    assert [r.column("value") for r in first] != [r.column("value") for r in other]


def test_a_chunk_alone_equals_the_same_chunk_in_the_stream():
    views = PageViews(5_000, seed=3)
    stream = list(views.chunks())
    assert views.chunk(77).equals(stream[77])
    assert views.chunk(0).equals(stream[0])


@pytest.mark.parametrize("records, chunks", [(1, 1), (7, 7), (CHUNKS, CHUNKS), (10_001, CHUNKS)])
def test_chunks_cover_every_record_once(records, chunks):
    views = PageViews(records, seed=1)
    assert views.chunk_count == chunks
    bounds = [views.chunk_bounds(i) for i in range(chunks)]
    assert bounds[0][0] == 0 and bounds[-1][1] == records
    assert all(end == following for (_, end), (following, _) in pairwise(bounds))
    assert all(first < end for first, end in bounds)
    assert sum(c.num_rows for c in views.chunks()) == records
    with pytest.raises(IndexError):
        views.chunk(chunks)


def test_a_stream_needs_a_record():
    with pytest.raises(ValueError, match="records must be >= 1"):
        PageViews(0)


def test_values_are_json_page_views_that_match_the_columns_keys_and_timestamps():
    views = PageViews(2_400, seed=5)
    chunk = views.chunk(4)
    rows = to_kafka_rows(chunk)
    assert rows.column("key").to_pylist() == [u.encode() for u in chunk.column("user").to_pylist()]
    assert _ts_ms(rows.column("timestamp")).tolist() == _ts_ms(chunk.column("ts")).tolist()
    for value, view in zip(rows.column("value").to_pylist(), chunk.to_pylist(), strict=True):
        parsed = json.loads(value)
        assert parsed == {
            "event": "page_view", "user": view["user"], "page": view["page"],
            "ts": parsed["ts"], "referrer": view["referrer"], "device": view["device"],
            "country": view["country"], "duration_ms": view["duration_ms"]}
        assert parsed["ts"].endswith("Z")
        assert parse_instant(parsed["ts"]) == int(view["ts"].timestamp() * 1000)


def test_event_times_cover_ten_minutes_from_the_start():
    ts = _ts_ms(_table(PageViews(20_000, seed=2)).column("ts"))
    assert ts.min() == EVENT_START_MS
    assert ts.max() < EVENT_START_MS + EVENT_SPAN_MS
    minutes = Counter((ts - EVENT_START_MS) // 60_000)
    assert sorted(minutes) == list(range(10))
    assert min(minutes.values()) > 1_500  # spread evenly, not bunched


def test_disorder_stays_below_the_watermark_delay():
    """A view produced after others (in a later chunk, or the same chunk sent concurrently to
    several partitions) is at most a chunk's span plus the lateness older than any of them:
    less than the query's watermark delay, so the watermark drops nothing."""
    views = PageViews(30_000, seed=9)
    newest_so_far = -1
    worst = 0
    for chunk in views.chunks():
        ts = _ts_ms(chunk.column("ts"))
        newest_so_far = max(newest_so_far, ts.max())
        worst = max(worst, newest_so_far - ts.min())
    chunk_span = EVENT_SPAN_MS // CHUNKS
    assert worst <= chunk_span + MAX_LATENESS_MS < _ms(WATERMARK_DELAY)
    assert worst > chunk_span  # the stream is out of order at all


def test_popular_pages_and_users_make_most_of_the_traffic():
    table = _table(PageViews(50_000, seed=4))
    pages = Counter(table.column("page").to_pylist())
    assert set(pages) == set(PAGES)
    assert pages["/"] > 5 * pages[PAGES[-1]]
    users = Counter(table.column("user").to_pylist())
    top = sum(n for _, n in users.most_common(len(users) // 10))
    assert top > 0.3 * table.num_rows


def test_heartbeats_close_every_window_and_count_nowhere():
    beats = heartbeats(3)
    assert beats.column("partition").to_pylist() == [0, 1, 2]
    assert "key" not in beats.schema.names
    for value in beats.column("value").to_pylist():
        parsed = json.loads(value)
        assert parsed["event"] == "heartbeat" and "page" not in parsed
        assert parse_instant(parsed["ts"]) == HEARTBEAT_TS_MS
    # the watermark they bring is past the end of the last window of page views...
    assert HEARTBEAT_TS_MS - _ms(WATERMARK_DELAY) >= EVENT_START_MS + EVENT_SPAN_MS
    # ...but not past the end of their own window, which therefore never closes
    own_window_end = HEARTBEAT_TS_MS - HEARTBEAT_TS_MS % WINDOW_MS + _ms(WINDOW)
    assert HEARTBEAT_TS_MS - _ms(WATERMARK_DELAY) < own_window_end


# -- the expected aggregates -----------------------------------------------------------------


def _by_hand(table: pa.Table) -> dict[WindowKey, Counts]:
    views, dwell = Counter(), defaultdict(int)
    for view in table.select(["page", "ts", "duration_ms"]).to_pylist():
        ms = int(view["ts"].timestamp() * 1000)
        key = WindowKey(ms - ms % 60_000, view["page"])
        views[key] += 1
        dwell[key] += view["duration_ms"]
    return {key: Counts(views[key], dwell[key]) for key in views}


def test_expected_aggregates_equal_a_count_by_hand():
    views = PageViews(8_000, seed=21)
    expected = ExpectedAggregates()
    for chunk in views.chunks():
        expected.add(chunk)
    result = expected.result()
    assert result == _by_hand(_table(views))
    assert expected.views == 8_000
    assert sum(c.views for c in result.values()) == 8_000
    assert {k.start_ms for k in result} == {EVENT_START_MS + m * 60_000 for m in range(10)}


def test_chunks_added_one_by_one_or_at_once_give_the_same_counts():
    views = PageViews(4_000, seed=8)
    by_chunk, at_once = ExpectedAggregates(), ExpectedAggregates()
    for chunk in views.chunks():
        by_chunk.add(chunk)
    at_once.add(_table(views))
    assert by_chunk.result() == at_once.result()


def test_windows_are_aligned_minutes_of_utc():
    start = EVENT_START_MS
    expected = ExpectedAggregates()
    expected.add(pa.table({
        "page": ["/a", "/a", "/a", "/b"],
        "ts": pa.array([start, start + 59_999, start + 60_000, start + 59_999],
                       pa.int64()),
        "duration_ms": [1, 2, 4, 8]}))
    assert expected.result() == {
        WindowKey(start, "/a"): Counts(2, 3),
        WindowKey(start + 60_000, "/a"): Counts(1, 4),
        WindowKey(start, "/b"): Counts(1, 8)}
    assert str(WindowKey(start, "/a")) == "2025-03-14T09:00:00Z /a"


def test_no_views_no_windows():
    assert ExpectedAggregates().result() == {}


def test_instants_read_back_what_they_write_whatever_the_offset():
    ms = EVENT_START_MS + 3 * 60_000
    assert parse_instant(format_instant(ms)) == ms
    assert parse_instant("2025-03-14T10:03:00+01:00") == ms
    assert datetime.fromisoformat(format_instant(ms)).utcoffset().total_seconds() == 0
    with pytest.raises(ValueError, match="no UTC offset"):
        parse_instant("2025-03-14T09:03:00")
