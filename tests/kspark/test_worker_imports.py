"""Spark starts Python processes that unpickle the source and work with it: a fresh one per
streaming query for the stream reader (PySpark's ``python_streaming_source_runner``, which makes
the reader and asks it for offsets and partitions on the driver), and new workers as it needs
them. Each imports ``kspark.datasource`` and ``kspark.source`` before it does anything, so what
those import is paid at every start: the producer, the admin clients, the transactions and the
broker's own configuration stay out until something asks for them, and the driver's process,
which decodes no record and, on a PLAINTEXT cluster, authenticates nothing, loads neither the
record decoder and codecs nor the TLS and SASL modules, nor the schemas of the APIs it does not
speak. The process that states the schema at every ``load()`` (PySpark's
``create_data_source``) imports neither pyarrow nor the client's connections."""

import json
import subprocess
import sys

NOT_FOR_READING = ["broker_lite.client.admin.admin", "broker_lite.client.producer.producer",
                   "broker_lite.client.producer.sender", "broker_lite.client.producer.transactions",
                   "broker_lite.client.admin.acls", "broker_lite.client.admin.groups",
                   "broker_lite.config.broker", "kspark.sink"]

NOT_ON_THE_DRIVER = [
    *NOT_FOR_READING,
    # reading records: the executors' work
    "broker_lite.client.consumer.partition_reader", "broker_lite.client.consumer.aborted",
    "broker_lite.records.arrow.decode", "broker_lite.records.arrow.fields",
    "broker_lite.records.reader", "broker_lite.records.record_batch",
    "broker_lite.records.compression", "zstandard", "lz4", "snappy", "xxhash", "crc32c",
    # TLS and SASL: only for a cluster that asks for them
    "broker_lite.security.tls", "broker_lite.security.sasl_client",
    "broker_lite.security.scram", "broker_lite.security.oauthbearer", "broker_lite.security.jwks",
    "cryptography",
    # the schemas of APIs the stream reader does not speak
    "broker_lite.protocol.messages.produce", "broker_lite.protocol.messages.fetch",
    "broker_lite.protocol.messages.transactions", "broker_lite.protocol.messages.acls",
]

# What the streaming source runner does with the source: unpickle it (importing
# kspark.datasource), make the stream reader, and ask it for the first batch.
DRIVER = """
import pickle
from pyspark.sql.streaming.datasource import ReadAllAvailable
from kspark.datasource import KpyDataSource
source = KpyDataSource({options!r})
source.schema()  # what the planning process does before pickling the source
reader = pickle.loads(pickle.dumps(source)).streamReader(None)
assert type(reader).__name__ == "KpyStreamReader", reader
if {offsets!r}:
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    ranges = reader.partitions(start, end)
    reader.commit(end)
    reader.stop()
    print(json.dumps([start, end, [(r.start, r.end) for r in ranges]]))
"""


def run_fresh(statement: str) -> tuple[list[str], set[str]]:
    """What ``statement`` prints in a fresh interpreter, and the modules loaded after it."""
    out = subprocess.run([sys.executable, "-c", f"import json, sys\n{statement}\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True,
                         timeout=120).stdout.splitlines()
    return out[:-1], set(json.loads(out[-1]))


def loaded_after(statement: str) -> set[str]:
    return run_fresh(statement)[1]


def test_the_source_loads_no_producer_admin_or_broker_configuration():
    loaded = loaded_after("import kspark.datasource, kspark.source.batch, kspark.source.stream")
    assert "broker_lite.client.client" in loaded  # the reading client itself is there
    assert sorted(loaded & set(NOT_FOR_READING)) == []


def test_the_schema_is_stated_without_arrow_or_the_client_connections():
    # Spark's create_data_source worker, at every load(): it makes the source and calls schema()
    loaded = loaded_after("from kspark.datasource import KpyDataSource\n"
                          "KpyDataSource({'kafka.bootstrap.servers': 'b:9', 'subscribe': 't'})"
                          ".schema()")
    assert "kspark.options" in loaded
    assert sorted(loaded & {"pyarrow", "numpy", "broker_lite.client.cluster.connection",
                            "broker_lite.protocol.apis", *NOT_ON_THE_DRIVER}) == []


def test_the_stream_reader_is_made_without_decoder_codecs_security_or_admin():
    loaded = loaded_after(DRIVER.format(options={"kafka.bootstrap.servers": "127.0.0.1:9",
                                                 "subscribe": "events"}, offsets=False))
    assert {"kspark.source.stream", "kspark.spark_ddl"} <= loaded
    assert sorted(loaded & set(NOT_ON_THE_DRIVER)) == []


def test_the_stream_readers_offsets_and_commits_load_no_more(kpy_bootstrap_servers, kpy_topic,
                                                             kpy_produce, kpy_client):
    topic = kpy_topic(2)
    kpy_produce(topic, [b"a", b"b", b"c"])
    options = {"kafka.bootstrap.servers": kpy_bootstrap_servers, "subscribe": topic,
               "startingOffsets": "earliest", "kafka.group.id": f"{topic}-query"}
    printed, loaded = run_fresh(DRIVER.format(options=options, offsets=True))
    start, end, ranges = json.loads(printed[0])
    assert start == {topic: {"0": 0, "1": 0}}
    assert sum(e - s for s, e in ranges) == 3 == sum(end[topic].values())
    assert sum(kpy_client.committed(f"{topic}-query").values()) == 3
    assert {"broker_lite.protocol.messages.offsets",
            "broker_lite.client.consumer.group_offsets"} <= loaded
    assert sorted(loaded & set(NOT_ON_THE_DRIVER)) == []


def test_a_secured_client_loads_its_tls_and_sasl_modules_when_made():
    loaded = loaded_after(
        "from broker_lite.client import ClientConfig\n"
        "config = ClientConfig({'bootstrap.servers': 'b:9093', 'security.protocol': 'SASL_SSL',"
        " 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.jaas.config': 'org.apache.kafka.common."
        "security.scram.ScramLoginModule required username=\"u\" password=\"p\";'})\n"
        "assert config.ssl_context is not None and config.sasl.mechanism == 'SCRAM-SHA-512'")
    assert {"ssl", "broker_lite.security.tls", "broker_lite.security.scram"} <= loaded


def test_the_client_package_gives_every_name_it_lists_when_asked():
    loaded = loaded_after("from broker_lite.client import Producer, KafkaClient\n"
                          "import broker_lite.client as c\n"
                          "assert all(getattr(c, name) for name in c.__all__)")
    assert {"broker_lite.client.producer.producer", "broker_lite.client.admin.admin"} <= loaded
