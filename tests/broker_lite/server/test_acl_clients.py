"""Real clients nobody here wrote (confluent-kafka, which wraps librdkafka, and kafka-python)
against a broker with Kafka's ZooKeeper-mode authorizer: a client without the right ACL gets
Kafka's authorization error and nothing is written, read or committed; Metadata hides topics
it may not describe; ACLs are created, described and deleted through each admin client; and an
ACL created through one broker of a cluster is in force on the other.

Each test runs once per principal source (:data:`PRINCIPAL_SOURCES`): the connection's
principal and the client settings that give it. PLAINTEXT connections are ``User:ANONYMOUS``;
an authenticated source is one more entry (its principal, and its ``security.protocol``,
``sasl.*`` settings for each client). The ACLs the tests rely on are written straight through
the broker's authorizer, as kafka-acls.sh's ZooKeeper path writes them, so that no test needs a
principal allowed to change ACLs but the ones about the admin APIs.
"""

import logging
import time
import uuid
from dataclasses import dataclass, field

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AclBinding as CkAclBinding
from confluent_kafka.admin import AclBindingFilter as CkAclBindingFilter
from confluent_kafka.admin import AclOperation as CkOperation
from confluent_kafka.admin import AclPermissionType as CkPermission
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.admin import ResourcePatternType as CkPattern
from confluent_kafka.admin import ResourceType as CkResource
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka import errors as kafka_errors
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ResourcePattern,
    ResourcePatternFilter,
)
from kafka.admin import ResourceType as KpResource

from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import AccessControlEntry, AclBinding
from broker_lite.security.acl import ResourcePattern as Pattern
from broker_lite.server.network.authenticator import ANONYMOUS
from broker_lite.server.testing import bootstrap, call, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

Op, R = AclOperation, ResourceType
ACL_BROKER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
              "super.users": "User:admin"}


@dataclass(frozen=True)
class PrincipalSource:
    """How each client connects (``security.protocol``, TLS and SASL settings in its own
    names), and the principal the broker then sees."""

    name: str
    principal: str
    confluent_settings: dict = field(default_factory=dict)  # librdkafka's names
    kafka_python_settings: dict = field(default_factory=dict)  # its keyword arguments

    def confluent(self, servers: str, **extra) -> dict:
        return {"bootstrap.servers": servers, "log_level": 3, **self.confluent_settings,
                **extra}

    def kafka_python(self, servers: str, **extra) -> dict:
        return {"bootstrap_servers": servers, "request_timeout_ms": 15000,
                **self.kafka_python_settings, **extra}


PRINCIPAL_SOURCES = [PrincipalSource("plaintext", ANONYMOUS)]


@pytest.fixture(params=PRINCIPAL_SOURCES, ids=lambda source: source.name)
def source(request) -> PrincipalSource:
    return request.param


@pytest.fixture
@needs("broker", "zookeeper")
def acl_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, ACL_BROKER)
    yield brokers[0]
    stop_brokers(brokers)


def grant(broker, principal, operation, resource_type, name="kafka-cluster",
          pattern_type=PatternType.LITERAL, permission=AclPermissionType.ALLOW):
    """An ACL written through the broker's authorizer (as kafka-acls.sh's ZooKeeper path)."""
    assert broker.authorizer.create_acls([AclBinding(
        Pattern(resource_type, name, pattern_type),
        AccessControlEntry(principal, "*", operation, permission))]) == [None]


