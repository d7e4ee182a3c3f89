"""Clients nobody here wrote (confluent-kafka, which wraps librdkafka, and kafka-python), and
broker_lite's own client, against broker_lite's secured listeners directly: SSL (with and
without client certificates, the principal from the certificate), SASL_PLAINTEXT and SASL_SSL
with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (Kafka's unsecured JWS): admin,
produce, consume, consumer groups and transactions. Wrong passwords give
SASL_AUTHENTICATION_FAILED in every client; host name mismatches are reported; clients
re-authenticate within the session lifetime on the same connection (KIP-368); bad input closes
only its own connection, and no secret reaches the broker's log."""

import contextlib
import json
import logging
import os
import socket
import ssl
import time
import uuid

import pyarrow as pa
import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import KafkaError as KafkaPythonError
from kafka.net.sasl.oauth import AbstractTokenProvider

from broker_lite.client import (
    KafkaClient,
    KafkaConnectionError,
    KafkaTimeoutError,
    SaslAuthenticationFailedError,
    SslAuthenticationError,
    TopicPartition,
)
from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.security.oauthbearer import unsecured_jws
from broker_lite.security.plain import plain_client_message
from broker_lite.security.scram import ScramClient, ScramCredential
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.server.testing import recv_exactly, start_brokers, stop_brokers
from broker_lite.zk.client import connect
from broker_lite.zk.testing import TEST_ROOT
from broker_lite.zk.users import set_user_config

