"""Produce, read and answered without the generic codec, for the shape producers send.

A producer sends Produce requests by the thousand each second, and the generic codec
(:mod:`.codec`) spends a Python call on every field; here the request and its response are read
and written in a few struct calls. Only the shape nearly every request has is taken (versions
:data:`FIRST_VERSION` to :data:`LAST_VERSION`, flexible from :data:`FIRST_FLEXIBLE`: compact
lengths, and a tagged-fields section closing each struct)::

    ProduceRequest                          ProduceResponse
    TransactionalId  nullable string        Responses               array of
    Acks             int16                    Name                  string
    TimeoutMs        int32                    PartitionResponses    array of
    TopicData        array of                   Index               int32
      Name           string                     ErrorCode           int16
      PartitionData  array of                   BaseOffset          int64
        Index        int32                      LogAppendTimeMs     int64   (v2+)
        Records      nullable records           LogStartOffset      int64   (v5+)
                     (a view of the frame)      RecordErrors        array   (v8+: empty here)
                                                ErrorMessage        nullable string (v8+: null)
                                                CurrentLeader       tagged (v10+: default here)
                                            ThrottleTimeMs          int32   (v1+)
                                            NodeEndpoints           tagged (v10+: none here)

Everything else goes to the generic codec, which reads or writes it the same way or raises its
error: a tagged field in a request, a null or invalid name, a length past the end of the frame,
a response with record errors, an error message or a field the shape lacks, a value that does
not fit its type. The body dicts are the generic codec's, key for key, and the bytes written are
the same (the tests compare both ways on generated requests and responses).
"""

import struct

FIRST_VERSION = 3  # TransactionalId
LAST_VERSION = 11
FIRST_FLEXIBLE = 9

_ACKS_TIMEOUT = struct.Struct(">hi")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_PARTITION = struct.Struct(">ihqqq")  # Index, ErrorCode, BaseOffset, LogAppendTimeMs, LogStart
_PARTITION_BEFORE_V5 = struct.Struct(">ihqq")
_RESPONSE_KEYS = frozenset({"responses", "throttle_time_ms"})
_TOPIC_KEYS = frozenset({"name", "partition_responses"})
_PARTITION_KEYS = frozenset({"index", "error_code", "base_offset", "log_append_time_ms",
                             "log_start_offset", "record_errors", "error_message"})


class _Irregular(Exception):
    """Not the shape taken here: the generic codec reads or writes it."""


# -- the request --------------------------------------------------------------------------------


def read_request(reader, version: int) -> dict | None:
    """The body of the Produce request at ``reader`` (advanced past it); None, the reader left
    where it was, when the generic codec must read it."""
    if not FIRST_VERSION <= version <= LAST_VERSION:
        return None
    try:
        body, position = _request(reader.buf, reader.pos, reader.end,
                                  version >= FIRST_FLEXIBLE)
    except (_Irregular, UnicodeDecodeError):
        return None
    reader.pos = position
    return body


def _request(buf, p: int, end: int, flexible: bool) -> tuple[dict, int]:
    n, p = _length(buf, p, end, flexible, False)
    if n == -1:
        transactional_id = None
    else:
        transactional_id, p = _text(buf, p, end, n)
    if p + _ACKS_TIMEOUT.size > end:
        raise _Irregular
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(buf, p)
    p += _ACKS_TIMEOUT.size
    count, p = _length(buf, p, end, flexible, True)
    if count < 0:
        raise _Irregular
    topics = []
    for _ in range(count):
        n, p = _length(buf, p, end, flexible, False)
        name, p = _text(buf, p, end, n)
        partition_count, p = _length(buf, p, end, flexible, True)
        if partition_count < 0:
            raise _Irregular
        partitions = []
        for _ in range(partition_count):
            if p + 4 > end:
                raise _Irregular
            (index,) = _I32.unpack_from(buf, p)
            n, p = _length(buf, p + 4, end, flexible, True)
            if n == -1:
                records = None
            elif n < 0 or p + n > end:
                raise _Irregular
            else:
                records, p = buf[p:p + n], p + n
            if flexible:
                p = _no_tagged_fields(buf, p, end)
            partitions.append({"index": index, "records": records})
        if flexible:
            p = _no_tagged_fields(buf, p, end)
        topics.append({"name": name, "partition_data": partitions})
    if flexible:
        p = _no_tagged_fields(buf, p, end)
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": timeout_ms,
            "topic_data": topics}, p


