"""Consumer groups with real clients nobody here wrote (confluent-kafka, kafka-python) against
broker_lite over real sockets: members split a topic's partitions and rebalance when one joins,
leaves or is killed; committed offsets survive a broker restart; both admin clients list,
describe, fetch the offsets of and delete groups."""

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaException,
    Producer,
)
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.common.tiers import needs
from broker_lite.server.broker import Broker
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.zk.testing import wait_until

PARTITIONS = 6
BROKER_PROPERTIES = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "5",
    "num.partitions": str(PARTITIONS),
}
ALL = {("events", p) for p in range(PARTITIONS)}


@pytest.fixture(params=[1, 3], ids=["one-broker", "three-brokers"])
@needs("broker", "zookeeper")
def cluster(request, zookeeper_connect, tmp_path):
    """A broker, or three (the coordinator and the partition leaders on different brokers)."""
    brokers = start_brokers(zookeeper_connect, tmp_path, request.param, BROKER_PROPERTIES)
    yield brokers
    stop_brokers(brokers)


@pytest.fixture
@needs("broker", "zookeeper")
def one_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, BROKER_PROPERTIES)
    yield brokers
    stop_brokers(brokers)


def create_topic(servers: str, topic: str = "events") -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)], operation_timeout=30)[topic].result(60)


def produce(servers: str, count: int, topic: str = "events") -> set[tuple[int, bytes]]:
    """``count`` records spread over the topic's partitions; their (partition, value)s."""
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5, "log_level": 3})
    sent = set()
    for i in range(count):
        value = f"record-{i}".encode()
        producer.produce(topic, value=value, partition=i % PARTITIONS)
        sent.add((i % PARTITIONS, value))
    assert producer.flush(30) == 0
    return sent


def confluent_consumer(servers: str, group: str, **overrides) -> Consumer:
    return Consumer({
        "bootstrap.servers": servers, "group.id": group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
        "topic.metadata.refresh.interval.ms": 1000, "log_level": 3, **overrides})


def assigned(consumer: Consumer) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in consumer.assignment()}


def poll_until(consumers: list, done, timeout_s: float = 60, message: str = ""):
    """Poll every consumer in turn until ``done()``; the records each one got."""
    received = {id(c): [] for c in consumers}
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting until {message}")
        for consumer in consumers:
            record = consumer.poll(0.05)
            if record is not None and record.error() is None:
                received[id(consumer)].append(record)
    return received


