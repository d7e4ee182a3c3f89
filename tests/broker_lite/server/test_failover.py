"""Failover of a replicated cluster whose brokers are real processes (the ``kpy_cluster``
fixture): leaders killed with SIGKILL while real clients write, partitions left without an
in-sync replica, unclean elections and the truncation that follows, controlled shutdowns."""

import time
import uuid

import pytest
from cluster_support import SequenceProducer, create_topic, read_all
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from broker_lite.zk.layout import NO_LEADER

KILLS, KILLS_IN_CI = 50, 12  # with --soak, and without


@pytest.mark.slow
def test_acks_all_idempotent_producer_loses_nothing_while_leaders_are_killed(kpy_cluster, soak):
    """50 times (12 without ``--soak``): SIGKILL the partition's leader while confluent-kafka
    writes with acks=all and idempotence, wait for a new leader, start the dead broker again and
    wait until it is back in the ISR. Every acknowledged record is then read back exactly once,
    in order, and no record appears twice."""
    topic = create_topic(kpy_cluster, f"kills-{uuid.uuid4().hex[:6]}",
                         config={"min.insync.replicas": "2"})
    kills, rounds = 0, KILLS if soak else KILLS_IN_CI
    with SequenceProducer(kpy_cluster.bootstrap_servers, topic) as writer:
        for _ in range(rounds):
            writer.wait_for_acks(len(writer.acknowledged) + 20)
            leader = kpy_cluster.leader(topic, 0)
            kpy_cluster.kill(leader)
            kills += 1
            kpy_cluster.wait_for_leader(topic, 0, other_than=leader)
            writer.wait_for_acks(len(writer.acknowledged))  # the new leader takes writes
            kpy_cluster.start_broker(leader)
            kpy_cluster.wait_for_isr(topic, 0, {1, 2, 3}, timeout_s=120)
        writer.finish()
    read = [int(v) for v in read_all(kpy_cluster, topic)]
    acknowledged = sorted(writer.acknowledged)
    duplicates = len(read) - len(set(read))
    lost = sorted(set(acknowledged) - set(read))
    print(f"\nrecords acknowledged: {len(acknowledged)}, kills: {kills}, records read: "
          f"{len(read)}, lost: {len(lost)}, duplicates: {duplicates}, "
          f"failed deliveries: {len(writer.failed)}")
    assert kills == rounds
    assert not writer.failed
    assert lost == []
    assert duplicates == 0
    assert read == sorted(read)  # in the order produced
    assert read == list(range(len(read)))  # no gap: nothing unacknowledged skipped either


def test_a_partition_whose_isr_is_down_stays_offline_without_unclean_election(kpy_cluster):
    """With unclean.leader.election.enable=false (the default), a partition whose last in-sync
    replica died stays offline although another replica is alive, clients get
    LEADER_NOT_AVAILABLE / NOT_LEADER_OR_FOLLOWER, and it comes back with every record once
    the in-sync replica returns."""
    topic = create_topic(kpy_cluster, f"offline-{uuid.uuid4().hex[:6]}",
                         assignment=[[1, 2]])
    producer = Producer({"bootstrap.servers": kpy_cluster.bootstrap_servers, "acks": "all",
                         "enable.idempotence": True, "log_level": 0})
    for i in range(100):
        producer.produce(topic, value=b"%d" % i)
    assert producer.flush(60) == 0
    kpy_cluster.kill(2)  # the follower: the ISR shrinks to the leader
    kpy_cluster.wait_until(lambda: kpy_cluster.partition_state(topic, 0).isr == (1,),
                           what="broker 2 leaves the ISR")
    for i in range(100, 150):  # acknowledged by the leader alone
        producer.produce(topic, value=b"%d" % i)
    assert producer.flush(60) == 0
    kpy_cluster.kill(1)
    kpy_cluster.wait_until(lambda: kpy_cluster.partition_state(topic, 0).leader == NO_LEADER,
                           what="the partition goes offline")
    kpy_cluster.start_broker(2)  # alive, but not in sync: it must not lead
    errors = []
    probe = Producer({"bootstrap.servers": kpy_cluster.broker(2).address, "acks": "all",
                      "message.timeout.ms": 5000, "log_level": 0})
    probe.produce(topic, value=b"lost?", on_delivery=lambda e, m: errors.append(e))
    probe.flush(30)
    assert errors and errors[0] is not None
    metadata = AdminClient({"bootstrap.servers": kpy_cluster.broker(2).address,
                            "log_level": 0}).list_topics(topic, timeout=10)
    partition = metadata.topics[topic].partitions[0]
    assert partition.leader == -1
    assert partition.error is not None and partition.error.code() in (
        KafkaError.LEADER_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION)
    state = kpy_cluster.partition_state(topic, 0)
    assert (state.leader, state.isr) == (NO_LEADER, (1,))
    kpy_cluster.start_broker(1)
    assert kpy_cluster.wait_for_leader(topic, 0) == 1
    kpy_cluster.wait_for_isr(topic, 0, {1, 2})
    assert [int(v) for v in read_all(kpy_cluster, topic)] == list(range(150))


