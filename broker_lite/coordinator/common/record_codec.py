"""Versioned coordinator records: an int16 version, then a body in the schema of that version.

The keys and values of ``__consumer_offsets`` and ``__transaction_state`` records all have this
layout; the schemas are Kafka's ``coordinator-records`` specs, declared with the F/A DSL of the
wire protocol (:mod:`broker_lite.protocol.schema`) as ``data`` messages::

    version  int16   which version of the schema the body is in
    body     ...     the fields of that version (flexible versions end with tagged fields)

>>> from broker_lite.protocol.schema import STRING, F
>>> KEY = data_schema("ExampleKey", "0", "none", [F("name", STRING, "0")])
>>> encode_versioned(KEY, 0, {"name": "g"}).hex()
'0000000167'
>>> decode_versioned(KEY, b"\\x00\\x00\\x00\\x01g", "example key", ValueError)
(0, {'name': 'g'})
"""

from broker_lite.protocol import Message, ProtocolError, Reader, Writer, decode, encode


def data_schema(name: str, valid: str, flexible: str, fields) -> Message:
    """The schema of a record key or value (a ``data`` message of the specs)."""
    return Message(name, None, "data", valid, flexible, fields)


def encode_versioned(schema: Message, version: int, body: dict) -> bytes:
    """``body`` as ``version`` of ``schema``, after its int16 version."""
    writer = Writer()
    writer.int16(version)
    encode(schema, version, body, writer)
    return bytes(writer.getvalue())


def decode_versioned(schema: Message, data, what: str, error: type[Exception],
                     versions: range | None = None) -> tuple[int, dict]:
    """(version, body) of ``data``; ``error(message)`` is raised for a version outside
    ``versions`` (by default the schema's) and for bytes that are not a body of that version.
    ``what`` names the record in the message."""
    reader = Reader(memoryview(data))
    try:
        version = reader.int16()
        if version not in (schema.versions if versions is None else versions):
            raise error(f"unknown {what} version {version}")
        return version, decode(schema, version, reader)
    except ProtocolError as exc:
        raise error(f"malformed {what}: {exc}") from None
