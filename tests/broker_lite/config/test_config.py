import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.definitions import BROKER_CONFIG
from broker_lite.config.parsers import ConfigError
from broker_lite.config.properties import parse_properties
from broker_lite.config.topic import TOPIC_CONFIG_NAMES, TOPIC_TO_BROKER, LogConfig


def test_properties_syntax():
    text = "\n".join([
        "# comment", "! also a comment", "", "a=1", "b : two words", "c three\\", "   continued",
        "d=tab\\there", "e\\=x=y", "  f =  spaced  ", "g=\\u00e9",
    ])
    assert parse_properties(text) == {
        "a": "1", "b": "two words", "c": "threecontinued", "d": "tab\there", "e=x": "y",
        "f": "spaced  ", "g": "é",
    }


def test_broker_defaults_are_kafkas():
    config = BrokerConfig()
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert config["log.segment.bytes"] == 1073741824
    assert config["zookeeper.connect"] is None
    assert config.log_dirs == ("/tmp/kafka-logs",)
    assert config.log_config() == LogConfig()


def test_network_defaults_are_kafkas():
    config = BrokerConfig()
    assert {name: config[name] for name in (
        "num.network.threads", "num.io.threads", "queued.max.requests",
        "socket.send.buffer.bytes", "socket.receive.buffer.bytes", "socket.listen.backlog.size",
        "socket.request.max.bytes", "connections.max.idle.ms", "max.connections",
        "max.connections.per.ip", "max.connections.per.ip.overrides", "metrics.listener")} == {
        "num.network.threads": 3, "num.io.threads": 8, "queued.max.requests": 500,
        "socket.send.buffer.bytes": 102400, "socket.receive.buffer.bytes": 102400,
        "socket.listen.backlog.size": 50, "socket.request.max.bytes": 104857600,
        "connections.max.idle.ms": 600000, "max.connections": 2**31 - 1,
        "max.connections.per.ip": 2**31 - 1, "max.connections.per.ip.overrides": "",
        "metrics.listener": None}


@pytest.mark.parametrize("broker,expected_ms", [
    ({"log.retention.hours": "2"}, 2 * 3_600_000),
    ({"log.retention.hours": "2", "log.retention.minutes": "3"}, 3 * 60_000),
    ({"log.retention.minutes": "3", "log.retention.ms": "7"}, 7),
    ({"log.retention.ms": "-1"}, -1),
])
def test_retention_unit_precedence(broker, expected_ms):
    assert BrokerConfig(broker).log_config().retention_ms == expected_ms


def test_topic_overrides_win_over_broker_defaults():
    config = BrokerConfig({"log.segment.bytes": "1000", "log.roll.hours": "1"})
    log = config.log_config({"segment.bytes": "500", "cleanup.policy": "compact,delete"})
    assert (log.segment_bytes, log.segment_ms) == (500, 3_600_000)
    assert log.compact and log.delete


@pytest.mark.parametrize("properties,message", [
    ({"log.segment.bytes": "ten"}, "log.segment.bytes"),
    ({"num.partitions": "0"}, "num.partitions"),
    ({"log.cleanup.policy": "shred"}, "log.cleanup.policy"),
    ({"auto.create.topics.enable": "yes"}, "auto.create.topics.enable"),
])
def test_malformed_values_name_the_property(properties, message):
    with pytest.raises(ConfigError, match=message):
        BrokerConfig(properties)


# The broker configs Kafka declares LONG, SHORT or DOUBLE (ServerLogConfigs, CleanerConfig,
# SocketServerConfigs, GroupCoordinatorConfig, TransactionLogConfig, ReplicationConfigs,
# ServerConfigs); its other numbers are INT.
KAFKA_TYPES = {
    **dict.fromkeys(["connections.max.idle.ms", "offsets.retention.check.interval.ms",
                     "log.roll.ms", "log.flush.interval.messages", "log.flush.interval.ms",
                     "log.flush.scheduler.interval.ms", "log.retention.ms", "log.retention.bytes",
                     "log.retention.check.interval.ms", "log.cleaner.backoff.ms",
                     "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms",
                     "log.segment.delete.delay.ms", "log.roll.jitter.ms",
                     "log.cleaner.max.compaction.lag.ms", "log.message.timestamp.difference.max.ms",
                     "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms",
                     "log.local.retention.ms", "log.local.retention.bytes",
                     "replica.lag.time.max.ms", "replica.high.watermark.checkpoint.interval.ms",
                     "controlled.shutdown.retry.backoff.ms",
                     "leader.imbalance.check.interval.seconds",
                     "connections.max.reauth.ms", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
                     "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
                     "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"], "LONG"),
    "offsets.topic.replication.factor": "SHORT",
    "offsets.commit.required.acks": "SHORT",
    "transaction.state.log.replication.factor": "SHORT",
    # Kafka 4.2's ShareCoordinatorConfig
    "share.coordinator.state.topic.replication.factor": "SHORT",
    "share.coordinator.state.topic.min.isr": "SHORT",
    "log.cleaner.min.cleanable.ratio": "DOUBLE",
}


