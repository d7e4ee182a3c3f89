"""Real clients against real brokers over real sockets for the admin APIs of Kafka 3.9:
DeleteRecords, dynamic broker configs (applied to running logs, and followed by the other brokers
of a cluster), per-record Produce errors (KIP-467), and authorized operations in Metadata."""

import time

import pytest
from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclOperation,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
)

from broker_lite.common.tiers import needs
from broker_lite.records import build_batch
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

HOUR = 3_600_000


@pytest.fixture
@needs("broker", "zookeeper")
def cluster(zookeeper_connect, tmp_path):
    """Two brokers; retention checked often, so its effect shows within a test."""
    brokers = start_brokers(zookeeper_connect, tmp_path, 2, {
        "log.retention.check.interval.ms": "200", "log.segment.delete.delay.ms": "0"})
    yield brokers
    stop_brokers(brokers)


@pytest.fixture
def admin(cluster):
    return AdminClient({"bootstrap.servers": bootstrap(cluster), "log_level": 3})


def create(admin, topic: str, partitions: int = 1, config: dict | None = None) -> None:
    spec = NewTopic(topic, partitions, 1, config=config or {})
    admin.create_topics([spec], operation_timeout=20)[topic].result(30)


def leader_log(brokers, topic: str, partition: int = 0):
    wait_until(lambda: any(b.services.partitions.leader_log(topic, partition) for b in brokers),
               20, f"a leader serving {topic}-{partition}")
    return next(b.services.partitions.leader_log(topic, partition) for b in brokers
                if b.services.partitions.leader_log(topic, partition) is not None)


def produce(brokers, topic: str, count: int, partition: int = 0) -> None:
    producer = Producer({"bootstrap.servers": bootstrap(brokers), "log_level": 3})
    for i in range(count):
        producer.produce(topic, key=b"k%d" % i, value=b"v%d" % i, partition=partition)
    assert producer.flush(30) == 0


def outcome(future, timeout: float = 30):
    try:
        return future.result(timeout)
    except KafkaException as exc:
        return exc.args[0]


# -- DeleteRecords ------------------------------------------------------------------------------


def test_confluent_delete_records(cluster, admin):
    create(admin, "trim", 2)
    for partition in (0, 1):
        produce(cluster, "trim", 10, partition)
    futures = admin.delete_records([TopicPartition("trim", 0, 4), TopicPartition("trim", 1, -1)],
                                   request_timeout=20)
    results = {tp.partition: outcome(f) for tp, f in futures.items()}
    assert results[0].low_watermark == 4
    assert results[1].low_watermark == 10  # -1: the high watermark
    consumer = Consumer({"bootstrap.servers": bootstrap(cluster), "group.id": "trim-reader",
                         "auto.offset.reset": "earliest", "log_level": 3})
    try:
        assert consumer.get_watermark_offsets(TopicPartition("trim", 0), 10) == (4, 10)
        consumer.assign([TopicPartition("trim", 0, 0)])  # below the start: reset to earliest
        first = None
        deadline = time.monotonic() + 30
        while first is None and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                first = message
        assert (first.offset(), first.value()) == (4, b"v4")
    finally:
        consumer.close()


def test_delete_records_beyond_the_high_watermark_is_out_of_range(cluster, admin):
    create(admin, "short")
    produce(cluster, "short", 3)
    future = admin.delete_records([TopicPartition("short", 0, 4)])[TopicPartition("short", 0)]
    assert outcome(future).code() == KafkaError.OFFSET_OUT_OF_RANGE
    assert leader_log(cluster, "short").log_start_offset == 0


def test_kafka_python_delete_records(cluster, admin):
    from kafka import TopicPartition as KTopicPartition
    from kafka.admin import KafkaAdminClient

    create(admin, "kp-trim")
    produce(cluster, "kp-trim", 6)
    client = KafkaAdminClient(bootstrap_servers=bootstrap(cluster), request_timeout_ms=20000)
    try:
        result = client.delete_records({KTopicPartition("kp-trim", 0): 5}, timeout_ms=10000)
        assert result[KTopicPartition("kp-trim", 0)]["low_watermark"] == 5
    finally:
        client.close()
    assert leader_log(cluster, "kp-trim").log_start_offset == 5


# -- dynamic broker configs -----------------------------------------------------------------------


