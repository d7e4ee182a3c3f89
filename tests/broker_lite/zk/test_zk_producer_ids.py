"""Producer id blocks: Kafka's format, disjoint blocks under concurrent allocation, and a
broker's ids handed out block by block."""

import json
import threading

import pytest

from broker_lite.zk import allocate_producer_id_block, connect
from broker_lite.zk.cluster import ensure_persistent_paths
from broker_lite.zk.errors import ProducerIdsUnavailableError
from broker_lite.zk.layout import ProducerIdBlock
from broker_lite.zk.producer_ids import ZkProducerIdManager


def test_first_blocks(zookeeper_client):
    ensure_persistent_paths(zookeeper_client)
    assert zookeeper_client.get("/latest_producer_id_block")[0] == b""
    assert allocate_producer_id_block(zookeeper_client, 1) == ProducerIdBlock(1, 0, 999)
    assert zookeeper_client.get("/latest_producer_id_block")[0] == (
        b'{"version":1,"broker":1,"block_start":"0","block_end":"999"}')
    block = allocate_producer_id_block(zookeeper_client, 2, block_size=10)
    assert block == ProducerIdBlock(2, 1000, 1009)


def test_concurrent_brokers_get_disjoint_blocks(zookeeper_connect):
    clients = [connect(zookeeper_connect) for _ in range(2)]
    blocks: list[ProducerIdBlock] = []
    lock = threading.Lock()
    start = threading.Barrier(len(clients))

    def allocate(client, broker_id):
        start.wait(30)
        for _ in range(25):
            block = allocate_producer_id_block(client, broker_id)
            with lock:
                blocks.append(block)

    threads = [threading.Thread(target=allocate, args=(c, i + 1), daemon=True)
               for i, c in enumerate(clients)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not any(t.is_alive() for t in threads), "allocations still running after 30 s"
        ranges = sorted((b.block_start, b.block_end) for b in blocks)
        assert len(ranges) == 50
        assert ranges == [(i * 1000, i * 1000 + 999) for i in range(50)]  # disjoint, no gaps
        assert {b.broker_id for b in blocks} == {1, 2}
        latest = json.loads(clients[0].get("/latest_producer_id_block")[0])
        assert latest["block_end"] == "49999"
    finally:
        for client in clients:
            client.stop()
            client.close()


def test_a_manager_hands_out_its_block_then_takes_the_next(zookeeper_client):
    ensure_persistent_paths(zookeeper_client)
    manager = ZkProducerIdManager(zookeeper_client, lambda: 3, block_size=3)
    other = ZkProducerIdManager(zookeeper_client, lambda: 4, block_size=3)
    assert [manager.generate() for _ in range(2)] == [0, 1]
    assert other.generate() == 3  # the other broker's block follows the first
    assert [manager.generate() for _ in range(2)] == [2, 6]  # then a block after the other's
    assert manager.block == ProducerIdBlock(3, 6, 8)


def test_a_manager_without_zookeeper_or_broker_id_is_unavailable(zookeeper_client):
    ensure_persistent_paths(zookeeper_client)
    with pytest.raises(ProducerIdsUnavailableError, match="no id yet"):
        ZkProducerIdManager(zookeeper_client, lambda: -1).generate()
    zookeeper_client.stop()
    with pytest.raises(ProducerIdsUnavailableError, match="ZooKeeper"):
        ZkProducerIdManager(zookeeper_client, lambda: 1).generate()
