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

Two shortcuts more, for what a producer sends most: the requests it pipelines to one partition
after a first one are read by comparing their bytes with the first's (:func:`alike_reader`), and
a response of one partition is written in one ``struct`` call whose layout is kept per version
and topic (:func:`_one_partition_response`).

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
    body, p, _ = _request_and_records_at(buf, p, end, flexible)
    return body, p


def _request_and_records_at(buf, p: int, end: int, flexible: bool) -> tuple[dict, int, int]:
    """The body, the position after it, and that of the last partition's records (their
    length prefix); -1 without partitions."""
    records_at = -1
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
            records_at = p + 4
            n, p = _length(buf, records_at, end, flexible, True)
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
            "topic_data": topics}, p, records_at


def alike_reader(payload, body_offset: int, version: int):
    """A reader of the Produce requests a producer pipelines after ``payload`` (header and
    body, the body at ``body_offset``): ``read(following) -> (correlation id, body)``, or None
    when the following request is not alike. None when ``payload`` is not of the shape
    taken here, or has more than one partition.

    A producer's requests to one partition are the same bytes but for the correlation id and
    the records (with their length): API key and version, client id, transactional id, acks,
    timeout, topic and partition. A following request whose bytes other than those are the
    first's has the first's fields, so it is read by comparing them and slicing its records,
    not field by field; its body is a dict of its own, as :func:`read_request` gives it. One
    that is not (different bytes, or bytes after its body) is read on its own.
    """
    if not FIRST_VERSION <= version <= LAST_VERSION:
        return None
    flexible = version >= FIRST_FLEXIBLE
    buf = memoryview(payload)
    try:
        first, end, records_at = _request_and_records_at(buf, body_offset, len(buf), flexible)
    except (_Irregular, UnicodeDecodeError):
        return None
    topics = first["topic_data"]
    if len(topics) != 1 or len(topics[0]["partition_data"]) != 1 or \
            topics[0]["partition_data"][0]["records"] is None:
        return None
    (topic,) = topics
    (partition,) = topic["partition_data"]
    tail = bytes(buf[end - (3 if flexible else 0):end])  # the tagged sections closing it
    head, same = bytes(buf[:4]), bytes(buf[8:records_at])
    transactional_id, acks, timeout_ms = first["transactional_id"], first["acks"], \
        first["timeout_ms"]
    name, index = topic["name"], partition["index"]

    def read(following) -> tuple[int, dict] | None:
        size = len(following)
        if size <= records_at or following[:4] != head or following[8:records_at] != same:
            return None
        try:
            n, p = _length(following, records_at, size, flexible, True)
        except _Irregular:
            return None
        if n < 0 or p + n + len(tail) != size or following[p + n:] != tail:
            return None
        return _I32.unpack_from(following, 4)[0], {
            "transactional_id": transactional_id, "acks": acks, "timeout_ms": timeout_ms,
            "topic_data": [{"name": name, "partition_data": [
                {"index": index, "records": following[p:p + n]}]}]}
    return read


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
        topics = body.get("responses", ())
        if len(topics) == 1:
            one = _one_partition_response(version, correlation_id, topics[0],
                                          body.get("throttle_time_ms", 0))
            if one is not None:
                return [one]
        frame = _response(version, correlation_id, body)
    except (_Irregular, struct.error, TypeError, AttributeError, UnicodeEncodeError):
        return None
    _I32.pack_into(frame, 0, len(frame) - 4)
    return [bytes(frame)]


def _response(version: int, correlation_id: int, body: dict) -> bytearray:
    flexible = version >= FIRST_FLEXIBLE
    with_log_start = version >= 5
    partition = _PARTITION if with_log_start else _PARTITION_BEFORE_V5
    partition_tail = _partition_tail(version)
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
            out += partition.pack(*_partition_fields(response, with_log_start))
            out += partition_tail
        if flexible:
            out += b"\0"
    out += _I32.pack(body.get("throttle_time_ms", 0))
    if flexible:
        out += b"\0"
    return out


def _partition_fields(response: dict, with_log_start: bool) -> tuple:
    """A partition response's fixed fields (index, error code, base offset, log append time,
    and log start offset from v5); raises :class:`_Irregular` for one with record errors, an
    error message or a field the shape lacks."""
    if not response.keys() <= _PARTITION_KEYS or response.get("record_errors") \
            or response.get("error_message") is not None:
        raise _Irregular
    fields = (response.get("index", 0), response.get("error_code", 0),
              response.get("base_offset", 0), response.get("log_append_time_ms", -1))
    return (*fields, response.get("log_start_offset", -1)) if with_log_start else fields


def _partition_tail(version: int) -> bytes:
    """What follows a partition response's fixed fields: no record errors and no error
    message (v8+), and its tagged fields (flexible versions)."""
    flexible = version >= FIRST_FLEXIBLE
    tail = b""
    if version >= 8:
        tail += b"\x01\x00" if flexible else b"\0\0\0\0\xff\xff"
    if flexible:
        tail += b"\0"
    return tail


def _one_partition_response(version: int, correlation_id: int, topic: dict,
                            throttle_time_ms: int) -> bytes | None:
    """The frame (size included) of the response of one partition (what a producer's every
    request gets), in one ``struct`` call: the bytes around its fields depend on the version
    and the topic's name only (:func:`_one_partition_shape`). None for another shape; raises
    :class:`_Irregular` as :func:`_response` does."""
    partitions = topic.get("partition_responses", ())
    if len(partitions) != 1:
        return None
    if not topic.keys() <= _TOPIC_KEYS:
        raise _Irregular
    name = topic.get("name", "")
    shape = _ONE_PARTITION_SHAPES.get((version, name)) or _one_partition_shape(version, name)
    if shape is None:
        return None
    frame, before, after, end = shape
    return frame.pack(frame.size - 4, correlation_id, before,
                      *_partition_fields(partitions[0], version >= 5), after, throttle_time_ms,
                      end)


_ONE_PARTITION_SHAPES: dict[tuple[int, str], tuple] = {}
_MAX_SHAPES = 1024  # topics written to at once by the clients of a broker, kept


def _one_partition_shape(version: int, name) -> tuple | None:
    """(the frame's struct, the bytes before the partition's fields, those after them and
    those after the throttle time) of a one-partition response of ``version`` for topic
    ``name``; the struct's fields: size, correlation id, the bytes before, the partition's
    fields, the bytes after, throttle time, the bytes at the end."""
    if not isinstance(name, str):
        return None
    flexible = version >= FIRST_FLEXIBLE
    before = bytearray(b"\0" if flexible else b"")  # response header v1: no tagged fields
    try:
        _array_length(before, 1, flexible)
        _string(before, name, flexible)
        _array_length(before, 1, flexible)
    except _Irregular:
        return None
    after = _partition_tail(version) + (b"\0" if flexible else b"")  # the topic's tags
    end = b"\0" if flexible else b""
    fields = "ihqqq" if version >= 5 else "ihqq"
    shape = (struct.Struct(f">ii{len(before)}s{fields}{len(after)}si{len(end)}s"),
             bytes(before), after, end)
    if len(_ONE_PARTITION_SHAPES) < _MAX_SHAPES:
        _ONE_PARTITION_SHAPES[version, name] = shape
    return shape


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
