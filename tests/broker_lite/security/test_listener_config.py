"""The broker's listeners resolved from its settings as Kafka resolves them: protocols through
listener.security.protocol.map, listener.name.<listener>. over unprefixed settings, JAAS per
listener and mechanism, KIP-684's ssl.client.auth on SASL_SSL, the inter-broker listener and its
client settings, OAUTHBEARER's validator by its callback handler class (KIP-768's settings,
mechanism-prefixed first), and the refusals (with Kafka's messages, no secret quoted)."""

import logging
import re
import warnings

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.security.jaas import parse_jaas_config
from broker_lite.security.oauthbearer import (
    JwtValidator,
    UnsecuredTokenValidator,
    client_message,
)
from broker_lite.security.testing import TestCertificateAuthority, TestIdentityProvider
from broker_lite.server.listeners import (
    ListenerConfigError,
    advertised_endpoints,
    channel_builder,
    inter_broker_client_settings,
    inter_broker_listener_name,
    listener_configs,
    listener_settings,
    oauthbearer_validator,
)
from broker_lite.server.network.channel_builders import (
    PLAINTEXT,
    SaslChannelBuilder,
    SslChannelBuilder,
)
from broker_lite.zk.endpoints import EndPoint

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'username="broker" password="broker-pw" user_broker="broker-pw" '
              'user_alice="alice-pw";')
SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
              'username="broker" password="scram-broker-pw";')


@pytest.fixture(scope="module")
def certificate():
    ca = TestCertificateAuthority()
    return ca, ca.issue("broker", hosts=["127.0.0.1"])


def config(**properties) -> BrokerConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # listener.name.* settings are known ones
        return BrokerConfig({k.replace("__", "."): v for k, v in properties.items()})


def test_listener_prefixed_settings_win_and_are_known():
    effective = {"ssl.keystore.location": "/all.pem", "ssl.client.auth": "none",
                 "listener.name.external.ssl.keystore.location": "/external.pem",
                 "listener.name.internal.ssl.client.auth": "required",
                 "log.retention.ms": "1"}
    assert listener_settings(effective, "EXTERNAL") == {
        "ssl.keystore.location": "/external.pem", "ssl.client.auth": "none"}
    assert listener_settings(effective, "INTERNAL") == {
        "ssl.keystore.location": "/all.pem", "ssl.client.auth": "required"}


def test_custom_listener_names_map_to_protocols(certificate):
    _ca, cert = certificate
    broker = config(listeners="INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
                    **{"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SSL",
                       "inter.broker.listener.name": "INTERNAL",
                       "listener.name.external.ssl.keystore.certificate.chain":
                           cert.certificate_pem,
                       "listener.name.external.ssl.keystore.key": cert.key_pem})
    internal, external = listener_configs(broker)
    assert (internal.name, internal.security_protocol) == ("INTERNAL", "PLAINTEXT")
    assert (external.name, external.security_protocol) == ("EXTERNAL", "SSL")
    assert channel_builder(internal, None, None) is PLAINTEXT
    builder = channel_builder(external, None, None)
    assert isinstance(builder, SslChannelBuilder) and builder.security_protocol == "SSL"
    assert inter_broker_listener_name(broker) == "INTERNAL"
    assert inter_broker_client_settings(broker) == {"security.protocol": "PLAINTEXT"}


def test_sasl_listener_reads_jaas_per_mechanism(certificate):
    ca, cert = certificate
    broker = config(**{
        "listeners": "SASL_SSL://127.0.0.1:0", "inter.broker.listener.name": "SASL_SSL",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "connections.max.reauth.ms": "60000",
        "listener.name.sasl_ssl.plain.connections.max.reauth.ms": "5000",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_ssl.ssl.keystore.certificate.chain": cert.certificate_pem,
        "listener.name.sasl_ssl.ssl.keystore.key": cert.key_pem,
        "ssl.client.auth": "required", "ssl.truststore.certificates": ca.certificate_pem})
    (listener,) = listener_configs(broker)
    sasl = listener.sasl
    assert sasl.mechanisms == ("PLAIN", "SCRAM-SHA-512")
    assert sasl.plain_users() == {"broker": "broker-pw", "alice": "alice-pw"}
    assert sasl.max_reauth_ms == {"PLAIN": 5000, "SCRAM-SHA-512": 60000}
    assert sasl.max_receive_size == 524288
    # KIP-684: ssl.client.auth applies to a SASL_SSL listener only with its prefix
    assert listener.settings["ssl.client.auth"] == "none"
    builder = channel_builder(listener, lambda m, u: None, lambda payload: ([], True))
    assert isinstance(builder, SaslChannelBuilder)
    assert builder.security_protocol == "SASL_SSL"
    client = inter_broker_client_settings(broker)
    assert client["security.protocol"] == "SASL_SSL"
    assert client["sasl.mechanism"] == "SCRAM-SHA-512"
    assert parse_jaas_config(client["sasl.jaas.config"]).options == {
        "username": "broker", "password": "scram-broker-pw"}
    assert client["ssl.keystore.certificate.chain"] == cert.certificate_pem
    assert "ssl.client.auth" not in client


