"""Connections shared by the successive work of a process (``broker_lite.client.shared``):
reused across leases, shared by leases whose connection settings agree, never lent broken,
closed when idle, and not inherited by forked children."""

import os
import time

import pytest
from scripted_broker import CLOSE, ScriptedBroker, sequence

from broker_lite.client import InvalidArgumentError, KafkaClient, Producer
from broker_lite.client.shared import ClientCache, shared_client, shared_clients
from broker_lite.protocol import ApiKey
from broker_lite.zk.testing import wait_until


@pytest.fixture
def broker():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"t": 3})
        yield broker


@pytest.fixture
def cache():
    cache = ClientCache()
    yield cache
    cache.close()


def test_successive_leases_share_one_connection(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap}
    for _ in range(5):
        with cache.lease(settings) as client:
            assert client.partitions("t") == [0, 1, 2]
    assert broker.connections == 1
    assert len(broker.requests_for(ApiKey.API_VERSIONS)) == 1
    assert len(cache) == 1


def test_leases_differing_only_in_other_settings_share_connections(broker, cache):
    """Fetch sizes, the isolation level or a producer's settings are the lease's own; the
    connections are the same."""
    base = {"bootstrap.servers": broker.bootstrap}
    with cache.lease({**base, "max.partition.fetch.bytes": "8388608"}) as reader, \
            cache.lease({**base, "isolation.level": "read_committed", "acks": "1"}) as writer:
        assert reader.cluster is writer.cluster
        assert reader.config.max_partition_fetch_bytes == 8388608
        assert writer.config.max_partition_fetch_bytes == 1048576
        assert writer.config.isolation_level == "read_committed"
        assert Producer(writer, idempotent=False).acks == 1  # the lease's producer settings
        reader.partitions("t")
        writer.partitions("t")
    assert broker.connections == 1


def test_other_connection_settings_get_other_connections(broker, cache):
    with cache.lease({"bootstrap.servers": broker.bootstrap}) as one, \
            cache.lease({"bootstrap.servers": broker.bootstrap, "client.id": "other"}) as two:
        assert one.cluster is not two.cluster
        one.partitions("t")
        two.partitions("t")
    assert broker.connections == 2
    assert len(cache) == 2


def test_closing_a_lease_leaves_the_shared_connections_open(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap}
    with cache.lease(settings) as client:
        client.partitions("t")
    assert client.cluster.closed is False
    assert broker._open  # the broker still has the connection


def test_a_connection_the_broker_closed_between_leases_is_replaced(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap}
    with cache.lease(settings) as client:
        client.partitions("t")
    broker.drop_connections()
    wait_until(lambda: not broker._open, message="the broker closed the connection")
    with cache.lease(settings) as client:
        assert client.partitions("t") == [0, 1, 2]  # no error: reconnected first
    assert broker.connections == 2


def test_a_connection_lost_during_a_lease_is_not_lent_again(broker, cache):
    """The broker closes the connection mid-request: the lease fails, the cluster is dropped
    and closed, and the next lease starts on a fresh one."""
    broker.handlers[ApiKey.METADATA] = sequence(CLOSE, broker.metadata({"t": 3}))
    # a backoff longer than the request timeout: the first lease fails at the closed connection
    # rather than retrying it; the second has the whole timeout for a fresh connection
    settings = {"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "2000",
                "retry.backoff.ms": "5000", "retry.backoff.max.ms": "5000"}
    with pytest.raises(Exception), cache.lease(settings) as client:  # noqa: B017 (any failure)
        client.partitions("t")
    failed = client.cluster
    assert failed.closed and len(cache) == 0
    with cache.lease(settings) as client:
        assert client.cluster is not failed
        assert client.partitions("t") == [0, 1, 2]


def test_an_error_in_one_lease_closes_the_cluster_once_the_others_end(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap}
    with cache.lease(settings) as other:
        with pytest.raises(RuntimeError), cache.lease(settings) as failing:
            failing.partitions("t")
            raise RuntimeError("the task failed")
        assert not other.cluster.closed  # still in use
        assert other.partitions("t") == [0, 1, 2]
        assert len(cache) == 0  # but never lent again
    assert other.cluster.closed


def test_a_generator_closed_early_is_no_failure(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap}

    def rows():
        with cache.lease(settings) as client:
            yield from client.partitions("t")

    reading = rows()
    assert next(reading) == 0
    reading.close()  # as Spark does when it needs no more rows
    assert len(cache) == 1
    with cache.lease(settings) as client:
        client.partitions("t")
    assert broker.connections == 1


def test_connections_idle_past_connections_max_idle_ms_are_closed(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap, "connections.max.idle.ms": "300"}
    with cache.lease(settings) as client:
        client.partitions("t")
        kept = client.cluster
    wait_until(lambda: len(cache) == 0, timeout=10, message="the idle connections closed")
    assert kept.closed
    wait_until(lambda: not broker._open, message="the broker saw the connection close")
    with cache.lease(settings) as client:  # a new one when needed again
        assert client.partitions("t") == [0, 1, 2]


def test_connections_in_use_are_not_closed_as_idle(broker, cache):
    settings = {"bootstrap.servers": broker.bootstrap, "connections.max.idle.ms": "100"}
    with cache.lease(settings) as client:
        client.partitions("t")
        time.sleep(0.5)
        assert not client.cluster.closed
        assert client.partitions("t") == [0, 1, 2]


def test_a_client_cannot_share_connections_with_other_connection_settings(broker):
    with KafkaClient({"bootstrap.servers": broker.bootstrap}) as owner:
        with pytest.raises(InvalidArgumentError, match="same connection settings"):
            KafkaClient({"bootstrap.servers": broker.bootstrap, "client.id": "x"},
                        cluster=owner.cluster)


def test_a_forked_child_does_not_inherit_the_shared_connections(broker):
    settings = {"bootstrap.servers": broker.bootstrap}
    with shared_client(settings) as client:
        client.partitions("t")
    assert len(shared_clients()) >= 1
    pid = os.fork()
    if pid == 0:  # the child: no clusters, and the parent's connection untouched
        os._exit(0 if len(shared_clients()) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with shared_client(settings) as client:
        assert client.partitions("t") == [0, 1, 2]
    assert broker.connections == 1
    shared_clients().close()
