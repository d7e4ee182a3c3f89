import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
NUMBER = r"([\d,]+(?:\.\d+)?)"

APPEND = re.compile(
    rf"^append\s+(1 MiB|16 KiB) batches \({NUMBER} bytes x {NUMBER}\): "
    rf"log {NUMBER} MB/s {NUMBER} batches/s \| plain {NUMBER} MB/s {NUMBER} batches/s \| "
    rf"ratio {NUMBER}$")
READ = re.compile(
    rf"^read\s+(\d+) segments: lookup median {NUMBER} us p99 {NUMBER} us \| "
    rf"lookup\+read median {NUMBER} us p99 {NUMBER} us$")
READ_RATIO = re.compile(
    rf"^read latency ratio, 100 / 1 segments \(median\): lookup {NUMBER} \| "
    rf"lookup\+read {NUMBER}$")


def number(text: str) -> float:
    return float(text.replace(",", ""))


def is_printed_quotient(ratio: float, a: float, b: float, step: float = 0.05) -> bool:
    """``ratio`` (2 decimals) is a / b, given that a and b were printed to ``step``/2."""
    return (a - step) / (b + step) - 0.005 <= ratio <= (a + step) / (b - step) + 0.005


def test_benchmark_command_prints_rates_latencies_and_ratios(tmp_path):
    # A subprocess, so that nothing the benchmark sets (gc, files) leaks into the suite.
    done = subprocess.run(
        [sys.executable, "-m", "broker_lite.log.bench", "--total-mb", "2", "--repeat", "1",
         "--lookups", "20", "--dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("log append vs plain file write: 2 MB per run")
    assert lines[-1].startswith("targets: append >= 500 MB/s of 1 MiB batches")

    appends = {m[1]: [number(n) for n in m.groups()[1:]]
               for line in lines if (m := APPEND.match(line))}
    assert set(appends) == {"1 MiB", "16 KiB"}
    for name, (size, count, log_mb, log_batches, plain_mb, plain_batches, ratio) in \
            appends.items():
        assert all(v > 0 for v in (size, count, log_mb, log_batches, plain_mb, plain_batches))
        assert abs(count * size - 2_000_000) <= size  # --total-mb of batches per run
        # batches/s and MB/s describe the same runs
        for mb, batches in ((log_mb, log_batches), (plain_mb, plain_batches)):
            assert abs(mb * 1e6 / size - batches) <= 0.05 * 1e6 / size + 0.05, name
        assert is_printed_quotient(ratio, log_mb, plain_mb), (name, ratio, log_mb, plain_mb)

    reads = {int(m[1]): [number(n) for n in m.groups()[1:]]
             for line in lines if (m := READ.match(line))}
    assert list(reads) == [1, 10, 50, 100]
    for lookup_median, lookup_p99, total_median, total_p99 in reads.values():
        assert 0 < lookup_median <= lookup_p99 and 0 < total_median <= total_p99
    (ratio_line,) = [m for line in lines if (m := READ_RATIO.match(line))]
    lookup_ratio, total_ratio = number(ratio_line[1]), number(ratio_line[2])
    assert is_printed_quotient(lookup_ratio, reads[100][0], reads[1][0])
    assert is_printed_quotient(total_ratio, reads[100][2], reads[1][2])

    assert list(tmp_path.iterdir()) == []  # every run removed its files
