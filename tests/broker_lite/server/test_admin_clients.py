"""Real admin clients against a real broker_lite over real sockets: confluent-kafka's AdminClient
and kafka-python's KafkaAdminClient create, describe, configure, grow and delete topics; a raw
OffsetForLeaderEpoch request checks the epoch end offsets after producing."""

import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from broker_lite.common.tiers import needs
from broker_lite.config.broker import BrokerConfig
from broker_lite.config.topic import TOPIC_CONFIG_NAMES
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.server.broker import Broker
from broker_lite.server.testing import call
from broker_lite.zk.testing import wait_until


@pytest.fixture
@needs("broker", "zookeeper")
def broker(zookeeper_connect, tmp_path):
    config = BrokerConfig({
        "broker.id": "1", "zookeeper.connect": zookeeper_connect,
        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path / "logs"),
        "num.partitions": "1", "log.retention.hours": "24",
    })
    started = Broker(config).start()
    yield started
    started.stop()


def bootstrap(broker) -> str:
    return f"127.0.0.1:{broker.port}"


@pytest.fixture
def admin(broker):
    return AdminClient({"bootstrap.servers": bootstrap(broker), "log_level": 3})


def wait_all(futures: dict, timeout: float = 20) -> dict:
    """Each future's result, or the KafkaError it failed with."""
    outcome = {}
    for key, future in futures.items():
        try:
            outcome[key] = future.result(timeout=timeout)
        except KafkaException as exc:
            outcome[key] = exc.args[0]
    return outcome


def topic_dirs(broker, topic: str) -> list[str]:
    """The topic's partition directories in the broker's log dir."""
    root = Path(broker.config.log_dirs[0])
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and p.name.rsplit("-", 1)[0] == topic)


