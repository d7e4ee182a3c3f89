"""Spark's Kafka "offsets behind latest" metrics from a kpy source's progress: the function on
every form a progress comes in, its number format checked against Java's own, and the figures
of a real streaming query over a real broker_lite and ZooKeeper."""

import json
import random
from types import SimpleNamespace

import pytest
from pyspark.sql.streaming.listener import SourceProgress

import kspark
from kspark.source.metrics import java_double_string, offsets_behind_latest

END = {"t": {"0": 10, "1": 20}, "u": {"0": 5}}
LATEST = {"t": {"0": 100, "1": 100}, "u": {"0": 5}}
EXPECTED = {"minOffsetsBehindLatest": "0", "maxOffsetsBehindLatest": "90",
            "avgOffsetsBehindLatest": "56.666666666666664"}  # (90 + 80 + 0) / 3


def source_progress(end, latest) -> SourceProgress:
    return SourceProgress(description="kpy", startOffset=None, endOffset=end,
                          latestOffset=latest, numInputRows=0, inputRowsPerSecond=0.0,
                          processedRowsPerSecond=0.0, metrics={})


# -- the function ---------------------------------------------------------------------------------


@pytest.mark.parametrize("progress", [
    pytest.param({"endOffset": json.dumps(END), "latestOffset": json.dumps(LATEST)},
                 id="lastProgress dict, offsets as JSON text"),
    pytest.param({"endOffset": END, "latestOffset": LATEST}, id="parsed progress JSON"),
    pytest.param(source_progress(json.dumps(END), json.dumps(LATEST)), id="SourceProgress"),
    pytest.param(SourceProgress.fromJson({
        "description": "kpy", "startOffset": None, "endOffset": END, "latestOffset": LATEST,
        "numInputRows": 0, "inputRowsPerSecond": 0.0, "processedRowsPerSecond": 0.0}),
                 id="SourceProgress.fromJson"),
    pytest.param(SimpleNamespace(endOffset=json.dumps(END), latestOffset=json.dumps(LATEST)),
                 id="object with offset attributes"),
])
def test_every_form_of_a_source_progress_gives_the_same_figures(progress):
    assert offsets_behind_latest(progress) == EXPECTED


def test_the_figures_are_named_and_ordered_as_spark_reports_them():
    assert list(offsets_behind_latest({"endOffset": END, "latestOffset": LATEST})) == [
        "minOffsetsBehindLatest", "maxOffsetsBehindLatest", "avgOffsetsBehindLatest"]


@pytest.mark.parametrize("missing", [None, "null", "None", "", {}])
@pytest.mark.parametrize("field", ["latestOffset", "endOffset"])
def test_no_figures_without_both_offsets(field, missing):
    progress = {"endOffset": END, "latestOffset": LATEST, field: missing}
    if field == "endOffset" and missing == {}:
        # An end offset without partitions is an offset: every partition counts from 0.
        assert offsets_behind_latest(progress)["maxOffsetsBehindLatest"] == "100"
    else:
        assert offsets_behind_latest(progress) == {}


def test_no_figures_when_the_progress_has_no_offsets_at_all():
    assert offsets_behind_latest({}) == {}
    assert offsets_behind_latest(source_progress("None", "None")) == {}  # a listener's nulls
    assert offsets_behind_latest(SimpleNamespace()) == {}


def test_a_partition_not_in_the_end_offset_counts_from_offset_0():
    progress = {"endOffset": {"t": {"0": 40}}, "latestOffset": {"t": {"0": 50, "1": 7}}}
    assert offsets_behind_latest(progress) == {
        "minOffsetsBehindLatest": "7", "maxOffsetsBehindLatest": "10",
        "avgOffsetsBehindLatest": "8.5"}


def test_a_partition_not_in_the_latest_offset_is_left_out():
    progress = {"endOffset": {"t": {"0": 40, "1": 3}, "gone": {"0": 9}},
                "latestOffset": {"t": {"0": 50}}}
    assert offsets_behind_latest(progress) == {
        "minOffsetsBehindLatest": "10", "maxOffsetsBehindLatest": "10",
        "avgOffsetsBehindLatest": "10.0"}


