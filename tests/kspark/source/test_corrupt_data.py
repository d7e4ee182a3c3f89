"""``spark.read.format("kpy")`` over a log whose bytes were damaged on disk: a record is changed
inside a segment file of a running broker_lite, which serves the file's bytes as they are. The
read fails naming the topic, the partition and the batch's offset whatever ``failOnDataLoss``
says (corruption is not data loss, and nothing is skipped), and ``kafka.check.crcs=false``
reads the changed record as it now is."""

import pytest
from pyspark.sql import functions as F

from broker_lite.records import BatchReader

from .conftest import create_topic, produce, sample_rows

DAMAGED = 123  # the row whose value is changed on disk


def read(spark, servers, topic, **options):
    reader = (spark.read.format("kpy").option("kafka.bootstrap.servers", servers)
              .option("subscribe", topic))
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


@pytest.fixture
def damaged(broker, servers, topic_name):
    """A one-partition topic of 300 records whose record ``DAMAGED`` has one byte of its value
    changed in the segment file; the base offset of the batch holding it."""
    create_topic(servers, topic_name, 1)
    produced = produce(servers, topic_name, sample_rows(300), partition=0)
    assert produced[DAMAGED].offset == DAMAGED
    value = produced[DAMAGED].value
    assert value.endswith(b"x")
    path = broker.logs.get(topic_name, 0).segments[0].log_path
    data = path.read_bytes()
    assert data.count(value) == 1
    position = data.index(value) + len(value) - 1
    with open(path, "r+b") as segment:
        segment.seek(position)
        segment.write(b"y")  # the file the broker serves from, changed under it
    for batch in BatchReader(data):
        if batch.position <= position < batch.position + batch.size_in_bytes:
            return batch.base_offset
    raise AssertionError("the damaged byte is in no batch")


@pytest.mark.parametrize("fail_on_data_loss", ["true", "false"])
def test_a_corrupt_batch_fails_the_read_naming_where_it_is(spark, servers, topic_name, damaged,
                                                           fail_on_data_loss):
    df = read(spark, servers, topic_name, failOnDataLoss=fail_on_data_loss)
    with pytest.raises(Exception, match=f"corrupt record batch in {topic_name}-0 at offset "
                                        f"{damaged}: .*CRC"):
        df.collect()


def test_check_crcs_false_reads_the_damaged_record_as_it_is(spark, servers, topic_name,
                                                            damaged):
    df = read(spark, servers, topic_name, **{"kafka.check.crcs": "false"})
    rows = df.select("offset", F.col("value")).orderBy("offset").collect()
    assert [row.offset for row in rows] == list(range(300))
    changed = rows[DAMAGED].value
    assert changed.endswith(b"y") and changed[:-1] == sample_rows(300)[DAMAGED][1][:-1]


def test_a_bad_check_crcs_fails_at_load_naming_the_option(spark, servers):
    with pytest.raises(Exception, match=r"option .kafka\.check\.crcs.: expected true or false"):
        read(spark, servers, "t", **{"kafka.check.crcs": "sometimes"})
