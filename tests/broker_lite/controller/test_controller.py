"""The controller: election and epochs, partition states, failover, topic deletion; and what each
broker's listener hears."""

import json
import logging
import re

import pytest

from broker_lite.controller.controller import desired_state
from broker_lite.zk import add_partitions, create_topic, delete_topic, get_partition_state
from broker_lite.zk.layout import PartitionState
from broker_lite.zk.testing import wait_until


def _json(client, path):
    return json.loads(client.get(path)[0])


def _states(client, topic, partitions):
    return {p: get_partition_state(client, topic, p) for p in range(partitions)}


def _all_led(client, topic, partitions):
    return lambda: all(s is not None and s.leader >= 0
                       for s in _states(client, topic, partitions).values())


def test_controller_znodes(start_zk_broker, zookeeper_client):
    broker = start_zk_broker(1)
    wait_until(lambda: broker.is_controller)
    controller = _json(zookeeper_client, "/controller")
    assert list(controller) == ["version", "brokerid", "timestamp"]
    assert controller["version"] == 1 and controller["brokerid"] == 1
    assert isinstance(controller["timestamp"], str) and controller["timestamp"].isdigit()
    assert zookeeper_client.exists("/controller").ephemeralOwner == broker.client.client_id[0]
    assert zookeeper_client.get("/controller_epoch")[0] == b"1"
    broker.stop()
    assert zookeeper_client.exists("/controller") is None
    again = start_zk_broker(1)
    wait_until(lambda: again.is_controller)
    assert zookeeper_client.get("/controller_epoch")[0] == b"2" and again.controller.epoch == 2


def test_created_topic_in_kafkas_format(start_zk_broker, zookeeper_client):
    broker = start_zk_broker(1)
    wait_until(lambda: broker.is_controller)
    create_topic(zookeeper_client, "events", 2, 1, {"cleanup.policy": "compact"})
    wait_until(_all_led(zookeeper_client, "events", 2), message="partition states")
    written = zookeeper_client.get("/brokers/topics/events")[0]
    assert re.fullmatch(
        rb'\{"version":3,"topic_id":"[A-Za-z0-9_-]{22}","partitions":\{"0":\[1\],"1":\[1\]\},'
        rb'"adding_replicas":\{\},"removing_replicas":\{\}\}', written), written
    assert zookeeper_client.get("/config/topics/events")[0] == (
        b'{"version":1,"config":{"cleanup.policy":"compact"}}')
    for partition in (0, 1):
        path = f"/brokers/topics/events/partitions/{partition}/state"
        assert zookeeper_client.get(path)[0] == (
            b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1]}')
    listener = broker.listener
    wait_until(lambda: listener.partitions() == {("events", 0), ("events", 1)})
    state, replicas = listener.assigned[("events", 0)]
    assert state == PartitionState(leader=1, leader_epoch=0, isr=(1,), controller_epoch=1)
    assert replicas == [1]
    assert listener.partition_dir("events", 1).is_dir()


def test_topic_written_by_a_tool_gets_states(start_zk_broker, zookeeper_client):
    """A topic znode written directly (as an old kafka-topics.sh did) is picked up too."""
    broker = start_zk_broker(1)
    wait_until(lambda: broker.is_controller)
    zookeeper_client.create("/brokers/topics/legacy", b'{"version":1,"partitions":{"0":[1]}}')
    wait_until(_all_led(zookeeper_client, "legacy", 1))
    wait_until(lambda: broker.listener.partitions() == {("legacy", 0)})


def test_three_brokers_each_get_their_partitions(start_zk_broker, zookeeper_client):
    brokers = [start_zk_broker(i) for i in (1, 2, 3)]
    wait_until(lambda: sum(b.is_controller for b in brokers) == 1)
    assignment = create_topic(zookeeper_client, "spread", 6, 2)
    wait_until(_all_led(zookeeper_client, "spread", 6))
    assert _json(zookeeper_client, "/brokers/topics/spread")["partitions"] == {
        str(p): list(r) for p, r in assignment.items()}
    assert sorted(r[0] for r in assignment.values()) == [1, 1, 2, 2, 3, 3]
    for broker in brokers:
        expected = {("spread", p) for p, r in assignment.items() if broker.broker_id in r}
        assert len(expected) == 4
        wait_until(lambda b=broker, e=expected: b.listener.partitions() == e,
                   message=f"broker {broker.broker_id} holds {sorted(expected)}")
        for (topic, partition) in expected:
            state, replicas = broker.listener.assigned[(topic, partition)]
            assert replicas == list(assignment[partition])
            assert state.leader == replicas[0] and state.isr == tuple(replicas)