def _length(buf, p: int, end: int, flexible: bool, wide: bool) -> tuple[int, int]:
    """A length prefix (compact: an unsigned varint, one more than the length; else int16 or
    int32), and the position after it; -1 for null."""
    if flexible:
        value = shift = 0
        while True:
            if p >= end or shift > 28:
                raise _Irregular
            byte = buf[p]
            p += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value - 1, p
            shift += 7
    if wide:
        if p + 4 > end:
            raise _Irregular
        return _I32.unpack_from(buf, p)[0], p + 4
    if p + 2 > end:
        raise _Irregular
    return _I16.unpack_from(buf, p)[0], p + 2


def _text(buf, p: int, end: int, n: int) -> tuple[str, int]:
    if n < 0 or p + n > end:
        raise _Irregular
    return str(buf[p:p + n], "utf-8"), p + n


def _no_tagged_fields(buf, p: int, end: int) -> int:
    if p >= end or buf[p] != 0:
        raise _Irregular
    return p + 1


# -- the response -------------------------------------------------------------------------------


def write_response(version: int, correlation_id: int, body: dict) -> list | None:
    """The chunks of the Produce response frame (size included), as
    :func:`~.framing.encode_response` gives them; None when the generic codec must write it."""
    if not FIRST_VERSION <= version <= LAST_VERSION or not isinstance(body, dict) \
            or not body.keys() <= _RESPONSE_KEYS:
        return None
    try:
        frame = _response(version, correlation_id, body)
    except (_Irregular, struct.error, TypeError, AttributeError, UnicodeEncodeError):
        return None
    _I32.pack_into(frame, 0, len(frame) - 4)
    return [bytes(frame)]


def _response(version: int, correlation_id: int, body: dict) -> bytearray:
    flexible = version >= FIRST_FLEXIBLE
    with_log_start = version >= 5
    with_errors = version >= 8
    out = bytearray(b"\0\0\0\0")  # the size, patched by the caller
    out += _I32.pack(correlation_id)
    if flexible:
        out += b"\0"  # response header v1: no tagged fields
    topics = body.get("responses", ())
    _array_length(out, len(topics), flexible)
    for topic in topics:
        if not topic.keys() <= _TOPIC_KEYS:
            raise _Irregular
        _string(out, topic.get("name", ""), flexible)
        partitions = topic.get("partition_responses", ())
        _array_length(out, len(partitions), flexible)
        for response in partitions:
            if not response.keys() <= _PARTITION_KEYS or response.get("record_errors") \
                    or response.get("error_message") is not None:
                raise _Irregular
            head = (response.get("index", 0), response.get("error_code", 0),
                    response.get("base_offset", 0), response.get("log_append_time_ms", -1))
            if with_log_start:
                out += _PARTITION.pack(*head, response.get("log_start_offset", -1))
            else:
                out += _PARTITION_BEFORE_V5.pack(*head)
            if with_errors:  # no record errors, no error message
                out += b"\x01\x00" if flexible else b"\0\0\0\0\xff\xff"
            if flexible:
                out += b"\0"
        if flexible:
            out += b"\0"
    out += _I32.pack(body.get("throttle_time_ms", 0))
    if flexible:
        out += b"\0"
    return out


def _array_length(out: bytearray, n: int, flexible: bool) -> None:
    if not flexible:
        out += _I32.pack(n)
    elif n < 0x7F:
        out.append(n + 1)
    else:
        raise _Irregular


def _string(out: bytearray, value, flexible: bool) -> None:
    if not isinstance(value, str):
        raise _Irregular
    data = value.encode("utf-8")
    if flexible:
        if len(data) >= 0x7F:
            raise _Irregular
        out.append(len(data) + 1)
    else:
        if len(data) > 0x7FFF:
            raise _Irregular
        out += _I16.pack(len(data))
    out += data
