"""After ``pip install``, ``format("kpy")`` works in a new SparkSession without any
registration call: Spark finds the installed ``pyspark_kpy`` module and its DefaultSource."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from broker_lite.server.testing import bootstrap

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.spark
def test_an_installed_kpy_is_found_by_a_plain_spark_session(broker, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(ROOT)], check=True, timeout=600)
    assert (target / "pyspark_kpy" / "__init__.py").exists()
    script = textwrap.dedent(f"""
        from confluent_kafka import Producer
        from pyspark.sql import SparkSession

        producer = Producer({{"bootstrap.servers": "{bootstrap(broker)}"}})
        for i in range(5):
            producer.produce("discovered", value=b"v%d" % i)
        assert producer.flush(30) == 0
        spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false") \\
            .getOrCreate()
        df = (spark.read.format("kpy").option("kafka.bootstrap.servers", "{bootstrap(broker)}")
              .option("subscribe", "discovered").load())
        print("values", sorted(r.value for r in df.collect()))
        spark.stop()
    """)
    env = {**os.environ, "PYTHONPATH": str(target), "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "values [b'v0', b'v1', b'v2', b'v3', b'v4']" in done.stdout, done.stdout
