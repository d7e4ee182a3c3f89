"""``format("kpy-python")``: kpy's data source on its pure-Python record codecs, so that a
benchmark measures the compiled codecs (:mod:`broker_lite.records._native`) against their
fallback in one run, on one SparkSession.

Spark starts the Python workers of a data source with the environment its registration carried
(``SparkContext.environment``) and keeps a pool of workers per environment. Registered while
that environment holds ``KPY_PURE_PYTHON=1``, this source's tasks run in workers of their own,
which import kpy with the pure-Python codecs, beside the workers of ``format("kpy")``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from broker_lite.records._native import PURE_PYTHON_ENV
from kspark.datasource import KpyDataSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMAT = "kpy-python"


class PurePythonKpyDataSource(KpyDataSource):
    """``format("kpy")`` under another name: the same reads and writes."""

    @classmethod
    def name(cls) -> str:
        return FORMAT


def register(spark: SparkSession) -> str:
    """Register ``format("kpy-python")`` on ``spark``, its workers on the pure-Python codecs;
    return the format's name."""
    environment = spark.sparkContext.environment
    before = environment.get(PURE_PYTHON_ENV)
    environment[PURE_PYTHON_ENV] = "1"
    try:
        spark.dataSource.register(PurePythonKpyDataSource)
    finally:
        if before is None:
            del environment[PURE_PYTHON_ENV]
        else:
            environment[PURE_PYTHON_ENV] = before
    return FORMAT
