"""Config values and their sources as DescribeConfigs tells them, and the checks and edits of
topic overrides, as Kafka's ZooKeeper-mode broker makes them."""

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.kafka_configs import DYNAMIC_UPDATE_MODES
from broker_lite.config.parsers import ConfigError
from broker_lite.config.resolution import (
    ConfigOperationError,
    InvalidConfigurationError,
    UnknownTopicConfigError,
    apply_incremental_operations,
    broker_config_entries,
    default_broker_config_entries,
    resolve_topic_config,
    topic_config_entries,
    validate_topic_overrides,
)
from broker_lite.protocol.config_entry import ConfigSynonym
from broker_lite.protocol.enums import AlterConfigOpType as Op
from broker_lite.protocol.enums import ConfigSource, ConfigType

STATIC, DEFAULT, TOPIC = (ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG,
                          ConfigSource.DYNAMIC_TOPIC_CONFIG)
BROKER, CLUSTER = ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG


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


def test_broker_configs_are_formatted_as_kafka_writes_them():
    entries = broker_config_entries(BrokerConfig({"log.cleanup.policy": "compact,delete"}))
    policy = entry(entries, "log.cleanup.policy")
    assert (policy.value, policy.source, policy.read_only, policy.config_type) == \
        ("compact,delete", STATIC, False, ConfigType.LIST)
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
    assert all(e.documentation for e in entries)
    # read-only unless Kafka changes it at run time
    assert {e.name for e in entries if not e.read_only} == set(DYNAMIC_UPDATE_MODES)
    assert entry(entries, "log.dirs").read_only and entry(entries, "num.partitions").read_only


def test_dynamic_broker_configs_come_first_broker_then_cluster():
    config = BrokerConfig({"log.retention.ms": "1000", "log.segment.bytes": "2000000"})
    config.update_dynamic({"log.retention.ms": "2000", "log.segment.bytes": "3000000"},
                          {"log.retention.ms": "3000"})
    retention = entry(broker_config_entries(config), "log.retention.ms")
    assert (retention.value, retention.source, retention.read_only) == ("3000", BROKER, False)
    assert retention.synonyms == (
        ConfigSynonym("log.retention.ms", "3000", BROKER),
        ConfigSynonym("log.retention.ms", "2000", CLUSTER),
        ConfigSynonym("log.retention.ms", "1000", STATIC),
        ConfigSynonym("log.retention.hours", "168", DEFAULT))
    segment = entry(topic_config_entries(config, {}), "segment.bytes")
    assert (segment.value, segment.source) == ("3000000", CLUSTER)
    assert [s.source for s in segment.synonyms] == [CLUSTER, STATIC, DEFAULT]
    assert config.log_config().retention_ms == 3000
    defaults = default_broker_config_entries(config)
    assert [(e.name, e.value, e.source, e.synonyms) for e in defaults] == [
        ("log.retention.ms", "2000", CLUSTER,
         (ConfigSynonym("log.retention.ms", "2000", CLUSTER),)),
        ("log.segment.bytes", "3000000", CLUSTER,
         (ConfigSynonym("log.segment.bytes", "3000000", CLUSTER),))]


def test_a_dynamic_unit_synonym_replaces_the_static_one():
    config = BrokerConfig({"log.retention.ms": "1000"})
    config.update_dynamic({"log.retention.hours": "2"}, {})
    assert config.log_config().retention_ms == 7_200_000  # as Kafka's overrideProps
    config.update_dynamic({}, {})
    assert config.log_config().retention_ms == 1000


def test_passwords_are_sensitive_and_custom_configs_are_listed():
    config = BrokerConfig({"ssl.key.password": "secret"})
    config.update_dynamic({"my.plugin.setting": "x"}, {"listener.name.plain.ssl.protocol": "TLS"})
    entries = broker_config_entries(config)
    password = entry(entries, "ssl.key.password")
    assert (password.value, password.sensitive, password.config_type, password.synonyms) == \
        (None, True, ConfigType.PASSWORD, (ConfigSynonym("ssl.key.password", None, STATIC),))
    custom = entry(entries, "my.plugin.setting")
    assert (custom.value, custom.source, custom.config_type, custom.read_only) == \
        ("x", CLUSTER, ConfigType.UNKNOWN, True)
    prefixed = entry(entries, "listener.name.plain.ssl.protocol")
    assert (prefixed.value, prefixed.config_type) == ("TLS", ConfigType.STRING)


