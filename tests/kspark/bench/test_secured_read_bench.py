"""The SASL_SSL against PLAINTEXT read benchmark runs and prints both rates and their ratio for
each way (its figures are a benchmark's, not asserted)."""

import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker]

ROW = re.compile(r"^  (?P<way>.+?)\s+PLAINTEXT\s+(?P<plain>[\d,]+) \([\d.,]+ MB/s\)\s+SASL_SSL"
                 r"\s+(?P<secured>[\d,]+) \([\d.,]+ MB/s\)\s+ratio (?P<ratio>[\d.]+)$")


def test_benchmark_command_prints_both_protocols_and_their_ratio():
    # A subprocess: the command starts and stops a SparkSession of its own.
    done = subprocess.run([sys.executable, "-m", "kspark.bench.secured_read", "--records",
                           "40000", "--repeat", "1"], capture_output=True, text=True,
                          timeout=480)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {m["way"]: m for m in map(ROW.match, done.stdout.splitlines()) if m}
    assert set(rows) == {"confluent-kafka consumer (the broker's consume rate)",
                         "kpy batch read (spark.read.format('kpy'))"}
    for row in rows.values():
        plain, secured = (int(row[k].replace(",", "")) for k in ("plain", "secured"))
        assert plain > 0 and secured > 0
        assert abs(float(row["ratio"]) - secured / plain) < 0.01
    assert "target: SASL_SSL >= 0.6x PLAINTEXT for both" in done.stdout
