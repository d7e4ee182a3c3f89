"""DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, CreateTopics and DeleteTopics over the
topic admin: requests translated, refusals mapped to error codes, per resource or topic."""

import pytest

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import ConfigResourceType, ConfigSource
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
        ("log.segment.bytes", False, None)  # a dynamic broker config


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
                      {"name": "segment.ms", "value": "3600000"}])
    assert response["error_code"] == 0
    assert admin.configs["events"] == {"cleanup.policy": "compact", "segment.ms": "3600000"}
    alter(harness, ApiKey.ALTER_CONFIGS, "events", [], validate_only=True)
    assert admin.configs["events"] == {"cleanup.policy": "compact", "segment.ms": "3600000"}


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
    # Kafka 3.9's prepareIncrementalConfigs: InvalidConfigurationException
    (ApiKey.INCREMENTAL_ALTER_CONFIGS,
     [{"name": "retention.ms", "config_operation": 2, "value": "1"}], ErrorCode.INVALID_CONFIG,
     "Config value append is not allowed for config key: retention.ms"),
    # Kafka 3.9's ConfigAdminManager.preprocess refuses null values
    (ApiKey.ALTER_CONFIGS, [{"name": "segment.ms", "value": None}], ErrorCode.INVALID_REQUEST,
     "Null value not supported for : segment.ms"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS,
     [{"name": "segment.ms", "config_operation": 0, "value": None}], ErrorCode.INVALID_REQUEST,
     "Null value not supported for : segment.ms"),
    (ApiKey.ALTER_CONFIGS, [{"name": "remote.storage.enable", "value": "true"}],
     ErrorCode.INVALID_CONFIG, "Invalid config value for resource ConfigResource(type=TOPIC, "
     "name='events'): Tiered Storage functionality is disabled in the broker."),
    (ApiKey.ALTER_CONFIGS, [{"name": "max.compaction.lag.ms", "value": "0"}],
     ErrorCode.INVALID_CONFIG, "Invalid config value for resource"),
    (ApiKey.ALTER_CONFIGS, [{"name": "min.compaction.lag.ms", "value": "10"},
                            {"name": "max.compaction.lag.ms", "value": "5"}],
     ErrorCode.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms (10) > "
     "max.compaction.lag.ms (5)"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS,
     [{"name": "retention.ms", "config_operation": 9, "value": "1"}], ErrorCode.INVALID_REQUEST,
     "Unknown operation type 9"),
])
def test_alter_refusals(harness, api, configs, error, message):
    harness.topic("events", [BROKER_ID])
    response = alter(harness, api, "events", configs)
    assert response["error_code"] == error and response["error_message"].startswith(message)
    assert harness.services.admin.configs.get("events") is None


