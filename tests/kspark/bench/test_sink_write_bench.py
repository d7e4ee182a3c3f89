import re
import subprocess
import sys

import pytest

from kspark.bench.sink_write import TopicCount, value_of, verify

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

VERIFIED = re.compile(r"^  (?P<way>.+?)\s+[\d.]+ s, verified: (?P<records>[\d,]+) records \+ "
                      r"(?P<markers>\d+) markers = end offsets (?P<end>[\d,]+)$")


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_benchmark_command_verifies_every_write_and_prints_the_ratios():
    # A subprocess: the command starts and stops a SparkSession of its own, which must not be
    # the suite's shared one.
    done = subprocess.run(
        [sys.executable, "-m", "kspark.bench.sink_write", "--records", "2000",
         "--partitions", "2", "--repeat", "1"],
        capture_output=True, text=True, timeout=480)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()

    verified = {m["way"]: m for m in map(VERIFIED.match, lines) if m}
    assert set(verified) == {"kpy df.write, exactly_once (default)",
                             "kpy df.write, exactly_once, pure-Python codecs",
                             "kpy df.write, at_least_once",
                             "confluent-kafka Producer, one Python process"}
    for way, match in verified.items():
        assert number(match["records"]) == 2000
        assert number(match["end"]) == 2000 + int(match["markers"])
        # markers only where there were transactions: one per partition per transaction, so
        # at least one for each of the two write tasks
        assert (int(match["markers"]) >= 2) == ("exactly_once" in way)

    rates = {}
    for line in lines:
        found = re.match(r"^  (.+?)\s{2,}([\d,]+) \(([\d,.]+) MB/s\)$", line)
        if found:
            rates[found[1]] = number(found[2])
    eo, alo = rates["kpy df.write, exactly_once (default)"], rates["kpy df.write, at_least_once"]
    eo_python = rates["kpy df.write, exactly_once, pure-Python codecs"]
    confluent = rates["confluent-kafka Producer, one Python process"]
    assert rates["Spark generating the rows (noop sink)"] > 0
    ratios = next(line for line in lines if line.startswith("ratios:"))
    found = re.match(r"ratios: kpy exactly_once / confluent-kafka ([\d.]+) \(target >= 1.5\), "
                     r"kpy exactly_once / kpy at_least_once ([\d.]+) \(target >= 0.8\), "
                     r"kpy exactly_once / its pure-Python codecs ([\d.]+) \(target >= 1.5\)$",
                     ratios)
    assert found, ratios
    assert float(found[1]) == pytest.approx(eo / confluent, abs=0.01)
    assert float(found[2]) == pytest.approx(eo / alo, abs=0.01)
    assert float(found[3]) == pytest.approx(eo / eo_python, abs=0.01)

    # CPU by process for each way Spark runs (whole clock ticks, scaled up from 2000 records:
    # a broker's few milliseconds may read 0), the kpy writes' Python workers encoding
    at = lines.index(next(line for line in lines if line.startswith("CPU seconds per 10M")))
    cpu = {}
    for line in lines[at + 1:at + 5]:
        found = re.match(r"^  (.+?)\s{2,}JVM ([\d.]+), Python ([\d.]+), broker ([\d.]+), "
                         r"in all ([\d.]+)$", line)
        assert found, line
        cpu[found[1]] = [float(found[i]) for i in range(2, 6)]
    assert set(cpu) == {"kpy df.write, exactly_once (default)",
                        "kpy df.write, exactly_once, pure-Python codecs",
                        "kpy df.write, at_least_once", "Spark generating the rows (noop sink)"}
    for way, (jvm, python, broker, in_all) in cpu.items():
        assert in_all == pytest.approx(jvm + python + broker, abs=0.02)
        assert jvm > 0
        assert (python > 0) == ("noop" not in way)


def test_values_are_100_bytes_numbered_by_row():
    assert value_of(42) == b"000000000042" + b"x" * 88
    assert len(value_of(10**11)) == 100


@pytest.mark.parametrize("count, way", [
    (TopicCount(records=1999, markers=2, end_offsets=2001), "kpy_eo"),  # a record missing
    (TopicCount(records=2000, markers=2, end_offsets=2003), "kpy_eo"),  # unexplained offsets
    (TopicCount(records=2000, markers=1, end_offsets=2001), "kpy_alo"),  # a marker, no txns
])
def test_a_topic_that_does_not_hold_exactly_the_rows_fails_verification(count, way):
    with pytest.raises(RuntimeError, match=way):
        verify(count, 2000, way)


def test_a_topic_holding_exactly_the_rows_passes_verification():
    verify(TopicCount(records=2000, markers=4, end_offsets=2004), 2000, "kpy_eo")
    verify(TopicCount(records=2000, markers=0, end_offsets=2000), 2000, "confluent")
