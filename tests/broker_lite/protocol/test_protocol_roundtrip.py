"""Round trips through the codec for every declared message and every version of its spec.

Bodies are generated from the schemas themselves (hypothesis), tagged fields included, with
unknown tagged fields sprinkled into flexible versions at every struct level: decoding the
encoding must give the body back, with defaults for the fields the version lacks and the unknown
tagged fields preserved. The same goes through whole frames for requests and responses.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import body_strategy, expected_body, normalize

from broker_lite.protocol import (
    API_SCHEMAS,
    encode_request,
    encode_response,
    parse_request,
    parse_response,
)
from broker_lite.protocol.codec import decode, encode
from broker_lite.protocol.messages import ALL_MESSAGES
from broker_lite.protocol.types import Reader, Writer

CASES = [(name, v) for name, m in sorted(ALL_MESSAGES.items()) for v in m.versions]

SETTINGS = settings(
    max_examples=6, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def encode_bytes(message, version, body) -> bytes:
    w = Writer()
    encode(message, version, body, w)
    return w.getvalue()


def test_every_version_of_every_message_is_covered():
    assert len(CASES) == sum(len(m.versions) for m in ALL_MESSAGES.values())
    assert len(CASES) > 300


@pytest.mark.parametrize("name,version", CASES, ids=[f"{n}-v{v}" for n, v in CASES])
@SETTINGS
@given(data=st.data())
def test_round_trip(name, version, data):
    message = ALL_MESSAGES[name]
    flexible = message.is_flexible(version)
    body = data.draw(body_strategy(message, version, flexible, unknown_tags=True))
    encoded = encode_bytes(message, version, body)
    reader = Reader(encoded)
    decoded = decode(message, version, reader)
    assert reader.remaining() == 0
    assert normalize(decoded) == expected_body(message, version, body, flexible)
    # Re-encoding what was decoded gives the same bytes (unknown tagged fields included).
    assert encode_bytes(message, version, decoded) == encoded


API_CASES = [(api.key, v) for api in API_SCHEMAS.values() for v in api.request.versions]


@pytest.mark.parametrize("api_key,version", API_CASES, ids=[f"{k.name}-v{v}" for k, v in API_CASES])
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_frame_round_trip(api_key, version, data):
    api = API_SCHEMAS[api_key]
    req_flex = api.request.is_flexible(version)
    request = data.draw(body_strategy(api.request, version, req_flex, unknown_tags=True))
    client_id = data.draw(st.one_of(st.none(), st.text(max_size=8)))
    frame = encode_request(api_key, version, 1234, client_id, request)
    assert int.from_bytes(frame[:4], "big", signed=True) == len(frame) - 4
    header, body = parse_request(frame[4:])
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        api_key, version, 1234, client_id)
    assert normalize(body) == expected_body(api.request, version, request, req_flex)

    resp_flex = api.response.is_flexible(version)
    response = data.draw(body_strategy(api.response, version, resp_flex, unknown_tags=True))
    chunks = encode_response(api_key, version, -7, response)
    assert all(isinstance(c, bytes) for c in chunks)  # small record sets are copied inline
    wire = b"".join(chunks)
    assert int.from_bytes(wire[:4], "big", signed=True) == len(wire) - 4
    correlation_id, decoded = parse_response(api_key, version, wire[4:])
    assert correlation_id == -7
    assert normalize(decoded) == expected_body(api.response, version, response, resp_flex)