def test_unprefixed_sasl_jaas_config_is_ignored_with_kafkas_warning(caplog):
    broker = config(**{"listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                       "inter.broker.listener.name": "SASL_PLAINTEXT",
                       "sasl.enabled.mechanisms": "SCRAM-SHA-256",
                       "sasl.jaas.config": SCRAM_JAAS})
    with caplog.at_level(logging.WARNING, logger="broker_lite.server.listeners"):
        (listener,) = listener_configs(broker)
    assert listener.sasl.jaas == {}
    assert "Server config sasl.jaas.config should be prefixed with SASL mechanism name, " \
           "ignoring config" in caplog.text
    assert "scram-broker-pw" not in caplog.text


@pytest.mark.parametrize("properties, message", [
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0"},
     "listener.name.sasl_plaintext.sasl.enabled.mechanisms: GSSAPI (Kerberos), Kafka's "
     "default, needs a Java login context"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN,MD5"},
     "unknown mechanism MD5"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN"},
     "PLAIN is enabled but has no users"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config": SCRAM_JAAS},
     "PLAIN takes the PlainLoginModule, not the ScramLoginModule"),
    ({"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
      "listener.name.sasl_plaintext.plain.sasl.jaas.config":
          'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="secret-x"'},
     "expected ';' after the last option"),
    ({"listeners": "EXTERNAL://127.0.0.1:0"}, "no security protocol defined for listener "
                                              "EXTERNAL"),
    ({"listeners": ""}, "no listener is configured"),
])
def test_listener_mistakes_are_refused_naming_the_setting(properties, message):
    with pytest.raises(ListenerConfigError, match=re.escape(message)) as refused:
        listener_configs(BrokerConfig(properties))
    assert "secret-x" not in str(refused.value)


def test_a_tls_listener_without_a_keystore_is_refused():
    (listener,) = listener_configs(BrokerConfig({"listeners": "SSL://127.0.0.1:0"}))
    with pytest.raises(ListenerConfigError,
                       match=r"listener SSL: listener\.name\.ssl\.ssl\.keystore\.location: "
                             r"a TLS listener needs a keystore"):
        channel_builder(listener, None, None)


@pytest.mark.parametrize("properties, message", [
    ({"listeners": "SSL://127.0.0.1:0"},
     "inter.broker.listener.name must be a listener name defined in advertised.listeners. The "
     "valid options based on currently configured listeners are SSL"),
    ({"listeners": "SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
      "inter.broker.listener.name": "SSL", "security.inter.broker.protocol": "SSL"},
     "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."),
    ({"listeners": "SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
      "advertised.listeners": "SSL://h:1", "inter.broker.listener.name": "PLAINTEXT"},
     "valid options based on currently configured listeners are SSL"),
])
def test_the_inter_broker_listener_must_be_advertised(properties, message):
    with pytest.raises(ListenerConfigError, match=re.escape(message)):
        inter_broker_listener_name(BrokerConfig(properties))


