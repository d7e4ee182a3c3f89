"""The driver of a streaming kpy -> kpy query is killed (SIGKILL, the whole driver process
group: Python, the JVM and its Python workers) at the two dangerous moments of a micro-batch's
commit, then restarted from its checkpoint: the output holds exactly one copy of every input
record.

The crash is injected from outside the product: a ``sitecustomize`` module on the driver's
PYTHONPATH (inherited by Spark's Python workers) wraps the sink's decision recording once."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.server.testing import bootstrap

from .test_sink_write import committed_rows

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SITECUSTOMIZE = '''
import os, signal
crash_at = os.environ.get("KPY_CRASH_AT")
marker = os.environ.get("KPY_CRASH_MARKER")
if crash_at and marker:
    from kspark.sink import decisions

    original = decisions.record

    def crash_once():
        if not os.path.exists(marker):
            open(marker, "w").close()
            os.killpg(int(os.environ["KPY_DRIVER_PGID"]), signal.SIGKILL)
            os._exit(137)

    def record(*args, **kwargs):
        if crash_at == "before_decision":
            crash_once()
        original(*args, **kwargs)
        if crash_at == "after_decision":
            crash_once()

    decisions.record = record
'''

DRIVER = '''
import os, sys
os.environ["KPY_DRIVER_PGID"] = str(os.getpgid(0))
import kspark
from pyspark.sql import functions as F

servers, source, target, checkpoint = sys.argv[1:5]
spark = kspark.session("crash-driver", master="local[2]",
                       config={"spark.sql.shuffle.partitions": "2"})
spark.sparkContext.setLogLevel("ERROR")
query = (spark.readStream.format("kpy").option("kafka.bootstrap.servers", servers)
         .option("subscribe", source).option("startingOffsets", "earliest")
         .option("maxOffsetsPerTrigger", "150").load()
         .select("key", F.upper(F.col("value").cast("string")).alias("value"))
         .writeStream.format("kpy").option("kafka.bootstrap.servers", servers)
         .option("topic", target).option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
assert query.awaitTermination(200), f"the query still running after 200 s: {query.status}"
print("query exception:", query.exception())
spark.stop()
'''


def run_driver(tmp_path, servers, source, target, crash_at=None):
    hooks = tmp_path / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(textwrap.dedent(SITECUSTOMIZE))
    env = {**os.environ, "PYTHONPATH": str(hooks), "PYSPARK_PYTHON": sys.executable,
           "KPY_CRASH_MARKER": str(tmp_path / "crashed")}
    if crash_at:
        env["KPY_CRASH_AT"] = crash_at
    else:
        env.pop("KPY_CRASH_AT", None)
    return subprocess.run([sys.executable, "-c", DRIVER, servers, source, target,
                           str(tmp_path / "checkpoint")], env=env, start_new_session=True,
                          capture_output=True, text=True, timeout=270)  # twice in a test


@pytest.mark.parametrize("crash_at", ["before_decision", "after_decision"])
def test_a_driver_killed_mid_commit_resumes_exactly_once(broker, tmp_path, crash_at,
                                                         read_committed):
    servers = bootstrap(broker)
    admin = AdminClient({"bootstrap.servers": servers})
    source, target = (f"{name}-{uuid.uuid4().hex[:6]}" for name in ("in", "out"))
    for topic in (source, target):
        admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    for i in range(500):
        producer.produce(source, key=f"k{i % 11}".encode(), value=f"record-{i}".encode())
    assert producer.flush(30) == 0

    crashed = run_driver(tmp_path, servers, source, target, crash_at)
    assert crashed.returncode in (-signal.SIGKILL, 137), crashed.stderr[-2000:]
    assert (tmp_path / "crashed").exists()
    time.sleep(1)
    resumed = run_driver(tmp_path, servers, source, target)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "query exception: None" in resumed.stdout

    seen = committed_rows(read_committed(servers, target, 500))
    assert sorted(v for _, _, v, _ in seen) == sorted(f"RECORD-{i}".encode()
                                                      for i in range(500))
