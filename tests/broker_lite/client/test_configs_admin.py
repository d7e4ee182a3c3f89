"""ConfigsAdmin: DescribeConfigs entries with sources and synonyms and IncrementalAlterConfigs,
as bodies and answers (sans I/O), then against a real broker."""

import time

import pytest

from broker_lite.client import KafkaClient
from broker_lite.client.admin.configs import (
    AlterConfigOp,
    ConfigResource,
    describe_configs_request,
    incremental_alter_configs_request,
    parse_alter_configs,
    parse_describe_configs,
)
from broker_lite.client.errors import (
    BrokerNotAvailableError,
    InvalidArgumentError,
    InvalidConfigurationError,
    InvalidRequestError,
    UnknownTopicOrPartitionError,
)
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_request
from broker_lite.protocol.config_entry import ConfigEntry, ConfigSynonym
from broker_lite.protocol.enums import AlterConfigOpType, ConfigSource
from broker_lite.server.testing import bootstrap

TOPIC = ConfigResource.topic("events")


def config(name: str, value: str | None, source: int, *, synonyms=(), default=False) -> dict:
    return {"name": name, "value": value, "read_only": False, "is_default": default,
            "config_source": source, "is_sensitive": False,
            "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in synonyms]}


def result(resource: ConfigResource, configs: list[dict], error: int = 0) -> dict:
    return {"error_code": error, "error_message": "the broker's reason" if error else None,
            "resource_type": resource.type, "resource_name": resource.name, "configs": configs}


# -- requests and responses -----------------------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 5))
def test_describe_requests_encode_in_every_version(version):
    body = describe_configs_request([TOPIC, ConfigResource.broker(1)], include_synonyms=True)
    _, decoded = parse_request(encode_request(ApiKey.DESCRIBE_CONFIGS, version, 1, "t", body)[4:])
    assert [(r["resource_type"], r["resource_name"]) for r in decoded["resources"]] == [
        (2, "events"), (4, "1")]


def test_entries_carry_their_source_and_synonyms():
    body = {"results": [result(TOPIC, [
        config("retention.ms", "60000", 1, synonyms=[("retention.ms", "60000", 1),
                                                      ("log.retention.hours", "168", 5)]),
        config("segment.bytes", "1073741824", 5, default=True),
        config("odd", None, 42)])]}
    entries = parse_describe_configs(body, 4)[TOPIC]
    assert entries[0] == ConfigEntry("retention.ms", "60000", ConfigSource.DYNAMIC_TOPIC_CONFIG,
                                     synonyms=(
                                         ConfigSynonym("retention.ms", "60000",
                                                       ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                         ConfigSynonym("log.retention.hours", "168",
                                                       ConfigSource.DEFAULT_CONFIG)))
    assert [e.is_default for e in entries] == [False, True, False]
    assert entries[2].source == ConfigSource.UNKNOWN  # a source this client does not know


def test_version_0_says_only_whether_a_value_is_the_default():
    body = {"results": [result(TOPIC, [
        {"name": "a", "value": "1", "read_only": False, "is_default": True,
         "is_sensitive": False},
        {"name": "b", "value": "2", "read_only": True, "is_default": False,
         "is_sensitive": True}])]}
    a, b = parse_describe_configs(body, 0)[TOPIC]
    assert (a.source, a.is_default) == (ConfigSource.DEFAULT_CONFIG, True)
    assert (b.source, b.read_only, b.sensitive) == (ConfigSource.UNKNOWN, True, True)


def test_an_unknown_topic_is_a_final_error_naming_it():
    body = {"results": [result(TOPIC, [], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]}
    error = parse_describe_configs(body, 4)[TOPIC]
    assert isinstance(error, UnknownTopicOrPartitionError)
    assert error.retriable is False
    assert "topic events" in str(error) and "the broker's reason" in str(error)


@pytest.mark.parametrize("version", [0, 1])
def test_incremental_alter_requests_encode(version):
    ops = [AlterConfigOp.set("retention.ms", "1000"), AlterConfigOp.delete("segment.ms"),
           AlterConfigOp("cleanup.policy", AlterConfigOpType.APPEND, "compact")]
    body = incremental_alter_configs_request({TOPIC: ops}, validate_only=True)
    _, decoded = parse_request(
        encode_request(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, 1, "t", body)[4:])
    assert decoded["validate_only"] is True
    assert [(c["name"], c["config_operation"], c["value"])
            for c in decoded["resources"][0]["configs"]] == [
        ("retention.ms", 0, "1000"), ("segment.ms", 1, None), ("cleanup.policy", 2, "compact")]


def test_alter_answers_per_resource():
    body = {"responses": [
        {"error_code": 0, "error_message": None, "resource_type": 2, "resource_name": "a"},
        {"error_code": ErrorCode.INVALID_CONFIG, "error_message": "Unknown topic config name: x",
         "resource_type": 2, "resource_name": "b"}]}
    results = parse_alter_configs(body)
    assert results[ConfigResource.topic("a")] is None
    error = results[ConfigResource.topic("b")]
    assert isinstance(error, InvalidConfigurationError)
    assert "Unknown topic config name: x" in str(error)


def test_set_without_a_value_is_refused_before_sending():
    with KafkaClient({"bootstrap.servers": "127.0.0.1:9"}) as client:
        with pytest.raises(InvalidArgumentError, match="needs a value"):
            client.admin.configs.incremental_alter({TOPIC: [AlterConfigOp("a", 0, None)]})


# -- against a broker -----------------------------------------------------------------------------


@pytest.fixture
def client(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": 10000}) as c:
        yield c


def entries(client, resource: ConfigResource) -> dict[str, ConfigEntry]:
    found = client.admin.configs.describe([resource], include_synonyms=True)[resource]
    return {e.name: e for e in found}


def test_topic_overrides_are_set_appended_and_deleted(client):
    client.admin.create_topics([("events", 1, 1, {"retention.ms": "60000"})])
    before = entries(client, TOPIC)
    assert before["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert before["retention.ms"].synonyms[0] == ConfigSynonym(
        "retention.ms", "60000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert before["segment.ms"].is_default
    client.admin.configs.incremental_alter({TOPIC: [
        AlterConfigOp.set("segment.ms", "120000"), AlterConfigOp.delete("retention.ms"),
        AlterConfigOp("cleanup.policy", AlterConfigOpType.APPEND, "compact")]})
    after = entries(client, TOPIC)
    assert (after["segment.ms"].value, after["segment.ms"].source) == (
        "120000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert after["retention.ms"].is_default
    assert after["cleanup.policy"].value == "delete,compact"
    assert client.admin.describe_configs("events")["segment.ms"] == "120000"


def test_validate_only_changes_nothing(client):
    client.admin.create_topics([("events", 1, 1)])
    client.admin.configs.incremental_alter({TOPIC: [AlterConfigOp.set("segment.ms", "5000")]},
                                           validate_only=True)
    assert entries(client, TOPIC)["segment.ms"].is_default


def test_bad_names_and_values_are_the_brokers_invalid_config(client):
    client.admin.create_topics([("events", 1, 1)])
    with pytest.raises(InvalidConfigurationError, match="bogus"):
        client.admin.configs.incremental_alter({TOPIC: [AlterConfigOp.set("bogus", "1")]})
    with pytest.raises(InvalidConfigurationError):
        client.admin.configs.incremental_alter({TOPIC: [AlterConfigOp.set("segment.ms", "x")]})


def test_an_unknown_topic_fails_at_once(client):
    started = time.monotonic()
    with pytest.raises(UnknownTopicOrPartitionError, match="missing"):
        client.admin.configs.describe([ConfigResource.topic("missing")])
    with pytest.raises(UnknownTopicOrPartitionError, match="missing"):
        client.admin.configs.incremental_alter(
            {ConfigResource.topic("missing"): [AlterConfigOp.set("segment.ms", "1000")]})
    assert time.monotonic() - started < 9  # not retried until the 10 s request timeout


def test_broker_configs_are_described_by_that_broker_and_read_only_ones_refused(client, broker):
    resource = ConfigResource.broker(broker.broker_id)
    found = entries(client, resource)
    assert found["broker.id"].value == str(broker.broker_id)
    assert found["broker.id"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert found["broker.id"].read_only
    with pytest.raises(InvalidRequestError, match="Cannot update these configs dynamically"):
        client.admin.configs.incremental_alter(
            {resource: [AlterConfigOp.set("log.dirs", "/elsewhere")]})


def test_a_broker_not_in_the_cluster_is_named(client):
    with pytest.raises(BrokerNotAvailableError, match="broker 42 is not in the cluster") as raised:
        client.admin.configs.describe([ConfigResource.broker(42)])
    assert raised.value.retriable is False
    with pytest.raises(InvalidArgumentError):
        client.admin.configs.describe([ConfigResource(4, "one")])
