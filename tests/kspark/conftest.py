"""One local SparkSession for every kspark test that needs Spark (starting one takes seconds):
the kpy pytest plugin's (kspark.testing.spark: local[2, 4], so a failed task is retried as on a
cluster; two shuffle partitions; UTC; a warehouse in the session's temporary directory)."""

import pytest


@pytest.fixture(scope="session")
def spark(kpy_spark):
    return kpy_spark
