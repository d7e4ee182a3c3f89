"""DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, CreateTopics and DeleteTopics over the
topic admin: requests translated, refusals mapped to error codes, per resource or topic."""

import pytest

from broker_lite.config_resolution import ConfigSource
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.zk.admin import TopicSpec
from broker_lite.zk.errors import (
    ConflictingTopicSettingsError,
    InvalidReplicationFactorError,
    TopicExistsError,
)

from .handler_support import BROKER_ID

TOPIC, BROKER, GROUP = 2, 4, 3


def describe(harness, *resources, version: int = 4, **flags) -> list[dict]:
    return harness.call(ApiKey.DESCRIBE_CONFIGS, version, {
        "resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": keys}
                      for kind, name, keys in resources], **flags})["results"]


def test_describe_topic_and_broker_configs(harness):
    harness.topic("events", [BROKER_ID])
    harness.services.admin.configs["events"] = {"cleanup.policy": "compact"}
    topic, broker = describe(harness, (TOPIC, "events", ["cleanup.policy", "segment.bytes"]),
                             (BROKER, str(BROKER_ID), ["log.segment.bytes"]),
                             include_synonyms=True)
    assert topic["error_code"] == 0
    policy, segment = topic["configs"]
    assert (policy["name"], policy["value"], policy["config_source"], policy["read_only"]) == \
        ("cleanup.policy", "compact", ConfigSource.DYNAMIC_TOPIC_CONFIG, False)
    assert [s["name"] for s in policy["synonyms"]] == ["cleanup.policy", "log.cleanup.policy"]
    assert (segment["value"], segment["is_default"]) == ("1073741824", True)
    [broker_entry] = broker["configs"]
    assert (broker_entry["name"], broker_entry["read_only"], broker_entry["documentation"]) == \
        ("log.segment.bytes", True, None)


