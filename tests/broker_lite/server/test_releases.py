"""A broker playing an older Kafka release: the release tables match real brokers' ApiVersions
answers, and over the wire the broker advertises, serves and refuses as that release did."""

import socket
import struct

import pytest

from broker_lite.protocol import ApiKey, ErrorCode, encode_request, parse_response
from broker_lite.server.apis import handlers
from broker_lite.server.releases import RELEASES
from broker_lite.server.testing import call, recv_exactly


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_each_release_is_what_its_brokers_answered(name):
    """Checked against kafka-python's recordings of real brokers' ApiVersions answers: the same
    highest version of every API broker_lite serves, and no API the release lacked."""
    from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

    recorded = BROKER_API_VERSIONS[tuple(int(p) for p in name.split("."))]
    release = RELEASES[name]
    served = handlers()
    assert {int(k): v for k, v in release.highest.items()} == {
        key: high for key, (low, high) in recorded.items() if key in served}
    assert all(recorded[int(k)][0] == 0 for k in release.highest)


def raw_call(port: int, api_key: int, version: int, body: dict, answered_as: int) -> dict:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(encode_request(api_key, version, 3, "kpy-tests", body))
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        return parse_response(api_key, answered_as, recv_exactly(sock, size))[1]


def closes_the_connection(port: int, api_key: int, version: int, body: dict) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(encode_request(api_key, version, 3, "kpy-tests", body))
        return sock.recv(4) == b""


@pytest.mark.parametrize("release_broker", ["2.1"], indirect=True)
def test_a_broker_playing_kafka_2_1(release_broker):
    port = release_broker.port
    refusal = raw_call(port, ApiKey.API_VERSIONS, 3, {}, answered_as=0)
    # before KIP-511 (Kafka 2.4) a refusal names no version
    assert (refusal["error_code"], refusal["api_keys"]) == (ErrorCode.UNSUPPORTED_VERSION, [])
    served = call(port, ApiKey.API_VERSIONS, 2, {})
    ranges = {e["api_key"]: (e["min_version"], e["max_version"]) for e in served["api_keys"]}
    assert ranges[ApiKey.FETCH] == (0, 10)
    assert ranges[ApiKey.METADATA] == (0, 7)
    assert ApiKey.DESCRIBE_TRANSACTIONS not in ranges
    assert ApiKey.INCREMENTAL_ALTER_CONFIGS not in ranges
    # what Kafka 2.1 did not serve closes the connection, as any Kafka broker does
    assert closes_the_connection(port, ApiKey.METADATA, 8, {"topics": []})
    assert closes_the_connection(port, ApiKey.DESCRIBE_TRANSACTIONS, 0,
                                 {"transactional_ids": ["t"]})
    assert call(port, ApiKey.METADATA, 7, {"topics": []})["brokers"]


@pytest.mark.parametrize("release_broker", ["2.8"], indirect=True)
def test_a_broker_playing_kafka_2_8_names_its_api_versions_in_a_refusal(release_broker):
    refusal = raw_call(release_broker.port, ApiKey.API_VERSIONS, 4, {}, answered_as=0)
    assert refusal["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    assert {e["api_key"]: e["max_version"] for e in refusal["api_keys"]}[
        ApiKey.API_VERSIONS] == 3