@pytest.fixture
def topic(acl_broker, source):
    """A topic created by the principal (allowed Create on the cluster), named uniquely."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    grant(acl_broker, source.principal, Op.CREATE, R.CLUSTER)
    admin = AdminClient(source.confluent(bootstrap(acl_broker)))
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def log_end(broker, topic: str) -> int:
    return broker.services.partitions.leader_log(topic, 0).log_end_offset


# -- writing -----------------------------------------------------------------------------------


def test_confluent_producer_without_write_writes_nothing(acl_broker, source, topic):
    grant(acl_broker, source.principal, Op.DESCRIBE, R.TOPIC, topic)
    errors = []
    producer = Producer(source.confluent(bootstrap(acl_broker), **{"message.timeout.ms": 10000}))
    producer.produce(topic, b"refused", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(20)
    assert [e.code() for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    assert log_end(acl_broker, topic) == 0
    grant(acl_broker, source.principal, Op.WRITE, R.TOPIC, topic)
    errors.clear()  # (this producer remembers the refusal: a new one)
    producer = Producer(source.confluent(bootstrap(acl_broker)))
    producer.produce(topic, b"allowed", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(20)
    assert errors == [None] and log_end(acl_broker, topic) == 1


def test_kafka_python_producer_without_write_writes_nothing(acl_broker, source, topic):
    grant(acl_broker, source.principal, Op.DESCRIBE, R.TOPIC, topic)
    producer = KafkaProducer(**source.kafka_python(bootstrap(acl_broker), retries=0))
    try:
        with pytest.raises(kafka_errors.TopicAuthorizationFailedError):
            producer.send(topic, b"refused").get(timeout=20)
    finally:
        producer.close(timeout=5)
    assert log_end(acl_broker, topic) == 0


def test_idempotent_producers_need_idempotent_write_or_write_on_a_topic(acl_broker, source,
                                                                        topic):
    grant(acl_broker, source.principal, Op.DESCRIBE, R.TOPIC, topic)
    producer = Producer(source.confluent(bootstrap(acl_broker), **{
        "enable.idempotence": True, "message.timeout.ms": 10000}))
    producer.produce(topic, b"refused")
    with pytest.raises(KafkaException) as raised:  # librdkafka: a fatal error
        producer.flush(20)
    error = raised.value.args[0]
    assert (error.code(), error.fatal()) == (KafkaError.CLUSTER_AUTHORIZATION_FAILED, True)
    assert log_end(acl_broker, topic) == 0
    grant(acl_broker, source.principal, Op.WRITE, R.TOPIC, topic)  # enough (KIP-679)
    producer = Producer(source.confluent(bootstrap(acl_broker), **{"enable.idempotence": True}))
    producer.produce(topic, b"allowed")
    assert producer.flush(20) == 0 and log_end(acl_broker, topic) == 1


def test_transactions_need_write_on_the_transactional_id(acl_broker, source, topic):
    grant(acl_broker, source.principal, Op.WRITE, R.TOPIC, topic)
    producer = Producer(source.confluent(bootstrap(acl_broker), **{"transactional.id": "tx-1"}))
    with pytest.raises(KafkaException) as raised:
        producer.init_transactions(20)
    assert raised.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    kp = KafkaProducer(**source.kafka_python(bootstrap(acl_broker), transactional_id="tx-2"))
    try:
        with pytest.raises(kafka_errors.TransactionalIdAuthorizationFailedError):
            kp.init_transactions()
    finally:
        kp.close(timeout=5)
    grant(acl_broker, source.principal, Op.WRITE, R.TRANSACTIONAL_ID, "tx-",
          PatternType.PREFIXED)
    producer = Producer(source.confluent(bootstrap(acl_broker), **{"transactional.id": "tx-1"}))
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"in a transaction")
    producer.commit_transaction(30)
    # the record and the commit marker, which the coordinator writes after answering EndTxn
    deadline = time.monotonic() + 30
    while log_end(acl_broker, topic) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log_end(acl_broker, topic) == 2


# -- reading -----------------------------------------------------------------------------------


def test_a_consumer_group_needs_read_on_the_group(acl_broker, source, topic):
    grant(acl_broker, source.principal, Op.READ, R.TOPIC, topic)
    consumer = Consumer(source.confluent(bootstrap(acl_broker), **{
        "group.id": "dashboards", "auto.offset.reset": "earliest"}))
    consumer.subscribe([topic])
    try:
        error = None
        for _ in range(40):
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                error = message.error()
                break
        assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()
    kp = KafkaConsumer(topic, **source.kafka_python(bootstrap(acl_broker), group_id="reports"))
    try:
        with pytest.raises(kafka_errors.GroupAuthorizationFailedError):
            kp.poll(timeout_ms=10000)
    finally:
        kp.close()


def test_fetch_needs_read_on_the_topic(acl_broker, source, topic):
    grant(acl_broker, source.principal, Op.WRITE, R.TOPIC, topic)
    producer = Producer(source.confluent(bootstrap(acl_broker)))
    producer.produce(topic, b"secret")
    assert producer.flush(20) == 0
    kp = KafkaConsumer(**source.kafka_python(bootstrap(acl_broker), auto_offset_reset="earliest",
                                             consumer_timeout_ms=5000))
    from kafka import TopicPartition as KpTopicPartition
    kp.assign([KpTopicPartition(topic, 0)])
    try:
        with pytest.raises(kafka_errors.TopicAuthorizationFailedError):
            kp.poll(timeout_ms=10000)
    finally:
        kp.close()


def test_metadata_hides_topics(acl_broker, source, topic):
    admin = AdminClient(source.confluent(bootstrap(acl_broker)))
    assert topic not in admin.list_topics(timeout=10).topics
    grant(acl_broker, source.principal, Op.READ, R.TOPIC, topic)  # Read implies Describe
    assert topic in admin.list_topics(timeout=10).topics
    kp = KafkaAdminClient(**source.kafka_python(bootstrap(acl_broker)))
    try:
        assert topic in kp.list_topics()
    finally:
        kp.close()


# -- the ACL APIs through the admin clients -----------------------------------------------------


def test_confluent_admin_creates_describes_and_deletes_acls(acl_broker, source):
    admin = AdminClient(source.confluent(bootstrap(acl_broker)))
    binding = CkAclBinding(CkResource.TOPIC, "events-", CkPattern.PREFIXED, "User:alice", "*",
                           CkOperation.WRITE, CkPermission.ALLOW)
    refused = admin.create_acls([binding])[binding]
    with pytest.raises(KafkaException) as raised:
        refused.result(20)
    assert raised.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    grant(acl_broker, source.principal, Op.ALTER, R.CLUSTER)  # Alter implies Describe
    assert admin.create_acls([binding])[binding].result(20) is None
    assert acl_broker.authorizer.authorize("User:alice", "10.0.0.1", Op.WRITE, R.TOPIC,
                                           "events-eu")
    every_topic = CkAclBindingFilter(CkResource.TOPIC, None, CkPattern.ANY, None, None,
                                     CkOperation.ANY, CkPermission.ANY)
    described = admin.describe_acls(every_topic).result(20)
    assert described == [binding]
    deleted = admin.delete_acls([every_topic])[every_topic].result(20)
    assert deleted == [binding]
    assert admin.describe_acls(every_topic).result(20) == []


def test_kafka_python_admin_creates_describes_and_deletes_acls(acl_broker, source):
    grant(acl_broker, source.principal, Op.ALTER, R.CLUSTER)
    admin = KafkaAdminClient(**source.kafka_python(bootstrap(acl_broker)))
    try:
        acl = ACL("User:bob", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                  ResourcePattern(KpResource.GROUP, "etl", ACLResourcePatternType.LITERAL))
        assert admin.create_acls([acl]) == {"succeeded": [acl], "failed": []}
        groups = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(KpResource.GROUP, None,
                                                 ACLResourcePatternType.ANY))
        found, error = admin.describe_acls(groups)
        assert found == [acl] and error is kafka_errors.NoError
        [(_, deleted, error)] = admin.delete_acls([groups])
        assert deleted == [acl] and error is kafka_errors.NoError
        assert admin.describe_acls(groups)[0] == []
    finally:
        admin.close()


def test_without_an_authorizer_the_acl_apis_answer_security_disabled(broker, source):
    admin = AdminClient(source.confluent(bootstrap(broker)))
    binding = CkAclBinding(CkResource.TOPIC, "t", CkPattern.LITERAL, "User:a", "*",
                           CkOperation.READ, CkPermission.ALLOW)
    with pytest.raises(KafkaException) as raised:
        admin.create_acls([binding])[binding].result(20)
    assert raised.value.args[0].code() == KafkaError.SECURITY_DISABLED


# -- a cluster -----------------------------------------------------------------------------------


@pytest.fixture
@needs("broker", "zookeeper")
def acl_cluster(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 2, ACL_BROKER)
    yield brokers
    stop_brokers(brokers)


def test_acls_created_through_one_broker_are_in_force_on_the_other(acl_cluster):
    """Requests over plain sockets to a chosen broker (``User:ANONYMOUS``)."""
    first, second = acl_cluster
    grant(first, ANONYMOUS, Op.ALTER, R.CLUSTER)
    wait_until(lambda: second.authorizer.authorize(ANONYMOUS, "127.0.0.1", Op.ALTER,
                                                   R.CLUSTER, "kafka-cluster"),
               message="the second broker follows the first's ACL change")

    def metadata_error(broker) -> int:
        response = call(broker.port, ApiKey.METADATA, 12, {
            "topics": [{"name": "shared"}], "allow_auto_topic_creation": False})
        return response["topics"][0]["error_code"]

    assert metadata_error(second) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    created = call(first.port, ApiKey.CREATE_ACLS, 3, {"creations": [
        {"resource_type": 2, "resource_name": "shared", "resource_pattern_type": 3,
         "principal": ANONYMOUS, "host": "*", "operation": int(Op.DESCRIBE),
         "permission_type": 3}]})
    assert created["results"] == [{"error_code": 0, "error_message": None}]
    wait_until(lambda: metadata_error(second) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
               message="the second broker lets the principal describe the topic")
    deleted = call(second.port, ApiKey.DELETE_ACLS, 3, {"filters": [
        {"resource_type_filter": 2, "resource_name_filter": "shared", "pattern_type_filter": 3,
         "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}]})
    assert len(deleted["filter_results"][0]["matching_acls"]) == 1
    wait_until(lambda: metadata_error(first) == ErrorCode.TOPIC_AUTHORIZATION_FAILED,
               message="the first broker follows the deletion made through the second")


def test_admin_client_acls_reach_every_broker(acl_cluster, source):
    grant(acl_cluster[0], source.principal, Op.ALTER, R.CLUSTER)
    admin = AdminClient(source.confluent(bootstrap(acl_cluster)))
    binding = CkAclBinding(CkResource.GROUP, "etl-", CkPattern.PREFIXED, "User:etl", "*",
                           CkOperation.READ, CkPermission.ALLOW)
    wait_until(lambda: admin.create_acls([binding])[binding].exception(20) is None,
               message="both brokers allow the principal to create ACLs")

    def everywhere(allowed: bool) -> bool:
        return all(b.authorizer.authorize("User:etl", "10.0.0.1", Op.READ, R.GROUP, "etl-eu")
                   is allowed for b in acl_cluster)

    wait_until(lambda: everywhere(True), message="every broker allows the new ACL")
    every = CkAclBindingFilter(CkResource.ANY, None, CkPattern.ANY, "User:etl", None,
                               CkOperation.ANY, CkPermission.ANY)
    assert admin.delete_acls([every])[every].result(20) == [binding]
    wait_until(lambda: everywhere(False), message="every broker forgets the deleted ACL")


@pytest.mark.broker
def test_transaction_markers_between_brokers_need_cluster_action(zookeeper_connect, tmp_path,
                                                                 caplog):
    """On plaintext listeners the brokers themselves are ``User:ANONYMOUS``: the markers the
    coordinator sends to another leader wait (and say why) until ClusterAction is granted.
    (Nothing is replicated here: replica fetches would need ClusterAction too.)"""
    brokers = start_brokers(zookeeper_connect, tmp_path, 2, {
        **ACL_BROKER, "transaction.state.log.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "offsets.topic.replication.factor": "1"})
    try:
        for operation, resource_type, name in (
                (Op.CREATE, R.CLUSTER, "kafka-cluster"), (Op.WRITE, R.TOPIC, "*"),
                (Op.READ, R.TOPIC, "*"), (Op.WRITE, R.TRANSACTIONAL_ID, "*"),
                (Op.READ, R.GROUP, "*")):
            grant(brokers[0], ANONYMOUS, operation, resource_type, name)
        servers = bootstrap(brokers)
        wait_until(lambda: all(b.authorizer.authorize(ANONYMOUS, "127.0.0.1", Op.READ, R.GROUP,
                                                      "g") for b in brokers))
        admin = AdminClient({"bootstrap.servers": servers, "log_level": 3})
        admin.create_topics([NewTopic("spread", 2, 1)])["spread"].result(30)
        producer = Producer({"bootstrap.servers": servers, "transactional.id": "tx-spread",
                             "log_level": 3})
        producer.init_transactions(30)
        producer.begin_transaction()
        for partition in (0, 1):
            producer.produce("spread", value=b"p%d" % partition, partition=partition)
        with caplog.at_level(logging.WARNING, logger="broker_lite"):
            producer.commit_transaction(30)
            wait_until(lambda: any("refused the transaction markers of tx-spread" in r.message
                                   for r in caplog.records), 30,
                       "the coordinator says why the markers wait")
        grant(brokers[0], ANONYMOUS, Op.CLUSTER_ACTION, R.CLUSTER)
        reader = KafkaConsumer(bootstrap_servers=servers, isolation_level="read_committed",
                               auto_offset_reset="earliest", consumer_timeout_ms=30000)
        from kafka import TopicPartition as KpTopicPartition
        reader.assign([KpTopicPartition("spread", p) for p in (0, 1)])
        try:
            values = sorted(m.value for _, m in zip(range(2), reader, strict=False))
        finally:
            reader.close()
        assert values == [b"p0", b"p1"]
    finally:
        stop_brokers(brokers)
