"""API version negotiation: the highest version inside both the broker's and the client's range,
a clear error when they do not overlap, and the ApiVersions fallback for brokers that do not
know the client's ApiVersions version."""

import struct
import time

import pytest
from scripted_broker import ScriptedBroker

from broker_lite.client import (
    FetchedPartition,
    KafkaClient,
    TopicPartition,
    UnsupportedVersionError,
)
from broker_lite.client.cluster.versions import CLIENT_VERSIONS, FIRST_KAFKA_RELEASE, negotiate
from broker_lite.protocol import ApiKey


def advertised(ranges: dict) -> list[dict]:
    return [{"api_key": int(k), "min_version": lo, "max_version": hi}
            for k, (lo, hi) in ranges.items()]


def test_the_highest_common_version_is_chosen():
    table = negotiate(advertised({ApiKey.FETCH: (0, 11), ApiKey.METADATA: (0, 99),
                                  ApiKey.LIST_OFFSETS: (3, 5)}), "b:1")
    assert table.version(ApiKey.FETCH) == 11  # theirs is lower
    assert table.version(ApiKey.METADATA) == CLIENT_VERSIONS[ApiKey.METADATA][1]  # ours is
    assert table.version(ApiKey.LIST_OFFSETS) == 5
    assert table.shared[ApiKey.LIST_OFFSETS] == (3, 5)


def test_a_cap_below_the_chosen_version():
    table = negotiate(advertised({ApiKey.FETCH: (4, 17)}), "b:1")
    assert table.version(ApiKey.FETCH, max_version=12) == 12
    assert table.version(ApiKey.FETCH, max_version=20) == 17
    with pytest.raises(UnsupportedVersionError, match=r"version 3 or lower is needed.*4-17"):
        table.version(ApiKey.FETCH, max_version=3)


def test_ranges_that_do_not_overlap_fail_clearly():
    table = negotiate(advertised({ApiKey.FETCH: (0, 3), ApiKey.OFFSET_COMMIT: (0, 1)}), "b:9")
    with pytest.raises(UnsupportedVersionError) as info:
        table.version(ApiKey.FETCH)
    low, high = CLIENT_VERSIONS[ApiKey.FETCH]
    assert str(info.value) == (f"broker b:9 serves Fetch versions 0-3, this client speaks "
                               f"{low}-{high}: none in common (Kafka 0.11.0 or later serves "
                               "them)")
    with pytest.raises(UnsupportedVersionError, match="does not serve ListOffsets"):
        table.version(ApiKey.LIST_OFFSETS)


def test_client_ranges_stay_within_the_protocol_schemas():
    from broker_lite.protocol import API_SCHEMAS
    for key, (low, high) in CLIENT_VERSIONS.items():
        versions = API_SCHEMAS[key].valid_versions
        assert versions.lo <= low <= high <= versions.hi


def release(version: tuple) -> str:
    return ".".join(map(str, version))


def test_each_api_names_the_first_kafka_release_that_serves_it():
    """Checked against kafka-python's recordings of real brokers' ApiVersions answers."""
    from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

    assert set(FIRST_KAFKA_RELEASE) == set(CLIENT_VERSIONS)
    for key, (low, _) in CLIENT_VERSIONS.items():
        first = next(version for version, ranges in sorted(BROKER_API_VERSIONS.items())
                     if ranges.get(int(key), (1, 0))[0] <= low <= ranges.get(int(key), (1, 0))[1])
        assert FIRST_KAFKA_RELEASE[key] in (release(first), release(first) + ".0"), key


def kafka_releases_from(oldest: tuple):
    from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

    return [(version, ranges) for version, ranges in sorted(BROKER_API_VERSIONS.items())
            if version >= oldest]


#: What kspark's source and sink speak: every Kafka release from 2.1 on must serve a version of
#: each (KIP-896: the oldest that Kafka 4's clients keep); DescribeTransactions is optional.
CONNECTOR_APIS = [ApiKey.API_VERSIONS, ApiKey.METADATA, ApiKey.FETCH, ApiKey.LIST_OFFSETS,
                  ApiKey.FIND_COORDINATOR, ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH,
                  ApiKey.PRODUCE, ApiKey.INIT_PRODUCER_ID, ApiKey.ADD_PARTITIONS_TO_TXN,
                  ApiKey.END_TXN, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE]


@pytest.mark.parametrize(("version", "ranges"), kafka_releases_from((2, 1)),
                         ids=lambda v: release(v) if isinstance(v, tuple) else "")