def test_controller_failover_bumps_the_epoch_and_reelects_its_leaders(start_zk_broker,
                                                                     zookeeper_client):
    brokers = [start_zk_broker(i) for i in (1, 2, 3)]
    wait_until(lambda: brokers[0].is_controller)
    create_topic(zookeeper_client, "failover", 6, 2, start_index=0)
    wait_until(_all_led(zookeeper_client, "failover", 6))
    before = _states(zookeeper_client, "failover", 6)
    led_by_1 = [p for p, s in before.items() if s.leader == 1]
    assert led_by_1
    # the controller's session ends (its client closes): its ephemeral znodes go with it
    brokers[0].client.stop()
    wait_until(lambda: zookeeper_client.exists("/controller")
               and _json(zookeeper_client, "/controller")["brokerid"] != 1,
               message="new controller")
    assert zookeeper_client.get("/controller_epoch")[0] == b"2"
    # the winner writes /controller before it has taken the controller's role in its process
    wait_until(lambda: any(b.is_controller for b in brokers[1:]), message="controller role")
    new_controller = next(b for b in brokers[1:] if b.is_controller)
    assert new_controller.controller.epoch == 2

    def reelected():
        after = _states(zookeeper_client, "failover", 6)
        return all(after[p].leader not in (1, -1) for p in led_by_1) and after

    after = wait_until(reelected, message="leaders re-elected")
    for partition in led_by_1:
        assert after[partition].leader_epoch == before[partition].leader_epoch + 1
        assert after[partition].isr == tuple(r for r in before[partition].isr if r != 1)
        assert after[partition].controller_epoch == 2
    # the surviving replicas hear about their new state
    for partition in led_by_1:
        new_leader = after[partition].leader
        listener = brokers[new_leader - 1].listener
        wait_until(lambda lst=listener, p=partition: lst.assigned[("failover", p)][0] == after[p])


def test_dead_broker_partitions_go_offline_and_come_back(start_zk_broker, zookeeper_client):
    controller = start_zk_broker(1)
    wait_until(lambda: controller.is_controller)
    other = start_zk_broker(2)
    create_topic(zookeeper_client, "single", 1, 1, replica_assignment={0: [2]})
    wait_until(_all_led(zookeeper_client, "single", 1))
    other.stop()
    wait_until(lambda: get_partition_state(zookeeper_client, "single", 0).leader == -1)
    assert get_partition_state(zookeeper_client, "single", 0) == PartitionState(-1, 1, (2,), 1)
    start_zk_broker(2)
    wait_until(lambda: get_partition_state(zookeeper_client, "single", 0).leader == 2)
    assert get_partition_state(zookeeper_client, "single", 0) == PartitionState(2, 2, (2,), 1)


def test_new_partitions_get_states_and_reach_the_listener(start_zk_broker, zookeeper_client):
    broker = start_zk_broker(1)
    wait_until(lambda: broker.is_controller)
    create_topic(zookeeper_client, "growing", 1, 1)
    wait_until(lambda: broker.listener.partitions() == {("growing", 0)})
    assert add_partitions(zookeeper_client, "growing", 3) == {1: (1,), 2: (1,)}
    wait_until(lambda: broker.listener.partitions() == {("growing", p) for p in range(3)})


