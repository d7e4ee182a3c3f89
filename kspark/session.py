"""SparkSessions for kpy: ``kspark.session()`` builds a local one ready to use, and
``kspark.register(spark)`` makes ``format("kpy")`` known to a session built elsewhere.

An installed kpy is found by Spark on its own (see ``pyspark_kpy``); registering explicitly is
for editable installs and sessions whose Python workers cannot import the installed package.
Spark's Python workers must run the interpreter that has kpy installed: ``session()`` sets
that up (``spark.pyspark.python``); elsewhere set ``PYSPARK_PYTHON`` to that interpreter.
"""

import os
import sys

from pyspark.sql import SparkSession

# A local session that starts fast and stays quiet: few shuffle partitions, no web UI.
LOCAL_DEFAULTS = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.python.worker.reuse": "true",
}


def register(spark: SparkSession) -> SparkSession:
    """Register ``format("kpy")`` with ``spark``; returns ``spark``."""
    from kspark.datasource import KpyDataSource

    spark.dataSource.register(KpyDataSource)
    return spark


def session(app_name: str = "kpy", master: str = "local[*]",
            config: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession (the active one if there is one) with ``format("kpy")`` registered and
    Python workers running this interpreter; ``config`` overrides the local defaults."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(master)
    for key, value in {**LOCAL_DEFAULTS, "spark.pyspark.python": sys.executable,
                       **(config or {})}.items():
        builder = builder.config(key, value)
    return register(builder.getOrCreate())