def test_incremental_operations_on_broker_configs():
    assert apply_incremental_operations(
        {"background.threads": "9"},
        [("log.cleanup.policy", Op.APPEND, "compact"),
         ("background.threads", Op.DELETE, None)], broker=True) == \
        {"log.cleanup.policy": "delete,compact"}
    with pytest.raises(ConfigOperationError,
                       match=r"Config value append is not allowed for config key: "
                             r"num\.io\.threads"):
        apply_incremental_operations({}, [("num.io.threads", Op.APPEND, "1")], broker=True)
    with pytest.raises(ConfigOperationError, match=r"Unknown config name: my\.list"):
        apply_incremental_operations({}, [("my.list", Op.SUBTRACT, "1")], broker=True)


def test_overrides_broker_lite_cannot_use_are_left_out_of_the_resolved_config():
    resolved = resolve_topic_config(BrokerConfig(), {
        "cleanup.policy": "compact", "retention.ms": "soon", "confluent.tier.enable": "true"})
    assert resolved.cleanup_policy == ("compact",)
    assert resolved.retention_ms == BrokerConfig().log_config().retention_ms


def test_validating_overrides():
    validate_topic_overrides(BrokerConfig(), {"cleanup.policy": "compact", "retention.ms": "1",
                                              "max.compaction.lag.ms": "3600000"})
    with pytest.raises(UnknownTopicConfigError,
                       match=r"Unknown topic config name: retention\.hours"):
        validate_topic_overrides(BrokerConfig(), {"retention.hours": "1"})
    with pytest.raises(ConfigError, match=r"cleanup\.policy"):
        validate_topic_overrides(BrokerConfig(), {"cleanup.policy": "forever"})


@pytest.mark.parametrize("broker,overrides,error,message", [
    ({}, {"min.compaction.lag.ms": "200", "max.compaction.lag.ms": "100"},
     InvalidConfigurationError,
     "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)"),
    # the broker's default takes part
    ({"log.cleaner.min.compaction.lag.ms": "500"}, {"max.compaction.lag.ms": "100"},
     InvalidConfigurationError, "min.compaction.lag.ms (500) >"),
    ({}, {"remote.log.copy.disable": "true"}, InvalidConfigurationError,
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
        {}, [("follower.replication.throttled.replicas", Op.APPEND, "0:1")]) == \
        {"follower.replication.throttled.replicas": "0:1"}


@pytest.mark.parametrize("overrides,operations,expected", [
    ({}, [("retention.ms", Op.SET, "1000")], {"retention.ms": "1000"}),
    ({"retention.ms": "1000"}, [("retention.ms", Op.DELETE, None)], {}),
    ({}, [("retention.ms", Op.DELETE, None)], {}),
    # APPEND and SUBTRACT start from the default of a config without an override
    ({}, [("cleanup.policy", Op.APPEND, "compact")], {"cleanup.policy": "delete,compact"}),
    ({"cleanup.policy": "compact"}, [("cleanup.policy", Op.APPEND, "compact,delete")],
     {"cleanup.policy": "compact,delete"}),
    ({}, [("cleanup.policy", Op.SUBTRACT, "delete")], {"cleanup.policy": ""}),
    ({"cleanup.policy": "compact,delete"}, [("cleanup.policy", Op.SUBTRACT, "compact")],
     {"cleanup.policy": "delete"}),
    ({}, [("segment.ms", Op.SET, "1"), ("segment.ms", Op.DELETE, None)], {}),
])
def test_incremental_operations(overrides, operations, expected):
    assert apply_incremental_operations(overrides, operations) == expected


def test_incremental_operations_a_config_does_not_take():
    with pytest.raises(ConfigOperationError,
                       match=r"Config value append is not allowed for config key: retention\.ms"):
        apply_incremental_operations({}, [("retention.ms", Op.APPEND, "1")])
    with pytest.raises(UnknownTopicConfigError, match="Unknown topic config name: nope"):
        apply_incremental_operations({}, [("nope", Op.SUBTRACT, "1")])
