"""OAUTHBEARER with an identity provider's signed tokens (KIP-768) on a real broker: a listener
whose callback handler is Kafka's OAuthBearerValidatorCallbackHandler checks tokens against the
provider's JWKS endpoint. confluent-kafka (librdkafka's OIDC client-credentials flow),
kafka-python (a token provider) and broker_lite's client (the JAAS clientId/clientSecret flow)
log in as the token's subject and produce and consume; a token the broker does not trust (signed
by another key, for another audience, expired) is SASL_AUTHENTICATION_FAILED with the reason,
and no token reaches the broker's log."""

import logging
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from cryptography.hazmat.primitives.asymmetric import rsa
from kafka import KafkaConsumer, KafkaProducer
from kafka.net.sasl.oauth import AbstractTokenProvider

from broker_lite.client import KafkaClient, SaslAuthenticationFailedError
from broker_lite.common.tiers import needs
from broker_lite.security.testing import SigningKey, TestIdentityProvider
from broker_lite.server.testing import start_brokers, stop_brokers
from broker_lite.zk.testing import TEST_ROOT

VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
OAUTH_JAAS = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
              "{options};")


@pytest.fixture(scope="module")
def idp():
    with TestIdentityProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
@needs("broker", "zookeeper")
def broker(zookeeper_ensemble, tmp_path_factory, idp):
    prefix = "listener.name.oidc.oauthbearer."
    properties = {
        "listeners": "PLAINTEXT://127.0.0.1:0,OIDC://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,OIDC:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "OAUTHBEARER",
        f"{prefix}sasl.server.callback.handler.class": VALIDATOR,
        f"{prefix}sasl.oauthbearer.jwks.endpoint.url": idp.jwks_url,
        f"{prefix}sasl.oauthbearer.expected.audience": idp.audience,
        f"{prefix}sasl.oauthbearer.expected.issuer": idp.issuer,
        "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    brokers = start_brokers(f"{zookeeper_ensemble}{TEST_ROOT}/{uuid.uuid4().hex}",
                            tmp_path_factory.mktemp("oidc"), properties=properties)
    yield brokers[0]
    stop_brokers(brokers)


def address(broker) -> str:
    return f"127.0.0.1:{broker.bound_port('OIDC')}"


def librdkafka_oidc(broker, idp, client_id: str) -> dict:
    return {"bootstrap.servers": address(broker), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.client.id": client_id,
            "sasl.oauthbearer.client.secret": "client-secret",
            "sasl.oauthbearer.token.endpoint.url": idp.token_url,
            "sasl.oauthbearer.scope": "kafka", "log_level": 0}


class Tokens(AbstractTokenProvider):
    """kafka-python's OAUTHBEARER token provider."""

    def __init__(self, make_token):
        self.make_token = make_token

    def token(self):
        return self.make_token()


def test_librdkafka_logs_in_with_oidc_client_credentials(broker, idp, principals):
    topic = f"oidc-{uuid.uuid4().hex[:6]}"
    producer = Producer(librdkafka_oidc(broker, idp, "svc-orders"))
    producer.produce(topic, value=b"signed in with a token")
    assert producer.flush(30) == 0
    consumer = Consumer({**librdkafka_oidc(broker, idp, "svc-audit"), "group.id": "audit",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        got, deadline = [], time.monotonic() + 60
        while not got and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and not message.error():
                got.append(message.value())
    finally:
        consumer.close()
    assert got == [b"signed in with a token"]
    assert {p for listener, p in principals if listener == "OIDC"} == {
        "User:svc-orders", "User:svc-audit"}


def test_kafka_python_and_the_kpy_client_log_in_with_signed_tokens(broker, idp, principals):
    topic = f"oidc-{uuid.uuid4().hex[:6]}"
    settings = {"bootstrap_servers": address(broker), "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "OAUTHBEARER", "request_timeout_ms": 15000}
    producer = KafkaProducer(**settings, sasl_oauth_token_provider=Tokens(
        lambda: idp.token({"sub": "carol"}, alg="ES256")))
    producer.send(topic, b"from kafka-python").get(30)
    producer.close()
    with KafkaClient({"bootstrap.servers": address(broker), "security.protocol": "SASL_PLAINTEXT",
                      "sasl.mechanism": "OAUTHBEARER",
                      "sasl.oauthbearer.token.endpoint.url": idp.token_url,
                      "sasl.jaas.config": OAUTH_JAAS.format(
                          options='clientId="svc-kpy" clientSecret="s" scope="kafka"')}) as client:
        assert topic in client.topics()
    consumer = KafkaConsumer(topic, **settings, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000,
                             sasl_oauth_token_provider=Tokens(lambda: idp.token({"sub": "dave"})))
    assert [m.value for m in consumer] == [b"from kafka-python"]
    consumer.close()
    # on a busy machine the broker may still be handling a last request of the librdkafka
    # clients of the test before (same broker) when this test starts recording
    earlier = {"User:svc-orders", "User:svc-audit"}
    assert {p for listener, p in principals if listener == "OIDC"} - earlier == {
        "User:carol", "User:svc-kpy", "User:dave"}


def test_tokens_the_broker_does_not_trust_are_refused(broker, idp, caplog):
    caplog.set_level(logging.DEBUG, logger="broker_lite")
    stranger = SigningKey("rsa-1", rsa.generate_private_key(65537, 2048))
    refused = {
        idp.token({"sub": "mallory"}, key=stranger): "the signature is invalid",
        idp.token({"sub": "mallory", "aud": "billing"}): "is none of kafka",
        idp.token({"sub": "mallory"}, lifetime_s=-60): "has expired",
    }
    for token, reason in refused.items():
        with KafkaClient({"bootstrap.servers": address(broker),
                          "security.protocol": "SASL_PLAINTEXT",
                          "sasl.mechanism": "OAUTHBEARER", "request.timeout.ms": "10000",
                          "oauth_cb": lambda config, t=token: (t, time.time() + 3600)}) \
                as client, pytest.raises(SaslAuthenticationFailedError, match=reason) as failure:
            client.topics()
        assert token not in str(failure.value)
    errors = []
    producer = Producer({"bootstrap.servers": address(broker),
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
                         "oauth_cb": lambda config: (idp.token({"sub": "m"}, key=stranger),
                                                     time.time() + 3600),
                         "error_cb": errors.append, "log_level": 0})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "the signature is invalid" in errors[0].str()
    assert "Failed authentication with 127.0.0.1" in caplog.text
    assert not any(token in caplog.text for token in refused)