def split_evenly(consumers: list) -> bool:
    """Every consumer holds its share of the partitions, and together they hold them all."""
    sets = [assigned(c) for c in consumers]
    return all(len(s) == PARTITIONS // len(consumers) for s in sets) and \
        set().union(*sets) == ALL


# -- confluent-kafka -------------------------------------------------------------------------


def test_confluent_members_split_the_partitions_and_rebalance(cluster):
    servers = bootstrap(cluster)
    create_topic(servers)
    group = f"cf-{uuid.uuid4().hex[:8]}"
    consumers = [confluent_consumer(servers, group) for _ in range(2)]
    try:
        for consumer in consumers:
            consumer.subscribe(["events"])
        poll_until(consumers, lambda: split_evenly(consumers), message="two members split")
        third = confluent_consumer(servers, group)
        third.subscribe(["events"])
        consumers.append(third)
        poll_until(consumers, lambda: split_evenly(consumers), message="a third member joins")
        sent = produce(servers, 60)
        got: dict[int, list] = {}

        def everything_received():
            return sum(len(v) for v in got.values()) >= 60

        deadline = time.monotonic() + 60
        while not everything_received() and time.monotonic() < deadline:
            for consumer in consumers:
                record = consumer.poll(0.05)
                if record is not None and record.error() is None:
                    got.setdefault(id(consumer), []).append(record)
                    # only the member holding a partition gets its records
                    assert (record.topic(), record.partition()) in assigned(consumer)
        values = [(r.partition(), r.value()) for records in got.values() for r in records]
        assert sorted(values) == sorted(sent)  # each record once, to its partition's owner
        leaving = consumers.pop(0)
        leaving.close()  # LeaveGroup: the others rebalance at once
        poll_until(consumers, lambda: split_evenly(consumers), message="a member leaves")
    finally:
        for consumer in consumers:
            consumer.close()


CHILD_CONSUMER = textwrap.dedent("""
    import sys, time
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
                         "auto.offset.reset": "earliest", "log_level": 3})
    consumer.subscribe(["events"])
    announced = False
    while True:
        consumer.poll(0.1)
        if consumer.assignment() and not announced:
            print("assigned", len(consumer.assignment()), flush=True)
            announced = True
""")


def test_a_killed_member_is_removed_after_its_session_timeout(one_broker):
    servers = bootstrap(one_broker)
    create_topic(servers)
    group = f"killed-{uuid.uuid4().hex[:8]}"
    child = subprocess.Popen([sys.executable, "-c", CHILD_CONSUMER, servers, group],
                             stdout=subprocess.PIPE, text=True)
    survivor = confluent_consumer(servers, group)
    try:
        ready, _, _ = select.select([child.stdout], [], [], 60)
        assert ready and child.stdout.readline().startswith("assigned")
        survivor.subscribe(["events"])
        poll_until([survivor], lambda: len(assigned(survivor)) == PARTITIONS // 2,
                   message="the survivor gets half")
        os.kill(child.pid, signal.SIGKILL)  # no LeaveGroup: only its session can end it
        child.wait(10)
        killed_at = time.monotonic()
        poll_until([survivor], lambda: assigned(survivor) == ALL, 40,
                   message="the survivor gets everything")
        assert time.monotonic() - killed_at >= 3  # it took the session timeout, not a leave
    finally:
        if child.poll() is None:
            child.kill()
        survivor.close()


@pytest.mark.broker
@pytest.mark.zookeeper
@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python"])
def test_committed_offsets_survive_a_broker_restart(one_broker, client):
    servers = bootstrap(one_broker)
    sent = produce(servers, 120)
    group = f"resume-{client}"
    first_half = consume_and_commit(client, servers, group, 60)
    one_broker[0].stop()
    one_broker[0] = Broker(one_broker[0].config).start()
    servers = bootstrap(one_broker)
    second_half = consume_and_commit(client, servers, group, 60)
    assert len(first_half) == len(second_half) == 60
    assert first_half | second_half == sent  # each record once: resumed where it stopped
    assert not consume_and_commit(client, servers, group, 0, idle_s=2)


def consume_and_commit(client: str, servers: str, group: str, count: int,
                       idle_s: float = 0) -> set[tuple[int, bytes]]:
    """Consume ``count`` records (then wait ``idle_s`` for more), commit, leave."""
    got = set()
    if client == "confluent-kafka":
        consumer = confluent_consumer(servers, group)
        consumer.subscribe(["events"])
        try:
            deadline = time.monotonic() + 60
            idle_until = None
            while time.monotonic() < deadline:
                if len(got) >= count:
                    idle_until = idle_until or time.monotonic() + idle_s
                    if time.monotonic() >= idle_until:
                        break
                for record in consumer.consume(num_messages=count - len(got) or 1, timeout=0.2):
                    if record.error() is None:
                        got.add((record.partition(), record.value()))
            if got:
                consumer.commit(asynchronous=False)
        finally:
            consumer.close()
        return got
    from kafka import KafkaConsumer

    consumer = KafkaConsumer("events", bootstrap_servers=servers, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=6000, heartbeat_interval_ms=300,
                             max_poll_records=max(count, 1))
    try:
        deadline = time.monotonic() + 60
        idle_until = None
        while time.monotonic() < deadline:
            if len(got) >= count:
                idle_until = idle_until or time.monotonic() + idle_s
                if time.monotonic() >= idle_until:
                    break
            batch = consumer.poll(timeout_ms=1000, max_records=max(count - len(got), 1))
            for records in batch.values():
                got.update((r.partition, r.value) for r in records)
        if got:
            consumer.commit(timeout_ms=30000)
    finally:
        consumer.close()
    return got


def test_confluent_admin_lists_describes_and_deletes_groups(cluster):
    servers = bootstrap(cluster)
    produce(servers, 12)
    group = f"admin-cf-{uuid.uuid4().hex[:8]}"
    consumers = [confluent_consumer(servers, group, **{"client.id": f"member-{i}"})
                 for i in range(2)]
    admin = AdminClient({"bootstrap.servers": servers})
    try:
        for consumer in consumers:
            consumer.subscribe(["events"])
        poll_until(consumers, lambda: split_evenly(consumers), message="the group is stable")
        for consumer in consumers:
            consumer.commit(offsets=[ConfluentTopicPartition("events", p, 1)
                                     for _, p in sorted(assigned(consumer))],
                            asynchronous=False)
        listed = admin.list_consumer_groups(request_timeout=10).result(30)
        listing = {g.group_id: g for g in listed.valid}
        assert group in listing and listing[group].state.name == "STABLE"
        description = admin.describe_consumer_groups([group], request_timeout=10)[group].result(30)
        assert description.state.name == "STABLE" and description.partition_assignor == "range"
        assert sorted(m.client_id for m in description.members) == ["member-0", "member-1"]
        assert {(tp.topic, tp.partition) for m in description.members
                for tp in m.assignment.topic_partitions} == ALL
        offsets = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=10)[group].result(30)
        assert {(tp.topic, tp.partition, tp.offset) for tp in offsets.topic_partitions} == \
            {(t, p, 1) for t, p in ALL}
        with pytest.raises(KafkaException, match=r"NON_EMPTY_GROUP|not empty"):
            admin.delete_consumer_groups([group], request_timeout=10)[group].result(30)
        for consumer in consumers:
            consumer.close()
        consumers = []
        admin.delete_consumer_groups([group], request_timeout=10)[group].result(30)
        remaining = admin.list_consumer_groups(request_timeout=10).result(30).valid
        assert group not in {g.group_id for g in remaining}
        gone = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, [ConfluentTopicPartition("events", 0)])],
            request_timeout=10)[group].result(30)
        assert [tp.offset for tp in gone.topic_partitions] == [-1001]  # OFFSET_INVALID
    finally:
        for consumer in consumers:
            consumer.close()


