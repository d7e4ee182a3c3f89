"""Config values and their sources as DescribeConfigs tells them, and the checks and edits of
topic overrides, as Kafka's ZooKeeper-mode broker makes them."""

import pytest

from broker_lite.config import BrokerConfig, ConfigError
from broker_lite.config_resolution import (
    AlterOp,
    ConfigOperationError,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    InvalidTopicConfigError,
    UnknownTopicConfigError,
    apply_incremental_operations,
    broker_config_entries,
    resolve_topic_config,
    topic_config_entries,
    validate_topic_overrides,
)

STATIC, DEFAULT, TOPIC = (ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG,
                          ConfigSource.DYNAMIC_TOPIC_CONFIG)


def entry(entries, name):
    return next(e for e in entries if e.name == name)


def test_a_topic_override_comes_first_then_the_broker_config_then_its_default():
    config = BrokerConfig({"log.segment.bytes": "1048576"})
    entries = topic_config_entries(config, {"segment.bytes": "2097152"})
    segment = entry(entries, "segment.bytes")
    assert (segment.value, segment.source, segment.is_default, segment.read_only) == \
        ("2097152", TOPIC, False, False)
    assert segment.synonyms == (
        ConfigSynonym("segment.bytes", "2097152", TOPIC),
        ConfigSynonym("log.segment.bytes", "1048576", STATIC),
        ConfigSynonym("log.segment.bytes", "1073741824", DEFAULT))
    static = entry(topic_config_entries(config, {}), "segment.bytes")
    assert (static.value, static.source, static.is_default) == ("1048576", STATIC, False)
    default = entry(topic_config_entries(BrokerConfig(), {}), "segment.bytes")
    assert (default.value, default.source, default.is_default) == ("1073741824", DEFAULT, True)
    assert [e.name for e in entries] == sorted(e.name for e in entries)


def test_synonyms_listed_before_the_broker_name_are_dropped():
    by_ms = entry(topic_config_entries(BrokerConfig({"log.retention.ms": "5000"}), {}),
                  "retention.ms")
    assert (by_ms.value, by_ms.source) == ("5000", STATIC)
    assert by_ms.synonyms == (ConfigSynonym("log.retention.ms", "5000", STATIC),
                              ConfigSynonym("log.retention.hours", "168", DEFAULT))
    # backed by log.retention.hours only: as in Kafka, no synonym is left and the source is
    # DEFAULT_CONFIG, although the value follows the hours
    by_hours = entry(topic_config_entries(BrokerConfig({"log.retention.hours": "1"}), {}),
                     "retention.ms")
    assert (by_hours.value, by_hours.source, by_hours.synonyms) == ("3600000", DEFAULT, ())
    hours = entry(broker_config_entries(BrokerConfig({"log.retention.hours": "1"})),
                  "log.retention.hours")
    assert hours.synonyms == (ConfigSynonym("log.retention.hours", "1", STATIC),
                              ConfigSynonym("log.retention.hours", "168", DEFAULT))


def test_broker_configs_are_read_only_and_formatted_as_kafka_writes_them():
    entries = broker_config_entries(BrokerConfig({"log.cleanup.policy": "compact,delete"}))
    policy = entry(entries, "log.cleanup.policy")
    assert (policy.value, policy.source, policy.read_only, policy.config_type) == \
        ("compact,delete", STATIC, True, ConfigType.LIST)
    cleaner = entry(entries, "log.cleaner.enable")
    assert (cleaner.value, cleaner.config_type, cleaner.is_default) == \
        ("true", ConfigType.BOOLEAN, True)
    assert entry(entries, "log.retention.bytes").config_type == ConfigType.LONG
    assert entry(entries, "log.segment.bytes").config_type == ConfigType.INT
    assert entry(entries, "log.cleaner.min.cleanable.ratio").config_type == ConfigType.DOUBLE
    assert entry(entries, "log.dirs").config_type == ConfigType.STRING
    # Kafka's KafkaConfig types, which a table of names once missed
    assert entry(entries, "log.cleaner.backoff.ms").config_type == ConfigType.LONG
    assert entry(entries, "offsets.retention.check.interval.ms").config_type == ConfigType.LONG
    assert entry(entries, "offsets.topic.replication.factor").config_type == ConfigType.SHORT
    assert all(e.read_only and e.documentation for e in entries)


