"""Broker quotas as the client honours them (KIP-219): a response's ``throttle_time_ms`` holds
back the next request to that broker, in the API versions where Kafka's client throttles
itself, and only on that broker's connection."""

import time

import pytest
from scripted_broker import ScriptedBroker, sequence

from broker_lite.client import ClientConfig, KafkaClient, KafkaTimeoutError
from broker_lite.client.cluster.connection import BrokerConnection
from broker_lite.client.cluster.throttling import client_throttle_ms
from broker_lite.client.retry import Deadline
from broker_lite.protocol import ApiKey

# Room for a loaded machine above an expected wait.
SLACK_S = 5


def throttled(handler, throttle_ms: int):
    """``handler``'s answer carrying ``throttle_time_ms``."""
    def handle(header, body):
        return {**handler(header, body), "throttle_time_ms": throttle_ms}
    return handle


def connection(broker: ScriptedBroker) -> BrokerConnection:
    return BrokerConnection("127.0.0.1", broker.port,
                            ClientConfig({"bootstrap.servers": broker.bootstrap}))


def metadata(conn: BrokerConnection, deadline_ms: int = 10_000) -> int:
    """Send a Metadata request; its version."""
    return conn.request(ApiKey.METADATA, {"topics": None}, Deadline(deadline_ms))[0]


@pytest.mark.parametrize("api_key, version, throttles", [
    (ApiKey.FETCH, 7, False), (ApiKey.FETCH, 8, True),
    (ApiKey.PRODUCE, 5, False), (ApiKey.PRODUCE, 6, True),
    (ApiKey.METADATA, 5, False), (ApiKey.METADATA, 12, True),
    (ApiKey.LIST_OFFSETS, 2, False), (ApiKey.LIST_OFFSETS, 3, True),
    (ApiKey.OFFSET_COMMIT, 3, False), (ApiKey.OFFSET_COMMIT, 4, True),
    (ApiKey.API_VERSIONS, 1, False), (ApiKey.API_VERSIONS, 2, True),
    (ApiKey.INIT_PRODUCER_ID, 0, False), (ApiKey.INIT_PRODUCER_ID, 1, True),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS, 0, True),  # newer than KIP-219: every version
    (ApiKey.DESCRIBE_CLUSTER, 0, True),
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, False),  # the broker delays it, in every version
])
def test_the_client_throttles_itself_from_the_kip_219_version_of_each_api(api_key, version,
                                                                          throttles):
    assert client_throttle_ms(api_key, version, {"throttle_time_ms": 300}) == \
        (300 if throttles else 0)
    assert client_throttle_ms(api_key, version, {"throttle_time_ms": 0}) == 0
    assert client_throttle_ms(api_key, version, {}) == 0


def test_a_throttled_response_delays_the_next_request_to_that_broker():
    with ScriptedBroker() as broker:
        answer = broker.metadata({"t": 1})
        broker.handlers[ApiKey.METADATA] = sequence(throttled(answer, 2000), answer)
        conn = connection(broker)
        metadata(conn)
        metadata(conn)
        first, second = broker.arrivals_of(ApiKey.METADATA)
        assert 2.0 <= second - first < 2.0 + SLACK_S
        metadata(conn)  # the throttle has passed: no more waiting
        third = broker.arrivals_of(ApiKey.METADATA)[2]
        assert third - second < 1.5


def test_a_throttle_outlives_a_reconnection():
    """The throttle belongs to the broker, not to the socket: reconnecting does not lift it."""
    with ScriptedBroker() as broker:
        answer = broker.metadata({"t": 1})
        broker.handlers[ApiKey.METADATA] = sequence(throttled(answer, 700), answer)
        conn = connection(broker)
        metadata(conn)
        thrown_at = time.monotonic()
        broker.drop_connections()
        metadata(conn)
        assert broker.connections == 2
        assert broker.arrivals_of(ApiKey.API_VERSIONS)[1] - thrown_at >= 0.6


def test_versions_before_kip_219_are_not_throttled_by_the_client():
    """Before KIP-219 the broker delayed the response itself: the client sends on at once."""
    versions = {ApiKey.API_VERSIONS: (0, 1), ApiKey.METADATA: (0, 5)}
    with ScriptedBroker(api_versions=versions) as broker:
        answer = broker.metadata({"t": 1})
        broker.handlers[ApiKey.METADATA] = throttled(answer, 3000)
        conn = connection(broker)
        assert metadata(conn) == 5
        started = time.monotonic()
        metadata(conn)
        assert time.monotonic() - started < 2


def test_a_throttle_past_the_deadline_fails_at_once_without_sending():
    with ScriptedBroker() as broker:
        answer = broker.metadata({"t": 1})
        broker.handlers[ApiKey.METADATA] = throttled(answer, 10_000)
        conn = connection(broker)
        metadata(conn)
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=r"throttles this client for .* ms more"):
            metadata(conn, deadline_ms=300)
        assert time.monotonic() - started < 0.3 + SLACK_S
        assert len(broker.requests_for(ApiKey.METADATA)) == 1
        assert conn.connected  # nothing was sent, nothing is out of step


def test_a_throttled_broker_does_not_hold_back_the_others():
    """Broker 1 throttles the client for 10 s; requests any broker can answer go to broker 2
    meanwhile, at once."""
    with ScriptedBroker(node_id=1) as one, ScriptedBroker(node_id=2) as two:
        brokers = [(1, one.port), (2, two.port)]
        one.handlers[ApiKey.METADATA] = throttled(one.metadata({"t": 1}, brokers=brokers),
                                                  10_000)
        two.handlers[ApiKey.METADATA] = two.metadata({"t": 3}, brokers=brokers)
        with KafkaClient({"bootstrap.servers": one.bootstrap}) as client:
            client.topics()  # from broker 1, which now throttles this client
            started = time.monotonic()
            assert client.partitions("t") == [0, 1, 2]  # from broker 2
            assert time.monotonic() - started < SLACK_S
        assert len(one.requests_for(ApiKey.METADATA)) == 1
