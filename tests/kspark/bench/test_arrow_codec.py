import re
import subprocess
import sys

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
    in_a_row = [re.match(r"^in a row, decode (none|lz4|zstd): kpy ([\d,]+), kpy Python ([\d,]+) "
                         r"\((\d+\.\d)x\)$", line) for line in lines]
    assert [m.group(1) for m in in_a_row if m] == ["none", "lz4", "zstd"]
    for m in filter(None, in_a_row):
        kpy, python = (float(m.group(i).replace(",", "")) for i in (2, 3))
        assert kpy > 0 and python > 0 and float(m.group(4)) == round(kpy / python, 1)


def test_both_decoders_see_every_record():
    buffer = arrow_to_batch(arrow_codec.sample_rows(100), compression=CompressionType.LZ4,
                            timestamp=0) * 3
    assert arrow_codec.kpy_decode(buffer) == arrow_codec.kafka_python_decode(buffer) == 300