@pytest.mark.parametrize("resource,error", [
    ((TOPIC, "missing", None), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ((TOPIC, "a/b", None), ErrorCode.INVALID_TOPIC_EXCEPTION),
    ((BROKER, "7", None), ErrorCode.INVALID_REQUEST),
    ((BROKER, "one", None), ErrorCode.INVALID_REQUEST),
    ((GROUP, "g", None), ErrorCode.INVALID_REQUEST),
])
def test_describe_refusals(harness, resource, error):
    [result] = describe(harness, resource)
    assert result["error_code"] == error and result["error_message"]


def alter(harness, api: ApiKey, name: str, configs: list[dict], kind: int = TOPIC,
          validate_only: bool = False) -> dict:
    version = 2 if api == ApiKey.ALTER_CONFIGS else 1
    [response] = harness.call(api, version, {"resources": [
        {"resource_type": kind, "resource_name": name, "configs": configs}],
        "validate_only": validate_only})["responses"]
    return response


def test_alter_configs_replaces_the_overrides(harness):
    harness.topic("events", [BROKER_ID])
    admin = harness.services.admin
    admin.configs["events"] = {"retention.ms": "1000"}
    response = alter(harness, ApiKey.ALTER_CONFIGS, "events",
                     [{"name": "cleanup.policy", "value": "compact"},
                      {"name": "segment.ms", "value": None}])
    assert response["error_code"] == 0
    assert admin.configs["events"] == {"cleanup.policy": "compact"}
    alter(harness, ApiKey.ALTER_CONFIGS, "events", [], validate_only=True)
    assert admin.configs["events"] == {"cleanup.policy": "compact"}  # validated only


def test_incremental_alter_configs_edits_the_overrides(harness):
    harness.topic("events", [BROKER_ID])
    admin = harness.services.admin
    admin.configs["events"] = {"retention.ms": "1000"}
    response = alter(harness, ApiKey.INCREMENTAL_ALTER_CONFIGS, "events", [
        {"name": "cleanup.policy", "config_operation": 2, "value": "compact"},
        {"name": "retention.ms", "config_operation": 1, "value": None}])
    assert response["error_code"] == 0
    assert admin.configs["events"] == {"cleanup.policy": "delete,compact"}


@pytest.mark.parametrize("api,configs,error,message", [
    (ApiKey.ALTER_CONFIGS, [{"name": "x", "value": "1"}], ErrorCode.INVALID_CONFIG,
     "Unknown topic config name: x"),
    (ApiKey.ALTER_CONFIGS, [{"name": "retention.ms", "value": "soon"}], ErrorCode.INVALID_CONFIG,
     "Invalid config value for resource ConfigResource(type=TOPIC, name='events'): "),
    (ApiKey.ALTER_CONFIGS, [{"name": "retention.ms", "value": "1"}] * 2,
     ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS,
     [{"name": "retention.ms", "config_operation": 2, "value": "1"}], ErrorCode.INVALID_REQUEST,
     "Config value append is not allowed for config key: retention.ms"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS,
     [{"name": "retention.ms", "config_operation": 9, "value": "1"}], ErrorCode.INVALID_REQUEST,
     "Unknown operation type 9"),
])
def test_alter_refusals(harness, api, configs, error, message):
    harness.topic("events", [BROKER_ID])
    response = alter(harness, api, "events", configs)
    assert response["error_code"] == error and response["error_message"].startswith(message)
    assert harness.services.admin.configs.get("events") is None


def test_broker_configs_cannot_be_altered(harness):
    response = alter(harness, ApiKey.ALTER_CONFIGS, str(BROKER_ID),
                     [{"name": "log.retention.ms", "value": "1"}], kind=BROKER)
    assert response["error_code"] == ErrorCode.INVALID_CONFIG


# -- CreateTopics and DeleteTopics ----------------------------------------------------------


def create(harness, *topics: dict, version: int = 5, validate_only: bool = False) -> list:
    return harness.call(ApiKey.CREATE_TOPICS, version, {"topics": [
        {"num_partitions": -1, "replication_factor": -1, "assignments": [], "configs": [], **t}
        for t in topics], "timeout_ms": 5000, "validate_only": validate_only})["topics"]


def test_create_topics_answers_each_topic(harness):
    created, twice, _ = create(
        harness, {"name": "fresh", "num_partitions": 2,
                  "configs": [{"name": "cleanup.policy", "value": "compact"}]},
        {"name": "twice"}, {"name": "twice"})
    assert (created["error_code"], created["num_partitions"], created["replication_factor"]) == \
        (0, 2, 1)
    assert created["topic_id"] == harness.cluster.topic("fresh").topic_id
    assert {c["name"]: c["value"] for c in created["configs"]}["cleanup.policy"] == "compact"
    assert (twice["error_code"], twice["error_message"]) == \
        (ErrorCode.INVALID_REQUEST, "Found multiple entries for this topic.")
    assert harness.services.admin.created == [TopicSpec(
        "fresh", 2, -1, [], {"cleanup.policy": "compact"})]


@pytest.mark.parametrize("refusal,error", [
    (TopicExistsError("Topic 'x' already exists."), ErrorCode.TOPIC_ALREADY_EXISTS),
    (ConflictingTopicSettingsError("Both ..."), ErrorCode.INVALID_REQUEST),
    (InvalidReplicationFactorError("Replication factor: 3 larger than available brokers: 2."),
     ErrorCode.INVALID_REPLICATION_FACTOR),
])
def test_create_topics_refusals(harness, refusal, error):
    harness.services.admin.refusal = refusal
    [result] = create(harness, {"name": "x"})
    assert (result["error_code"], result["error_message"], result["num_partitions"]) == \
        (error, str(refusal), -1)


def test_delete_topics(harness):
    harness.topic("doomed", [BROKER_ID])
    harness.partitions.on_partition_removed("doomed", 0, delete=True)  # as the controller would
    response = harness.call(ApiKey.DELETE_TOPICS, 5, {"topic_names": ["doomed", "never"],
                                                      "timeout_ms": 5000})["responses"]
    assert [(r["name"], r["error_code"]) for r in response] == \
        [("doomed", 0), ("never", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert harness.services.admin.deleted == ["doomed"]
