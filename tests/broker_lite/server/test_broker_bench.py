import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow]


def test_benchmark_command_prints_both_brokers_and_ratios():
    done = subprocess.run([sys.executable, "-m", "broker_lite.server.bench", "--records", "20000",
                           "--repeat", "1"], capture_output=True, text=True, timeout=300,
                          check=True)
    rows = [line for line in done.stdout.splitlines() if re.match(r"^(produce|consume) ", line)]
    assert [tuple(r.split()[:2]) for r in rows] == [
        ("produce", "none"), ("consume", "none"), ("produce", "lz4"), ("consume", "lz4")]
    for row in rows:
        lite, mock = [float(x.replace(",", "")) for x in re.findall(r"([\d,]+) rec/s", row)]
        ratio = float(re.search(r"ratio ([\d.]+)", row).group(1))
        assert lite > 0 and mock > 0
        assert abs(ratio - lite / mock) < 0.01


def test_replication_benchmark_prints_both_ways_and_their_ratio():
    done = subprocess.run([sys.executable, "-m", "broker_lite.local.bench_replication",
                           "--records", "5000", "--rounds", "1"], capture_output=True,
                          text=True, timeout=480, check=True)
    medians = dict(re.findall(r"^median (acks=\S+ \d replicas?)\s+([\d,]+) records/s",
                              done.stdout, re.MULTILINE))
    assert set(medians) == {"acks=all, 3 replicas", "acks=1, 1 replica"}
    replicated, single = (float(medians[k].replace(",", ""))
                          for k in ("acks=all, 3 replicas", "acks=1, 1 replica"))
    ratio = float(re.search(r"1 replica: ([\d.]+)x", done.stdout).group(1))
    assert replicated > 0 and single > 0 and abs(ratio - replicated / single) < 0.01


def test_registry_benchmark_prints_lookups_re_registrations_and_the_peer():
    done = subprocess.run([sys.executable, "-m", "broker_lite.local.bench_registry",
                           "--clients", "2", "--seconds", "1", "--schemas", "3", "--new", "5"],
                          capture_output=True, text=True, timeout=300, check=True)
    peer = float(re.search(r"^peer .*: ([\d,]+) requests/s", done.stdout, re.MULTILINE)
                 .group(1).replace(",", ""))
    lookups = re.search(r"^lookups by id: ([\d,]+)/s, p99 ([\d.]+) ms \(([\d.]+)x the peer\)",
                        done.stdout, re.MULTILINE)
    again = re.search(r"^re-registrations of registered schemas: ([\d,]+)/s, p99 ([\d.]+) ms",
                      done.stdout, re.MULTILINE)
    new = re.search(r"^new schemas registered: 5, p99 ([\d.]+) ms", done.stdout, re.MULTILINE)
    assert lookups and again and new, done.stdout
    rate = float(lookups.group(1).replace(",", ""))
    assert rate > 0 and peer > 0 and abs(float(lookups.group(3)) - rate / peer) < 0.01
    assert float(again.group(1).replace(",", "")) > 0 and float(new.group(1)) > 0
    assert re.search(r"^target lookups .*: (met|NOT met)$", done.stdout, re.MULTILINE)


def test_failover_benchmark_prints_both_faults_percentiles_and_their_ratio():
    done = subprocess.run([sys.executable, "-m", "broker_lite.local.bench_failover",
                           "--rounds", "1"], capture_output=True, text=True, timeout=480,
                          check=True)
    figures = {fault: (float(p50), float(p99)) for fault, p50, p99 in re.findall(
        r"^(isolated|killed)\s+to a new leader acknowledging acks=all: p50\s+([\d.]+) s, "
        r"p99\s+([\d.]+) s", done.stdout, re.MULTILINE)}
    assert set(figures) == {"isolated", "killed"}
    for p50, p99 in figures.values():
        assert 0 < p50 == p99  # one round: both are its figure
    ratio = float(re.search(r"isolated / killed \(p50\): ([\d.]+)x", done.stdout).group(1))
    assert abs(ratio - figures["isolated"][0] / figures["killed"][0]) < 0.01
