"""Consuming with ZooKeeper-based groups against a real broker and ZooKeeper: every record once
across a group whose members commit after each poll while one leaves, positions committed on
close and resumed, and out-of-range positions reset per auto.offset.reset."""

import logging
import threading

from zk_group_support import (
    kafka_fixture,  # noqa: F401 - the kafka fixture
    produce,
    start_consumer_fixture,  # noqa: F401 - the start_consumer fixture
    unique,
)

from broker_lite.client import TopicPartition
from broker_lite.client.zkgroup import ZooKeeperGroupConsumer
from broker_lite.zk.testing import wait_until


class Member(threading.Thread):
    """Polls and commits after each poll until told to stop or to leave (close)."""

    def __init__(self, consumer: ZooKeeperGroupConsumer, sink: list, lock: threading.Lock):
        super().__init__(daemon=True)
        self.consumer, self.sink, self.lock = consumer, sink, lock
        self.stop = threading.Event()
        self.leave = threading.Event()
        self.left = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                if self.leave.is_set():
                    self.consumer.close()
                    self.left.set()
                    return
                records = self.consumer.poll(0.2)
                with self.lock:
                    self.sink.extend(records)
                self.consumer.commit()
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_every_record_is_consumed_once_while_a_member_leaves(start_consumer, kafka, broker):
    topic, group = unique("once"), unique("group")
    kafka.admin.create_topics([(topic, 6, 1)])
    small_batches = {"batch.num.messages": 5}
    first = [b"first-%d" % i for i in range(600)]
    produce(broker, topic, first, 6, **small_batches)

    consumed, lock = [], threading.Lock()
    # a few records per partition and poll, so that the group is mid-way when a member leaves
    members = [Member(start_consumer(group, [topic], **{"max.partition.fetch.bytes": "100"}),
                      consumed, lock) for _ in range(3)]
    for member in members:
        member.start()

    def count() -> int:
        with lock:
            return len(consumed)

    wait_until(lambda: count() >= 200, 60, "a third of the first records")
    members[1].leave.set()
    second = [b"second-%d" % i for i in range(600)]
    produce(broker, topic, second, 6, **small_batches)
    assert members[1].left.wait(30)
    assert count() < 1200  # the others had work left to take over
    wait_until(lambda: count() >= 1200, 60, "every record")
    for member in members:  # a last round: nothing more may come
        member.stop.set()
        member.join(30)
        assert not member.is_alive(), "a member still polling 30 s after its stop"
        assert member.error is None, member.error

    seen = [(r.partition, r.offset) for r in consumed]
    assert len(seen) == len(set(seen)) == 1200
    assert sorted(r.value for r in consumed) == sorted(first + second)
    assert set(seen) == {(p, o) for p in range(6) for o in range(200)}
    for record in consumed:  # the i-th value of a round went to partition i % 6
        round_, i = record.value.split(b"-")
        expected_offset = int(i) // 6 + (0 if round_ == b"first" else 100)
        assert (record.partition, record.offset) == (int(i) % 6, expected_offset)
        assert record.key == b"k" + i and record.topic == topic and record.timestamp > 0


def test_close_commits_and_the_next_member_resumes(start_consumer, kafka, broker,
                                                   zookeeper_client):
    topic, group = unique("resume"), unique("group")
    kafka.admin.create_topics([(topic, 2, 1)])
    produce(broker, topic, [b"v%d" % i for i in range(20)], 2)
    consumer = start_consumer(group, [topic])
    got = []
    wait_until(lambda: got.extend(consumer.poll(0.2)) or len(got) >= 20, 30, "20 records")
    consumer.close()
    for p in (0, 1):
        data, stat = zookeeper_client.get(f"/consumers/{group}/offsets/{topic}/{p}")
        assert data == b"10" and stat.ephemeralOwner == 0  # persistent

    produce(broker, topic, [b"w%d" % i for i in range(4)], 2)
    successor = start_consumer(group, [topic])
    more = []
    wait_until(lambda: more.extend(successor.poll(0.2)) or len(more) >= 4, 30, "4 records")
    assert sorted(r.value for r in more) == [b"w0", b"w1", b"w2", b"w3"]
    assert successor.position(TopicPartition(topic, 0)) == 12


def test_without_a_committed_offset_largest_starts_at_the_end(start_consumer, kafka, broker):
    topic, group = unique("largest"), unique("group")
    kafka.admin.create_topics([(topic, 1, 1)])
    produce(broker, topic, [b"old"] * 5, 1)
    consumer = start_consumer(group, [topic], **{"auto.offset.reset": "largest"})
    assert consumer.position(TopicPartition(topic, 0)) == 5
    assert consumer.poll(0.2) == []
    produce(broker, topic, [b"new"], 1)
    got = []
    wait_until(lambda: got.extend(consumer.poll(0.2)) or got, 30, "the new record")
    assert [(r.offset, r.value) for r in got] == [(5, b"new")]


def test_an_out_of_range_position_restarts_per_auto_offset_reset(start_consumer, kafka, broker,
                                                                 zookeeper_client, caplog):
    topic, group = unique("range"), unique("group")
    kafka.admin.create_topics([(topic, 1, 1)])
    produce(broker, topic, [b"r%d" % i for i in range(3)], 1)
    zookeeper_client.create(f"/consumers/{group}/offsets/{topic}/0", b"1000", makepath=True)
    consumer = start_consumer(group, [topic], **{"auto.offset.reset": "smallest"})
    assert consumer.position(TopicPartition(topic, 0)) == 1000
    with caplog.at_level(logging.WARNING, logger="broker_lite.client.zkgroup"):
        got = []
        wait_until(lambda: got.extend(consumer.poll(0.2)) or len(got) >= 3, 30, "3 records")
    assert [r.offset for r in got] == [0, 1, 2]
    assert f"offset 1000 of {topic}-0 is out of range; resuming at 0" in caplog.text


def test_explicit_offsets_are_committed_as_given(start_consumer, kafka, broker,
                                                 zookeeper_client):
    topic, group = unique("explicit"), unique("group")
    kafka.admin.create_topics([(topic, 1, 1)])
    produce(broker, topic, [b"e%d" % i for i in range(6)], 1)
    tp = TopicPartition(topic, 0)
    consumer = start_consumer(group, [topic])
    got = []
    wait_until(lambda: got.extend(consumer.poll(0.2)) or len(got) >= 6, 30, "6 records")
    consumer.commit({tp: 3})  # only the first three are done with
    assert zookeeper_client.get(f"/consumers/{group}/offsets/{topic}/0")[0] == b"3"
    assert consumer.committed([tp]) == {tp: 3}
    consumer.close(commit=False)
    successor = start_consumer(group, [topic])
    assert successor.position(tp) == 3
