"""format("kpy") over SASL_SSL with SCRAM-SHA-512 and inline TLS material, against a
broker_lite broker's SASL_SSL listener (the plugin's ``kpy_secured_brokers``): a write and a
batch read (the settings reach the executors' clients), and no secret in ``explain()`` or a
failed query's exception text."""

import uuid

import pytest

PASSWORD = "etl-secret-password"


@pytest.fixture
def secured_servers(kpy_secured_brokers):
    cluster = kpy_secured_brokers("SASL_SSL", users={"etl": PASSWORD},
                                  mechanisms=("SCRAM-SHA-512",))
    return cluster.bootstrap_servers, cluster.security.ca


def secured_options(servers, ca, password=PASSWORD):
    return {"kafka.bootstrap.servers": servers, "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                      f'required username="etl" password="{password}";',
            "kafka.ssl.truststore.certificates": ca.certificate_pem}


def test_write_and_read_over_sasl_ssl_without_showing_secrets(spark, secured_servers):
    servers, ca = secured_servers
    topic = f"secured-{uuid.uuid4().hex[:6]}"
    options = secured_options(servers, ca)
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(20)],
                                 "key string, value string")
    rows.write.format("kpy").mode("append").options(**options).option("topic", topic).save()
    df = spark.read.format("kpy").options(**options).option("subscribe", topic).load()
    got = sorted(r.value.decode() for r in df.select("value").collect())
    assert got == sorted(f"v{i}" for i in range(20))
    plan = df._jdf.queryExecution().toString()
    assert PASSWORD not in plan and "PRIVATE KEY" not in plan
    wrong = secured_options(servers, ca, password="not-the-password")
    with pytest.raises(Exception, match="SASL_AUTHENTICATION_FAILED") as failure:
        spark.read.format("kpy").options(**wrong).option("subscribe", topic).load().collect()
    assert "not-the-password" not in str(failure.value) and PASSWORD not in str(failure.value)


def test_streaming_read_with_group_commits_and_exactly_once_write_over_sasl_ssl(
        spark, kpy_secured_brokers, tmp_path):
    """The streaming path over SASL_SSL with SCRAM and inline PEM: a stream read committing
    its progress to the query's group, written exactly once (transactions) to another topic;
    the driver's log, the progress JSON and the plan carry no secret."""
    import json
    import logging

    from broker_lite.client import KafkaClient, TopicPartition
    from broker_lite.client.types import LATEST

    cluster = kpy_secured_brokers("SASL_SSL", users={"etl": PASSWORD},
                                  mechanisms=("SCRAM-SHA-512",))
    servers, ca = cluster.bootstrap_servers, cluster.security.ca
    options = secured_options(servers, ca)
    source, sink = (f"secured-{uuid.uuid4().hex[:6]}" for _ in range(2))
    settings = cluster.client_settings("etl", "SCRAM-SHA-512")
    with KafkaClient(settings) as client:
        client.admin.create_topics([(source, 2, 1), (sink, 1, 1)])
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(40)],
                                 "key string, value string")
    rows.write.format("kpy").mode("append").options(**options).option("topic", source).save()
    group = f"etl-{uuid.uuid4().hex[:6]}"
    logs = []

    class Capture(logging.Handler):
        def emit(self, record):
            logs.append(self.format(record))

    capture = Capture(logging.DEBUG)
    logging.getLogger().addHandler(capture)
    try:
        stream = (spark.readStream.format("kpy").options(**options)
                  .option("subscribe", source).option("startingOffsets", "earliest")
                  .option("maxOffsetsPerTrigger", "15").option("kafka.group.id", group).load())
        query = (stream.selectExpr("key", "upper(cast(value as string)) as value")
                 .writeStream.format("kpy").options(**options).option("topic", sink)
                 .option("checkpointLocation", str(tmp_path / "cp"))
                 .trigger(availableNow=True).start())
        assert query.awaitTermination(240)
        assert query.exception() is None, query.exception()
        progress = json.dumps([p.json if hasattr(p, "json") else p for p in query.recentProgress],
                              default=str)
    finally:
        logging.getLogger().removeHandler(capture)
    written = spark.read.format("kpy").options(**options).option("subscribe", sink).load()
    got = sorted(r.value.decode() for r in written.select("value").collect())
    assert got == sorted(f"V{i}" for i in range(40))  # each once, committed
    with KafkaClient(settings) as client:
        committed = client.committed(group)
        ends = client.list_offsets({TopicPartition(source, p): LATEST for p in range(2)})
    assert committed == ends  # the query's progress, in its consumer group, to the end
    for text in (progress, *logs, written._jdf.queryExecution().toString()):
        assert PASSWORD not in text and "PRIVATE KEY" not in text