def test_an_end_past_the_latest_offset_counts_negative_as_in_spark():
    progress = {"endOffset": {"t": {"0": 12, "1": 0}}, "latestOffset": {"t": {"0": 10, "1": 4}}}
    assert offsets_behind_latest(progress) == {
        "minOffsetsBehindLatest": "-2", "maxOffsetsBehindLatest": "4",
        "avgOffsetsBehindLatest": "1.0"}


def test_a_lag_of_ten_million_reads_as_java_writes_it():
    progress = {"endOffset": {"t": {"0": 0}}, "latestOffset": {"t": {"0": 10_000_000}}}
    assert offsets_behind_latest(progress)["avgOffsetsBehindLatest"] == "1.0E7"


@pytest.mark.parametrize("offset", ["42", 42, '["t", 0]', {"t": 42}])
def test_offsets_of_another_kind_of_source_are_refused(offset):
    with pytest.raises(ValueError, match="latestOffset is not a Kafka source offset"):
        offsets_behind_latest({"endOffset": END, "latestOffset": offset})


def test_kspark_exports_the_function():
    assert kspark.offsets_behind_latest is offsets_behind_latest
    assert "offsets_behind_latest" in kspark.__all__


# -- Java's number format -------------------------------------------------------------------------

# Java 17 writes some values of 10^16 and more with more digits than Java 19 and later: the
# values here are written alike by both, whichever the JVM is.
DOUBLES = [0.0, -0.0, 1.0, 56.666666666666664, 1 / 3, 2 / 3, 0.001, 0.0009765625, 0.0005,
           1e-4 / 3, 123456.789, 9999999.0, 9999999.5, 1e7, 10_000_001.0, 12345678.5, 1e21,
           2.5e-7, -85.0, -1e7, 5e-324]
AVERAGES = [random.Random(n).randrange(10 ** (n % 15 + 1)) / (n % 997 + 1) for n in range(2000)]


@pytest.mark.parametrize("values", [DOUBLES, AVERAGES], ids=["edges", "averages"])
def test_doubles_are_written_as_java_writes_them(spark, values):
    java = spark.sparkContext._jvm.java.lang.Double
    assert [java_double_string(v) for v in values] == [java.toString(v) for v in values]


# -- a real streaming query -----------------------------------------------------------------------


def test_the_figures_of_a_rate_limited_query_follow_from_records_and_limit(
        spark, kpy_bootstrap_servers, kpy_topic, kpy_produce, tmp_path):
    # 300, 200 and 100 records; a limit of 60 per micro-batch is shared in proportion to what
    # waits, 30, 20 and 10, so after batch n the partitions are 300 - 30n, 200 - 20n and
    # 100 - 10n behind the offsets latest when the query started (Trigger.AvailableNow).
    topic = kpy_topic(partitions=3)
    kpy_produce(topic, [{"value": f"{p}-{i}", "partition": p}
                        for p, count in enumerate([300, 200, 100]) for i in range(count)])
    df = (spark.readStream.format("kpy").option("kafka.bootstrap.servers", kpy_bootstrap_servers)
          .option("subscribe", topic).option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", "60").load())
    query = (df.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120), "the query did not finish"
    assert query.exception() is None, query.exception()

    progresses = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert [p["numInputRows"] for p in progresses] == [60] * 10
    for n, progress in enumerate(progresses, start=1):
        expected = {"minOffsetsBehindLatest": str(100 - 10 * n),
                    "maxOffsetsBehindLatest": str(300 - 30 * n),
                    "avgOffsetsBehindLatest": f"{200 - 20 * n}.0"}
        assert json.loads(progress["sources"][0]["latestOffset"]) == {
            topic: {"0": 300, "1": 200, "2": 100}}
        assert offsets_behind_latest(progress["sources"][0]) == expected, n
        assert offsets_behind_latest(json.loads(progress.json)["sources"][0]) == expected, n