def test_security_inter_broker_protocol_names_the_listener():
    broker = BrokerConfig({"listeners": "SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                           "security.inter.broker.protocol": "SSL"})
    assert inter_broker_listener_name(broker) == "SSL"


def test_the_inter_broker_mechanism_needs_the_brokers_login():
    broker = BrokerConfig({"listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                           "inter.broker.listener.name": "SASL_PLAINTEXT",
                           "sasl.enabled.mechanisms": "SCRAM-SHA-256",
                           "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256"})
    with pytest.raises(ListenerConfigError, match=r"scram-sha-256\.sasl\.jaas\.config: the broker "
                                                  r"authenticates to other brokers with "
                                                  r"SCRAM-SHA-256: give the login module's "
                                                  r"username and password"):
        inter_broker_client_settings(broker)
    other = BrokerConfig({**broker.originals, "sasl.mechanism.inter.broker.protocol": "PLAIN"})
    with pytest.raises(ListenerConfigError, match="PLAIN is not among the mechanisms of the "
                                                  "inter-broker listener SASL_PLAINTEXT"):
        inter_broker_client_settings(other)


def test_advertised_endpoints_take_bound_ports_and_must_name_listeners():
    broker = BrokerConfig({"listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://:0"})
    assert advertised_endpoints(broker, {"PLAINTEXT": 9092, "SASL_SSL": 9093}) == (
        EndPoint("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"),
        EndPoint("SASL_SSL", "127.0.0.1", 9093, "SASL_SSL"))
    advertised = BrokerConfig({**broker.originals,
                               "advertised.listeners": "SASL_SSL://broker.example.com:19093"})
    assert advertised_endpoints(advertised, {"SASL_SSL": 9093}) == (
        EndPoint("SASL_SSL", "broker.example.com", 19093, "SASL_SSL"),)
    wrong = BrokerConfig({**broker.originals, "advertised.listeners": "SSL://h:1"})
    with pytest.raises(ListenerConfigError, match=r"advertised\.listeners listener names must be "
                                                  r"equal to or a subset"):
        advertised_endpoints(wrong, {})


def test_pkcs12_and_encrypted_pem_keystores_with_their_passwords(certificate, tmp_path):
    _ca, cert = certificate
    store = cert.write_pkcs12(tmp_path / "broker.p12", "store-pw")
    _, key = cert.write_pem(tmp_path, "broker", password="key-pw")
    chain = tmp_path / "chain.pem"
    chain.write_text(cert.certificate_pem + key.read_text())
    for settings in ({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store),
                      "ssl.keystore.password": "store-pw"},
                     {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(chain),
                      "ssl.key.password": "key-pw"}):
        broker = config(listeners="SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                        **{f"listener.name.ssl.{k}": v for k, v in settings.items()})
        listener = listener_configs(broker)[0]
        assert isinstance(channel_builder(listener, None, None), SslChannelBuilder)
        wrong = config(**{**broker.originals, **{
            f"listener.name.ssl.{k}": "not-the-pw" for k in settings if k.endswith("password")}})
        with pytest.raises(ListenerConfigError, match="wrong") as refused:
            channel_builder(listener_configs(wrong)[0], None, None)
        assert "not-the-pw" not in str(refused.value) and "pw" not in str(refused.value)
    jks = config(listeners="SSL://127.0.0.1:0", **{"ssl.keystore.location": "/etc/broker.jks"})
    with pytest.raises(ListenerConfigError, match="keytool -importkeystore"):
        channel_builder(listener_configs(jks)[0], None, None)


VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
OLD_VALIDATOR = ("org.apache.kafka.common.security.oauthbearer.secured."
                 "OAuthBearerValidatorCallbackHandler")


def oauth_listener(**properties):
    listener, = listener_configs(config(listeners="SASL_PLAINTEXT://127.0.0.1:0",
                                        sasl__enabled__mechanisms="OAUTHBEARER", **properties))
    return listener


def test_oauthbearer_validators_by_callback_handler_class():
    with TestIdentityProvider() as idp:
        assert isinstance(oauthbearer_validator(oauth_listener()), UnsecuredTokenValidator)
        prefix = "listener__name__sasl_plaintext__oauthbearer__"
        validator = oauthbearer_validator(oauth_listener(**{
            f"{prefix}sasl__server__callback__handler__class": OLD_VALIDATOR,
            f"{prefix}sasl__oauthbearer__jwks__endpoint__url": idp.jwks_url,
            f"{prefix}sasl__oauthbearer__expected__audience": "kafka,billing",
            "sasl__oauthbearer__expected__issuer": idp.issuer,  # unprefixed: every listener
            "sasl__oauthbearer__sub__claim__name": "client_id",
            "sasl__oauthbearer__clock__skew__seconds": "5",
            f"{prefix}sasl__oauthbearer__jwks__endpoint__refresh__ms": "60000"}))
        try:
            assert isinstance(validator, JwtValidator)
            assert (validator.expected_audience, validator.expected_issuer,
                    validator.sub_claim, validator.scope_claim, validator.clock_skew_s) == (
                {"kafka", "billing"}, idp.issuer, "client_id", "scope", 5)
            assert validator.keys.refresh_s == 60 and validator.keys.keys  # fetched at start
            assert validator.validate(idp.token({"client_id": "svc"})).principal == "svc"
        finally:
            validator.keys.stop()
        builder = channel_builder(oauth_listener(**{
            "sasl__server__callback__handler__class": VALIDATOR,
            "sasl__oauthbearer__jwks__endpoint__url": idp.jwks_url}), None, None)
        try:
            server = builder.new_server()
            server.handshake("OAUTHBEARER")
            assert server.authenticate(client_message(idp.token({"sub": "alice", "aud": None}))) \
                == b""
            assert server.principal == "User:alice"
        finally:
            builder.close()


@pytest.mark.parametrize("properties, message", [
    ({"sasl__server__callback__handler__class": "com.example.MyHandler"},
     "com.example.MyHandler cannot run here"),
    ({"sasl__server__callback__handler__class": VALIDATOR},
     "sasl.oauthbearer.jwks.endpoint.url: OAuthBearerValidatorCallbackHandler needs"),
    ({"sasl__server__callback__handler__class": VALIDATOR,
      "sasl__oauthbearer__jwks__endpoint__url": "http://127.0.0.1:9/jwks"},
     "could not fetch the JWKS: cannot read http://127.0.0.1:9/jwks"),
    ({"sasl__server__callback__handler__class": VALIDATOR,
      "sasl__oauthbearer__jwks__endpoint__url": "http://127.0.0.1:9/jwks",
      "sasl__oauthbearer__clock__skew__seconds": "-1"},
     "clock.skew.seconds: must be non-negative"),
], ids=["unknown class", "no JWKS endpoint", "unreachable JWKS endpoint", "negative skew"])
def test_oauthbearer_validator_mistakes_stop_the_start(properties, message):
    with pytest.raises(ListenerConfigError, match=re.escape(message)):
        oauthbearer_validator(oauth_listener(**properties))