def test_overrides_broker_lite_cannot_use_are_left_out_of_the_resolved_config():
    resolved = resolve_topic_config(BrokerConfig(), {
        "cleanup.policy": "compact", "retention.ms": "soon", "confluent.tier.enable": "true"})
    assert resolved.cleanup_policy == ("compact",)
    assert resolved.retention_ms == BrokerConfig().log_config().retention_ms


def test_validating_overrides():
    validate_topic_overrides(BrokerConfig(), {"cleanup.policy": "compact", "retention.ms": "1",
                                              "max.compaction.lag.ms": "3600000"})
    with pytest.raises(UnknownTopicConfigError, match="Unknown topic config name: retention.hours"):
        validate_topic_overrides(BrokerConfig(), {"retention.hours": "1"})
    with pytest.raises(ConfigError, match="cleanup.policy"):
        validate_topic_overrides(BrokerConfig(), {"cleanup.policy": "forever"})


@pytest.mark.parametrize("broker,overrides,error,message", [
    ({}, {"min.compaction.lag.ms": "200", "max.compaction.lag.ms": "100"},
     InvalidTopicConfigError,
     "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)"),
    # the broker's default takes part
    ({"log.cleaner.min.compaction.lag.ms": "500"}, {"max.compaction.lag.ms": "100"},
     InvalidTopicConfigError, "min.compaction.lag.ms (500) >"),
    ({}, {"remote.log.copy.disable": "true"}, InvalidTopicConfigError,
     "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` under "
     "Zookeeper's mode."),
    ({}, {"remote.storage.enable": "true"}, ConfigError,
     "Tiered Storage functionality is disabled in the broker."),
])
def test_settings_kafka_refuses_together(broker, overrides, error, message):
    with pytest.raises(error) as raised:
        validate_topic_overrides(BrokerConfig(broker), overrides)
    assert message in str(raised.value)


def test_topic_configs_without_a_broker_default_are_described_with_their_own():
    entries = topic_config_entries(BrokerConfig(), {"leader.replication.throttled.replicas": "*"})
    remote = entry(entries, "remote.storage.enable")
    assert (remote.value, remote.source, remote.synonyms, remote.config_type) == \
        ("false", DEFAULT, (), ConfigType.BOOLEAN)
    throttled = entry(entries, "leader.replication.throttled.replicas")
    assert (throttled.value, throttled.source, throttled.config_type) == \
        ("*", TOPIC, ConfigType.LIST)
    lag = entry(entries, "max.compaction.lag.ms")
    assert (lag.value, lag.config_type, lag.synonyms) == (
        str(2**63 - 1), ConfigType.LONG,
        (ConfigSynonym("log.cleaner.max.compaction.lag.ms", str(2**63 - 1), DEFAULT),))
    assert apply_incremental_operations(
        {}, [("follower.replication.throttled.replicas", AlterOp.APPEND, "0:1")]) == \
        {"follower.replication.throttled.replicas": "0:1"}


@pytest.mark.parametrize("overrides,operations,expected", [
    ({}, [("retention.ms", AlterOp.SET, "1000")], {"retention.ms": "1000"}),
    ({"retention.ms": "1000"}, [("retention.ms", AlterOp.DELETE, None)], {}),
    ({}, [("retention.ms", AlterOp.DELETE, None)], {}),
    # APPEND and SUBTRACT start from the default of a config without an override
    ({}, [("cleanup.policy", AlterOp.APPEND, "compact")], {"cleanup.policy": "delete,compact"}),
    ({"cleanup.policy": "compact"}, [("cleanup.policy", AlterOp.APPEND, "compact,delete")],
     {"cleanup.policy": "compact,delete"}),
    ({}, [("cleanup.policy", AlterOp.SUBTRACT, "delete")], {"cleanup.policy": ""}),
    ({"cleanup.policy": "compact,delete"}, [("cleanup.policy", AlterOp.SUBTRACT, "compact")],
     {"cleanup.policy": "delete"}),
    ({}, [("segment.ms", AlterOp.SET, "1"), ("segment.ms", AlterOp.DELETE, None)], {}),
])
def test_incremental_operations(overrides, operations, expected):
    assert apply_incremental_operations(overrides, operations) == expected


def test_incremental_operations_a_config_does_not_take():
    with pytest.raises(ConfigOperationError,
                       match="Config value append is not allowed for config key: retention.ms"):
        apply_incremental_operations({}, [("retention.ms", AlterOp.APPEND, "1")])
    with pytest.raises(UnknownTopicConfigError, match="Unknown topic config name: nope"):
        apply_incremental_operations({}, [("nope", AlterOp.SUBTRACT, "1")])
