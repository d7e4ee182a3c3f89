"""Fuzzing the request parser: whatever the bytes, only ProtocolError subclasses come out.

Random bytes, random bodies behind valid headers of every API and version, truncations and bit
flips of valid frames, and absurd lengths patched into valid frames go to :func:`parse_request`
(and responses to :func:`parse_response`), which must succeed or raise
:class:`~broker_lite.protocol.ProtocolError`: never another exception, a hang, or an allocation
out of proportion to the input.
"""

from __future__ import annotations

import random
import struct
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import body_strategy

from broker_lite.protocol import (
    API_SCHEMAS,
    ProtocolError,
    encode_request,
    encode_response,
    parse_request,
    parse_response,
)

FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

API_VERSIONS = [(api.key, v) for api in API_SCHEMAS.values() for v in api.request.versions]


def _parse(frame: bytes) -> None:
    try:
        parse_request(frame)
    except ProtocolError:
        pass


def _parse_response(api_key, version, frame: bytes) -> None:
    try:
        parse_response(api_key, version, frame)
    except ProtocolError:
        pass


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(data):
    _parse(data)


@FUZZ
@given(st.sampled_from(API_VERSIONS), st.binary(max_size=200), st.booleans())
def test_random_bodies_behind_valid_headers(api_version, body, flexible_header):
    api_key, version = api_version
    head = struct.pack(">hhih", api_key, version, 1, 3) + b"cli"
    if API_SCHEMAS[api_key].request.is_flexible(version) and flexible_header:
        head += b"\x00"
    _parse(head + body)
    _parse_response(api_key, version, body)


def _valid_frames(rng: random.Random):
    """A request and a response frame (without size) for every API and version."""
    for api_key, version in API_VERSIONS:
        api = API_SCHEMAS[api_key]
        request = body_strategy(api.request, version, api.request.is_flexible(version), True)
        response = body_strategy(api.response, version, api.response.is_flexible(version), True)
        for _ in range(2):
            req = _draw(request, rng)
            resp = _draw(response, rng)
            yield (api_key, version,
                   encode_request(api_key, version, rng.randrange(1 << 31), "fuzz", req)[4:],
                   b"".join(encode_response(api_key, version, 1, resp))[4:])


def _draw(strategy, rng: random.Random):
    """One example of a strategy, reproducibly (hypothesis' find with a seeded random)."""
    from hypothesis import find

    seed = rng.randrange(1 << 30)
    return find(strategy, lambda _: True,
                settings=settings(database=None, max_examples=1, derandomize=False,
                                  phases=["generate"]),
                random=random.Random(seed))


@pytest.fixture(scope="module")
def valid_frames():
    return list(_valid_frames(random.Random(20240601)))


def test_truncations_and_bit_flips(valid_frames):
    rng = random.Random(7)
    for api_key, version, request, response in valid_frames:
        cuts = {0, 1, len(request) // 2, len(request) - 1, *rng.sample(range(len(request) + 1), 3)}
        for cut in sorted(cuts):
            _parse(request[:cut])
        for cut in sorted({0, len(response) // 2, len(response) - 1}):
            _parse_response(api_key, version, response[:max(cut, 0)])
        for _ in range(8):
            flipped = bytearray(request)
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            _parse(bytes(flipped))
            flipped = bytearray(response)
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            _parse_response(api_key, version, bytes(flipped))


HUGE = [
    struct.pack(">i", 0x7FFFFFFF),  # int32 length / count
    struct.pack(">h", 0x7FFF),  # int16 string length
    b"\xfe\xff\xff\xff\x0f",  # unsigned varint 2**32 - 2: compact length / count / tag count
    b"\xff\xff\xff\xff\xff",  # an over-long varint
]


def test_huge_lengths_do_not_allocate(valid_frames):
    """Patching absurd lengths anywhere into valid frames never allocates more than a few times
    the frame (nothing is sized from a declared length before it is checked)."""
    rng = random.Random(11)
    tracemalloc.start()
    try:
        worst = 0
        for api_key, version, request, response in valid_frames:
            for frame, is_request in ((request, True), (response, False)):
                for pos in rng.sample(range(len(frame)), min(len(frame), 6)):
                    for huge in HUGE:
                        patched = frame[:pos] + huge + frame[pos + len(huge):]
                        tracemalloc.reset_peak()
                        base = tracemalloc.get_traced_memory()[0]
                        if is_request:
                            _parse(patched)
                        else:
                            _parse_response(api_key, version, patched)
                        worst = max(worst, tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()
    assert worst < 1 << 20, worst


@pytest.mark.parametrize("api_key,version", API_VERSIONS[::7])
def test_every_prefix_of_a_frame(api_key, version):
    api = API_SCHEMAS[api_key]
    body = _draw(body_strategy(api.request, version, api.request.is_flexible(version), True),
                 random.Random(version))
    frame = encode_request(api_key, version, 3, "x", body)[4:]
    for cut in range(len(frame)):
        _parse(frame[:cut])
