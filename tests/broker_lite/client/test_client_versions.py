"""API version negotiation: the highest version inside both the broker's and the client's range,
a clear error when they do not overlap, and the ApiVersions fallback for brokers that do not
know the client's ApiVersions version."""

import pytest
from scripted_broker import ScriptedBroker

from broker_lite.client import (
    FetchedPartition,
    KafkaClient,
    TopicPartition,
    UnsupportedVersionError,
)
from broker_lite.client.cluster.versions import CLIENT_VERSIONS, negotiate
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
                               f"{low}-{high}: none in common")
    with pytest.raises(UnsupportedVersionError, match="does not serve ListOffsets"):
        table.version(ApiKey.LIST_OFFSETS)


def test_client_ranges_stay_within_the_protocol_schemas():
    from broker_lite.protocol import API_SCHEMAS
    for key, (low, high) in CLIENT_VERSIONS.items():
        versions = API_SCHEMAS[key].valid_versions
        assert versions.lo <= low <= high <= versions.hi


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
