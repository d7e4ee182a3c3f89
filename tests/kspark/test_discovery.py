"""After ``pip install``, a wheel or editable (README's set-up), ``format("kpy")`` works in a
new SparkSession without any registration call: Spark finds ``pyspark_kpy`` and its
DefaultSource."""

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from broker_lite.server.testing import bootstrap

ROOT = Path(__file__).resolve().parents[2]

# A plain SparkSession: no kspark import, no registration; it reads what it produced.
PLAIN_SESSION_READ = """
from confluent_kafka import Producer
from pyspark.sql import SparkSession

producer = Producer({{"bootstrap.servers": "{servers}"}})
for i in range(5):
    producer.produce("discovered", value=b"v%d" % i)
assert producer.flush(30) == 0
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false") \\
    .getOrCreate()
df = (spark.read.format("kpy").option("kafka.bootstrap.servers", "{servers}")
      .option("subscribe", "discovered").load())
print("values", sorted(r.value for r in df.collect()))
spark.stop()
"""


def read_with_a_plain_session(python: str, servers: str, cwd: Path, **env: str) -> None:
    script = textwrap.dedent(PLAIN_SESSION_READ.format(servers=servers))
    done = subprocess.run([python, "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYSPARK_PYTHON": python, **env})
    errors = [line for line in done.stderr.splitlines() if "Exception" in line]
    assert done.returncode == 0, "\n".join(errors[:5]) or done.stderr[-3000:]
    assert "values [b'v0', b'v1', b'v2', b'v3', b'v4']" in done.stdout, done.stdout


@pytest.mark.spark
def test_an_installed_kpy_is_found_by_a_plain_spark_session(broker, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(ROOT)], check=True, timeout=240)
    assert (target / "pyspark_kpy" / "__init__.py").exists()
    read_with_a_plain_session(sys.executable, bootstrap(broker), tmp_path,
                              PYTHONPATH=str(target))


@pytest.mark.spark
def test_an_editable_install_is_found_by_a_plain_spark_session(broker, tmp_path):
    # README's set-up: `pip install -e .` into a fresh virtualenv. Its dependencies come from
    # this test's environment (a path entry, whose own .pth files Python does not run), so
    # only the editable install itself can make pyspark_kpy visible to Spark.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = str(venv / "bin" / "python")
    subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
                    "--no-deps", "-e", str(ROOT)], check=True, timeout=240)
    inner = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                          "['purelib'])"],
                           check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    Path(inner, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    read_with_a_plain_session(python, bootstrap(broker), tmp_path)
