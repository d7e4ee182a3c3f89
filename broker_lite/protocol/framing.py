"""Request and response frames: the public entry points of the protocol codec.

Every message on a Kafka connection is a size-prefixed frame. The functions here take and return
frames *without* the size for parsing (the network layer reads the size to know how much to read)
and *with* it for encoding::

    Request frame (client -> broker)
    ---------------------------------------------------------------------------------------------
    Size            int32             number of bytes that follow
    -- request header: v1, or v2 when the request version is flexible --------------------------
    RequestApiKey      int16          which API (ApiKey)
    RequestApiVersion  int16          which version of it; decides the header and body layout
    CorrelationId      int32          echoed in the response
    ClientId           nullable string, int16 length even in v2 (so any header can be read
                                      before the API is known); absent only in header v0
                                      (ControlledShutdown v0, which broker_lite does not serve)
    TaggedFields       tagged-fields section, v2 only
    -- request body: the API's request schema at RequestApiVersion -------------------------------

    Response frame (broker -> client)
    ---------------------------------------------------------------------------------------------
    Size            int32             number of bytes that follow
    -- response header: v0, or v1 when the response version is flexible -------------------------
    CorrelationId   int32             the request's
    TaggedFields    tagged-fields section, v1 only; ApiVersions responses always use v0, so
                    that a client can read the answer whatever version it asked for
    -- response body: the API's response schema at the request's version ------------------------

Nothing here does I/O: frames in, (header, body dict) out, and body dicts in, chunks out. A
response's chunks are bytes objects and, for record sets too large to copy or given as file
regions (objects with an integer ``size``), those objects themselves, which the network layer
sends in order (with ``sendfile`` for file regions).

>>> frame = encode_request(ApiKey.METADATA, 1, 7, "kpy", {"topics": [{"name": "events"}]})
>>> header, body = parse_request(frame[4:])
>>> header
RequestHeader(api_key=<ApiKey.METADATA: 3>, api_version=1, correlation_id=7, client_id='kpy')
>>> body["topics"], body["allow_auto_topic_creation"]
([{'topic_id': UUID('00000000-0000-0000-0000-000000000000'), 'name': 'events'}], True)
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from . import produce_path
from .apis import Api, ApiKey, api_for
from .codec import decode, encode
from .errors import (
    EncodeError,
    InvalidRequestError,
    UnknownApiError,
    UnsupportedVersionError,
)
from .messages.headers import REQUEST_HEADER, RESPONSE_HEADER
from .types import Reader, Writer

_HEAD = struct.Struct(">hhi")  # RequestApiKey, RequestApiVersion, CorrelationId
_I32 = struct.Struct(">i")


class RequestHeader(NamedTuple):
    """The request header fields the server needs (tagged header fields are dropped)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def _api(api_key: int, correlation_id: int | None = None, api_version: int | None = None) -> Api:
    api = api_for(api_key)
    if api is None:
        raise UnknownApiError(api_key, correlation_id, api_version)
    return api


def request_header_version(api_key: int, api_version: int) -> int:
    """2 for flexible request versions, else 1 (the version range's openness means a version
    above the spec's maximum is flexible too, as Kafka reads it)."""
    return 2 if api_version in _api(api_key).request.flexible_versions else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """1 for flexible response versions, else 0; always 0 for ApiVersions."""
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if api_version in _api(api_key).response.flexible_versions else 0


# (api key, version) -> (api, flexible, valid), for the versions the specs define: what reading a
# header needs to know of its API, looked up once per request rather than worked out each time.
_HEADER_SHAPES: dict[tuple[int, int], tuple[Api, bool, bool]] = {}


def _header_shape(api_key: int, api_version: int, correlation_id: int) -> tuple[Api, bool, bool]:
    api = _api(api_key, correlation_id, api_version)
    shape = (api, api_version in api.request.flexible_versions,
             api_version in api.request.valid_versions)
    if shape[2]:  # only valid versions are kept: a client cannot grow the table
        _HEADER_SHAPES[api_key, api_version] = shape
    return shape


def _read_header(reader: Reader) -> tuple[RequestHeader, Api]:
    if reader.remaining() < _HEAD.size:
        raise InvalidRequestError(
            f"request header needs at least {_HEAD.size} bytes, frame has {reader.remaining()}",
            reader.pos,
        )
    start = reader.pos
    api_key, api_version, correlation_id = _HEAD.unpack_from(reader.buf, start)
    shape = _HEADER_SHAPES.get((api_key, api_version))
    if shape is None:
        shape = _header_shape(api_key, api_version, correlation_id)
    api, flexible, valid = shape
    reader.pos = start + _HEAD.size
    client_id = reader.nullable_string()
    if flexible:  # header v2: mostly an empty tagged-fields section, read at once
        if reader.pos < reader.end and reader.buf[reader.pos] == 0:
            reader.pos += 1
        else:
            reader.pos = start
            client_id = decode(REQUEST_HEADER, 2, reader)["client_id"]
    header = RequestHeader(api.key, api_version, correlation_id, client_id)
    if not valid:
        raise UnsupportedVersionError(api.key, api_version, header=header,
                                      what=f"{api.name}Request")
    return header, api