def test_deleted_topic_leaves_zookeeper_and_every_replica(start_zk_broker, zookeeper_client):
    brokers = [start_zk_broker(i) for i in (1, 2, 3)]
    create_topic(zookeeper_client, "doomed", 3, 2, {"retention.ms": "1000"})
    create_topic(zookeeper_client, "kept", 1, 3)
    wait_until(_all_led(zookeeper_client, "doomed", 3))
    assignment = _json(zookeeper_client, "/brokers/topics/doomed")["partitions"]
    replicas = {(b, int(p)) for p, rs in assignment.items() for b in rs}
    for broker in brokers:
        mine = {("doomed", p) for b, p in replicas if b == broker.broker_id}
        wait_until(lambda b=broker, m=mine: b.listener.partitions("doomed") == m)
        assert all(broker.listener.partition_dir(*tp).is_dir() for tp in mine)
        # every broker hosts "kept" before the deletion, so that "untouched" below means it
        wait_until(lambda b=broker: b.listener.partitions("kept") == {("kept", 0)})

    delete_topic(zookeeper_client, "doomed")
    wait_until(lambda: zookeeper_client.exists("/brokers/topics/doomed") is None
               and zookeeper_client.exists("/admin/delete_topics/doomed") is None,
               message="the topic's znodes are gone")
    assert zookeeper_client.exists("/config/topics/doomed") is None
    for broker in brokers:
        listener = broker.listener
        mine = sorted(p for b, p in replicas if b == broker.broker_id)
        wait_until(lambda lst=listener, m=mine: sorted(c[2] for c in lst.removals("doomed")) == m)
        assert all(c[3] is True for c in listener.removals("doomed"))  # delete=True
        assert listener.partitions("doomed") == set()
        assert not any(listener.partition_dir("doomed", p).exists() for p in mine)
        assert listener.partitions("kept") == {("kept", 0)}  # untouched
    # the name can be used again, for a new topic
    create_topic(zookeeper_client, "doomed", 1, 1)
    wait_until(_all_led(zookeeper_client, "doomed", 1))


def test_deletion_disabled_keeps_the_topic(start_zk_broker, zookeeper_client):
    broker = start_zk_broker(1, **{"delete.topic.enable": "false"})
    wait_until(lambda: broker.is_controller)
    create_topic(zookeeper_client, "precious", 1, 1)
    wait_until(lambda: broker.listener.partitions() == {("precious", 0)})
    delete_topic(zookeeper_client, "precious")
    wait_until(lambda: zookeeper_client.exists("/admin/delete_topics/precious") is None)
    assert zookeeper_client.exists("/brokers/topics/precious") is not None
    assert broker.listener.removals("precious") == []


def test_deletion_waits_for_offline_replicas(start_zk_broker, zookeeper_client, caplog):
    caplog.set_level(logging.INFO, logger="broker_lite.controller")
    controller = start_zk_broker(1)
    wait_until(lambda: controller.is_controller)
    replica = start_zk_broker(2)
    create_topic(zookeeper_client, "waiting", 1, 1, replica_assignment={0: [2]})
    wait_until(lambda: replica.listener.partitions() == {("waiting", 0)})
    replica.stop()
    delete_topic(zookeeper_client, "waiting")
    wait_until(lambda: any("deletion of waiting waits for brokers [2]" in r.getMessage()
                           for r in caplog.records), message="the controller defers the deletion")
    assert zookeeper_client.exists("/brokers/topics/waiting") is not None
    # the deletion reads the live brokers afresh, while the partition goes offline when the
    # controller handles the broker change: on a busy machine either may come first
    wait_until(lambda: get_partition_state(zookeeper_client, "waiting", 0).leader == -1,
               message="the partition goes offline")
    assert zookeeper_client.exists("/brokers/topics/waiting") is not None
    returning = start_zk_broker(2)
    wait_until(lambda: zookeeper_client.exists("/brokers/topics/waiting") is None)
    # the returning broker found the marker before registering, and deleted its data
    assert [c[1:] for c in returning.listener.calls] == [("waiting", 0, True)]


