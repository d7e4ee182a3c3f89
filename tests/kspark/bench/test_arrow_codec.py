import itertools
import re
import subprocess
import sys
import time

import pytest

from broker_lite.records import CompressionType
from broker_lite.records.arrow.encode import arrow_to_batch
from kspark.bench import arrow_codec

pytestmark = [pytest.mark.slow]


def test_benchmark_command_prints_rates_and_ratios_for_each_codec():
    # A subprocess: the command pins itself to one core, which must not leak into the suite.
    done = subprocess.run(
        [sys.executable, "-m", "kspark.bench.arrow_codec", "--batches", "1", "--repeat", "1"],
        capture_output=True, text=True, timeout=300, check=True,
    )
    lines = done.stdout.splitlines()
    assert any(line.startswith("record codecs: ") for line in lines)
    rows = {tuple(line.split()[:2]): line for line in lines
            if re.match(r"^(decode|encode) (none|lz4|zstd)\s", line)}
    assert set(rows) == {(step, codec) for step in ("decode", "encode")
                         for codec in ("none", "lz4", "zstd")}
    for row in rows.values():
        numbers = row.split()[2:]  # after the step and the codec name
        rates = [float(n.replace(",", "")) for n in numbers if not n.endswith("x")]
        ratios = [float(n[:-1]) for n in numbers if n.endswith("x")]
        # kpy (the codecs in use), kpy on its pure-Python codecs, kafka-python
        assert len(rates) == 3 and all(rate > 0 for rate in rates)
        assert ratios == [round(rates[0] / rates[1], 1), round(rates[0] / rates[2], 1)]


def test_both_decoders_see_every_record():
    buffer = arrow_to_batch(arrow_codec.sample_rows(100), compression=CompressionType.LZ4,
                            timestamp=0) * 3
    assert arrow_codec.kpy_decode(buffer) == arrow_codec.kafka_python_decode(buffer) == 300


def test_each_timed_run_follows_untimed_runs_of_its_own_way_for_the_warm_up_time(monkeypatch):
    monkeypatch.setattr(arrow_codec, "WARM_SECONDS", 0.05)
    calls = []

    def way(name: str, seconds: float):
        def run() -> None:
            calls.append((name, time.perf_counter()))
            time.sleep(seconds)
        return run

    medians = arrow_codec.median_seconds({"a": (way("a", 0.01), 2), "b": (way("b", 0.03), 1)}, 2)
    turns = [list(group) for _, group in itertools.groupby(calls, key=lambda call: call[0])]
    assert [turn[0][0] for turn in turns] == ["a", "b", "a"]  # taking turns; b runs once
    for turn in turns:  # the last run of a turn is timed, after 0.05 s of its own runs
        assert len(turn) >= 3 and turn[-1][1] - turn[0][1] >= 0.05
    assert medians["a"] >= 0.01 and medians["b"] >= 0.03