def set_cluster_default(brokers, name: str, value: str) -> None:
    """IncrementalAlterConfigs of the cluster-wide default (the broker resource named ""),
    with broker_lite's client: confluent-kafka and kafka-python refuse a resource without a
    name."""
    from broker_lite.client import KafkaClient
    from broker_lite.client.admin.configs import AlterConfigOp
    from broker_lite.client.admin.configs import ConfigResource as Resource

    with KafkaClient({"bootstrap.servers": bootstrap(brokers)}) as client:
        client.admin.configs.incremental_alter(
            {Resource.broker_default(): [AlterConfigOp.set(name, value)]})


def broker_configs(admin, name: str) -> dict:
    resource = ConfigResource(ConfigResource.Type.BROKER, name)
    return outcome(admin.describe_configs([resource], request_timeout=20)[resource])


def test_a_dynamic_retention_change_applies_to_existing_logs_without_a_restart(cluster, admin):
    create(admin, "aging", config={"segment.bytes": "1000"})
    log = leader_log(cluster, "aging")
    now = int(time.time() * 1000)
    for i in range(30):  # two hours old: kept by the default retention of 7 days
        log.append(build_batch([(b"k", b"x" * 100)], timestamp=now - 2 * HOUR + i))
    log.roll()
    log.append(build_batch([(b"k", b"recent")], timestamp=now))
    segments = len(log.segments)
    assert segments > 3
    time.sleep(0.5)
    assert len(log.segments) == segments  # nothing is old enough yet
    set_cluster_default(cluster, "log.retention.ms", str(HOUR))
    wait_until(lambda: len(log.segments) == 1, 20, "retention to drop the old segments")
    assert log.log_start_offset == 30
    for broker in cluster:  # both brokers follow the cluster-wide default
        wait_until(lambda b=broker: b.services.config.log_config().retention_ms == HOUR, 20,
                   f"broker {broker.broker_id} to apply the new default")
    entries = broker_configs(admin, str(cluster[1].broker_id))
    assert entries["log.retention.ms"].value == str(HOUR)
    assert entries["log.retention.ms"].source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value


def test_confluent_alter_and_describe_per_broker_configs(cluster, admin):
    first = cluster[0]
    name = str(first.broker_id)
    resource = ConfigResource(ConfigResource.Type.BROKER, name, set_config={
        "log.cleaner.backoff.ms": "500", "sasl.kerberos.min.time.before.relogin": "58000"})
    assert outcome(admin.alter_configs([resource])[resource]) is None
    assert first.services.config["log.cleaner.backoff.ms"] == 500
    wait_until(lambda: cluster[1].services.config["log.cleaner.backoff.ms"] == 15000, 5)
    entries = broker_configs(admin, name)
    backoff = entries["log.cleaner.backoff.ms"]
    assert (backoff.value, backoff.source, backoff.is_read_only) == \
        ("500", ConfigSource.DYNAMIC_BROKER_CONFIG.value, False)
    relogin = entries["sasl.kerberos.min.time.before.relogin"]  # accepted, no effect here
    assert (relogin.value, relogin.source) == ("58000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    assert entries["log.dirs"].is_read_only
    refused = ConfigResource(ConfigResource.Type.BROKER, name, incremental_configs=[
        ConfigEntry("log.dirs", "/elsewhere", incremental_operation=AlterConfigOpType.SET)])
    error = outcome(admin.incremental_alter_configs([refused])[refused])
    assert error.code() == KafkaError.INVALID_REQUEST
    assert "Cannot update these configs dynamically" in error.str()
    # the other broker: a per-broker config goes to that broker, and is only its own
    other = ConfigResource(ConfigResource.Type.BROKER, str(cluster[1].broker_id),
                           incremental_configs=[ConfigEntry(
                               "message.max.bytes", "2000000",
                               incremental_operation=AlterConfigOpType.SET)])
    assert outcome(admin.incremental_alter_configs([other])[other]) is None
    assert cluster[1].services.config["message.max.bytes"] == 2_000_000
    assert first.services.config["message.max.bytes"] == 1048588


@pytest.mark.broker
@pytest.mark.zookeeper
def test_dynamic_configs_survive_a_restart(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1)
    try:
        set_cluster_default(brokers, "log.segment.bytes", "4096")
    finally:
        stop_brokers(brokers)
    brokers = start_brokers(zookeeper_connect, tmp_path, 1)
    try:
        assert brokers[0].services.config.log_config().segment_bytes == 4096
        assert brokers[0].services.config.dynamic_default == {"log.segment.bytes": "4096"}
    finally:
        stop_brokers(brokers)


def test_kafka_python_broker_configs(cluster):
    from kafka.admin import ConfigResource as KConfigResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient

    broker = cluster[0]
    client = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{broker.port}",
                              request_timeout_ms=20000)
    try:
        result = client.alter_configs([KConfigResource(
            ConfigResourceType.BROKER, str(broker.broker_id), {"log.retention.bytes": "1048576"})],
            incremental=False)
        assert result == {"broker": {str(broker.broker_id): "OK"}}
        configs = client.describe_configs(
            [KConfigResource(ConfigResourceType.BROKER, str(broker.broker_id))])
        assert configs["broker"][str(broker.broker_id)]["log.retention.bytes"]["value"] == \
            "1048576"
    finally:
        client.close()
    assert broker.services.config.log_config().retention_bytes == 1048576


