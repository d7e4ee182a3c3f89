"""Spark driver JVMs that start from a class-data-sharing archive.

A Spark driver loads some 14,000 classes from pyspark's jars before it runs a job, and parses
and verifies each one; on two cores that is about half of what a short-lived driver costs
(a session and one small job: 11.4 CPU s without an archive, 6.5 with). The JVM can map
classes it loaded before from an archive instead (JDK 13+, ``-XX:ArchiveClassesAtExit`` and
``-XX:SharedArchiveFile``). The suite starts dozens of drivers: the sessions of its test
processes, and the drivers, notebooks, demos and Spark Connect servers that tests run as
processes. So at the start of a run the main pytest process records an archive once, in the
background, from a driver that runs a little of everything (SQL, Arrow to and from Python, a
Python data source, a streaming query) and then exits; the drivers started afterwards map it.
A driver started before the archive is written, or with another class path, runs as it would
without one (the JVM's messages about it are turned off).

The JVM maps an archive only when the class path it was recorded with starts the driver's class
path, and refuses any directory on that path that is not empty. spark-submit puts
``$SPARK_CONF_DIR`` first on it, so the suite points that variable at an empty directory of its
own; kpy's settings still apply (``kspark.session()`` starts from ``LOCAL_DEFAULTS``, which
equal ``conf/spark-defaults.conf``, a test checks), and log4j reads the repository's
``conf/log4j2.properties`` by name instead of from the class path.

The archive is kept in ``.pytest_cache/kpy-spark-cds/`` under a name made from the Java
runtime and the jars, so later runs reuse it. Nothing here runs when the environment sets
``SPARK_CONF_DIR`` or ``SPARK_SUBMIT_OPTS`` itself, or when the run selects no Spark test by its
``-m`` expression.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from broker_lite.zk.errors import JavaNotFoundError, ZooKeeperJarsNotFoundError
from broker_lite.zk.java import find_java, pyspark_jars_dir

ROOT = Path(__file__).resolve().parents[1]

# Every Spark driver JVM the suite starts is short-lived and does little work: most of its CPU
# goes to starting up. The client compiler alone and the serial collector cut what the JIT and
# the collector threads take of it, on machines where a test's Spark shares two cores with
# three others; the embedded ZooKeeper runs with the same flags (broker_lite/zk/server.py).
BASE_SUBMIT_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
QUIET_CDS = "-Xlog:cds=off,cds+dynamic=off"  # a missing or unusable archive is not news
LOG4J2 = f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}"

RECORDER = """
import os
import sys

from pyspark.sql.datasource import DataSource, DataSourceReader

import kspark


class Numbers(DataSource):
    @classmethod
    def name(cls):
        return "numbers"

    def schema(self):
        return "n long"

    def reader(self, schema):
        return NumbersReader()


class NumbersReader(DataSourceReader):
    def read(self, partition):
        yield from ((n,) for n in range(10))


spark = kspark.session("kpy-spark-cds", master="local[2]")
numbers = spark.range(1000).selectExpr("id % 3 as k", "cast(id as string) as v")
numbers.groupBy("k").count().collect()
spark.createDataFrame(numbers.toPandas()).mapInArrow(lambda batches: batches,
                                                     numbers.schema).collect()
spark.dataSource.register(Numbers)
spark.read.format("numbers").load().count()
query = (spark.readStream.format("rate").option("rowsPerSecond", 10).load()
         .writeStream.format("memory").queryName("rates").trigger(once=True).start())
query.awaitTermination(120)
gateway = spark.sparkContext._gateway.proc
try:  # a JVM that exits by itself writes the archive: one stopped by PySpark is killed
    spark._jvm.java.lang.System.exit(0)
except Exception:
    pass
if gateway.wait(120) != 0 or not os.path.isfile(sys.argv[1]):
    sys.exit("the driver wrote no archive")
os.replace(sys.argv[1], sys.argv[2])  # whole, under the name drivers look for
"""


def _archive_name() -> str:
    """The Java runtime and pyspark's jars, which an archive is only good for (the Java that
    spark-submit runs: ``$JAVA_HOME/bin/java``, else ``java`` on PATH, as the embedded
    ZooKeeper finds it)."""
    jars = pyspark_jars_dir()
    identity = hashlib.sha256()
    for part in (os.path.realpath(find_java()), sys.executable, str(jars),
                 *sorted(p.name for p in jars.glob("*.jar"))):
        identity.update(part.encode() + b"\0")
    return f"spark-{version('pyspark')}-{identity.hexdigest()[:16]}.jsa"


def _submit_opts(archive_flag: str) -> str:
    """The drivers' JVM flags with ``archive_flag``, which records or maps the archive."""
    return " ".join((BASE_SUBMIT_OPTS, archive_flag, QUIET_CDS, LOG4J2))


# Held so that the recording's Popen is not collected (and warned about) while it runs.
_recorder: subprocess.Popen | None = None


def _selects_spark(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", "") or ""
    return "not spark" not in markexpr


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the main process set it up; workers inherit
        return
    if "SPARK_SUBMIT_OPTS" in os.environ or "SPARK_CONF_DIR" in os.environ:
        os.environ.setdefault("SPARK_SUBMIT_OPTS", BASE_SUBMIT_OPTS)
        return
    os.environ["SPARK_SUBMIT_OPTS"] = BASE_SUBMIT_OPTS
    if not _selects_spark(config):
        return
    cache = ROOT / ".pytest_cache" / "kpy-spark-cds"
    conf_dir = cache / "conf"  # empty: see the module docstring
    conf_dir.mkdir(parents=True, exist_ok=True)
    if any(conf_dir.iterdir()):
        return
    try:
        archive = cache / _archive_name()
    except (JavaNotFoundError, ZooKeeperJarsNotFoundError):
        return  # no Spark to start: its tests fail saying so
    os.environ["SPARK_CONF_DIR"] = str(conf_dir)
    os.environ["SPARK_SUBMIT_OPTS"] = _submit_opts(f"-XX:SharedArchiveFile={archive}")
    if archive.is_file():
        return
    for stale in cache.glob("*.part"):  # left by a recording that was killed
        if time.time() - stale.stat().st_mtime > 3600:
            stale.unlink(missing_ok=True)
    for other in cache.glob("spark-*.jsa"):  # for another Java or pyspark: 170 MB each
        other.unlink(missing_ok=True)
    partial = archive.with_suffix(f".{os.getpid()}.part")
    env = {**os.environ, "SPARK_SUBMIT_OPTS": _submit_opts(f"-XX:ArchiveClassesAtExit={partial}")}
    # In a session of its own, so that it finishes (in about a minute) even after a short run
    # has ended: the next run finds the archive.
    global _recorder
    with open(cache / "record.log", "wb") as log:
        _recorder = subprocess.Popen(
            [sys.executable, "-c", RECORDER, str(partial), str(archive)],
            env=env, cwd=cache, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