@pytest.mark.parametrize("state,replicas,live,expected", [
    # new partition: leader = first live replica, ISR = live replicas
    (None, (1, 2, 3), {2, 3}, PartitionState(2, 0, (2, 3), 5)),
    (None, (1, 2), set(), None),
    # leader alive, ISR intact: unchanged
    (PartitionState(1, 3, (1, 2), 1), (1, 2), {1, 2}, PartitionState(1, 3, (1, 2), 1)),
    # follower died: it leaves the ISR
    (PartitionState(1, 3, (1, 2), 1), (1, 2), {1}, PartitionState(1, 4, (1,), 5)),
    # leader died: the next live replica in the ISR leads
    (PartitionState(1, 3, (1, 2, 3), 1), (1, 2, 3), {3, 2}, PartitionState(2, 4, (2, 3), 5)),
    # leader died and no one else is in sync: offline, the last leader stays in the ISR
    (PartitionState(1, 3, (1,), 1), (1, 2), {2}, PartitionState(-1, 4, (1,), 5)),
    (PartitionState(-1, 4, (1,), 1), (1, 2), {2}, PartitionState(-1, 4, (1,), 1)),
    # ...and leads again when it returns
    (PartitionState(-1, 4, (1,), 1), (1, 2), {1, 2}, PartitionState(1, 5, (1,), 5)),
])
def test_desired_state(state, replicas, live, expected):
    assert desired_state(state, replicas, live, 5) == expected


def _set_isr(client, topic, partition, isr):
    """Write the ISR as the partition's leader does (same leader and epochs), then notify the
    controller through /isr_change_notification."""
    from broker_lite.zk.layout import (
        IsrChangeNotificationSequenceZNode,
        TopicPartitionStateZNode,
    )

    path = TopicPartitionStateZNode.path(topic, partition)
    data, stat = client.get(path)
    state = TopicPartitionStateZNode.decode(data, path)
    client.set(path, TopicPartitionStateZNode.encode(
        PartitionState(state.leader, state.leader_epoch, tuple(isr), state.controller_epoch)),
        version=stat.version)
    client.create(IsrChangeNotificationSequenceZNode.PATH_PREFIX,
                  IsrChangeNotificationSequenceZNode.encode([(topic, partition)]), sequence=True)


def test_a_reassignment_asked_in_zookeeper_runs_to_completion(start_zk_broker, zookeeper_client):
    """/admin/reassign_partitions: the controller records the reassignment in the topic znode
    (RS = TRS + ORS, adding and removing), waits until the target replicas are in the ISR, then
    moves the leader into the target, shrinks the ISR, writes RS = TRS and removes the entry
    (the znode with its last one); the ISR change notices are deleted."""
    from broker_lite.zk.layout import ReassignPartitionsZNode, TopicZNode

    brokers = [start_zk_broker(i) for i in (1, 2, 3)]
    wait_until(lambda: brokers[0].is_controller)
    create_topic(zookeeper_client, "moving", 2, 1, replica_assignment={0: [1], 1: [1]})
    wait_until(_all_led(zookeeper_client, "moving", 2))
    zookeeper_client.create(ReassignPartitionsZNode.PATH, ReassignPartitionsZNode.encode(
        {("moving", 0): [2, 3]}))

    def topic():
        return TopicZNode.decode(zookeeper_client.get("/brokers/topics/moving")[0], "")

    wait_until(lambda: topic().adding_replicas == {0: (2, 3)})
    assert topic().partitions == {0: (2, 3, 1), 1: (1,)}
    assert topic().removing_replicas == {0: (1,)}
    wait_until(lambda: brokers[1].listener.partitions("moving") == {("moving", 0)})
    _set_isr(zookeeper_client, "moving", 0, [1, 2])  # 3 not caught up yet: not complete
    assert zookeeper_client.exists(ReassignPartitionsZNode.PATH) is not None
    _set_isr(zookeeper_client, "moving", 0, [1, 2, 3])
    wait_until(lambda: topic().partitions == {0: (2, 3), 1: (1,)})
    assert (topic().adding_replicas, topic().removing_replicas) == ({}, {})
    assert get_partition_state(zookeeper_client, "moving", 0) == PartitionState(2, 1, (2, 3), 1)
    wait_until(lambda: zookeeper_client.exists(ReassignPartitionsZNode.PATH) is None)
    wait_until(lambda: zookeeper_client.get_children("/isr_change_notification") == [])
    # the removed replica is told it no longer holds the partition
    wait_until(lambda: ("removed", "moving", 0, False) in brokers[0].listener.calls)