def test_every_kafka_topic_config_is_accepted(harness):
    harness.topic("events", [BROKER_ID])
    response = alter(harness, ApiKey.INCREMENTAL_ALTER_CONFIGS, "events", [
        {"name": "max.compaction.lag.ms", "config_operation": 0, "value": "3600000"},
        {"name": "message.downconversion.enable", "config_operation": 0, "value": "false"},
        {"name": "leader.replication.throttled.replicas", "config_operation": 2,
         "value": "0:1"}])
    assert response["error_code"] == 0
    [topic] = describe(harness, (TOPIC, "events", ["max.compaction.lag.ms", "preallocate"]))
    assert [(c["name"], c["value"], c["config_source"]) for c in topic["configs"]] == [
        ("max.compaction.lag.ms", "3600000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("preallocate", "false", ConfigSource.DEFAULT_CONFIG)]


# -- dynamic broker configs -------------------------------------------------------------------


def test_dynamic_broker_configs_apply_to_the_running_logs(harness):
    harness.topic("events", [BROKER_ID])
    harness.topic("kept", [BROKER_ID], config={"retention.ms": "5000"})
    response = alter(harness, ApiKey.INCREMENTAL_ALTER_CONFIGS, "", [
        {"name": "log.retention.ms", "config_operation": 0, "value": "60000"},
        {"name": "log.cleanup.policy", "config_operation": 2, "value": "compact"}], kind=BROKER)
    assert response["error_code"] == 0
    assert harness.services.admin.broker_configs == {
        "<default>": {"log.retention.ms": "60000", "log.cleanup.policy": "delete,compact"}}
    log = harness.log("events")
    assert (log.config.retention_ms, log.config.cleanup_policy) == (60000, ("delete", "compact"))
    assert harness.log("kept").config.retention_ms == 5000  # a topic override still wins
    mine = alter(harness, ApiKey.ALTER_CONFIGS, str(BROKER_ID),
                 [{"name": "log.retention.ms", "value": "30000"}], kind=BROKER)
    assert mine["error_code"] == 0 and log.config.retention_ms == 30000
    assert harness.config["log.retention.ms"] == 30000  # what the handlers read


def test_describe_dynamic_broker_configs(harness):
    alter(harness, ApiKey.ALTER_CONFIGS, "", [{"name": "log.retention.ms", "value": "60000"},
                                              {"name": "background.threads", "value": "9"}],
          kind=BROKER)
    alter(harness, ApiKey.ALTER_CONFIGS, str(BROKER_ID),
          [{"name": "log.retention.ms", "value": "30000"}], kind=BROKER)
    default, mine = describe(harness, (BROKER, "", None), (BROKER, str(BROKER_ID), None),
                             include_synonyms=True)
    assert [(c["name"], c["value"], c["config_source"], c["read_only"],
             [s["source"] for s in c["synonyms"]]) for c in default["configs"]] == [
        ("background.threads", "9", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, False,
         [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]),
        ("log.retention.ms", "60000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, False,
         [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG])]
    retention = next(c for c in mine["configs"] if c["name"] == "log.retention.ms")
    assert (retention["value"], retention["config_source"]) == \
        ("30000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert [(s["value"], s["source"]) for s in retention["synonyms"]] == [
        ("30000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ("60000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("168", ConfigSource.DEFAULT_CONFIG)]
    assert next(c for c in mine["configs"] if c["name"] == "log.dirs")["read_only"]


@pytest.mark.parametrize("api,name,configs,error,message", [
    (ApiKey.ALTER_CONFIGS, str(BROKER_ID), [{"name": "log.dirs", "value": "/x"}],
     ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: Set(log.dirs)"),
    (ApiKey.ALTER_CONFIGS, "", [{"name": "listeners", "value": "PLAINTEXT://:1"}],
     ErrorCode.INVALID_REQUEST, "Cannot update these configs at default cluster level, broker "
     "id must be specified: Set(listeners)"),
    (ApiKey.ALTER_CONFIGS, "7", [{"name": "log.retention.ms", "value": "1"}],
     ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 7"),
    (ApiKey.ALTER_CONFIGS, "b1", [{"name": "log.retention.ms", "value": "1"}],
     ErrorCode.INVALID_REQUEST, "Node id must be an integer, but it is: b1"),
    (ApiKey.ALTER_CONFIGS, "", [{"name": "log.retention.ms", "value": "soon"}],
     ErrorCode.INVALID_REQUEST, "Invalid value soon for configuration log.retention.ms"),
    (ApiKey.ALTER_CONFIGS, str(BROKER_ID), [{"name": "ssl.key.password", "value": "x"}],
     ErrorCode.INVALID_REQUEST, "These security configs can be dynamically updated only "
     "per-listener using the listener prefix: Set(ssl.key.password)"),
    (ApiKey.ALTER_CONFIGS, str(BROKER_ID),
     [{"name": "listener.name.plaintext.ssl.key.password", "value": "x"}],
     ErrorCode.INVALID_CONFIG, "Invalid config value for resource ConfigResource(type=BROKER, "
     "name='1'): Password encoder secret not configured"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS, "",
     [{"name": "num.io.threads", "config_operation": 2, "value": "1"}],
     ErrorCode.INVALID_CONFIG, "Config value append is not allowed for config key"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS, "",
     [{"name": "num.io.threads", "config_operation": 0, "value": "64"}],
     ErrorCode.INVALID_REQUEST, "Invalid dynamic configuration"),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS, "",
     [{"name": "num.io.threads", "config_operation": 7, "value": "1"}],
     ErrorCode.INVALID_REQUEST, "Unknown operations type 7"),
])
def test_dynamic_broker_config_refusals(harness, api, name, configs, error, message):
    response = alter(harness, api, name, configs, kind=BROKER)
    assert (response["error_code"], response["error_message"][:len(message)]) == (error, message)
    assert harness.services.admin.broker_configs == {}


def test_validate_only_changes_nothing_and_a_group_resource_is_refused(harness):
    response = alter(harness, ApiKey.INCREMENTAL_ALTER_CONFIGS, str(BROKER_ID),
                     [{"name": "log.retention.ms", "config_operation": 0, "value": "1"}],
                     kind=BROKER, validate_only=True)
    assert response["error_code"] == 0 and harness.services.admin.broker_configs == {}
    group = alter(harness, ApiKey.INCREMENTAL_ALTER_CONFIGS, "my-group",
                  [{"name": "consumer.session.timeout.ms", "config_operation": 0,
                    "value": "50000"}], kind=GROUP)
    assert (group["error_code"], group["error_message"]) == \
        (ErrorCode.INVALID_REQUEST, "Unknown resource type 3")


@pytest.mark.parametrize("api", [ApiKey.INCREMENTAL_ALTER_CONFIGS, ApiKey.DESCRIBE_CONFIGS])
def test_group_config_resources_come_with_share_groups(harness, api):
    """Without group.share.enable a GROUP config resource (32) is what a Kafka 3.9 broker
    answers for it: INVALID_REQUEST (librdkafka's 0081 expects it of a 3.9 broker)."""
    if api == ApiKey.DESCRIBE_CONFIGS:
        result = harness.call(api, 4, {"resources": [
            {"resource_type": ConfigResourceType.GROUP, "resource_name": "my-group",
             "configuration_keys": None}]})["results"][0]
    else:
        result = alter(harness, api, "my-group",
                       [{"name": "share.record.lock.duration.ms", "config_operation": 0,
                         "value": "5000"}], kind=ConfigResourceType.GROUP)
    assert result["error_code"] == ErrorCode.INVALID_REQUEST
    assert harness.services.admin.group_configs == {}


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


def test_new_partitions_are_not_ready_while_the_metadata_does_not_list_them():
    """CreatePartitions answers once its new partitions have leaders; a metadata view that has
    not caught up with the growth lists none of them, which is not "all of them are led"."""
    from types import SimpleNamespace

    from broker_lite.server.handlers.topics import _partitions_ready

    cluster = SimpleNamespace(partitions=lambda topic: [SimpleNamespace(partition=0)])
    services = SimpleNamespace(cluster=cluster, partitions=None)
    assert not _partitions_ready(services, "grow", {1, 2})