def test_every_kafka_release_from_2_1_on_serves_what_the_connector_speaks(version, ranges):
    table = negotiate(advertised(ranges), f"kafka-{release(version)}:9092")
    for key in CONNECTOR_APIS:
        low, high = table.shared[key]
        assert low <= high <= ranges[int(key)][1]
        assert table.version(key) == min(CLIENT_VERSIONS[key][1], ranges[int(key)][1])
    if version < (3, 0):
        with pytest.raises(UnsupportedVersionError, match=r"DescribeTransactions .*Kafka 3\.0"):
            table.version(ApiKey.DESCRIBE_TRANSACTIONS)


def test_older_broker_gets_older_versions_over_the_wire():
    """A broker with ApiVersions 0-2 answers the client's v3 with UNSUPPORTED_VERSION (in v0);
    the client asks again in v2, then speaks Metadata 5 as advertised."""
    ranges = {ApiKey.API_VERSIONS: (0, 2), ApiKey.METADATA: (0, 5)}
    with ScriptedBroker(api_versions=ranges) as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"events": 2})
        with KafkaClient({"bootstrap.servers": broker.bootstrap}) as client:
            assert client.topics() == {"events": 2}
        versions = [(h.api_key, h.api_version) for h, _ in broker.requests]
    assert versions == [(ApiKey.API_VERSIONS, 3), (ApiKey.API_VERSIONS, 2),
                        (ApiKey.METADATA, 5)]


def test_an_api_without_common_versions_fails_with_both_ranges():
    ranges = {ApiKey.API_VERSIONS: (0, 3), ApiKey.METADATA: (0, 12), ApiKey.FETCH: (0, 3),
              ApiKey.LIST_OFFSETS: (0, 0)}
    with ScriptedBroker(api_versions=ranges) as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"events": 1})
        config = {"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "5000"}
        with KafkaClient(config) as client:
            tp = TopicPartition("events", 0)
            fetched = client.fetch({tp: 0})[tp]
            assert isinstance(fetched, FetchedPartition)
            assert isinstance(fetched.error, UnsupportedVersionError)
            assert "serves Fetch versions 0-3" in str(fetched.error)
            with pytest.raises(UnsupportedVersionError, match="serves ListOffsets versions 0-0"):
                client.list_offsets({tp: -1})
        assert not broker.requests_for(ApiKey.FETCH)  # nothing was sent in a wrong version


# -- the ApiVersions answers of brokers that do not serve the version asked, frame by frame ------


def frame(correlation_id: int, body: bytes) -> bytes:
    """A response frame: size, correlation id (ApiVersions answers with header v0), body."""
    return struct.pack(">ii", 4 + len(body), correlation_id) + body


def entries_v0(ranges: dict) -> bytes:
    """ApiVersions v0-v2's ``api_keys``: an int32 count, then (key, min, max) int16 each."""
    return struct.pack(">i", len(ranges)) + b"".join(
        struct.pack(">hhh", key, low, high) for key, (low, high) in ranges.items())


def refusal_v0(ranges: dict):
    """Kafka's refusal of an ApiVersions version it does not serve: UNSUPPORTED_VERSION in
    version 0, listing ``ranges`` (Kafka 2.4+: ApiVersions' own; before: nothing)."""
    return lambda header, body: frame(header.correlation_id,
                                      struct.pack(">h", 35) + entries_v0(ranges))


def refusal_of_the_mock_cluster(served: dict):
    """librdkafka's mock cluster (rdkafka_mock_handlers.c, ``handle_ApiVersion``) refusing v3:
    the error code, then a one-byte count as v3 would have it but without v3's +1, the
    ApiVersions entry in v0's layout (no tagged fields), and v1's throttle time, no tags."""
    low, high = served[ApiKey.API_VERSIONS]
    body = struct.pack(">hbhhhi", 35, 1, ApiKey.API_VERSIONS, low, high, 0)
    return lambda header, _: frame(header.correlation_id, body)


def answer_v0(ranges: dict):
    return lambda header, body: frame(header.correlation_id,
                                      struct.pack(">h", 0) + entries_v0(ranges))


def api_versions_asked(broker) -> list[int]:
    return [h.api_version for h, _ in broker.requests if h.api_key == ApiKey.API_VERSIONS]


OLD_BROKER = {ApiKey.API_VERSIONS: (0, 2), ApiKey.METADATA: (0, 7)}


@pytest.mark.parametrize(("refusal", "asked", "metadata_version"), [
    # Kafka 2.4+ names its highest ApiVersions version in its refusal (KIP-511)
    (refusal_v0({ApiKey.API_VERSIONS: (0, 2)}), [3, 2], 7),
    # Kafka before 2.4 names nothing: the client falls back to version 0
    (refusal_v0({}), [3, 0], 7),
    # the mock cluster's mixed encoding reads at v3 as an empty list: version 0 too
    (refusal_of_the_mock_cluster(OLD_BROKER), [3, 0], 7),
], ids=["v0-naming-v2", "v0-naming-nothing", "mock-cluster-mixed-encoding"])
def test_a_refused_api_versions_is_asked_again_as_javas_client_does(refusal, asked,
                                                                    metadata_version):
    def api_versions(header, body):
        if header.api_version == 3:
            return refusal(header, body)
        if header.api_version == 0:
            return answer_v0(OLD_BROKER)(header, body)
        return {"error_code": 0, "throttle_time_ms": 0, "api_keys": advertised(OLD_BROKER)}

    with ScriptedBroker(api_versions=OLD_BROKER) as broker:
        broker.handlers[ApiKey.API_VERSIONS] = api_versions
        broker.handlers[ApiKey.METADATA] = broker.metadata({"events": 2})
        with KafkaClient({"bootstrap.servers": broker.bootstrap}) as client:
            started = time.monotonic()
            assert client.topics() == {"events": 2}
            assert client.topics() == {"events": 2}
            # the mock's answer read at v3 puts 1,179,648 ms where v3 has the throttle time:
            # a refusal's throttle is not the broker's word, and nothing waits for it
            assert time.monotonic() - started < 5
        assert api_versions_asked(broker) == asked
        assert [h.api_version for h, _ in broker.requests
                if h.api_key == ApiKey.METADATA] == [metadata_version] * 2


@pytest.mark.parametrize("highest", [0, 2])
def test_a_broker_whose_highest_api_versions_is_low(highest):
    """Brokers serving ApiVersions up to 0 (Kafka 0.10.0) or 2 (Kafka 2.1-2.3): the client's
    second ApiVersions is at that version, and its answer (v0 or v2 layout) sets the others."""
    ranges = {ApiKey.API_VERSIONS: (0, highest), ApiKey.METADATA: (0, 5)}
    with ScriptedBroker(api_versions=ranges) as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"events": 1})
        with KafkaClient({"bootstrap.servers": broker.bootstrap}) as client:
            assert client.topics() == {"events": 1}
        assert api_versions_asked(broker) == [3, highest]
        assert broker.requests_for(ApiKey.METADATA)


