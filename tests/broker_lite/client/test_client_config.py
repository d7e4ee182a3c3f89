"""Client settings: Kafka's names and defaults, validation errors that name the setting, the
producer-side settings passed through, and Spark's ``kafka.``-prefixed options."""

import pickle

import pytest

from broker_lite.client import ClientConfig, ConfigError, KafkaClient
from broker_lite.client.config import (
    CLIENT_SETTINGS,
    PASS_THROUGH_SETTINGS,
    PRODUCER_SETTINGS,
    parse_servers,
)


def test_defaults_are_kafkas():
    config = ClientConfig({"bootstrap.servers": "127.0.0.1:9092"})
    assert (config.client_id, config.request_timeout_ms, config.socket_connection_setup_timeout_ms,
            config.retry_backoff_ms, config.max_partition_fetch_bytes, config.fetch_max_bytes,
            config.fetch_min_bytes, config.fetch_max_wait_ms, config.isolation_level,
            config.group_id, config.metadata_max_age_ms) == (
        "kpy", 30000, 10000, 100, 1048576, 52428800, 1, 500, "read_uncommitted", None, 300000)


def test_values_are_parsed_from_strings_and_python_values():
    config = ClientConfig({"bootstrap.servers": "a:1", "request.timeout.ms": "1500",
                           "fetch.min.bytes": 10, "isolation.level": " read_committed ",
                           "group.id": "g", "client.id": "spark-7"})
    assert (config.request_timeout_ms, config.fetch_min_bytes, config.isolation_level,
            config.group_id, config.client_id) == (1500, 10, "read_committed", "g", "spark-7")


@pytest.mark.parametrize("name, accepted, refused", [
    # Kafka's ValidString is case-sensitive (this client used to lower-case them)
    ("isolation.level", "read_committed", "READ_COMMITTED"),
    ("acks", "all", "ALL"),
    ("compression.type", "lz4", "LZ4"),
])
def test_choices_are_case_sensitive_as_in_kafka(name, accepted, refused):
    ClientConfig({"bootstrap.servers": "b:1", name: accepted})
    with pytest.raises(ConfigError, match=f"^{name}: expected one of .*got '{refused}'"):
        ClientConfig({"bootstrap.servers": "b:1", name: refused})


def test_security_protocol_and_booleans_ignore_case_as_in_kafka():
    config = ClientConfig({"bootstrap.servers": "b:1", "security.protocol": "PLAINTEXT",
                           "enable.idempotence": " FALSE "})
    assert (config.security_protocol, config.enable_idempotence) == ("plaintext", False)


def test_numbers_are_kafkas_int_or_long():
    # request.timeout.ms is an INT in Kafka: above 2^31 - 1 is refused; retry.backoff.ms a LONG
    with pytest.raises(ConfigError, match=r"^request.timeout.ms: .*\[1, 2147483647\]"):
        ClientConfig({"bootstrap.servers": "b:1", "request.timeout.ms": "3000000000"})
    config = ClientConfig({"bootstrap.servers": "b:1", "retry.backoff.ms": "3000000000"})
    assert config.retry_backoff_ms == 3_000_000_000


@pytest.mark.parametrize("text, servers", [
    ("b1:9092", [("b1", 9092)]),
    ("b1:9092, b2:9093 ,", [("b1", 9092), ("b2", 9093)]),
    ("b1", [("b1", 9092)]),
    ("PLAINTEXT://b1:19092", [("b1", 19092)]),
    ("[::1]:9092,[fe80::1]", [("::1", 9092), ("fe80::1", 9092)]),
])
def test_bootstrap_servers(text, servers):
    assert parse_servers(text) == servers


@pytest.mark.parametrize("settings, key, fragment", [
    ({}, "bootstrap.servers", "required"),
    ({"bootstrap.servers": ""}, "bootstrap.servers", "at least one"),
    ({"bootstrap.servers": "b:x"}, "bootstrap.servers", "bad port"),
    ({"bootstrap.servers": "TLS://b:1"}, "bootstrap.servers", "unknown security protocol"),
    ({"bootstrap.servers": "b:1", "request.timeout.ms": "soon"}, "request.timeout.ms",
     "integer"),
    ({"bootstrap.servers": "b:1", "request.timeout.ms": "0"}, "request.timeout.ms", "[1,"),
    ({"bootstrap.servers": "b:1", "isolation.level": "dirty"}, "isolation.level",
     "read_committed"),
    ({"bootstrap.servers": "b:1", "fetch.max.wait": "1"}, "fetch.max.wait",
     "did you mean fetch.max.wait.ms"),
    ({"bootstrap.servers": "b:1", "no.such.thing": "1"}, "no.such.thing", "unknown"),
    ({"bootstrap.servers": "b:1", "security.protocol": "TLS"}, "security.protocol",
     "sasl_ssl"),
    ({"bootstrap.servers": "b:1", "security.protocol": "SASL_SSL"}, "sasl.mechanism",
     "GSSAPI is not supported"),
    ({"bootstrap.servers": "b:1", "security.protocol": "SSL", "ssl.truststore.location": "/x"},
     "ssl.truststore.type", "keytool -importkeystore"),
    ({"bootstrap.servers": "b:1", "security.protocol": "SASL_PLAINTEXT",
      "sasl.mechanism": "PLAIN"}, "sasl.jaas.config", "needs a user name and password"),
    ({"bootstrap.servers": "b:1", "security.protocol": "sasl_plaintext",
      "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": 'Bad required password="pw1";'},
     "sasl.jaas.config", "unknown login module"),
    ({"bootstrap.servers": "b:1", "ssl.truststore.locaton": "/x"}, "ssl.truststore.locaton",
     "did you mean ssl.truststore.location"),
    ({"bootstrap.servers": "b:1", "sasl.usrname": "a"}, "sasl.usrname",
     "did you mean sasl.username"),
    ({"bootstrap.servers": "b:1", "group.id": ""}, "group.id", "empty"),
    ({"bootstrap.servers": "b:1", "check.crcs": "sometimes"}, "check.crcs", "true or false"),
])
def test_bad_settings_name_the_key(settings, key, fragment):
    with pytest.raises(ConfigError) as info:
        ClientConfig(settings)
    assert info.value.key == key
    assert str(info.value).startswith(key + ":")
    assert fragment in str(info.value)


