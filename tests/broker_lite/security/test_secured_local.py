"""Secured local clusters: LocalKafka's secured variant (its own embedded ZooKeeper, users'
credentials usable as soon as it starts), a two-broker SASL_SSL cluster whose brokers reach one
another over SASL_SSL (transaction markers to the other broker's partitions), three-broker
clusters replicating over SASL_SSL or SSL under a strict ACL authorizer, and
conf/server-secured.properties, the documented template, starting as it stands once its files
exist."""

import shutil
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from broker_lite.client import KafkaClient, SaslAuthenticationFailedError
from broker_lite.common.tiers import needs
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.broker import BrokerConfig
from broker_lite.config.properties import read_properties
from broker_lite.local import LocalKafka
from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import AccessControlEntry, AclBinding, ResourcePattern
from broker_lite.security.scram import ScramCredential
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.server.broker import Broker
from broker_lite.zk.client import connect
from broker_lite.zk.users import set_user_config

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
@needs("broker", "zookeeper")
def local_kafka():
    started = []

    def start(**options) -> LocalKafka:
        kafka = LocalKafka(**options).start()
        started.append(kafka)
        return kafka

    yield start
    for kafka in started:
        kafka.stop()


def test_local_kafka_with_sasl_ssl_users(local_kafka):
    kafka = local_kafka(security="SASL_SSL", users={"alice": "alice-pw"},
                        mechanisms=("SCRAM-SHA-512", "PLAIN", "OAUTHBEARER"))
    assert kafka.properties["listeners"] == "SASL_SSL://127.0.0.1:0"
    for mechanism in ("SCRAM-SHA-512", "PLAIN", "OAUTHBEARER"):
        with KafkaClient(kafka.client_settings("alice", mechanism)) as client:
            client.admin.create_topics([(f"t-{mechanism.lower()}", 1, 1)])
    wrong = {**kafka.client_settings("alice", "SCRAM-SHA-512"),
             "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                 'required username="alice" password="nope";'}
    with KafkaClient(wrong) as client, pytest.raises(SaslAuthenticationFailedError):
        client.topics()
    stored = kafka.broker.zookeeper.client.get("/config/users/alice")[0]
    assert b"SCRAM-SHA-512" in stored and b"alice-pw" not in stored
    assert not list(kafka.directory.rglob("*.key")) and not list(kafka.directory.rglob("*.pem"))


@pytest.fixture
@needs("broker", "zookeeper")
def two_secured_brokers(kpy_secured_brokers):
    return kpy_secured_brokers("SASL_SSL", users={"app": "app-pw"},
                               mechanisms=("SCRAM-SHA-256",), count=2)


def test_transactions_span_brokers_reached_over_sasl_ssl(two_secured_brokers):
    cluster = two_secured_brokers
    topic = f"spread-{uuid.uuid4().hex[:6]}"
    with KafkaClient(cluster.client_settings("app")) as client:
        client.admin.create_topics([(topic, 4, 1)])
        leaders = {p.leader for p in client.cluster.metadata.topic(topic).partitions.values()}
    assert len(leaders) == 2  # partitions on both brokers: markers cross between them
    settings = {"bootstrap.servers": cluster.bootstrap_servers, "security.protocol": "SASL_SSL",
                "ssl.ca.pem": cluster.security.ca_pem, "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.username": "app", "sasl.password": "app-pw", "log_level": 0}
    producer = Producer({**settings, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(8):
        producer.produce(topic, partition=i % 4, value=b"v%d" % i)
    producer.commit_transaction(60)
    consumer = Consumer({**settings, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed"})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 60
    while len(got) < 8 and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and not message.error():
            got.append(message.value())
    consumer.close()
    assert sorted(got) == sorted(b"v%d" % i for i in range(8))  # committed on both brokers


@pytest.mark.broker
def test_the_secured_template_starts_once_its_files_exist(zookeeper_connect, tmp_path,
                                                         monkeypatch):
    """conf/server-secured.properties as shipped, with the files its comments say to make."""
    template = read_properties(ROOT / "conf" / "server-secured.properties")
    ca = TestCertificateAuthority()
    broker_certificate = ca.issue("broker", hosts=["localhost", "127.0.0.1"])
    broker_certificate.write_pem(tmp_path, "broker")
    (tmp_path / "broker.pem").write_text((tmp_path / "broker.crt").read_text() +
                                         (tmp_path / "broker.key").read_text())
    ca.write_pem(tmp_path / "ca.pem")
    monkeypatch.chdir(tmp_path)  # the template's store paths are relative
    zk = connect(zookeeper_connect)
    try:  # the broker's own SCRAM user first, as the template's comments say
        set_user_config(zk, "broker", {"SCRAM-SHA-512": ScramCredential.from_password(
            "SCRAM-SHA-512", "broker-secret").to_text()})
    finally:
        zk.stop()
        zk.close()
    properties = {**template, "zookeeper.connect": zookeeper_connect,
                  "log.dirs": str(tmp_path / "logs"), "offsets.topic.replication.factor": "1",
                  "listeners": "SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0"}
    broker = Broker(BrokerConfig(properties)).start()
    try:
        settings = {"bootstrap.servers": f"127.0.0.1:{broker.bound_port('SASL_SSL')}",
                    "security.protocol": "SASL_SSL", "ssl.truststore.certificates":
                        ca.certificate_pem, "sasl.mechanism": "PLAIN", "sasl.jaas.config":
                        "org.apache.kafka.common.security.plain.PlainLoginModule required "
                        'username="alice" password="alice-secret";'}
        with KafkaClient(settings) as client:
            assert isinstance(client.topics(), dict)
        alice = ca.issue("alice", client=True)
        with KafkaClient({"bootstrap.servers": f"127.0.0.1:{broker.bound_port('SSL')}",
                          "security.protocol": "SSL",
                          "ssl.truststore.certificates": ca.certificate_pem,
                          "ssl.keystore.certificate.chain": alice.certificate_pem,
                          "ssl.keystore.key": alice.key_pem}) as client:
            assert isinstance(client.topics(), dict)
    finally:
        broker.stop()
        shutil.rmtree(tmp_path / "logs", ignore_errors=True)


STRICT_ACLS = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
               "allow.everyone.if.no.acl.found": "false",
               "default.replication.factor": "3", "offsets.topic.replication.factor": "3",
               "min.insync.replicas": "3"}


@pytest.mark.parametrize("security, broker_principal", [
    ("SASL_SSL", "User:broker"), ("SSL", "User:CN=broker")], ids=["SASL_SSL", "SSL"])
def test_brokers_replicate_as_clients_of_one_another_under_acls(kpy_secured_brokers, security,
                                                                broker_principal, caplog):
    """Three brokers whose inter-broker listener is secured (SASL_SSL, or SSL with client
    certificates required), with an ACL authorizer that allows nothing no ACL mentions: their
    principal in super.users lets the followers fetch (ClusterAction), so acks=all writes to a
    topic needing all three replicas in sync succeed; the application user, with ACLs for its
    topic and group only, produces and consumes; a broker stopping moves its leadership away
    (ControlledShutdown, ClusterAction too)."""
    cluster = kpy_secured_brokers(
        security, users={"app": "app-pw"}, mechanisms=("SCRAM-SHA-512",),
        client_auth="required" if security == "SSL" else "none", count=3,
        properties={**STRICT_ACLS, "super.users": broker_principal})
    app = "User:app" if security == "SASL_SSL" else "User:CN=app"
    topic = f"replicated-{uuid.uuid4().hex[:6]}"
    assert cluster.broker.authorizer.create_acls([
        AclBinding(ResourcePattern(resource, name, PatternType.LITERAL),
                   AccessControlEntry(app, "*", operation, AclPermissionType.ALLOW))
        for resource, name, operation in [
            (ResourceType.CLUSTER, "kafka-cluster", AclOperation.CREATE),
            (ResourceType.TOPIC, topic, AclOperation.ALL),
            (ResourceType.GROUP, f"g-{topic}", AclOperation.READ)]]) == [None] * 3
    with KafkaClient(cluster.client_settings("app")) as client:
        client.admin.create_topics([(topic, 2, 3)])
    settings = {"bootstrap.servers": cluster.bootstrap_servers, "security.protocol": security,
                "ssl.ca.pem": cluster.security.ca_pem, "log_level": 0}
    if security == "SASL_SSL":
        settings.update({"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "app",
                         "sasl.password": "app-pw"})
    else:
        certificate = cluster.security.client_certificate("app")
        settings.update({"ssl.certificate.pem": certificate.certificate_pem,
                         "ssl.key.pem": certificate.key_pem})
    producer = Producer({**settings, "acks": "all"})
    for i in range(10):
        producer.produce(topic, partition=i % 2, value=b"v%d" % i)
    assert producer.flush(60) == 0
    consumer = Consumer({**settings, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 60
    while len(got) < 10 and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and not message.error():
            got.append(message.value())
    consumer.close()
    assert sorted(got) == sorted(b"v%d" % i for i in range(10))
    for broker in cluster.brokers:  # every replica holds every record
        for partition in range(2):
            replica = broker.partitions.partition(TopicPartition(topic, partition))
            assert replica.log.log_end_offset == 5
    cluster.brokers[-1].stop()
    assert "controlled shutdown did not complete" not in caplog.text