# -- kafka-python ----------------------------------------------------------------------------


def kafka_python_consumer(servers: str, group: str):
    from kafka import KafkaConsumer

    return KafkaConsumer("events", bootstrap_servers=servers, group_id=group,
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         session_timeout_ms=6000, heartbeat_interval_ms=300,
                         metadata_max_age_ms=1000)


def kp_assigned(consumer) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in consumer.assignment()}


KAFKA_PYTHON_MEMBER = textwrap.dedent("""
    import json, signal, sys
    from kafka import KafkaConsumer
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    consumer = KafkaConsumer("events", bootstrap_servers=sys.argv[1], group_id=sys.argv[2],
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=6000, heartbeat_interval_ms=300,
                             metadata_max_age_ms=1000)
    reported = None
    while not stopping:
        # a poll long enough to see a rebalance through: kafka-python 3.0 can lose a join
        # that completes between two short polls
        consumer.poll(timeout_ms=2000)
        assignment = sorted(tp.partition for tp in consumer.assignment())
        if assignment != reported:
            print(json.dumps(assignment), flush=True)
            reported = assignment
    consumer.close()  # LeaveGroup
""")


class KafkaPythonMember:
    """A kafka-python consumer in a process of its own, as separate applications are; it
    reports its assignment whenever it changes, and leaves the group on SIGTERM."""

    def __init__(self, servers: str, group: str):
        self.process = subprocess.Popen([sys.executable, "-c", KAFKA_PYTHON_MEMBER, servers,
                                         group], stdout=subprocess.PIPE, text=True)
        self.assignment: set[tuple[str, int]] = set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.assignment = {("events", p) for p in json.loads(line)}

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        self._reader.join(10)


def test_kafka_python_members_split_the_partitions_and_rebalance(cluster):
    servers = bootstrap(cluster)
    create_topic(servers)
    group = f"kp-{uuid.uuid4().hex[:8]}"
    members = [KafkaPythonMember(servers, group) for _ in range(3)]
    try:
        def split() -> bool:
            sets = [m.assignment for m in members]
            return all(len(s) == PARTITIONS // len(members) for s in sets) and \
                set().union(*sets) == ALL

        wait_until(split, 60, "three kafka-python members split the partitions")
        members.pop().close()
        wait_until(split, 60, "the two left take over")
    finally:
        for member in members:
            member.close()


def test_kafka_python_admin_lists_describes_and_deletes_groups(cluster):
    from kafka import TopicPartition as KafkaTopicPartition
    from kafka.admin import KafkaAdminClient

    servers = bootstrap(cluster)
    produce(servers, 12)
    group = f"admin-kp-{uuid.uuid4().hex[:8]}"
    consumer = kafka_python_consumer(servers, group)
    admin = KafkaAdminClient(bootstrap_servers=servers)
    try:
        wait_until(lambda: consumer.poll(timeout_ms=1000) is not None and
                   kp_assigned(consumer) == ALL, 60, "the member gets every partition")
        consumer.commit({KafkaTopicPartition("events", p): _offset_and_metadata(2)
                         for p in range(PARTITIONS)}, timeout_ms=30000)
        listed = admin.list_groups()
        assert {"group_id": group, "protocol_type": "consumer", "group_state": "Stable",
                "group_type": "classic"} in listed
        described = admin.describe_groups([group])[group]
        assert (described["group_state"], described["protocol_type"],
                described["protocol_data"]) == ("Stable", "consumer", "range")
        [member] = described["members"]
        assert member["client_host"] == "/127.0.0.1"
        assert member["member_metadata"]["topics"] == ["events"]
        assert member["member_assignment"]["assigned_partitions"] == \
            [{"topic": "events", "partitions": list(range(PARTITIONS))}]
        offsets = admin.list_group_offsets({group: None})[group]
        assert {(tp.topic, tp.partition): meta.offset for tp, meta in offsets.items()} == \
            {tp: 2 for tp in ALL}
        with pytest.raises(Exception, match="NonEmptyGroup"):
            _raise_group_error(admin.delete_groups([group]), group)
        consumer.close()
        consumer = None
        assert admin.delete_groups([group]) == {group: "OK"}
        assert admin.delete_groups([group]) == {group: "GroupIdNotFoundError"}
        assert group not in {g["group_id"] for g in admin.list_groups()}
    finally:
        if consumer is not None:
            consumer.close()
        admin.close()


def _raise_group_error(results: dict, group: str) -> None:
    if results[group] != "OK":
        raise RuntimeError(results[group])


def _offset_and_metadata(offset: int):
    from kafka.structs import OffsetAndMetadata

    fields = OffsetAndMetadata._fields
    values = {"offset": offset, "metadata": "", "leader_epoch": -1}
    return OffsetAndMetadata(*(values[f] for f in fields))