def test_an_unclean_election_loses_what_the_new_leader_lacks_and_the_old_leader_truncates(
        kpy_cluster):
    """With unclean.leader.election.enable=true, the surviving out-of-sync replica leads; the
    old leader, back, truncates to where the new leader's epoch began (the epoch boundary,
    KIP-101/279), drops what only it had, and copies the new leader's records."""
    topic = create_topic(kpy_cluster, f"unclean-{uuid.uuid4().hex[:6]}",
                         assignment=[[1, 2]],
                         config={"unclean.leader.election.enable": "true"})
    producer = Producer({"bootstrap.servers": kpy_cluster.bootstrap_servers, "acks": "all",
                         "log_level": 0})
    for i in range(10):
        producer.produce(topic, value=b"both-%d" % i)
    assert producer.flush(60) == 0
    kpy_cluster.kill(2)
    kpy_cluster.wait_until(lambda: kpy_cluster.partition_state(topic, 0).isr == (1,),
                           what="broker 2 leaves the ISR")
    for i in range(5):
        producer.produce(topic, value=b"only-on-1-%d" % i)
    assert producer.flush(60) == 0
    kpy_cluster.kill(1)
    kpy_cluster.wait_until(lambda: kpy_cluster.partition_state(topic, 0).leader == NO_LEADER,
                           what="the partition goes offline")
    kpy_cluster.start_broker(2)
    assert kpy_cluster.wait_for_leader(topic, 0) == 2  # unclean: 2 was not in the ISR
    for i in range(3):
        producer.produce(topic, value=b"on-2-%d" % i)
    assert producer.flush(60) == 0
    kpy_cluster.start_broker(1)
    kpy_cluster.wait_for_isr(topic, 0, {1, 2})
    expected = [b"both-%d" % i for i in range(10)] + [b"on-2-%d" % i for i in range(3)]
    assert read_all(kpy_cluster, topic) == expected
    # broker 1, now in sync, holds exactly the new leader's log: lead from it and read again
    kpy_cluster.stop_broker(2)
    assert kpy_cluster.wait_for_leader(topic, 0, other_than=2) == 1
    assert read_all(kpy_cluster, topic) == expected


@pytest.mark.parametrize("kpy_cluster", [{"properties": {
    "zookeeper.session.timeout.ms": "30000"}}], indirect=True)
def test_a_controlled_shutdown_moves_leadership_before_the_broker_stops(kpy_cluster):
    """SIGTERM: the broker asks the controller (ControlledShutdown) to move the leadership of
    its replicated partitions and leaves their ISRs before it stops; an acks=all producer
    sees no failed delivery."""
    topic = create_topic(kpy_cluster, f"shutdown-{uuid.uuid4().hex[:6]}", partitions=6)
    before = {p: kpy_cluster.partition_state(topic, p) for p in range(6)}
    victim = before[0].leader
    led = [p for p, s in before.items() if s.leader == victim]
    with SequenceProducer(kpy_cluster.bootstrap_servers, topic) as writer:
        writer.wait_for_acks(100)
        started = time.monotonic()
        assert kpy_cluster.stop_broker(victim) == 0
        stopped_after = time.monotonic() - started
        after = {p: kpy_cluster.partition_state(topic, p) for p in range(6)}
        writer.wait_for_acks(len(writer.acknowledged) + 100)
        writer.finish()
    assert writer.failed == []
    assert all(after[p].leader != victim and victim not in after[p].isr for p in range(6))
    assert all(after[p].leader_epoch > before[p].leader_epoch for p in led)
    # moved by the controller at once, not after the ZooKeeper session expired (30 s)
    assert stopped_after < 20, stopped_after


@pytest.mark.parametrize("kpy_cluster", [{"properties": {
    "leader.imbalance.check.interval.seconds": "1"}}], indirect=True)
def test_leadership_returns_to_the_preferred_replicas(kpy_cluster):
    """auto.leader.rebalance.enable: once a broker is back in sync, the controller moves the
    leadership of the partitions it prefers back to it."""
    topic = create_topic(kpy_cluster, f"preferred-{uuid.uuid4().hex[:6]}", partitions=3)
    preferred = {p: kpy_cluster.leader(topic, p) for p in range(3)}
    assert sorted(preferred.values()) == [1, 2, 3]
    kpy_cluster.stop_broker(1)
    assert all(kpy_cluster.leader(topic, p) != 1 for p in range(3))
    kpy_cluster.start_broker(1)
    kpy_cluster.wait_until(lambda: all(kpy_cluster.leader(topic, p) == preferred[p]
                                       for p in range(3)),
                           what="every partition led by its preferred replica again")


def test_a_dead_broker_is_detected_once_its_session_expires(kpy_cluster):
    """A SIGKILLed leader is replaced once its ZooKeeper session expires
    (zookeeper.session.timeout.ms), and the dead follower leaves every ISR."""
    topic = create_topic(kpy_cluster, f"dead-{uuid.uuid4().hex[:6]}", partitions=3)
    leader = kpy_cluster.leader(topic, 0)
    started = time.monotonic()
    kpy_cluster.kill(leader)
    kpy_cluster.wait_for_leader(topic, 0, other_than=leader)
    assert time.monotonic() - started < 30
    kpy_cluster.wait_until(lambda: all(leader not in kpy_cluster.partition_state(topic, p).isr
                                       for p in range(3)), what="the dead broker leaves the ISRs")
    with pytest.raises(KafkaException):
        AdminClient({"bootstrap.servers": kpy_cluster.broker(leader).address,
                     "log_level": 0}).list_topics(timeout=2)