def test_producer_and_consumer_settings_pass_through():
    given = {"acks": "all", "compression.type": "lz4", "linger.ms": "5", "batch.size": "16384",
             "enable.idempotence": True, "transactional.id": "tx-1",
             "transaction.timeout.ms": "60000", "auto.offset.reset": "earliest"}
    config = ClientConfig({"bootstrap.servers": "b:1", **given})
    assert config.extra == {k: "true" if v is True else v for k, v in given.items()}
    assert not set(CLIENT_SETTINGS) & PASS_THROUGH_SETTINGS


def test_check_crcs_is_on_unless_set_false():
    assert ClientConfig({"bootstrap.servers": "b:1"}).check_crcs is True
    assert ClientConfig({"bootstrap.servers": "b:1", "check.crcs": "false"}).check_crcs is False
    assert ClientConfig({"bootstrap.servers": "b:1", "check.crcs": False}).check_crcs is False
    assert ClientConfig.from_spark_options({"kafka.bootstrap.servers": "b:1",
                                            "kafka.check.crcs": "FALSE"}).check_crcs is False


def test_librdkafka_alias_for_bootstrap_servers():
    assert ClientConfig({"metadata.broker.list": "b:7"}).bootstrap_servers == [("b", 7)]


def test_spark_options_take_the_kafka_prefixed_ones_and_errors_name_the_option():
    config = ClientConfig.from_spark_options({
        "kafka.bootstrap.servers": "b:1", "kafka.request.timeout.ms": "700",
        "subscribe": "events", "startingOffsets": "earliest"})
    assert (config.bootstrap_servers, config.request_timeout_ms) == ([("b", 1)], 700)
    with pytest.raises(ConfigError) as info:
        KafkaClient.from_options({"kafka.bootstrap.servers": "b:1", "kafka.fetch.max.byte": "1"})
    assert info.value.key == "kafka.fetch.max.byte"
    assert "did you mean kafka.fetch.max.bytes" in str(info.value)
    with pytest.raises(ConfigError, match=r"^kafka\.bootstrap\.servers: required"):
        KafkaClient.from_options({"subscribe": "events"})


def test_security_settings_are_kept_and_hidden_when_printed():
    jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
            'username="alice" password="alice-secret";')
    config = ClientConfig({"bootstrap.servers": "SASL_SSL://b:1", "security.protocol": "SASL_SSL",
                           "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas,
                           "ssl.endpoint.identification.algorithm": ""})
    assert config.security_protocol == "sasl_ssl"
    assert config.sasl.mechanism == "SCRAM-SHA-256" and config.sasl.username == "alice"
    assert config.ssl_context is not None and not config.ssl_context.check_hostname
    assert "alice-secret" not in repr(config)
    copy = pickle.loads(pickle.dumps(config))  # Spark ships configs to executors
    assert copy.ssl_context is not None and copy.sasl.username == "alice"


def test_shared_connections_keep_the_tls_and_sasl_settings():
    """Connections shared between tasks are opened with the security settings too, and two
    configs that authenticate differently never share them."""
    secured = {"bootstrap.servers": "b1", "security.protocol": "SASL_PLAINTEXT",
               "sasl.mechanism": "SCRAM-SHA-256",
               "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule '
                                   'required username="alice" password="alice-secret";'}
    config = ClientConfig({**secured, "max.partition.fetch.bytes": "1024"})
    shared = config.connection_config()
    assert shared.security == config.security
    assert shared.sasl is not None and shared.sasl.mechanism == "SCRAM-SHA-256"
    other = ClientConfig({**secured, "sasl.jaas.config": secured["sasl.jaas.config"]
                          .replace("alice", "bob")})
    assert config.connection_key != other.connection_key
    assert shared.connection_key == config.connection_key


def test_the_declared_attributes_are_the_settings():
    """The attributes the class declares (for the type check) are its settings, all of them."""
    settings = {name.replace(".", "_") for name in (*CLIENT_SETTINGS, *PRODUCER_SETTINGS)}
    assert set(ClientConfig.__annotations__) == settings
