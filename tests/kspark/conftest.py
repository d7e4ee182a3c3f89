"""One local SparkSession for every kspark test that needs Spark (starting one takes seconds)."""

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    import kspark

    # local[2, 4]: two threads, and a failed task is retried (up to 4 attempts) as on a cluster
    session = kspark.session("kpy-tests", master="local[2, 4]", config={
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.streaming.stopTimeout": "30s",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("warehouse")),
    })
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
