"""broker_lite's client and confluent-kafka (librdkafka, a client nobody here wrote, which
checks the server side of PLAIN, SCRAM and OAUTHBEARER) produce and consume over SSL,
SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (Kafka's
unsecured JWS), through a secured front (TLS and SASL with broker_lite.security's server side)
relaying to a real broker_lite broker. Wrong passwords give SASL_AUTHENTICATION_FAILED in both
clients; host name mismatches are reported; the client re-authenticates within the session
lifetime (KIP-368); bad input closes only its own connection."""

import contextlib
import os
import socket
import time
import uuid

import pyarrow as pa
import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from secured_front import SecuredFront

from broker_lite.client import (
    KafkaClient,
    KafkaConnectionError,
    KafkaTimeoutError,
    SaslAuthenticationFailedError,
    SslAuthenticationError,
    TopicPartition,
)
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.security.sasl_server import ServerAuthenticator
from broker_lite.security.scram import ScramCredential
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.security.tls import server_context
from broker_lite.server.testing import start_brokers, stop_brokers
from broker_lite.zk.testing import TEST_ROOT
from kspark.testing.tiers import needs

PASSWORD = "alice-secret"
USERS = {"alice": PASSWORD}
#: As Kafka stores them in ZooKeeper under /config/users/alice.
STORED = {m: ScramCredential.from_password(m, PASSWORD, iterations=4096).to_text()
          for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
CASES = [("SSL", None), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
         ("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"), ("SASL_SSL", "SCRAM-SHA-512"),
         ("SASL_SSL", "OAUTHBEARER")]


def scram_credentials(mechanism, user):
    return ScramCredential.parse(STORED[mechanism]) if user == "alice" else None


@pytest.fixture(scope="module")
def ca():
    return TestCertificateAuthority()


@pytest.fixture(scope="module")
@needs("broker", "zookeeper")
def secured(zookeeper_ensemble, tmp_path_factory, ca):
    """``secured(protocol, max_reauth_ms=0) -> front``: a broker behind a front of that
    security protocol (one broker per front: it advertises the front's address)."""
    started = []
    certificate = ca.issue("broker", hosts=["localhost", "127.0.0.1"])
    tls = server_context({"ssl.keystore.certificate.chain": certificate.certificate_pem,
                          "ssl.keystore.key": certificate.key_pem})

    def start(protocol, max_reauth_ms=0):
        sasl = protocol.startswith("SASL")
        front = SecuredFront(
            ssl_context=tls if protocol.endswith("SSL") else None,
            authenticator_factory=(lambda: ServerAuthenticator(
                ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"], plain_users=USERS,
                scram_credentials=scram_credentials, max_reauth_ms=max_reauth_ms))
            if sasl else None)
        zookeeper_connect = f"{zookeeper_ensemble}{TEST_ROOT}/{uuid.uuid4().hex}"
        brokers = start_brokers(zookeeper_connect, tmp_path_factory.mktemp("b"), properties={
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{front.port}"})
        started.append((front, brokers))
        return front.start(brokers[0].port)

    yield start
    for front, brokers in started:
        front.stop()
        stop_brokers(brokers)


@pytest.fixture(scope="module")
def fronts(secured):
    cache = {}

    def front(protocol):
        if protocol not in cache:
            cache[protocol] = secured(protocol)
        return cache[protocol]
    return front


def kpy_settings(front, protocol, mechanism, ca, password=PASSWORD):
    settings = {"bootstrap.servers": f"127.0.0.1:{front.port}", "security.protocol": protocol,
                "request.timeout.ms": "15000"}
    if protocol.endswith("SSL"):
        settings["ssl.truststore.certificates"] = ca.certificate_pem
    if mechanism == "OAUTHBEARER":  # Kafka's unsecured JWS, for local use
        settings.update({"sasl.mechanism": mechanism, "sasl.jaas.config":
                         "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
                         'required unsecuredLoginStringClaim_sub="alice";'})
    elif mechanism:
        module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
        settings.update({"sasl.mechanism": mechanism, "sasl.jaas.config":
                         f"org.apache.kafka.common.security.{module} required "
                         f'username="alice" password="{password}";'})
    return settings


def librdkafka_settings(front, protocol, mechanism, ca, password=PASSWORD):
    settings = {"bootstrap.servers": f"127.0.0.1:{front.port}", "security.protocol": protocol,
                "log_level": 0}
    if protocol.endswith("SSL"):
        settings["ssl.ca.pem"] = ca.certificate_pem
    if mechanism == "OAUTHBEARER":
        settings.update({"sasl.mechanism": mechanism, "sasl.oauthbearer.config": "principal=alice",
                         "enable.sasl.oauthbearer.unsecure.jwt": True})
    elif mechanism:
        settings.update({"sasl.mechanism": mechanism, "sasl.username": "alice",
                         "sasl.password": password})
    return settings


@pytest.mark.parametrize("protocol, mechanism", CASES)
def test_both_clients_produce_and_consume(fronts, ca, protocol, mechanism):
    front = fronts(protocol)
    topic = f"secured-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    with KafkaClient(kpy_settings(front, protocol, mechanism, ca)) as client:
        client.admin.create_topics([(topic, 1, 1)])
        with client.producer() as producer:
            producer.send_batch(topic, 0, pa.table({"value": [b"kpy-%d" % i for i in range(5)]}))
        producer = Producer(librdkafka_settings(front, protocol, mechanism, ca))
        for i in range(5):
            producer.produce(topic, partition=0, value=b"librdkafka-%d" % i)
        assert producer.flush(30) == 0
        values = [r.value for chunk in client.read_range(tp, 0) for r in chunk.records()]
    assert values == [b"kpy-%d" % i for i in range(5)] + [b"librdkafka-%d" % i for i in range(5)]
    consumer = Consumer({**librdkafka_settings(front, protocol, mechanism, ca),
                         "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got, deadline = [], time.monotonic() + 60
    while len(got) < 10 and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and not message.error():
            got.append(message.value())
    consumer.close()
    assert got == values


@pytest.mark.parametrize("protocol, mechanism", [("SASL_SSL", "PLAIN"),
                                                 ("SASL_SSL", "SCRAM-SHA-512"),
                                                 ("SASL_PLAINTEXT", "SCRAM-SHA-256")])
def test_a_wrong_password_is_sasl_authentication_failed_in_both_clients(fronts, ca, protocol,
                                                                        mechanism):
    front = fronts(protocol)
    with KafkaClient(kpy_settings(front, protocol, mechanism, ca, "wrong-pass")) as client, \
            pytest.raises(SaslAuthenticationFailedError,
                          match="SASL_AUTHENTICATION_FAILED .*invalid") as failure:
        client.topics()
    assert not failure.value.retriable
    assert "wrong-pass" not in str(failure.value) and PASSWORD not in str(failure.value)
    errors = []
    producer = Producer({**librdkafka_settings(front, protocol, mechanism, ca, "wrong-pass"),
                         "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "invalid" in errors[0].str()
    assert not any(PASSWORD in f or "wrong-pass" in f for f in front.failures)


def test_host_name_verification_failure_is_reported(ca):
    certificate = ca.issue("elsewhere", hosts=["broker.invalid"])
    front = SecuredFront(ssl_context=server_context({
        "ssl.keystore.certificate.chain": certificate.certificate_pem,
        "ssl.keystore.key": certificate.key_pem})).start(1)  # never relays
    try:
        settings = {"bootstrap.servers": f"127.0.0.1:{front.port}", "security.protocol": "SSL",
                    "ssl.truststore.certificates": ca.certificate_pem,
                    "request.timeout.ms": "5000"}
        with KafkaClient(settings) as client, pytest.raises(
                SslAuthenticationError, match=f"broker 127.0.0.1:{front.port} failed: "
                                              "certificate verify failed: IP address mismatch, "
                                              "certificate is not valid for '127.0.0.1'"):
            client.topics()
        errors = []
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{front.port}",
                             "security.protocol": "SSL", "ssl.ca.pem": ca.certificate_pem,
                             "log_level": 0, "error_cb": errors.append})
        deadline = time.monotonic() + 30
        while not errors and time.monotonic() < deadline:
            producer.poll(0.5)
        assert errors and "certificate verify failed" in errors[0].str(), errors
    finally:
        front.stop()


def test_the_client_re_authenticates_within_the_session_lifetime(secured, ca):
    front = secured("SASL_SSL", max_reauth_ms=1500)
    with KafkaClient(kpy_settings(front, "SASL_SSL", "SCRAM-SHA-256", ca)) as client:
        client.topics()
        first = front.authentications
        time.sleep(1.6)
        client.topics()  # the same connections, authenticated again first
    assert front.authentications > first
    assert not front.failures


def test_bad_input_closes_only_that_connection(fronts, ca):
    tls_front = fronts("SASL_SSL")
    with socket.create_connection(("127.0.0.1", tls_front.port)) as raw:  # not a TLS handshake
        raw.sendall(b"\x16\x03\x01" + os.urandom(509))  # a TLS record header, then noise
        raw.shutdown(socket.SHUT_WR)
        raw.settimeout(10)
        with contextlib.suppress(ConnectionResetError):
            while raw.recv(1024):  # a TLS alert at most, then closed
                pass
    plaintext = {**kpy_settings(tls_front, "SASL_SSL", "PLAIN", ca),
                 "security.protocol": "SASL_PLAINTEXT", "request.timeout.ms": "5000"}
    with KafkaClient(plaintext) as client, pytest.raises(
            (KafkaConnectionError, KafkaTimeoutError), match="lost during ApiVersions"):
        client.topics()
    sasl_front = fronts("SASL_PLAINTEXT")
    with socket.create_connection(("127.0.0.1", sasl_front.port), timeout=10) as raw:
        raw.sendall(encode_request(ApiKey.SASL_AUTHENTICATE, 1, 7, "c",
                                   {"auth_bytes": b"\0alice\0" + PASSWORD.encode()}))
        size = int.from_bytes(raw.recv(4), "big")
        _, body = parse_response(ApiKey.SASL_AUTHENTICATE, 1, raw.recv(size))
        assert body["error_code"] == ErrorCode.ILLEGAL_SASL_STATE
        assert PASSWORD not in body["error_message"]
    with KafkaClient(kpy_settings(tls_front, "SASL_SSL", "SCRAM-SHA-256", ca)) as client:
        assert isinstance(client.topics(), dict)  # others unaffected