def test_an_answer_with_no_apis_leaves_each_api_refused_by_name():
    """An empty range list (a broker serving nothing this client speaks): the connection is
    set up, and each API fails when used, naming it, without a request in a wrong version."""
    with ScriptedBroker(api_versions={ApiKey.API_VERSIONS: (0, 3)}) as broker:
        broker.handlers[ApiKey.API_VERSIONS] = lambda h, b: {
            "error_code": 0, "api_keys": [], "throttle_time_ms": 0}
        config = {"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "3000"}
        with KafkaClient(config) as client, \
                pytest.raises(UnsupportedVersionError, match="does not serve Metadata"):
            client.topics()
        assert not broker.requests_for(ApiKey.METADATA)


def test_an_answer_readable_in_no_version_names_the_api_version_and_field():
    """Java's client gives up when neither reading works; so does this one, and says where."""
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.API_VERSIONS] = lambda header, body: frame(
            header.correlation_id, struct.pack(">hb", 0, 0x7F))  # 126 entries, no bytes
        config = {"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "2000",
                  "reconnect.backoff.ms": "50"}
        with KafkaClient(config) as client, pytest.raises(Exception) as raised:
            client.topics()
    message = str(raised.value)
    assert "ApiVersions v3 response that does not decode" in message
    assert "field api_keys" in message


def test_another_error_at_version_0_is_not_retried():
    """UNSUPPORTED_VERSION to version 0 (or any other error) ends the attempt, as in Java's
    client, which disconnects."""
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.API_VERSIONS] = lambda header, body: frame(
            header.correlation_id, struct.pack(">h", 35) + entries_v0({}))
        config = {"bootstrap.servers": broker.bootstrap, "request.timeout.ms": "2000",
                  "reconnect.backoff.ms": "50"}
        with KafkaClient(config) as client, pytest.raises(Exception) as raised:
            client.topics()
        assert "UNSUPPORTED_VERSION" in str(raised.value)
        asked = api_versions_asked(broker)
        assert asked[:2] == [3, 0]
        assert all(v in (3, 0) for v in asked)  # each connection attempt: 3, then 0, no loop
