"""The SparkSession of a test session: local, small, quiet, in UTC.

One per test process (starting Spark takes seconds, and a JVM holds one SparkContext), built by
:func:`kspark.session` so ``format("kpy")`` is registered and the Python workers run this
interpreter. On top of kpy's local defaults (and the repository's ``conf/``, in a checkout):

* ``local[2, 4]``: two task threads, and a failed task is retried up to 4 attempts as on a
  cluster (plain ``local[2]`` never retries), so tests see retries and fencing happen;
* two shuffle partitions; the session time zone UTC, so timestamps print the same everywhere;
* a warehouse directory of the test session's own; a running streaming query gets 30 s to stop;
* only errors logged once the session runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2, 4]"
TEST_CONFIG = {
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stopTimeout": "30s",
}


def start_test_session(warehouse_dir: str | Path, *, master: str = DEFAULT_MASTER,
                       app_name: str = "kpy-tests", config: dict[str, str] | None = None
                       ) -> tuple[SparkSession, bool]:
    """The test SparkSession, and whether this call started it (False when a session was
    running already: it is returned as it is, and whoever started it stops it)."""
    from pyspark import SparkContext

    import kspark

    running = SparkContext._active_spark_context is not None
    spark = kspark.session(app_name, master=master, config={
        **TEST_CONFIG, "spark.sql.warehouse.dir": str(warehouse_dir), **(config or {})})
    if not running:
        spark.sparkContext.setLogLevel("ERROR")
    return spark, not running