PASSWORD = "alice-secret"
WRONG = "wrong-pass"
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
CASES = [("SSL", None), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
         ("SASL_SSL", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-256"), ("SASL_SSL", "SCRAM-SHA-512"),
         ("SASL_SSL", "OAUTHBEARER")]
# listener -> security protocol: each protocol's own, and SSL ones for client certificates
# (required), for a certificate of another host name, a SASL_SSL one whose sessions last
# 1.5 s (re-authentication), and a SASL_SSL one requesting client certificates.
LISTENERS = {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "MTLS": "SSL", "WRONGHOST": "SSL",
             "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL", "REAUTH": "SASL_SSL",
             "REQUESTED": "SASL_SSL"}


def plain_jaas(**users: str) -> str:
    options = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {options};"


@pytest.fixture(scope="module")
def ca():
    return TestCertificateAuthority()


@pytest.fixture(scope="module")
@needs("broker", "zookeeper")
def secured(zookeeper_ensemble, tmp_path_factory, ca):
    """One broker with every listener of :data:`LISTENERS`; alice's SCRAM credentials stored
    in ZooKeeper before it starts, as Kafka's bootstrapping with kafka-configs does."""
    zookeeper_connect = f"{zookeeper_ensemble}{TEST_ROOT}/{uuid.uuid4().hex}"
    client = connect(zookeeper_connect)
    try:
        set_user_config(client, "alice", {
            m: ScramCredential.from_password(m, PASSWORD, iterations=4096).to_text()
            for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")})
    finally:
        client.stop()
        client.close()
    good = ca.issue("broker", hosts=["localhost", "127.0.0.1"])
    elsewhere = ca.issue("elsewhere", hosts=["broker.invalid"])
    properties = {
        "listeners": ",".join(f"{name}://127.0.0.1:0" for name in LISTENERS),
        "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in LISTENERS.items()),
        "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": good.certificate_pem, "ssl.keystore.key": good.key_pem,
        "listener.name.wronghost.ssl.keystore.certificate.chain": elsewhere.certificate_pem,
        "listener.name.wronghost.ssl.keystore.key": elsewhere.key_pem,
        "ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca.certificate_pem,
        "listener.name.ssl.ssl.client.auth": "requested",
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.requested.ssl.client.auth": "requested",
        "sasl.enabled.mechanisms": ",".join(MECHANISMS),
        "listener.name.reauth.connections.max.reauth.ms": "1500",
        "transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3",
        "offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    for listener in ("sasl_plaintext", "sasl_ssl", "reauth", "requested"):
        properties[f"listener.name.{listener}.plain.sasl.jaas.config"] = \
            plain_jaas(alice=PASSWORD)
    brokers = start_brokers(zookeeper_connect, tmp_path_factory.mktemp("secured"),
                            properties=properties)
    yield brokers[0]
    stop_brokers(brokers)


def address(broker, listener: str) -> str:
    return f"127.0.0.1:{broker.bound_port(listener)}"


def kpy_settings(broker, protocol, mechanism, ca, password=PASSWORD, listener=None,
                 certificate=None):
    settings = {"bootstrap.servers": address(broker, listener or protocol),
                "security.protocol": protocol, "request.timeout.ms": "15000"}
    if protocol.endswith("SSL"):
        settings["ssl.truststore.certificates"] = ca.certificate_pem
    if certificate is not None:
        settings["ssl.keystore.certificate.chain"] = certificate.certificate_pem
        settings["ssl.keystore.key"] = certificate.key_pem
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


def librdkafka_settings(broker, protocol, mechanism, ca, password=PASSWORD, listener=None,
                        certificate=None):
    settings = {"bootstrap.servers": address(broker, listener or protocol),
                "security.protocol": protocol, "log_level": 0}
    if protocol.endswith("SSL"):
        settings["ssl.ca.pem"] = ca.certificate_pem
    if certificate is not None:
        settings["ssl.certificate.pem"] = certificate.certificate_pem
        settings["ssl.key.pem"] = certificate.key_pem
    if mechanism == "OAUTHBEARER":
        settings.update({"sasl.mechanism": mechanism, "sasl.oauthbearer.config": "principal=alice",
                         "enable.sasl.oauthbearer.unsecure.jwt": True})
    elif mechanism:
        settings.update({"sasl.mechanism": mechanism, "sasl.username": "alice",
                         "sasl.password": password})
    return settings


class UnsecuredTokens(AbstractTokenProvider):
    """kafka-python's OAUTHBEARER token provider: Kafka's unsecured JWS for alice."""

    def token(self):
        return unsecured_jws({"sub": "alice"}, lifetime_s=3600)


def kafka_python_settings(broker, protocol, mechanism, ca, password=PASSWORD, listener=None,
                          certificate_files=None):
    settings = {"bootstrap_servers": address(broker, listener or protocol),
                "security_protocol": protocol, "request_timeout_ms": 15000}
    if protocol.endswith("SSL"):
        context = ssl.create_default_context(cadata=ca.certificate_pem)
        if certificate_files is not None:
            context.load_cert_chain(*certificate_files)
        settings["ssl_context"] = context
    if mechanism == "OAUTHBEARER":
        settings.update(sasl_mechanism=mechanism, sasl_oauth_token_provider=UnsecuredTokens())
    elif mechanism:
        settings.update(sasl_mechanism=mechanism, sasl_plain_username="alice",
                        sasl_plain_password=password)
    return settings


def consume(consumer, count: int, timeout_s: float = 60) -> list:
    got, deadline = [], time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and not message.error():
            got.append(message.value())
    return got


@pytest.mark.parametrize("protocol, mechanism", CASES)
def test_both_clients_produce_and_consume(secured, ca, protocol, mechanism):
    topic = f"secured-{uuid.uuid4().hex[:6]}"
    tp = TopicPartition(topic, 0)
    with KafkaClient(kpy_settings(secured, protocol, mechanism, ca)) as client:
        client.admin.create_topics([(topic, 1, 1)])
        with client.producer() as producer:
            producer.send_batch(topic, 0, pa.table({"value": [b"kpy-%d" % i for i in range(5)]}))
        producer = Producer(librdkafka_settings(secured, protocol, mechanism, ca))
        for i in range(5):
            producer.produce(topic, partition=0, value=b"librdkafka-%d" % i)
        assert producer.flush(30) == 0
        values = [r.value for chunk in client.read_range(tp, 0) for r in chunk.records()]
    assert values == [b"kpy-%d" % i for i in range(5)] + [b"librdkafka-%d" % i for i in range(5)]
    consumer = Consumer({**librdkafka_settings(secured, protocol, mechanism, ca),
                         "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = consume(consumer, 10)
    consumer.close()
    assert got == values


@pytest.mark.parametrize("protocol, mechanism", CASES)
def test_kafka_python_administers_produces_and_consumes_in_a_group(secured, ca, protocol,
                                                                    mechanism):
    settings = kafka_python_settings(secured, protocol, mechanism, ca)
    topic = f"kp-{uuid.uuid4().hex[:6]}"
    admin = KafkaAdminClient(**settings)
    try:
        admin.create_topics([KpNewTopic(topic, 2, 1)])
        assert topic in admin.list_topics()
    finally:
        admin.close()
    producer = KafkaProducer(**settings)
    for i in range(6):
        producer.send(topic, value=b"kp-%d" % i, partition=i % 2)
    producer.flush(30)
    producer.close()
    group = f"g-{topic}"
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                             consumer_timeout_ms=15000, enable_auto_commit=False, **settings)
    got = []
    for message in consumer:
        got.append(message.value)
        if len(got) == 6:
            break
    consumer.commit(timeout_ms=30000)
    consumer.close()
    assert sorted(got) == [b"kp-%d" % i for i in range(6)]
    with KafkaClient(kpy_settings(secured, protocol, mechanism, ca)) as client:
        committed = client.committed(group)
    assert {tp.partition: offset for tp, offset in committed.items()} == {0: 3, 1: 3}


@pytest.mark.parametrize("protocol, mechanism", [("SSL", None), ("SASL_PLAINTEXT", "PLAIN"),
                                                 ("SASL_SSL", "SCRAM-SHA-512"),
                                                 ("SASL_SSL", "OAUTHBEARER")])
def test_confluent_kafka_admin_and_transactions(secured, ca, protocol, mechanism):
    settings = librdkafka_settings(secured, protocol, mechanism, ca)
    topic = f"txn-{uuid.uuid4().hex[:6]}"
    admin = AdminClient(settings)
    for future in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        future.result(30)
    assert topic in admin.list_topics(timeout=30).topics
    producer = Producer({**settings, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, partition=0, value=b"aborted")
    producer.abort_transaction(30)
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, partition=i % 2, value=b"committed-%d" % i)
    producer.commit_transaction(30)
    consumer = Consumer({**settings, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.subscribe([topic])
    got = consume(consumer, 4)
    consumer.commit(asynchronous=False)
    committed = consumer.committed([CkTopicPartition(topic, 0), CkTopicPartition(topic, 1)],
                                   timeout=30)
    consumer.close()
    assert sorted(got) == [b"committed-%d" % i for i in range(4)]
    offsets = {tp.partition: tp.offset for tp in committed}
    assert all(offset >= 2 for offset in offsets.values()), offsets  # past both records
    with KafkaClient(kpy_settings(secured, protocol, mechanism, ca)) as client:
        assert {tp.partition: o for tp, o in client.committed(f"g-{topic}").items()} == offsets


def test_kafka_python_transactions_over_sasl_ssl(secured, ca):
    settings = kafka_python_settings(secured, "SASL_SSL", "SCRAM-SHA-256", ca)
    topic = f"kptxn-{uuid.uuid4().hex[:6]}"
    with KafkaClient(kpy_settings(secured, "SASL_SSL", "SCRAM-SHA-256", ca)) as client:
        client.admin.create_topics([(topic, 1, 1)])
    producer = KafkaProducer(transactional_id=f"tx-{topic}", **settings)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, value=b"aborted")
    producer.abort_transaction()
    producer.begin_transaction()
    producer.send(topic, value=b"committed")
    producer.commit_transaction()
    producer.close()
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000,
                             isolation_level="read_committed", **settings)
    assert [m.value for m in consumer] == [b"committed"]
    consumer.close()


def test_client_certificates_give_the_principal(secured, ca, tmp_path, principals):
    alice = ca.issue("alice", client=True)
    files = alice.write_pem(tmp_path, "alice")
    topic = f"mtls-{uuid.uuid4().hex[:6]}"
    with KafkaClient(kpy_settings(secured, "SSL", None, ca, listener="MTLS",
                                  certificate=alice)) as client:
        client.admin.create_topics([(topic, 1, 1)])
    producer = Producer(librdkafka_settings(secured, "SSL", None, ca, listener="MTLS",
                                            certificate=alice))
    producer.produce(topic, value=b"from alice's certificate")
    assert producer.flush(30) == 0
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000,
                             **kafka_python_settings(secured, "SSL", None, ca, listener="MTLS",
                                                     certificate_files=files))
    assert [m.value for m in consumer] == [b"from alice's certificate"]
    consumer.close()
    assert {p for listener, p in principals if listener == "MTLS"} == {"User:CN=alice"}
    principals.clear()
    with KafkaClient(kpy_settings(secured, "SSL", None, ca, listener="SSL")) as client:
        client.topics()  # requested, none given: anonymous
    with KafkaClient(kpy_settings(secured, "SASL_SSL", "SCRAM-SHA-512", ca)) as client:
        client.topics()
    # PLAINTEXT is the inter-broker listener: the broker's own requests may come in there
    assert {(listener, p) for listener, p in principals if listener != "PLAINTEXT"} == {
        ("SSL", "User:ANONYMOUS"), ("SASL_SSL", "User:alice")}


def test_a_required_client_certificate_missing_fails_the_handshake(secured, ca):
    with KafkaClient({**kpy_settings(secured, "SSL", None, ca, listener="MTLS"),
                      "request.timeout.ms": "5000"}) as client, \
            pytest.raises((SslAuthenticationError, KafkaConnectionError, KafkaTimeoutError)):
        client.topics()
    errors = []
    producer = Producer({**librdkafka_settings(secured, "SSL", None, ca, listener="MTLS"),
                         "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors and errors[0].code() in (KafkaError._SSL, KafkaError._TRANSPORT,
                                           KafkaError._ALL_BROKERS_DOWN), errors


def test_librdkafka_leaves_out_a_certificate_the_listener_does_not_trust(secured, ca,
                                                                          principals):
    """A listener asking for certificates names the CAs it trusts, as Kafka's do: librdkafka
    then sends none that they did not sign, and logs in with SASL where certificates are only
    requested (were it sent, the handshake would fail on it)."""
    stranger = TestCertificateAuthority("another CA").issue("mallory", client=True)
    topic = f"requested-{uuid.uuid4().hex[:6]}"
    producer = Producer(librdkafka_settings(secured, "SASL_SSL", "SCRAM-SHA-512", ca,
                                            listener="REQUESTED", certificate=stranger))
    producer.produce(topic, value=b"logged in with SCRAM")
    assert producer.flush(30) == 0
    assert {p for listener, p in principals if listener == "REQUESTED"} == {"User:alice"}


@pytest.mark.parametrize("protocol, mechanism", [("SASL_SSL", "PLAIN"),
                                                 ("SASL_SSL", "SCRAM-SHA-512"),
                                                 ("SASL_PLAINTEXT", "SCRAM-SHA-256")])
def test_a_wrong_password_is_sasl_authentication_failed_in_both_clients(secured, ca, protocol,
                                                                        mechanism, caplog):
    caplog.set_level(logging.DEBUG, logger="broker_lite")
    with KafkaClient(kpy_settings(secured, protocol, mechanism, ca, WRONG)) as client, \
            pytest.raises(SaslAuthenticationFailedError,
                          match=r"SASL_AUTHENTICATION_FAILED .*invalid") as failure:
        client.topics()
    assert not failure.value.retriable
    assert WRONG not in str(failure.value) and PASSWORD not in str(failure.value)
    errors = []
    producer = Producer({**librdkafka_settings(secured, protocol, mechanism, ca, WRONG),
                         "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "invalid" in errors[0].str()
    # Kafka (SaslServerAuthenticator, Selector's delayed close) sends the refusal at the end of
    # connection.failed.authentication.delay.ms and closes once it is written; broker_lite does
    # the same. kafka-python reads until the socket has no more and, meeting the end of the
    # stream, drops what it read with it, the refusal: it keeps failing, and says it cannot
    # bootstrap
    refused_before = secured.server.gauges()["failed_authentications"]
    with pytest.raises(KafkaPythonError) as refused:
        KafkaConsumer(**{**kafka_python_settings(secured, protocol, mechanism, ca, WRONG),
                         "request_timeout_ms": 3000}).topics()
    assert WRONG not in str(refused.value)
    assert secured.server.gauges()["failed_authentications"] > refused_before
    assert "Failed authentication with 127.0.0.1" in caplog.text
    assert WRONG not in caplog.text and PASSWORD not in caplog.text


def test_host_name_verification_failure_is_reported(secured, ca):
    port = secured.bound_port("WRONGHOST")
    settings = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL",
                "ssl.truststore.certificates": ca.certificate_pem, "request.timeout.ms": "5000"}
    with KafkaClient(settings) as client, pytest.raises(
            SslAuthenticationError, match=f"broker 127.0.0.1:{port} failed: "
                                          "certificate verify failed: IP address mismatch, "
                                          "certificate is not valid for '127.0.0.1'"):
        client.topics()
    errors = []
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL",
                         "ssl.ca.pem": ca.certificate_pem, "log_level": 0,
                         "error_cb": errors.append})
    deadline = time.monotonic() + 30
    while not errors and time.monotonic() < deadline:
        producer.poll(0.5)
    assert errors and "certificate verify failed" in errors[0].str(), errors


def test_the_client_re_authenticates_within_the_session_lifetime(secured, ca):
    def reauth_listener() -> dict:
        return secured.server.gauges()["listeners"]["REAUTH"]

    with KafkaClient(kpy_settings(secured, "SASL_SSL", "SCRAM-SHA-256", ca,
                                  listener="REAUTH")) as client:
        client.topics()
        before = reauth_listener()
        assert before["successful_authentications"] >= 1
        time.sleep(1.6)  # past the 1.5 s session lifetime's re-authentication point
        client.topics()  # the same connections, authenticated again first
        after = reauth_listener()
    assert after["successful_reauthentications"] > before["successful_reauthentications"]
    assert after["connections_created"] == before["connections_created"]  # not reconnected
    assert after["failed_authentications"] == before["failed_authentications"] == 0


def test_librdkafka_re_authenticates_within_the_session_lifetime(secured, ca):
    def reauth_listener() -> dict:
        return secured.server.gauges()["listeners"]["REAUTH"]

    topic = f"reauth-{uuid.uuid4().hex[:6]}"
    producer = Producer(librdkafka_settings(secured, "SASL_SSL", "SCRAM-SHA-512", ca,
                                            listener="REAUTH"))
    producer.produce(topic, value=b"first")
    assert producer.flush(30) == 0
    before = reauth_listener()
    time.sleep(1.6)  # past the session lifetime's re-authentication point
    producer.produce(topic, value=b"second")
    assert producer.flush(30) == 0
    after = reauth_listener()
    assert after["successful_reauthentications"] > before["successful_reauthentications"]
    assert after["failed_authentications"] == before["failed_authentications"]


def read_frame(sock) -> bytes:
    return recv_exactly(sock, int.from_bytes(recv_exactly(sock, 4), "big"))


def closed_without_answer(sock) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(4) == b""
    except ConnectionResetError:
        return True


def sasl_call(sock, api_key, version, body):
    sock.sendall(encode_request(api_key, version, 7, "c", body))
    return parse_response(api_key, version, read_frame(sock))[1]


def test_bad_input_closes_only_that_connection(secured, ca, caplog):
    caplog.set_level(logging.DEBUG, logger="broker_lite")
    tls_port, sasl_port = secured.bound_port("SASL_SSL"), secured.bound_port("SASL_PLAINTEXT")
    with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as raw:  # not TLS
        raw.sendall(b"\x16\x03\x01" + os.urandom(509))  # a TLS record header, then noise
        raw.shutdown(socket.SHUT_WR)
        with contextlib.suppress(ConnectionResetError):
            while raw.recv(1024):  # a TLS alert at most, then closed
                pass
    plaintext = {**kpy_settings(secured, "SASL_SSL", "PLAIN", ca),
                 "security.protocol": "SASL_PLAINTEXT", "request.timeout.ms": "5000"}
    with KafkaClient(plaintext) as client, pytest.raises(
            (KafkaConnectionError, KafkaTimeoutError), match="lost during ApiVersions"):
        client.topics()
    with socket.create_connection(("127.0.0.1", sasl_port), timeout=10) as raw:
        # SASL frames before the handshake: closed, as Kafka's authenticator does
        raw.sendall(encode_request(ApiKey.SASL_AUTHENTICATE, 1, 7, "c",
                                   {"auth_bytes": b"\0alice\0" + PASSWORD.encode()}))
        assert closed_without_answer(raw)
    with socket.create_connection(("127.0.0.1", sasl_port), timeout=10) as raw:
        # a token above sasl.server.max.receive.size: closed before it is read
        assert sasl_call(raw, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        raw.sendall(encode_request(ApiKey.SASL_AUTHENTICATE, 1, 8, "c",
                                   {"auth_bytes": b"x" * 600_000}))
        assert closed_without_answer(raw)
    with socket.create_connection(("127.0.0.1", sasl_port), timeout=10) as raw:
        # a SCRAM exchange with a nonce that is not the server's
        assert sasl_call(raw, ApiKey.SASL_HANDSHAKE, 1,
                         {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
        scram = ScramClient("SCRAM-SHA-256", "alice", PASSWORD)
        first = sasl_call(raw, ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": scram.first_message()})
        final = scram.final_message(first["auth_bytes"]).replace(b",r=", b",r=forged", 1)
        answer = sasl_call(raw, ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": final})
        assert answer["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert "nonce" in answer["error_message"]
        assert closed_without_answer(raw)
    with socket.create_connection(("127.0.0.1", sasl_port), timeout=10) as raw:
        # once authenticated, SASL requests reach the handlers: ILLEGAL_SASL_STATE (KafkaApis)
        sasl_call(raw, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
        assert sasl_call(raw, ApiKey.SASL_AUTHENTICATE, 1, {
            "auth_bytes": plain_client_message("alice", PASSWORD)})["error_code"] == 0
        body = sasl_call(raw, ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": b"\0alice\0again"})
        assert body["error_code"] == ErrorCode.ILLEGAL_SASL_STATE
        assert PASSWORD not in body["error_message"]
    with KafkaClient(kpy_settings(secured, "SASL_SSL", "SCRAM-SHA-256", ca)) as client:
        assert isinstance(client.topics(), dict)  # others unaffected
    assert PASSWORD not in caplog.text and "again" not in caplog.text


def test_metadata_answers_with_the_endpoints_of_the_listener_asked(secured, ca):
    for protocol, mechanism in (("SASL_SSL", "PLAIN"), ("SSL", None)):
        with KafkaClient(kpy_settings(secured, protocol, mechanism, ca)) as client:
            client.topics()
            (broker,) = client.cluster.metadata.brokers().values()
            assert (broker.host, broker.port) == ("127.0.0.1", secured.bound_port(protocol))
    registration = secured.zk_broker.client.get(f"/brokers/ids/{secured.broker_id}")[0]
    data = json.loads(registration)
    assert data["listener_security_protocol_map"] == LISTENERS
    assert data["endpoints"] == [address_of(secured, name) for name in LISTENERS]
    assert (data["host"], data["port"]) == ("127.0.0.1", secured.bound_port("PLAINTEXT"))


def address_of(broker, listener: str) -> str:
    return f"{listener}://127.0.0.1:{broker.bound_port(listener)}"


def test_every_listener_advertises_the_sasl_apis_and_answers_them_illegal_sasl_state(secured):
    port = secured.bound_port("PLAINTEXT")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        versions = sasl_call(raw, ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                          "client_software_version": "1"})
        keys = {k["api_key"]: (k["min_version"], k["max_version"]) for k in versions["api_keys"]}
        assert keys[ApiKey.SASL_HANDSHAKE] == (0, 1)
        assert keys[ApiKey.SASL_AUTHENTICATE] == (0, 2)
        assert sasl_call(raw, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}) == {
            "error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