# -- per-record errors (KIP-467) -----------------------------------------------------------------


def test_a_record_without_a_key_fails_only_its_batch_naming_the_record(cluster, admin):
    create(admin, "keyed", 2, config={"cleanup.policy": "compact"})
    leader_log(cluster, "keyed", 1)
    producer = Producer({"bootstrap.servers": bootstrap(cluster), "linger.ms": 200,
                         "log_level": 3})
    reports: dict[tuple[int, bytes], KafkaError | None] = {}

    def delivered(error, message):
        reports[(message.partition(), message.value())] = error

    for i in range(5):  # records 1 and 3 of partition 0's batch have no key
        producer.produce("keyed", value=b"p0-%d" % i, key=None if i in (1, 3) else b"k%d" % i,
                         partition=0, on_delivery=delivered)
        producer.produce("keyed", value=b"p1-%d" % i, key=b"k%d" % i, partition=1,
                         on_delivery=delivered)
    assert producer.flush(30) == 0
    # librdkafka fails the records record_errors names, and the rest of their batch with a
    # generic error
    assert [reports[(0, b"p0-%d" % i)].code() for i in range(5)] == [
        KafkaError._INVALID_DIFFERENT_RECORD, KafkaError.INVALID_RECORD,
        KafkaError._INVALID_DIFFERENT_RECORD, KafkaError.INVALID_RECORD,
        KafkaError._INVALID_DIFFERENT_RECORD]
    assert all(reports[(1, b"p1-%d" % i)] is None for i in range(5))  # the other partition
    assert leader_log(cluster, "keyed", 0).log_end_offset == 0


# -- authorized operations -----------------------------------------------------------------------


def test_authorized_operations_when_asked(cluster, admin):
    create(admin, "ops")
    described = admin.describe_topics(TopicCollection(["ops"]),
                                      include_authorized_operations=True)["ops"].result(20)
    assert set(described.authorized_operations) == {
        AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
        AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS}
    not_asked = admin.describe_topics(TopicCollection(["ops"]))["ops"].result(20)
    assert not not_asked.authorized_operations
    cluster_info = admin.describe_cluster(include_authorized_operations=True).result(20)
    assert set(cluster_info.authorized_operations) == {
        AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE,
        AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE}


def test_a_topic_with_every_kafka_topic_config(cluster, admin):
    configs = {"max.compaction.lag.ms": "3600000", "message.timestamp.before.max.ms": "3600000",
               "min.insync.replicas": "1", "preallocate": "true",
               "message.downconversion.enable": "false",
               "follower.replication.throttled.replicas": "*"}
    create(admin, "all-configs", config=configs)
    resource = ConfigResource(ConfigResource.Type.TOPIC, "all-configs")
    entries = outcome(admin.describe_configs([resource])[resource])
    assert {name: entries[name].value for name in configs} == configs
    # a record from two hours ago is outside message.timestamp.before.max.ms
    producer = Producer({"bootstrap.servers": bootstrap(cluster), "log_level": 3})
    errors = []
    producer.produce("all-configs", key=b"k", value=b"v",
                     timestamp=int(time.time() * 1000) - 2 * HOUR,
                     on_delivery=lambda error, message: errors.append(error))
    producer.flush(30)
    assert errors[0].code() == KafkaError.INVALID_TIMESTAMP
