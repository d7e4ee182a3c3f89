"""KafkaClient against a three-broker broker_lite cluster: requests go to each partition's
leader (one request per leader), and the client follows leaders that move (an election written
to ZooKeeper, a broker that stops), topics created and partitions added after it started."""

import threading
import uuid
from collections import Counter

import pytest
from confluent_kafka import Producer

from broker_lite.client import LATEST, KafkaClient, TopicPartition
from broker_lite.client.cluster.connection import BrokerConnection
from broker_lite.protocol import ApiKey
from broker_lite.records import iter_records
from broker_lite.server.testing import bootstrap
from broker_lite.zk.layout import PartitionState, TopicPartitionStateZNode
from broker_lite.zk.testing import join_all, wait_until

PARTITIONS = 6


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def produce(servers: str, topic: str, counts: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": servers, "log_level": 3, "linger.ms": 5})
    for partition, count in counts.items():
        for i in range(count):
            producer.produce(topic, partition=partition, value=b"%d-%d" % (partition, i))
    assert producer.flush(30) == 0


@pytest.fixture
def client(three_brokers):
    with KafkaClient({"bootstrap.servers": bootstrap(three_brokers), "retry.backoff.ms": "20",
                      "request.timeout.ms": "20000"}) as client:
        yield client


@pytest.fixture
def sent(monkeypatch):
    """Counts requests per (API, broker port) as they leave the client."""
    counts: Counter = Counter()
    original = BrokerConnection.request

    def counting(self, api_key, body, deadline, **kwargs):
        counts[(api_key, self.port)] += 1
        return original(self, api_key, body, deadline, **kwargs)

    monkeypatch.setattr(BrokerConnection, "request", counting)
    return counts


def leaders(client: KafkaClient, topic: str) -> dict[int, int]:
    described = client.admin.describe_topics([topic])[topic]
    return {p: info.leader for p, info in described.partitions.items()}


def ports(brokers) -> dict[int, int]:
    return {b.broker_id: b.port for b in brokers}


def move_leader(zookeeper_client, topic: str, partition: int, new_leader: int) -> None:
    """Write a new leader and epoch to the partition's state znode, as the controller does."""
    path = TopicPartitionStateZNode.path(topic, partition)
    data, _ = zookeeper_client.get(path)
    state = TopicPartitionStateZNode.decode(data, path)
    zookeeper_client.set(path, TopicPartitionStateZNode.encode(PartitionState(
        new_leader, state.leader_epoch + 1, state.isr, state.controller_epoch)))


def test_list_offsets_and_fetch_go_to_each_leader_once(client, three_brokers, sent):
    topic = unique("spread")
    client.admin.create_topics([(topic, PARTITIONS, 1)])
    led = leaders(client, topic)
    assert set(led.values()) == {1, 2, 3}
    counts = {p: 10 + p for p in range(PARTITIONS)}
    produce(bootstrap(three_brokers), topic, counts)
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    sent.clear()
    assert client.list_offsets(dict.fromkeys(tps, LATEST)) == \
        {tp: counts[tp.partition] for tp in tps}
    fetched = client.fetch(dict.fromkeys(tps, 0))
    for tp in tps:
        assert fetched[tp].error is None
        assert [r.value for r in iter_records(fetched[tp].records)] == \
            [b"%d-%d" % (tp.partition, i) for i in range(counts[tp.partition])]
    by_port = ports(three_brokers)
    for api in (ApiKey.LIST_OFFSETS, ApiKey.FETCH):
        assert {port: n for (key, port), n in sent.items() if key == api} == \
            {by_port[node]: 1 for node in (1, 2, 3)}


def test_a_moved_leader_answers_not_leader_and_the_client_follows(
        client, three_brokers, zookeeper_client, sent):
    by_port = ports(three_brokers)
    for operation in ("list_offsets", "fetch"):
        topic = unique(operation)
        client.admin.create_topics([(topic, 1, 2)])
        tp = TopicPartition(topic, 0)
        old = leaders(client, topic)[0]
        assert client.list_offsets({tp: LATEST}) == {tp: 0}  # the client caches the leader
        replicas = client.admin.describe_topics([topic])[topic].partitions[0].replicas
        new = next(r for r in replicas if r != old)
        move_leader(zookeeper_client, topic, 0, new)

        def moved(topic=topic, old=old, new=new) -> bool:  # on both replicas, in all metadata
            partitions = {b.broker_id: b.services.partitions for b in three_brokers}
            return partitions[new].is_leader(topic, 0) and \
                not partitions[old].is_leader(topic, 0) and \
                all(getattr(b.services.cluster.partition_state(topic, 0), "leader", None) == new
                    for b in three_brokers)
        wait_until(moved, message="the new leader took over, and every broker knows")
        produce(bootstrap(three_brokers), topic, {0: 7})  # written to the new leader only
        sent.clear()
        if operation == "list_offsets":
            assert client.list_offsets({tp: LATEST}) == {tp: 7}
        else:
            fetched = client.fetch({tp: 0})[tp]
            assert (fetched.error, fetched.high_watermark) == (None, 7)
        api = ApiKey.LIST_OFFSETS if operation == "list_offsets" else ApiKey.FETCH
        # first to the old leader (NOT_LEADER_OR_FOLLOWER), then, after a refresh, the new one
        assert sent[(api, by_port[old])] == 1 and sent[(api, by_port[new])] == 1
        assert sum(n for (key, _), n in sent.items() if key == ApiKey.METADATA) >= 1


def test_a_stopped_leader_is_replaced_and_the_client_follows(client, three_brokers):
    topic = unique("failover")
    client.admin.create_topics([(topic, 1, 2)])
    tp = TopicPartition(topic, 0)
    old = leaders(client, topic)[0]
    assert client.list_offsets({tp: LATEST}) == {tp: 0}
    three_brokers[old - 1].stop()
    wait_until(lambda: leaders(client, topic)[0] not in (old, -1), timeout=20,
               message="a new leader was elected")
    survivors = [b for b in three_brokers if b.broker_id != old]
    produce(bootstrap(survivors), topic, {0: 4})
    assert client.list_offsets({tp: LATEST}) == {tp: 4}
    assert client.fetch({tp: 0})[tp].high_watermark == 4


def test_topics_and_partitions_created_after_the_client_started(client, three_brokers):
    assert isinstance(client.topics(), dict)  # metadata cached before the topic exists
    topic = unique("late")
    with KafkaClient({"bootstrap.servers": bootstrap(three_brokers[2])}) as other:
        other.admin.create_topics([(topic, 2, 1)])
    produce(bootstrap(three_brokers), topic, {0: 3, 1: 5})
    tps = [TopicPartition(topic, p) for p in range(2)]
    assert client.list_offsets(dict.fromkeys(tps, LATEST)) == {tps[0]: 3, tps[1]: 5}

    with KafkaClient({"bootstrap.servers": bootstrap(three_brokers[1])}) as other:
        other.admin.create_partitions({topic: 4})
    produce(bootstrap(three_brokers), topic, {3: 2})
    new = TopicPartition(topic, 3)
    assert client.list_offsets({new: LATEST}) == {new: 2}  # unknown partition: refreshed
    assert client.fetch({new: 0})[new].high_watermark == 2
    assert client.partitions(topic) == [0, 1, 2, 3]


def test_threads_share_one_client_across_leaders(client, three_brokers):
    topic = unique("threads")
    client.admin.create_topics([(topic, PARTITIONS, 1)])
    counts = {p: 5 * (p + 1) for p in range(PARTITIONS)}
    produce(bootstrap(three_brokers), topic, counts)
    failures = []

    def worker(n: int) -> None:
        try:
            for i in range(10):
                tps = [TopicPartition(topic, (n + i + k) % PARTITIONS) for k in range(3)]
                assert client.list_offsets(dict.fromkeys(tps, LATEST)) == \
                    {tp: counts[tp.partition] for tp in tps}
                fetched = client.fetch(dict.fromkeys(tps, 0), max_wait_ms=0)
                assert {tp: f.high_watermark for tp, f in fetched.items()} == \
                    {tp: counts[tp.partition] for tp in tps}
        except Exception as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(6)]
    for t in threads:
        t.start()
    join_all(threads, 120, "worker threads still running after 120 s")
    assert failures == []
