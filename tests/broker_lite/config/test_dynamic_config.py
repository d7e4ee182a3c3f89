"""The rules of dynamic broker configs, with Kafka 3.9's messages: which configs may change at run
time and where, their types, the reconfiguration checks, passwords, and what is read back."""

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.dynamic import (
    DynamicConfigError,
    check_dynamic_change,
    persistent_configs,
    usable_configs,
)


def refusal(props: dict, per_broker: bool = True, config: BrokerConfig | None = None) -> str:
    with pytest.raises(DynamicConfigError) as raised:
        check_dynamic_change(props, per_broker=per_broker, config=config or BrokerConfig())
    return str(raised.value)


@pytest.mark.parametrize("props", [
    {"log.retention.ms": "60000", "log.cleanup.policy": "compact,delete"},
    {"message.max.bytes": "2000000", "log.cleaner.backoff.ms": "100"},
    {"my.plugin.setting": "anything"},  # a custom config
    {"background.threads": "9", "sasl.kerberos.min.time.before.relogin": "58000"},
    {"listener.name.plaintext.ssl.keystore.location": "/keys"},
])
def test_changes_kafka_accepts(props):
    check_dynamic_change(props, per_broker=True, config=BrokerConfig())


@pytest.mark.parametrize("props,message", [
    ({"log.dirs": "/x", "num.partitions": "3"},
     "Cannot update these configs dynamically: Set(log.dirs, num.partitions)"),
    ({"auto.leader.rebalance.enable": "false"},  # read-only in Kafka, unknown to broker_lite
     "Cannot update these configs dynamically: Set(auto.leader.rebalance.enable)"),
    ({"log.retention.hours": "1"}, "Cannot update these configs dynamically"),
    ({"ssl.keystore.location": "/keys"},
     "These security configs can be dynamically updated only per-listener using the listener "
     "prefix: Set(ssl.keystore.location)"),
    ({"log.segment.bytes": "ten"},
     "Invalid value ten for configuration log.segment.bytes: expected an integer"),
    ({"listener.name.plaintext.max.connections": "many"},
     "Invalid value many for configuration listener.name.plaintext.max.connections"),
])
def test_changes_kafka_refuses(props, message):
    assert refusal(props).startswith(message)


def test_per_broker_configs_cannot_be_cluster_defaults():
    assert refusal({"listeners": "PLAINTEXT://:9093", "log.retention.ms": "1"},
                   per_broker=False) == ("Cannot update these configs at default cluster level, "
                                         "broker id must be specified: Set(listeners)")
    assert refusal({"listener.name.plaintext.ssl.protocol": "TLS"}, per_broker=False)
    check_dynamic_change({"listener.name.plaintext.max.connections": "5"}, per_broker=False,
                         config=BrokerConfig())
    check_dynamic_change({"listeners": "PLAINTEXT://:9093"}, per_broker=True,
                         config=BrokerConfig())


@pytest.mark.parametrize("value,accepted", [("9", True), ("20", True), ("21", False),
                                            ("5", True), ("4", False)])
def test_thread_counts_at_most_double_or_half(value, accepted):
    props = {"background.threads": value}  # now 10
    if accepted:
        check_dynamic_change(props, per_broker=False, config=BrokerConfig())
    else:
        assert refusal(props, per_broker=False) == "Invalid dynamic configuration"


def test_thread_counts_compare_with_the_value_in_force():
    config = BrokerConfig({"num.io.threads": "2"})
    assert refusal({"num.io.threads": "5"}, config=config) == "Invalid dynamic configuration"
    config.update_dynamic({"num.io.threads": "4"}, {})
    check_dynamic_change({"num.io.threads": "8"}, per_broker=True, config=config)


def test_local_retention_within_the_retention():
    config = BrokerConfig({"log.retention.ms": "1000"})
    assert refusal({"log.local.retention.ms": "2000"}, config=config) == \
        "Invalid dynamic configuration"
    assert refusal({"log.local.retention.ms": "-1"}, config=config)
    check_dynamic_change({"log.local.retention.ms": "500"}, per_broker=True, config=config)
    # the new retention counts: with the cluster default raised, the broker's setting fits
    config.update_dynamic({"log.retention.ms": "5000"}, {})
    check_dynamic_change({"log.local.retention.ms": "2000"}, per_broker=True, config=config)


def test_passwords_cannot_be_stored_without_an_encoder_secret():
    with pytest.raises(DynamicConfigError, match=r"^Password encoder secret not configured$"):
        persistent_configs({"ssl.key.password": "x"}, per_broker=True)
    with pytest.raises(DynamicConfigError,
                       match=r"^Password config can be defined only at broker level$"):
        persistent_configs({"listener.name.a.ssl.key.password": "x"}, per_broker=False)
    assert persistent_configs({"log.retention.ms": "1"}, per_broker=False) == \
        {"log.retention.ms": "1"}


def test_configs_read_back_that_a_broker_cannot_use_are_left_out(caplog):
    stored = {"log.retention.ms": "1000", "log.dirs": "/x", "log.segment.bytes": "ten",
              "listeners": "PLAINTEXT://:1", "ssl.key.password": "cipher", "custom": "y"}
    assert usable_configs(stored, per_broker=False) == {"log.retention.ms": "1000",
                                                         "custom": "y"}
    assert usable_configs(stored, per_broker=True) == {
        "log.retention.ms": "1000", "listeners": "PLAINTEXT://:1", "custom": "y"}
    assert "log.dirs is ignored" in caplog.text