def test_number_types_are_kafkas():
    numbers = {name: d.type for name, d in BROKER_CONFIG.items()
               if d.type in ("SHORT", "INT", "LONG", "DOUBLE")}
    assert numbers == {name: KAFKA_TYPES.get(name, "INT") for name in numbers}
    assert set(KAFKA_TYPES) <= set(numbers)


@pytest.mark.parametrize("properties,fragment", [
    # an INT refuses what a LONG takes (both used to take any size)
    ({"message.max.bytes": "3000000000"}, "[0, 2147483647]"),
    ({"offsets.topic.replication.factor": "32768"}, "[1, 32767]"),
    # Kafka's ValidString and ValidList compare exactly
    ({"compression.type": "GZIP"}, "one of producer, none, gzip"),
    ({"log.message.timestamp.type": "createtime"}, "one of CreateTime, LogAppendTime"),
    ({"log.cleanup.policy": "Compact"}, "one of delete, compact"),
    # Kafka's Range between(0, 1)
    ({"log.cleaner.min.cleanable.ratio": "1.5"}, "[0, 1]"),
])
def test_values_kafka_refuses_are_refused(properties, fragment):
    ((name, value),) = properties.items()
    with pytest.raises(ConfigError) as raised:
        BrokerConfig(properties)
    assert str(raised.value).startswith(f"invalid value {value!r} for {name}: ")
    assert fragment in str(raised.value)


def test_values_are_trimmed_and_booleans_take_any_case_as_in_kafka():
    config = BrokerConfig({"log.retention.bytes": " 3000000000 ", "delete.topic.enable": "FALSE",
                           "log.cleanup.policy": " compact , delete", "broker.rack": " r1 "})
    assert (config["log.retention.bytes"], config["delete.topic.enable"],
            config["log.cleanup.policy"], config["broker.rack"]) == (
        3_000_000_000, False, ("compact", "delete"), "r1")


def test_topic_configs_parse_as_the_broker_configs_they_are_named_after():
    log = BrokerConfig().log_config({"retention.ms": "3000000000", "flush.messages": "1"})
    assert (log.retention_ms, log.flush_messages) == (3_000_000_000, 1)
    with pytest.raises(ConfigError, match=r"^invalid value '3000000000' for max\.message\.bytes: "):
        BrokerConfig().log_config({"max.message.bytes": "3000000000"})
    assert set(TOPIC_TO_BROKER.values()) <= set(BROKER_CONFIG)


# Kafka 3.9's topic configs (LogConfig's ConfigDef), each with its default.
KAFKA_TOPIC_DEFAULTS = {
    "cleanup.policy": ("delete",), "compression.gzip.level": -1, "compression.lz4.level": 9,
    "compression.type": "producer", "compression.zstd.level": 3, "delete.retention.ms": 86400000,
    "file.delete.delay.ms": 60000, "flush.messages": 2**63 - 1, "flush.ms": 2**63 - 1,
    "follower.replication.throttled.replicas": (), "index.interval.bytes": 4096,
    "leader.replication.throttled.replicas": (), "local.retention.bytes": -2,
    "local.retention.ms": -2, "max.compaction.lag.ms": 2**63 - 1,
    "max.message.bytes": 1048588, "message.downconversion.enable": True,
    "message.format.version": "3.0-IV1", "message.timestamp.after.max.ms": 2**63 - 1,
    "message.timestamp.before.max.ms": 2**63 - 1,
    "message.timestamp.difference.max.ms": 2**63 - 1, "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": 0.5, "min.compaction.lag.ms": 0, "min.insync.replicas": 1,
    "preallocate": False, "remote.log.copy.disable": False,
    "remote.log.delete.on.disable": False, "remote.storage.enable": False,
    "retention.bytes": -1, "retention.ms": 604800000, "segment.bytes": 1073741824,
    "segment.index.bytes": 10485760, "segment.jitter.ms": 0, "segment.ms": 604800000,
    "unclean.leader.election.enable": False,
}


def test_every_kafka_topic_config_is_known_with_its_default():
    assert set(TOPIC_CONFIG_NAMES) == set(KAFKA_TOPIC_DEFAULTS)
    log = BrokerConfig().log_config()
    assert {name: getattr(log, name.replace(".", "_")) for name in TOPIC_CONFIG_NAMES} == \
        KAFKA_TOPIC_DEFAULTS
    assert BrokerConfig().log_config({"preallocate": "true", "min.insync.replicas": "2",
                                      "remote.storage.enable": "false"}).min_insync_replicas == 2


@pytest.mark.parametrize("name,good,bad", [
    ("compression.gzip.level", ["-1", "1", "9"], ["0", "10", "-2"]),
    ("compression.lz4.level", ["1", "17"], ["0", "18"]),
    ("compression.zstd.level", ["-131072", "22"], ["23"]),
    ("leader.replication.throttled.replicas", ["*", "0:1,1:2", ""], ["x", "*,0:1", "0-1"]),
    ("max.compaction.lag.ms", ["1"], ["0"]),
    ("local.retention.ms", ["-2", "0"], ["-3"]),
    ("message.timestamp.before.max.ms", ["0"], ["-1"]),
    ("segment.jitter.ms", ["100"], ["x"]),
])
def test_topic_configs_take_kafkas_values(name, good, bad):
    for value in good:
        BrokerConfig().log_config({name: value})
    for value in bad:
        with pytest.raises(ConfigError, match=name):
            BrokerConfig().log_config({name: value})