def test_a_preferred_election_asked_in_zookeeper(start_zk_broker, zookeeper_client):
    from broker_lite.zk.layout import PreferredReplicaElectionZNode

    brokers = [start_zk_broker(i) for i in (1, 2)]
    wait_until(lambda: brokers[0].is_controller)
    create_topic(zookeeper_client, "prefer", 1, 2, replica_assignment={0: [2, 1]})
    wait_until(_all_led(zookeeper_client, "prefer", 1))
    brokers[1].stop()
    wait_until(lambda: get_partition_state(zookeeper_client, "prefer", 0).leader == 1)
    brokers[1] = start_zk_broker(2)
    _set_isr(zookeeper_client, "prefer", 0, [1, 2])  # the leader took 2 back in
    zookeeper_client.create(PreferredReplicaElectionZNode.PATH,
                            PreferredReplicaElectionZNode.encode([("prefer", 0)]))
    wait_until(lambda: get_partition_state(zookeeper_client, "prefer", 0).leader == 2)
    assert get_partition_state(zookeeper_client, "prefer", 0).isr == (1, 2)
    wait_until(lambda: zookeeper_client.exists(PreferredReplicaElectionZNode.PATH) is None)


def test_unclean_election_follows_the_topic_setting(start_zk_broker, zookeeper_client):
    """Offline for want of an in-sync replica, a partition gets the first live replica as its
    leader once unclean.leader.election.enable is set for its topic."""
    from broker_lite.zk import set_topic_config

    brokers = [start_zk_broker(i) for i in (1, 2, 3)]
    wait_until(lambda: brokers[0].is_controller)
    create_topic(zookeeper_client, "careless", 1, 2, replica_assignment={0: [2, 3]})
    wait_until(_all_led(zookeeper_client, "careless", 1))
    brokers[2].stop()
    wait_until(lambda: get_partition_state(zookeeper_client, "careless", 0).isr == (2,))
    brokers[1].stop()
    brokers[2] = start_zk_broker(3)
    wait_until(lambda: get_partition_state(zookeeper_client, "careless", 0).leader == -1)
    set_topic_config(zookeeper_client, "careless", {"unclean.leader.election.enable": "true"})
    wait_until(lambda: get_partition_state(zookeeper_client, "careless", 0).leader == 3)
    assert get_partition_state(zookeeper_client, "careless", 0).isr == (3,)


def test_a_log_dir_event_moves_leadership_off_the_offline_replicas(start_zk_broker,
                                                                   zookeeper_client):
    """/log_dir_event_notification (KIP-112): the controller asks the broker named which of its
    replicas are offline, takes them out of the ISR, elects new leaders where they led, and
    deletes the notice; its other replicas stay; once it registers again, they count again."""
    from broker_lite.common.vocabulary import TopicPartition
    from broker_lite.zk.layout import LogDirEventNotificationSequenceZNode

    asked = []

    def offline_replicas_of(broker, partitions):
        asked.append((broker, sorted(partitions)))
        return {TopicPartition("dirs", 0)} if broker == 1 else set()

    brokers = [start_zk_broker(i) for i in (1, 2)]
    wait_until(lambda: brokers[0].is_controller)
    brokers[0].controller.offline_replicas_of = offline_replicas_of
    create_topic(zookeeper_client, "dirs", 2, 2, replica_assignment={0: [1, 2], 1: [1, 2]})
    wait_until(_all_led(zookeeper_client, "dirs", 2))
    assert get_partition_state(zookeeper_client, "dirs", 0).leader == 1
    zookeeper_client.create(LogDirEventNotificationSequenceZNode.PATH_PREFIX,
                            LogDirEventNotificationSequenceZNode.encode(1), sequence=True)
    wait_until(lambda: get_partition_state(zookeeper_client, "dirs", 0).leader == 2,
               message="a new leader for the offline replica's partition")
    assert get_partition_state(zookeeper_client, "dirs", 0).isr == (2,)
    assert get_partition_state(zookeeper_client, "dirs", 1) == PartitionState(1, 0, (1, 2), 1)
    assert asked == [(1, [TopicPartition("dirs", 0), TopicPartition("dirs", 1)])]
    wait_until(lambda: zookeeper_client.get_children("/log_dir_event_notification") == [])
    assert brokers[0].controller.offline_replicas == {1: {TopicPartition("dirs", 0)}}
