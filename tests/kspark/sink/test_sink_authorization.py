"""The exactly-once sink on a cluster whose ACLs allow only what Spark's own (at-least-once)
Kafka sink needs: Write, Read and Describe on the topics, no TransactionalId or Group ACL. The
write fails saying which principal was refused what, every ACL the exactly-once default needs
and the ``kpy.sink.guarantee=at_least_once`` alternative, and leaves nothing that
read_committed readers see; the alternative then writes with the same ACLs."""

import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.client import KafkaClient
from broker_lite.server.testing import bootstrap
from kspark.testing.topics import read_topic


def records(servers: str, topic: str, isolation_level: str) -> list[bytes]:
    with KafkaClient({"bootstrap.servers": servers}) as client:
        return [row["value"] for row in read_topic(client, topic,
                                                   isolation_level=isolation_level)]


def test_exactly_once_without_transactional_id_acls_says_what_to_grant(spark, acl_broker):
    servers, topic = bootstrap(acl_broker), f"acl-out-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    rows = spark.createDataFrame([(f"v{i}",) for i in range(20)], "value string").coalesce(1)
    with pytest.raises(Exception) as refused:  # Spark wraps the task's error
        rows.write.format("kpy").option("kafka.bootstrap.servers", servers) \
            .option("topic", topic).mode("append").save()
    message = str(refused.value)
    # refused on the driver, before any task ran (and retried)
    assert "Failed to initialize Python data source writer" in message
    assert "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" in message
    assert "the kpy sink's principal User:ANONYMOUS may not Write TransactionalId 'kpy-" in message
    assert ("needs these ACLs for User:ANONYMOUS: Write and Describe on TransactionalId prefix "
            "'kpy-', Read on Group prefix 'kpy-sink-', and Write, Describe and Read on the "
            "topics written") in message
    assert "kpy.sink.guarantee=at_least_once" in message
    assert records(servers, topic, "read_committed") == []
    assert records(servers, topic, "read_uncommitted") == []  # nor anything at all

    # the alternative works with the ACLs given (Write on a topic: KIP-679's idempotence)
    rows.write.format("kpy").option("kafka.bootstrap.servers", servers) \
        .option("topic", topic).option("kpy.sink.guarantee", "at_least_once") \
        .mode("append").save()
    assert sorted(records(servers, topic, "read_committed")) == sorted(
        f"v{i}".encode() for i in range(20))