def test_max_compaction_lag_rolls_the_active_segment_of_compacted_topics_sooner():
    config = BrokerConfig({"log.roll.ms": "10000"})
    assert config.log_config({"max.compaction.lag.ms": "100"}).max_segment_ms == 10000
    compacted = config.log_config({"max.compaction.lag.ms": "100", "cleanup.policy": "compact"})
    assert compacted.max_segment_ms == 100
    assert config.log_config({"cleanup.policy": "compact"}).max_segment_ms == 10000


def test_the_deprecated_timestamp_difference_stands_for_unset_bounds():
    config = BrokerConfig({"log.message.timestamp.difference.max.ms": "5000"})
    log = config.log_config({"message.timestamp.after.max.ms": "10"})
    assert (log.timestamp_before_max_ms, log.timestamp_after_max_ms) == (5000, 10)
    assert BrokerConfig().log_config().timestamp_before_max_ms == 2**63 - 1


def test_roll_jitter_in_hours_or_milliseconds():
    assert BrokerConfig({"log.roll.jitter.hours": "2"}).log_config().segment_jitter_ms == 7_200_000
    assert BrokerConfig({"log.roll.jitter.hours": "2", "log.roll.jitter.ms": "5"}) \
        .log_config().segment_jitter_ms == 5


def test_unknown_topic_config_is_refused_and_named():
    with pytest.raises(ConfigError, match=r"'segment\.byte'"):
        BrokerConfig().log_config({"segment.byte": "1"})


def test_malformed_topic_override_names_the_topic_config():
    with pytest.raises(ConfigError, match=r"retention\.ms"):
        BrokerConfig().log_config({"retention.ms": "soon"})


def test_unknown_broker_config_warns_and_is_kept():
    with pytest.warns(UserWarning, match="my.plugin"):
        config = BrokerConfig({"my.plugin": "x"})
    assert config.originals["my.plugin"] == "x"


def test_from_file_with_overrides(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("broker.id=3\nlog.dirs=/a,/b\n")
    config = BrokerConfig.from_file(path, {"broker.id": "4"})
    assert config["broker.id"] == 4 and config.log_dirs == ("/a", "/b")


def test_the_shipped_server_properties_parse_without_unknown_names():
    import warnings
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "conf" / "server.properties"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = BrokerConfig.from_file(path)
    assert config["zookeeper.connect"] is None  # embedded ZooKeeper by default
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert config["log.dirs"] is None  # broker-lite start keeps the data in its state directory


BEFORE_3_0 = {"inter.broker.protocol.version": "2.8"}


@pytest.mark.parametrize(("version", "magic"), [
    ("0.8.0", 0), ("0.8.2", 0), ("0.9.0", 0), ("0.9.0.1", 0), ("0.10.0-IV0", 1), ("0.10.2", 1),
    ("0.10.2.2", 1), ("0.11.0", 2), ("1.1", 2), ("2.8-IV1", 2), ("2.8.1", 2),
])
def test_message_format_version_gives_the_logs_record_version(version, magic):
    log = BrokerConfig(BEFORE_3_0).log_config({"message.format.version": version})
    assert (log.message_format_version, log.record_version) == (version, magic)
    broker = BrokerConfig({**BEFORE_3_0, "log.message.format.version": version})
    assert broker.log_config().record_version == magic


def test_message_format_version_is_ignored_from_inter_broker_protocol_3_0():
    for protocol in (None, "3.0", "3.9-IV0"):
        config = BrokerConfig({"log.message.format.version": "0.9.0"} | (
            {"inter.broker.protocol.version": protocol} if protocol else {}))
        for log in (config.log_config(), config.log_config({"message.format.version": "0.9.0"})):
            assert (log.message_format_version, log.record_version) == ("3.0-IV1", 2)


def test_a_topics_message_format_newer_than_the_protocol_is_ignored():
    config = BrokerConfig({"inter.broker.protocol.version": "0.10.2",
                           "log.message.format.version": "0.9.0"})
    assert config.log_config({"message.format.version": "0.10.1"}).record_version == 1
    assert config.log_config({"message.format.version": "0.11.0"}).message_format_version == \
        "0.9.0"


@pytest.mark.parametrize("version", ["0.12.0", "0.7", "4.0", "3", "2.9", "latest", "3.0-IV"])
def test_message_format_versions_kafka_does_not_know_are_refused(version):
    with pytest.raises(ConfigError, match=r"message\.format\.version: expected a Kafka version"):
        BrokerConfig().log_config({"message.format.version": version})


def test_down_conversion_is_on_unless_turned_off():
    assert BrokerConfig().log_config().message_downconversion_enable is True
    off = BrokerConfig({"log.message.downconversion.enable": "false"})
    assert off.log_config().message_downconversion_enable is False
    assert off.log_config({"message.downconversion.enable": "true"}) \
        .message_downconversion_enable is True
