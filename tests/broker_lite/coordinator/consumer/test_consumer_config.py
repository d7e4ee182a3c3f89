"""The consumer group settings: Kafka's names and defaults, and the bounds Kafka checks at
start-up."""

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.coordinator.consumer.config import (
    ConsumerGroupConfig,
    ConsumerGroupConfigError,
    MigrationPolicy,
)


def test_kafka_defaults():
    config = ConsumerGroupConfig.from_broker_config(BrokerConfig({}))
    assert config == ConsumerGroupConfig()
    assert (config.session_timeout_ms, config.heartbeat_interval_ms, config.assignors,
            config.migration_policy, config.enabled) == (
        45000, 5000, ("uniform", "range"), MigrationPolicy.BIDIRECTIONAL, True)


def test_settings_by_kafka_names():
    config = ConsumerGroupConfig.from_broker_config(BrokerConfig({
        "group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.RangeAssignor,"
                                    "uniform",
        "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.session.timeout.ms": "2000",
        "group.consumer.min.heartbeat.interval.ms": "100",
        "group.consumer.heartbeat.interval.ms": "500",
        "group.consumer.max.size": "2",
        "group.consumer.migration.policy": "UPGRADE",
        "group.coordinator.rebalance.protocols": "classic",
    }))
    assert (config.assignors, config.default_assignor, config.session_timeout_ms,
            config.heartbeat_interval_ms, config.max_size, config.migration_policy,
            config.enabled) == (("range", "uniform"), "range", 2000, 500, 2,
                                MigrationPolicy.UPGRADE, False)
    assert config.migration_policy.allows_upgrade and not config.migration_policy \
        .allows_downgrade


@pytest.mark.parametrize("properties, message", [
    ({"group.consumer.session.timeout.ms": "1000"}, "between 45000 and 60000"),
    ({"group.consumer.session.timeout.ms": "70000"}, "between 45000 and 60000"),
    ({"group.consumer.heartbeat.interval.ms": "1000"}, "between 5000 and 15000"),
    ({"group.consumer.min.session.timeout.ms": "1000", "group.consumer.session.timeout.ms":
      "6000", "group.consumer.heartbeat.interval.ms": "6000"}, "less than"),
    ({"group.coordinator.rebalance.protocols": "consumer"}, "must contain classic"),
])
def test_bounds(properties, message):
    with pytest.raises(ConsumerGroupConfigError, match=message):
        ConsumerGroupConfig.from_broker_config(BrokerConfig(properties))


@pytest.mark.parametrize("name, value", [
    ("group.consumer.assignors", "sticky"),
    ("group.consumer.migration.policy", "sideways"),
    ("group.consumer.max.size", "0"),
    ("group.coordinator.rebalance.protocols", "classic,queue"),
])
def test_malformed_values(name, value):
    with pytest.raises(ConfigError):
        BrokerConfig({name: value})