def parse_request_header(frame) -> tuple[RequestHeader, int]:
    """Parse the header of a request frame (without its size); return it and the body offset.

    Raises :class:`InvalidRequestError` when the header cannot be read, :class:`UnknownApiError`
    for an API key without a schema (with the correlation id when the first 8 bytes were there),
    and :class:`UnsupportedVersionError` for a version outside the spec's range, after reading the
    whole header (``error.header`` then holds it, correlation id included).
    """
    reader = Reader(frame)
    header, _ = _read_header(reader)
    return header, reader.pos


def parse_request(frame) -> tuple[RequestHeader, dict]:
    """Parse a whole request frame (without its size) into its header and body dict.

    Records fields in the body are memoryview slices of ``frame`` (no copy), so they are only
    valid while ``frame`` is. Bytes after the body are ignored, as Kafka does.
    """
    reader = Reader(frame)
    header, _ = _read_header(reader)
    return header, read_request_body(header, reader)


def read_request_body(header: RequestHeader, reader: Reader) -> dict:
    """Decode the body of a request whose header was read, from ``reader`` (advanced past it);
    Produce requests take the quick way of :mod:`.produce_path` when they can. Raises as
    :func:`~.codec.decode` does."""
    if header.api_key == ApiKey.PRODUCE:
        body = produce_path.read_request(reader, header.api_version)
        if body is not None:
            return body
    return decode(_api(header.api_key).request, header.api_version, reader)


def alike_requests(payload, header: RequestHeader, body_offset: int):
    """For a request a client may pipeline alike ones after (Produce: see
    :func:`.produce_path.alike_reader`), ``read(following) -> (header, body)`` of a following
    request, or None when it is not alike (then it is read as any request is); None when
    ``payload`` is not such a request."""
    if header.api_key != ApiKey.PRODUCE:
        return None
    read = produce_path.alike_reader(payload, body_offset, header.api_version)
    if read is None:
        return None
    api_key, api_version, client_id = header.api_key, header.api_version, header.client_id

    def read_alike(following) -> tuple[RequestHeader, dict] | None:
        alike = read(following)
        if alike is None:
            return None
        correlation_id, body = alike
        return RequestHeader(api_key, api_version, correlation_id, client_id), body
    return read_alike


def encode_response(api_key: int, api_version: int, correlation_id: int, body: dict) -> list:
    """Encode a response frame: a list of chunks to send in order.

    The first chunk is a bytes object starting with the int32 size of the whole response; the
    others are bytes objects or record sets emitted untouched (bytes-like objects of at least
    :data:`~broker_lite.protocol.types.INLINE_RECORDS_LIMIT` bytes, or objects with an integer
    ``size`` such as file regions).
    """
    if api_key == ApiKey.PRODUCE:
        chunks = produce_path.write_response(api_version, correlation_id, body)
        if chunks is not None:
            return chunks
    return _encode_response(api_key, api_version, correlation_id, body)


def _encode_response(api_key: int, api_version: int, correlation_id: int, body: dict) -> list:
    """:func:`encode_response` by the generic codec alone."""
    api = _api(api_key)
    writer = Writer()
    writer.buf += b"\0\0\0\0"  # the size, patched below
    writer.int32(correlation_id)
    if api_key != ApiKey.API_VERSIONS and api_version in api.response.flexible_versions:
        writer.buf += b"\0"  # response header v1: an empty tagged-fields section
    encode(api.response, api_version, body, writer)
    parts = writer.raw_chunks()
    _I32.pack_into(parts[0], 0, len(writer) - 4)
    return [bytes(p) if isinstance(p, bytearray) else p for p in parts]


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: dict
) -> bytes:
    """Encode a request frame, size included (for clients and tests)."""
    parts = encode_request_parts(api_key, api_version, correlation_id, client_id, body)
    try:
        return b"".join(parts)
    except TypeError:
        raise EncodeError("encode_request needs bytes-like records, not file regions") from None


def encode_request_parts(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: dict
) -> list:
    """A request frame as :func:`encode_request` encodes it, but as its parts, in order: the
    fields encoded around each ``records`` value, and those values as they were given (not
    copied), for a gathering write."""
    api = _api(api_key)
    api.request.check_version(api_version)
    writer = Writer()
    writer.buf += b"\0\0\0\0"
    header_version = 2 if api_version in api.request.flexible_versions else 1
    encode(REQUEST_HEADER, header_version, {
        "request_api_key": int(api_key),
        "request_api_version": api_version,
        "correlation_id": correlation_id,
        "client_id": client_id,
    }, writer)
    encode(api.request, api_version, body, writer)
    parts = writer.raw_chunks()
    _I32.pack_into(parts[0], 0, len(writer) - 4)
    return parts


def parse_response(api_key: int, api_version: int, frame) -> tuple[int, dict]:
    """Parse a response frame (without its size) to a request of ``api_key`` at ``api_version``;
    return the correlation id and the body dict."""
    api = _api(api_key)
    reader = Reader(frame)
    header_version = response_header_version(api_key, api_version)
    header = decode(RESPONSE_HEADER, header_version, reader)
    return header["correlation_id"], decode(api.response, api_version, reader)


__all__ = [
    "RequestHeader", "encode_request", "encode_request_parts", "encode_response", "parse_request",
    "parse_request_header",
    "read_request_body",
    "parse_response", "request_header_version", "response_header_version",
]