def produce(broker, topic: str, partition: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap(broker), "linger.ms": 0,
                         "log_level": 3})
    errors = []
    for i in range(count):
        producer.produce(topic, value=b"v%d" % i, partition=partition,
                         on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(20) == 0
    assert errors == [None] * count


# -- confluent-kafka ---------------------------------------------------------------------------


def test_confluent_create_topics(broker, admin):
    result = wait_all(admin.create_topics([
        NewTopic("plain", num_partitions=3, replication_factor=1),
        NewTopic("compacted", num_partitions=1, replication_factor=1,
                 config={"cleanup.policy": "compact", "segment.bytes": "1048576"}),
        NewTopic("defaults"),  # -1/-1: num.partitions and default.replication.factor
    ], operation_timeout=10))
    assert result == {"plain": None, "compacted": None, "defaults": None}
    metadata = admin.list_topics(timeout=10)
    assert len(metadata.topics["plain"].partitions) == 3
    assert len(metadata.topics["defaults"].partitions) == 1
    assert all(p.leader == broker.broker_id for p in metadata.topics["plain"].partitions.values())
    log = broker.services.logs.get("compacted", 0)
    assert log is not None and log.config.cleanup_policy == ("compact",)
    assert log.config.segment_bytes == 1048576

    errors = wait_all(admin.create_topics([
        NewTopic("plain", num_partitions=1, replication_factor=1),
        NewTopic("bad/name", num_partitions=1, replication_factor=1),
        NewTopic("too-many-replicas", num_partitions=1, replication_factor=3),
        NewTopic("no-partitions", num_partitions=0, replication_factor=1),
        NewTopic("bad-config", num_partitions=1, replication_factor=1,
                 config={"no.such.config": "1"}),
        NewTopic("bad-value", num_partitions=1, replication_factor=1,
                 config={"cleanup.policy": "shred"}),
    ], operation_timeout=10))
    assert errors["plain"].code() == KafkaError.TOPIC_ALREADY_EXISTS
    assert errors["bad/name"].code() == KafkaError.TOPIC_EXCEPTION
    assert "illegal" in errors["bad/name"].str()
    assert errors["too-many-replicas"].code() == KafkaError.INVALID_REPLICATION_FACTOR
    assert errors["no-partitions"].code() == KafkaError.INVALID_PARTITIONS
    assert errors["bad-config"].code() == KafkaError.INVALID_CONFIG
    assert errors["bad-value"].code() == KafkaError.INVALID_CONFIG
    topics = admin.list_topics(timeout=10).topics
    assert not {"bad-config", "bad-value", "too-many-replicas"} & set(topics)


def test_confluent_create_topics_validate_only(broker, admin):
    result = wait_all(admin.create_topics(
        [NewTopic("checked", num_partitions=2, replication_factor=1,
                  config={"retention.ms": "1000"})], validate_only=True))
    assert result == {"checked": None}
    assert "checked" not in admin.list_topics(timeout=10).topics
    assert broker.zookeeper.client.exists("/brokers/topics/checked") is None
    failed = wait_all(admin.create_topics(
        [NewTopic("checked", num_partitions=2, replication_factor=2)], validate_only=True))
    assert failed["checked"].code() == KafkaError.INVALID_REPLICATION_FACTOR


def test_confluent_create_topics_with_manual_assignment(broker, admin):
    result = wait_all(admin.create_topics(
        # librdkafka wants the partition count too; it sends -1/-1 with the assignment
        [NewTopic("manual", num_partitions=2, replica_assignment=[[1], [1]])],
        operation_timeout=10))
    assert result == {"manual": None}
    partitions = admin.list_topics(timeout=10).topics["manual"].partitions
    assert sorted(partitions) == [0, 1]
    assert [p.replicas for p in partitions.values()] == [[1], [1]]


def test_confluent_describe_and_alter_topic_configs(broker, admin):
    wait_all(admin.create_topics([NewTopic("cfg", 1, 1, config={"retention.ms": "60000"})],
                                 operation_timeout=10))
    described = wait_all(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC,
                                                                "cfg")]))
    entries = next(iter(described.values()))
    assert set(entries) == set(TOPIC_CONFIG_NAMES)
    assert entries["retention.ms"].value == "60000"
    assert entries["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert not entries["retention.ms"].is_default
    assert entries["cleanup.policy"].value == "delete"
    assert entries["segment.bytes"].value == "1073741824"
    assert entries["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    assert entries["min.cleanable.dirty.ratio"].value == "0.5"
    assert not entries["segment.bytes"].is_read_only

    # AlterConfigs replaces the whole override set: retention.ms goes back to the broker's
    result = wait_all(admin.alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, "cfg", set_config={"cleanup.policy": "compact,delete"})]))
    assert list(result.values()) == [None]
    entries = next(iter(wait_all(admin.describe_configs(
        [ConfigResource(ConfigResource.Type.TOPIC, "cfg")])).values()))
    assert entries["cleanup.policy"].value == "compact,delete"
    assert entries["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["retention.ms"].value == str(24 * 3600 * 1000)  # log.retention.hours=24
    assert entries["retention.ms"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert broker.services.logs.get("cfg", 0).config.cleanup_policy == ("compact", "delete")

    result = wait_all(admin.incremental_alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, "cfg", incremental_configs=[
            ConfigEntry("cleanup.policy", "delete",
                        incremental_operation=AlterConfigOpType.SUBTRACT),
            ConfigEntry("max.message.bytes", "2000000",
                        incremental_operation=AlterConfigOpType.SET),
        ])]))
    assert list(result.values()) == [None]
    result = wait_all(admin.incremental_alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, "cfg", incremental_configs=[
            ConfigEntry("cleanup.policy", "delete",
                        incremental_operation=AlterConfigOpType.APPEND),
            ConfigEntry("max.message.bytes", None,
                        incremental_operation=AlterConfigOpType.DELETE),
            ConfigEntry("flush.messages", "10", incremental_operation=AlterConfigOpType.SET),
        ])]))
    assert list(result.values()) == [None]
    entries = next(iter(wait_all(admin.describe_configs(
        [ConfigResource(ConfigResource.Type.TOPIC, "cfg")])).values()))
    assert entries["cleanup.policy"].value == "compact,delete"
    assert entries["max.message.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    assert entries["flush.messages"].value == "10"
    log = broker.services.logs.get("cfg", 0)
    assert log.config.flush_messages == 10 and log.config.cleanup_policy == ("compact", "delete")

    bad = wait_all(admin.incremental_alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, "cfg", incremental_configs=[
            ConfigEntry("segment.bytes", "1", incremental_operation=AlterConfigOpType.APPEND),
        ])]))
    # not a list config: Kafka 3.9's InvalidConfigurationException
    assert next(iter(bad.values())).code() == KafkaError.INVALID_CONFIG
    bad = wait_all(admin.alter_configs([ConfigResource(
        ConfigResource.Type.TOPIC, "cfg", set_config={"segment.bytes": "lots"})]))
    assert next(iter(bad.values())).code() == KafkaError.INVALID_CONFIG
    unknown = wait_all(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC,
                                                              "nowhere")]))
    assert next(iter(unknown.values())).code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_confluent_describe_broker_configs(broker, admin):
    described = wait_all(admin.describe_configs(
        [ConfigResource(ConfigResource.Type.BROKER, str(broker.broker_id))]))
    entries = next(iter(described.values()))
    assert entries["num.partitions"].value == "1"
    assert entries["num.partitions"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert entries["log.segment.bytes"].value == "1073741824"
    assert entries["log.segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    assert entries["broker.id"].value == "1"
    assert entries["log.cleanup.policy"].value == "delete"


def test_confluent_create_partitions_and_produce(broker, admin):
    wait_all(admin.create_topics([NewTopic("grow", 1, 1)], operation_timeout=10))
    result = wait_all(admin.create_partitions([NewPartitions("grow", 3)], validate_only=True))
    assert result == {"grow": None}
    assert len(admin.list_topics(timeout=10).topics["grow"].partitions) == 1
    result = wait_all(admin.create_partitions([NewPartitions("grow", 3)], operation_timeout=10))
    assert result == {"grow": None}
    assert len(admin.list_topics(timeout=10).topics["grow"].partitions) == 3
    produce(broker, "grow", 2, 5)
    assert broker.services.logs.get("grow", 2).log_end_offset == 5
    failed = wait_all(admin.create_partitions([NewPartitions("grow", 2),
                                               NewPartitions("missing", 2)]))
    assert failed["grow"].code() == KafkaError.INVALID_PARTITIONS
    assert failed["missing"].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_confluent_delete_topics(broker, admin):
    wait_all(admin.create_topics([NewTopic("doomed", 2, 1)], operation_timeout=10))
    produce(broker, "doomed", 0, 3)
    assert topic_dirs(broker, "doomed") == ["doomed-0", "doomed-1"]
    result = wait_all(admin.delete_topics(["doomed"], operation_timeout=15))
    assert result == {"doomed": None}
    assert "doomed" not in admin.list_topics(timeout=10).topics
    assert topic_dirs(broker, "doomed") == []  # the broker waited for the data to go
    missing = wait_all(admin.delete_topics(["doomed"], operation_timeout=5))
    assert missing["doomed"].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    # the name can be used again at once
    assert wait_all(admin.create_topics([NewTopic("doomed", 1, 1)],
                                        operation_timeout=10)) == {"doomed": None}


def test_confluent_describe_cluster(broker, admin):
    cluster = admin.describe_cluster(request_timeout=10).result(timeout=10)
    assert cluster.cluster_id == broker.services.cluster_id
    assert cluster.controller.id == broker.broker_id
    assert [(n.id, n.host, n.port) for n in cluster.nodes] == [
        (broker.broker_id, "127.0.0.1", broker.port)]


# -- kafka-python --------------------------------------------------------------------------------


def test_kafka_python_admin(broker):
    from kafka.admin import ConfigResource as KConfigResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient
    from kafka.admin import NewPartitions as KNewPartitions
    from kafka.admin import NewTopic as KNewTopic

    client = KafkaAdminClient(bootstrap_servers=bootstrap(broker), request_timeout_ms=20000)
    try:
        client.create_topics([KNewTopic("kp-a", 2, 1),
                              KNewTopic("kp-b", 1, 1, topic_configs={"retention.ms": "5000"})],
                             timeout_ms=10000)
        assert {"kp-a", "kp-b"} <= set(client.list_topics())
        described = {t["name"]: t for t in client.describe_topics(["kp-a", "kp-b"])}
        assert len(described["kp-a"]["partitions"]) == 2
        assert described["kp-b"]["error_code"] == 0

        configs = client.describe_configs(
            [KConfigResource(ConfigResourceType.TOPIC, "kp-b")])
        assert configs["topic"]["kp-b"]["retention.ms"]["value"] == "5000"
        assert set(configs["topic"]["kp-b"]) == {"retention.ms"}  # only the modified ones
        every = client.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "kp-b")],
                                        config_filter="all")
        assert set(every["topic"]["kp-b"]) == set(TOPIC_CONFIG_NAMES)
        brokers = client.describe_configs(
            [KConfigResource(ConfigResourceType.BROKER, str(broker.broker_id))],
            config_filter="all")
        assert brokers["broker"][str(broker.broker_id)]["num.partitions"]["value"] == "1"

        result = client.alter_configs([KConfigResource(ConfigResourceType.TOPIC, "kp-b",
                                                       {"retention.ms": "7000"})])
        assert result == {"topic": {"kp-b": "OK"}}
        result = client.alter_configs([KConfigResource(ConfigResourceType.TOPIC, "kp-b",
                                                       {"segment.ms": "100000"})],
                                      incremental=False)
        assert result == {"topic": {"kp-b": "OK"}}
        configs = client.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "kp-b")])
        assert {k: v["value"] for k, v in configs["topic"]["kp-b"].items()} == {
            "retention.ms": "7000", "segment.ms": "100000"}

        client.create_partitions({"kp-a": KNewPartitions(4)}, timeout_ms=10000)
        assert len(client.describe_topics(["kp-a"])[0]["partitions"]) == 4

        client.delete_topics(["kp-a", "kp-b"], timeout_ms=15000)
        assert not {"kp-a", "kp-b"} & set(client.list_topics())
        wait_until(lambda: not topic_dirs(broker, "kp-a"), 5)
    finally:
        client.close()


