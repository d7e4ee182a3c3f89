"""kafka.security.protocol, kafka.ssl.* and kafka.sasl.* reach the source's and sink's client
settings, and no secret is printed: options reprs, the client config (also after the pickling
that ships it to executors), the unused-settings warning and option errors."""

import logging
import pickle

import pytest

from broker_lite.client import ClientConfig
from broker_lite.security.testing import TestCertificateAuthority
from kspark.options import OptionError
from kspark.sink.options import parse_sink_options
from kspark.source.options import parse_source_options

SECRETS = ("alice-secret", "key-password")


@pytest.fixture(scope="module")
def options():
    ca = TestCertificateAuthority()
    client = ca.issue("alice", client=True)
    return {
        "kafka.bootstrap.servers": "127.0.0.1:9093",
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                  'required username="alice" password="alice-secret";',
        "kafka.ssl.truststore.certificates": ca.certificate_pem,
        "kafka.ssl.keystore.certificate.chain": client.certificate_pem,
        "kafka.ssl.keystore.key": client.key_pem_encrypted("key-password"),
        "kafka.ssl.key.password": "key-password",
        "subscribe": "events", "topic": "out",
    }


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text
    assert "PRIVATE KEY" not in text


def test_source_and_sink_options_carry_the_settings_and_print_redacted(options, caplog):
    source_only = {k: v for k, v in options.items() if k != "topic"}
    with caplog.at_level(logging.WARNING):
        source = parse_source_options(source_only)
    sink = parse_sink_options({k: v for k, v in options.items() if k != "subscribe"})
    for parsed in (source, sink):
        assert parsed.client["sasl.jaas.config"] == options["kafka.sasl.jaas.config"]
        assert_no_secret(repr(parsed))
        assert_no_secret(str(parsed.client))
        config = pickle.loads(pickle.dumps(ClientConfig(parsed.client)))  # as on executors
        assert config.sasl.mechanism == "SCRAM-SHA-512" and config.ssl_context is not None
        assert_no_secret(repr(config))
    assert_no_secret(caplog.text)
    assert "kafka.ssl" not in caplog.text  # security settings are used, not "unused"


def test_bad_security_options_name_the_option_without_the_secret(options):
    bad = {**{k: v for k, v in options.items() if k != "topic"},
           "kafka.sasl.jaas.config": 'ScramLoginModule required password="alice-secret"'}
    with pytest.raises(OptionError, match=r"option 'kafka\.sasl\.jaas\.config': ") as failure:
        parse_source_options(bad)
    assert_no_secret(str(failure.value))
    wrong_key = {**{k: v for k, v in options.items() if k != "topic"},
                 "kafka.ssl.key.password": "not-the-key-password"}
    with pytest.raises(OptionError, match=r"wrong ssl\.key\.password") as failure:
        parse_source_options(wrong_key)
    assert "not-the-key-password" not in str(failure.value)
