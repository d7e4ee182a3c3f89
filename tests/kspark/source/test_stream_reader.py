"""The streaming source's driver side as Spark drives it (``initialOffset``, ``latestOffset``,
``commit``, one reader per query start), against a real broker_lite but without Spark: read
limits, the consumer groups a query leaves behind, retried offset lookups, and what the reader
says about settings it has no use for."""

import logging
import uuid

import pytest
from confluent_kafka.admin import AdminClient
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMinRows

from broker_lite.client.errors import KafkaClientError
from kspark.source import KpyStreamReader
from kspark.source.options import parse_source_options
from kspark.source.positions import from_json

from .conftest import create_topic, produce, sample_rows


def reader(servers, topic, **options) -> KpyStreamReader:
    return KpyStreamReader(parse_source_options({
        "kafka.bootstrap.servers": servers, "subscribe": topic, "startingOffsets": "earliest",
        **options}))


def waiting(start, end) -> int:
    begin, until = from_json(start), from_json(end)
    return sum(until[tp] - begin.get(tp, 0) for tp in until)


def test_min_offsets_per_trigger_lets_a_new_query_read_what_waits(servers, topic_name):
    # Spark's KafkaMicroBatchStream starts its trigger clock at 0: the first trigger of a query
    # is never held back, whatever minOffsetsPerTrigger says.
    create_topic(servers, topic_name, 2)
    produce(servers, topic_name, sample_rows(10))
    source = reader(servers, topic_name, minOffsetsPerTrigger="1000")
    try:
        limit = source.getDefaultReadLimit()
        assert limit == ReadMinRows(1000)
        start = source.initialOffset()
        first = source.latestOffset(start, limit)
        assert waiting(start, first) == 10  # read at once, not after maxTriggerDelay (15 min)
        produce(servers, topic_name, sample_rows(5, "more"))
        assert source.latestOffset(first, limit) == first  # now 5 < 1000 wait: held back
        assert waiting(first, source.latestOffset(first, ReadAllAvailable())) == 5
    finally:
        source.stop()


def test_min_offsets_per_trigger_gives_way_after_max_trigger_delay(servers, topic_name):
    create_topic(servers, topic_name, 1)
    produce(servers, topic_name, sample_rows(3))
    source = reader(servers, topic_name, minOffsetsPerTrigger="1000", maxTriggerDelay="0")
    try:
        start = source.initialOffset()
        first = source.latestOffset(start, ReadMinRows(1000))
        produce(servers, topic_name, sample_rows(2, "more"))
        assert waiting(first, source.latestOffset(first, ReadMinRows(1000))) == 2
    finally:
        source.stop()


def test_the_initial_offsets_are_resolved_once_per_query(servers, topic_name):
    # Spark asks for them when the query starts and again when it plans the first batch; as in
    # Spark's source, both answers are the offsets resolved the first time, even for "latest"
    # with records arriving in between.
    create_topic(servers, topic_name, 2)
    produce(servers, topic_name, sample_rows(4))
    source = reader(servers, topic_name, startingOffsets="latest")
    try:
        first = source.initialOffset()
        produce(servers, topic_name, sample_rows(6, "more"))
        assert source.initialOffset() == first
        end = source.latestOffset(first, ReadAllAvailable())
        assert waiting(first, end) == 6  # the records that came after the start are read
    finally:
        source.stop()


def run_query_start(servers, topic, **options) -> None:
    """What Spark does with the source when a query starts and runs one batch."""
    source = reader(servers, topic, **options)
    try:
        start = source.initialOffset()
        end = source.latestOffset(start, ReadAllAvailable())
        source.partitions(start, end)
        source.commit(end)
        source.latestOffset(end, ReadAllAvailable())  # the next trigger
    finally:
        source.stop()


def groups(servers) -> set[str]:
    admin = AdminClient({"bootstrap.servers": servers})
    return {g.group_id for g in admin.list_consumer_groups().result(30).valid}


def test_a_query_without_a_group_id_leaves_no_group_behind(servers, topic_name):
    create_topic(servers, topic_name, 2)
    produce(servers, topic_name, sample_rows(20))
    before = groups(servers)
    for _ in range(3):  # three starts of a query, as after three restarts
        run_query_start(servers, topic_name)
    assert groups(servers) == before


def test_a_query_with_a_group_id_commits_its_progress_there(servers, topic_name):
    create_topic(servers, topic_name, 2)
    produce(servers, topic_name, sample_rows(20))
    group = f"kpy-named-{uuid.uuid4().hex[:6]}"
    for _ in range(2):
        run_query_start(servers, topic_name, **{"kafka.group.id": group})
    assert group in groups(servers)


def failing_first(source: KpyStreamReader, failures: int, monkeypatch) -> list:
    """Make the source's lookups of latest offsets fail ``failures`` times, as a lost broker
    would; returns the list of attempts made."""
    attempts = []
    real = source._latest_offsets

    def flaky(partitions):
        attempts.append(partitions)
        if len(attempts) <= failures:
            raise KafkaClientError("broker gone")
        return real(partitions)

    monkeypatch.setattr(source, "_latest_offsets", flaky)
    return attempts


@pytest.mark.parametrize("retries, succeeds", [("3", True), ("2", False)])
def test_offset_lookups_are_retried_as_fetch_offset_options_say(
        servers, topic_name, monkeypatch, retries, succeeds):
    create_topic(servers, topic_name, 1)
    source = reader(servers, topic_name, **{"fetchOffset.numRetries": retries,
                                            "fetchOffset.retryIntervalMs": "250"})
    slept = []
    monkeypatch.setattr("kspark.source.connect.sleep", slept.append)
    attempts = failing_first(source, 2, monkeypatch)
    try:
        start = source.initialOffset()
        if succeeds:
            source.latestOffset(start, ReadAllAvailable())
        else:
            with pytest.raises(KafkaClientError, match="broker gone"):
                source.latestOffset(start, ReadAllAvailable())
    finally:
        source.stop()
    assert len(attempts) == int(retries)
    assert slept == [0.25] * (int(retries) - 1)


def test_settings_of_the_java_consumer_without_effect_are_named_once(caplog):
    with caplog.at_level(logging.WARNING, logger="kspark.options"):
        KpyStreamReader(parse_source_options({
            "kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t",
            "kafka.max.poll.records": "500", "kafka.session.timeout.ms": "10000",
            "kafka.fetch.max.wait.ms": "100"}))
    (record,) = [r for r in caplog.records if "no effect" in r.getMessage()]
    assert "kafka.max.poll.records, kafka.session.timeout.ms" in record.getMessage()
    assert "fetch.max.wait.ms" not in record.getMessage()  # used by the source