# -- OffsetForLeaderEpoch -------------------------------------------------------------------------


def raw_request(broker, api_key: ApiKey, version: int, body: dict) -> dict:
    return call(broker.port, api_key, version, body)


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch(broker, admin, version):
    wait_all(admin.create_topics([NewTopic("epochs", 1, 1)], operation_timeout=10))
    produce(broker, "epochs", 0, 10)
    state = broker.services.partitions.state("epochs", 0)
    epoch = state.leader_epoch

    def ask(partitions, topic="epochs"):
        body = {"replica_id": -1, "topics": [{"topic": topic, "partitions": partitions}]}
        return raw_request(broker, ApiKey.OFFSET_FOR_LEADER_EPOCH, version,
                           body)["topics"][0]["partitions"]

    got = ask([
        {"partition": 0, "current_leader_epoch": epoch, "leader_epoch": epoch},
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": epoch + 1},
        {"partition": 0, "current_leader_epoch": epoch + 1, "leader_epoch": epoch},
        {"partition": 1, "current_leader_epoch": -1, "leader_epoch": epoch},
    ])
    assert [(p["error_code"], p["leader_epoch"], p["end_offset"]) for p in got] == [
        (0, epoch, 10),
        (0, -1, -1),  # newer than any epoch: unknown
        (ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1),
        (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1),
    ]
    unknown = ask([{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}],
                  topic="nowhere")
    assert unknown[0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if epoch > 0:
        fenced = ask([{"partition": 0, "current_leader_epoch": epoch - 1, "leader_epoch": 0}])
        assert fenced[0]["error_code"] == ErrorCode.FENCED_LEADER_EPOCH


def test_raw_admin_edge_cases(broker, admin):
    """Answers the clients above do not reach: duplicates, topic ids, timeouts, endpoint types."""
    created = raw_request(broker, ApiKey.CREATE_TOPICS, 7, {
        "topics": [{"name": "raw", "num_partitions": 2, "replication_factor": 1,
                    "assignments": [], "configs": [{"name": "retention.ms", "value": "1234"}]},
                   {"name": "dup", "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []},
                   {"name": "dup", "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}],
        "timeout_ms": 10000, "validate_only": False})
    raw, dup1, dup2 = created["topics"]
    assert (raw["error_code"], raw["num_partitions"], raw["replication_factor"]) == (0, 2, 1)
    configs = {c["name"]: (c["value"], c["config_source"]) for c in raw["configs"]}
    assert configs["retention.ms"] == ("1234", 1)
    assert configs["cleanup.policy"] == ("delete", 5)
    assert dup1["error_code"] == dup2["error_code"] == ErrorCode.INVALID_REQUEST

    deleted = raw_request(broker, ApiKey.DELETE_TOPICS, 6, {
        "topics": [{"name": None, "topic_id": uuid.uuid4()},
                   {"name": "absent"}],
        "timeout_ms": 5000})
    assert [r["error_code"] for r in deleted["responses"]] == [
        ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]

    # by the id Metadata reports (v6): the response names the topic, and it is gone
    made = raw_request(broker, ApiKey.CREATE_TOPICS, 7, {
        "topics": [{"name": "by-id", "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}], "timeout_ms": 10000,
        "validate_only": False})
    assert made["topics"][0]["error_code"] == 0
    metadata = raw_request(broker, ApiKey.METADATA, 12, {"topics": [{"name": "by-id"}]})
    topic_id = metadata["topics"][0]["topic_id"]
    assert topic_id.int != 0 and made["topics"][0]["topic_id"] == topic_id
    by_id = raw_request(broker, ApiKey.DELETE_TOPICS, 6, {
        "topics": [{"name": None, "topic_id": topic_id}], "timeout_ms": 10000})
    assert [(r["name"], r["error_code"]) for r in by_id["responses"]] == [("by-id", 0)]
    gone = raw_request(broker, ApiKey.METADATA, 12, {"topics": [{"name": "by-id"}],
                                                     "allow_auto_topic_creation": False})
    assert gone["topics"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    described = raw_request(broker, ApiKey.DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": 2, "resource_name": "raw",
                       "configuration_keys": ["retention.ms", "segment.ms"]}],
        "include_synonyms": True, "include_documentation": True})
    entries = {c["name"]: c for c in described["results"][0]["configs"]}
    assert set(entries) == {"retention.ms", "segment.ms"}
    assert [(s["name"], s["source"]) for s in entries["retention.ms"]["synonyms"]] == [
        ("retention.ms", 1)]
    assert entries["segment.ms"]["value"] == str(168 * 3600 * 1000)
    assert entries["segment.ms"]["config_type"] == 5  # LONG
    assert entries["segment.ms"]["documentation"]

    brokers = raw_request(broker, ApiKey.DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": 4, "resource_name": "", "configuration_keys": None},
                      {"resource_type": 4, "resource_name": "99", "configuration_keys": None},
                      {"resource_type": 8, "resource_name": "1", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})["results"]
    assert [(r["error_code"], r["configs"]) for r in brokers] == [
        (0, []), (ErrorCode.INVALID_REQUEST, []), (ErrorCode.INVALID_REQUEST, [])]

    # timeout_ms <= 0: created, but not waited for (Kafka answers REQUEST_TIMED_OUT)
    quick = raw_request(broker, ApiKey.CREATE_TOPICS, 4, {
        "topics": [{"name": "quick", "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []}], "timeout_ms": 0})
    assert quick["topics"][0]["error_code"] == ErrorCode.REQUEST_TIMED_OUT
    assert broker.zookeeper.client.exists("/brokers/topics/quick") is not None

    grown = raw_request(broker, ApiKey.CREATE_PARTITIONS, 3, {
        "topics": [{"name": "raw", "count": 4, "assignments": [{"broker_ids": [1]}]},
                   {"name": "quick", "count": 3, "assignments": [{"broker_ids": [1, 1]},
                                                                  {"broker_ids": [1, 1]}]}],
        "timeout_ms": 10000, "validate_only": False})["results"]
    assert [r["error_code"] for r in grown] == [ErrorCode.INVALID_REPLICA_ASSIGNMENT] * 2

    altered = raw_request(broker, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [{"resource_type": 2, "resource_name": "raw", "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": None}]},
            {"resource_type": 2, "resource_name": "quick", "configs": [
                {"name": "retention.ms", "config_operation": 7, "value": "1"}]},
            {"resource_type": 4, "resource_name": "1", "configs": [
                {"name": "num.partitions", "config_operation": 0, "value": "3"}]},
            {"resource_type": 2, "resource_name": "nowhere", "configs": []}],
        "validate_only": False})["responses"]
    assert [r["error_code"] for r in altered] == [  # num.partitions is read-only (KAFKA-13609)
        ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert altered[2]["error_message"] == \
        "Cannot update these configs dynamically: Set(num.partitions)"

    cluster = raw_request(broker, ApiKey.DESCRIBE_CLUSTER, 1,
                          {"include_cluster_authorized_operations": False, "endpoint_type": 2})
    assert cluster["error_code"] == ErrorCode.MISMATCHED_ENDPOINT_TYPE


@pytest.mark.broker
@pytest.mark.zookeeper
def test_delete_topics_disabled(zookeeper_connect, tmp_path):
    config = BrokerConfig({
        "broker.id": "2", "zookeeper.connect": zookeeper_connect,
        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path / "logs"),
        "delete.topic.enable": "false",
    })
    broker = Broker(config).start()
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap(broker), "log_level": 3})
        wait_all(admin.create_topics([NewTopic("kept", 1, 1)], operation_timeout=10))
        result = wait_all(admin.delete_topics(["kept"], operation_timeout=5))
        assert result["kept"].code() == KafkaError.TOPIC_DELETION_DISABLED
        time.sleep(0.2)
        assert "kept" in admin.list_topics(timeout=10).topics
    finally:
        broker.stop()
