"""The codec: schemas (:mod:`.schema`) compiled into decoders and encoders of message bodies.

Bodies are plain dicts keyed by the snake_case of the field names (:func:`.schema.snake_case`),
arrays of structs are lists of dicts. :func:`decode` fills every field that the version lacks
with its default, so a handler can read any key whatever the version; :func:`encode` ignores
fields the version lacks and gives missing keys their defaults, so a handler only sets what
matters. Tagged fields that the schema does not know are kept on decode under
``_unknown_tagged_fields`` (:data:`UNKNOWN_TAGGED_FIELDS`, ``{tag: bytes}``) and written back on
encode; known tagged fields at their default are not written.

Records fields decode to a memoryview slice of the input (no copy) or ``None``; on encode they
accept bytes-like values, ``None``, or any object with an integer ``size`` (a file region), which
is emitted as a chunk of its own, untouched (see :meth:`.types.Writer.records`).

Each (struct, version, flexible) is compiled once into a list of field operations, cached on the
struct (:attr:`.schema.Struct.codecs`), so decoding or encoding a body does not re-evaluate
version ranges. Arrays of fixed-size numbers are read and written with one :mod:`struct` call
for the whole array.

>>> from broker_lite.protocol.schema import INT32, STRING, F, Message
>>> msg = Message("ExampleRequest", 99, "request", "0-1", "1+", [
...     F("Name", STRING, "0+"),
...     F("TimeoutMs", INT32, "1+", default=30000),
... ])
>>> w = Writer(); encode(msg, 0, {"name": "kpy"}, w); w.getvalue()
b'\\x00\\x03kpy'
>>> decode(msg, 0, Reader(w.getvalue()))
{'name': 'kpy', 'timeout_ms': 30000}
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any

from .errors import EncodeError, InvalidRequestError, ProtocolError
from .schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UINT32,
    UUID,
    Field,
    Message,
    Struct,
)
from .types import Reader, Writer

UNKNOWN_TAGGED_FIELDS = "_unknown_tagged_fields"
_ABSENT: Any = object()  # a body key not given

_MIN_SIZE = {BOOL: 1, INT8: 1, INT16: 2, UINT16: 2, INT32: 4, UINT32: 4, INT64: 8, FLOAT64: 8,
             UUID: 16}

_FIXED_DECODERS = {
    BOOL: Reader.bool, INT8: Reader.int8, INT16: Reader.int16, UINT16: Reader.uint16,
    INT32: Reader.int32, UINT32: Reader.uint32, INT64: Reader.int64, FLOAT64: Reader.float64,
    UUID: Reader.uuid,
}
_FIXED_ENCODERS = {
    BOOL: Writer.bool, INT8: Writer.int8, INT16: Writer.int16, UINT16: Writer.uint16,
    INT32: Writer.int32, UINT32: Writer.uint32, INT64: Writer.int64, FLOAT64: Writer.float64,
    UUID: Writer.uuid,
}
# (type, compact, nullable) -> (decoder, encoder)
_VARIABLE_CODECS = {
    (STRING, False, False): (Reader.string, Writer.string),
    (STRING, False, True): (Reader.nullable_string, Writer.nullable_string),
    (STRING, True, False): (Reader.compact_string, Writer.compact_string),
    (STRING, True, True): (Reader.compact_nullable_string, Writer.compact_nullable_string),
    (BYTES, False, False): (Reader.bytes, Writer.bytes),
    (BYTES, False, True): (Reader.nullable_bytes, Writer.nullable_bytes),
    (BYTES, True, False): (Reader.compact_bytes, Writer.compact_bytes),
    (BYTES, True, True): (Reader.compact_nullable_bytes, Writer.compact_nullable_bytes),
    (RECORDS, False, True): (Reader.records, Writer.records),
    (RECORDS, True, True): (Reader.compact_records, Writer.compact_records),
}

_ENCODE_FAILURES = (_struct.error, TypeError, ValueError, AttributeError, OverflowError, KeyError)


def _encode_failure(exc: Exception, segment: str | None, value: Any) -> EncodeError:
    if value is None:
        reason = "null value for a field that is not nullable in this version"
    else:
        reason = f"cannot encode {type(value).__name__} value {value!r:.80}: {exc}"
    return EncodeError(reason, path=segment)


def _non_nullable(enc: Callable) -> Callable:
    def encode_non_null(w: Writer, v) -> None:
        if v is None:
            raise EncodeError("null value for a field that is not nullable in this version")
        enc(w, v)
    return encode_non_null


class _FieldOps:
    """Decoder, encoder and minimum wire size of one field in one (version, flexible)."""

    __slots__ = ("decode", "encode", "min_size")

    def __init__(self, field: Field, version: int, flexible: bool):
        compact = flexible and (field.flexible is None or version in field.flexible)
        nullable = version in field.nullable
        item_type = field.item_type
        item_dec: Callable[[Reader], object]
        item_enc: Callable[[Writer, Any], None]
        if field.struct is not None:
            item = _compiled(field.struct, version, flexible)
            item_dec, item_enc, item_min = item.decode, item.encode, item.min_size
        elif item_type in _FIXED_DECODERS:
            item_dec, item_enc = _FIXED_DECODERS[item_type], _FIXED_ENCODERS[item_type]
            item_min = _MIN_SIZE[item_type]
        else:
            item_nullable = nullable and not field.is_array
            if item_type == RECORDS:
                item_nullable = True  # records are always length-prefixed with -1 / 0 for null
            item_dec, item_enc = _VARIABLE_CODECS[(item_type, compact, item_nullable)]
            if item_type == RECORDS and not nullable:
                item_enc = _non_nullable(item_enc)
            item_min = 1 if compact else (2 if item_type == STRING else 4)
        if field.is_array and item_type in _STRUCT_CODES:
            self.decode = _fixed_array_decoder(_STRUCT_CODES[item_type], compact, nullable,
                                               item_min)
            self.encode = _fixed_array_encoder(_STRUCT_CODES[item_type], compact, nullable)
            self.min_size = 1 if compact else 4
        elif field.is_array:
            self.decode = _array_decoder(item_dec, compact, nullable, item_min)
            self.encode = _array_encoder(item_enc, compact, nullable)
            self.min_size = 1 if compact else 4
        elif field.struct is not None and nullable:
            self.decode = _nullable_struct_decoder(item_dec)
            self.encode = _nullable_struct_encoder(item_enc)
            self.min_size = 1
        else:
            self.decode, self.encode, self.min_size = item_dec, item_enc, item_min


def _nullable_struct(dec: Callable, enc: Callable) -> tuple[Callable, Callable]:
    """A nullable struct field: an int8 marker (-1: null, 1: present), then the struct."""

    def decode_nullable(r: Reader):
        return None if r.int8() < 0 else dec(r)

    def encode_nullable(w: Writer, v) -> None:
        if v is None:
            w.int8(-1)
        else:
            w.int8(1)
            enc(w, v)

    return decode_nullable, encode_nullable


# Arrays of fixed-size numbers are read and written with one struct call for the whole array.
_STRUCT_CODES = {INT8: "b", INT16: "h", UINT16: "H", INT32: "i", UINT32: "I", INT64: "q",
                 FLOAT64: "d"}


def _fixed_array_decoder(code: str, compact: bool, nullable: bool, item_size: int) -> Callable:
    def decode_fixed_array(r: Reader):
        n = r.array_length(compact, nullable, item_size)
        if n < 0:
            return None
        p = r.pos
        r.pos = p + n * item_size  # array_length checked that the bytes are there
        return list(_struct.unpack_from(f">{n}{code}", r.buf, p))
    return decode_fixed_array


def _encode_null_array(w: Writer, compact: bool, nullable: bool) -> None:
    if not nullable:
        raise EncodeError("null value for an array that is not nullable in this version")
    w.array_length(None, compact)


def _fixed_array_encoder(code: str, compact: bool, nullable: bool) -> Callable:
    def encode_fixed_array(w: Writer, v) -> None:
        if v is None:
            _encode_null_array(w, compact, nullable)
            return
        w.array_length(len(v), compact)
        w.buf += _struct.pack(f">{len(v)}{code}", *v)
    return encode_fixed_array


def _array_decoder(item_dec: Callable, compact: bool, nullable: bool, min_item: int) -> Callable:
    def decode_array(r: Reader):
        n = r.array_length(compact, nullable, min_item)
        if n < 0:
            return None
        out: list = []
        append = out.append
        i = 0
        try:
            for i in range(n):  # noqa: B007 (the except below names the item)
                append(item_dec(r))
        except ProtocolError as e:
            e.prepend_path(f"[{i}]")
            raise
        return out
    return decode_array


def _array_encoder(item_enc: Callable, compact: bool, nullable: bool) -> Callable:
    def encode_array(w: Writer, v) -> None:
        if v is None:
            _encode_null_array(w, compact, nullable)
            return
        w.array_length(len(v), compact)
        i = 0
        item = None
        try:
            for i, item in enumerate(v):  # noqa: B007 (the except below names the item)
                item_enc(w, item)
        except ProtocolError as e:
            e.prepend_path(f"[{i}]")
            raise
        except _ENCODE_FAILURES as e:
            raise _encode_failure(e, f"[{i}]", item) from e
    return encode_array


def _nullable_struct_decoder(decode_struct: Callable) -> Callable:
    """A nullable struct field: an int8 marker, -1 for null, 1 before the struct's fields."""
    def decode_nullable_struct(r: Reader):
        return None if r.int8() < 0 else decode_struct(r)
    return decode_nullable_struct


def _nullable_struct_encoder(encode_struct: Callable) -> Callable:
    def encode_nullable_struct(w: Writer, v) -> None:
        if v is None:
            w.int8(-1)
            return
        w.int8(1)
        encode_struct(w, v)
    return encode_nullable_struct


class _StructCodec:
    """A struct compiled for one (version, flexible): lists of (key, operation)."""

    decode: Callable[[Reader], dict]
    encode: Callable[[Writer, dict], None]
    min_size: int

    def __init__(self, struct: Struct, version: int, flexible: bool):
        self.struct = struct
        self.version = version
        self.flexible = flexible
        template: dict = {}  # every key in declaration order; immutable defaults filled in
        factories: list[tuple[str, Callable]] = []  # keys whose default is a fresh list / dict
        decode_ops: list[tuple[str, Callable]] = []
        encode_ops: list[tuple[str, Any, Callable]] = []
        tagged: list[tuple[int, str, Any, Callable, Callable, bytes]] = []
        min_size = 1 if flexible else 0
        for field in struct.fields:
            key = field.key
            template[key] = None if field.mutable_default else field.default
            present = version in field.versions
            tag = field.tag if present and flexible and version in field.tagged else None
            if field.mutable_default and not (present and tag is None):
                factories.append((key, _default_factory(field)))
            if not present:
                continue
            ops = _FieldOps(field, version, flexible)
            enc_default: object = () if field.is_array else ({} if field.mutable_default
                                                             else field.default)
            if tag is not None:
                w = Writer()
                ops.encode(w, field.default)
                tagged.append((tag, key, enc_default, ops.decode, ops.encode, w.getvalue()))
            else:
                decode_ops.append((key, ops.decode))
                encode_ops.append((key, enc_default, ops.encode))
                min_size += ops.min_size
        tagged.sort(key=lambda t: t[0])
        tags = [t[0] for t in tagged]
        if len(set(tags)) != len(tags):
            raise ValueError(f"struct {struct.name} v{version}: repeated tag in {tags}")
        self.min_size = min_size
        self._template = template
        self._factories = tuple(factories)
        self._decode_ops = tuple(decode_ops)
        self._encode_ops = tuple(encode_ops)
        self._tagged = tuple(tagged)
        self._tagged_by_tag = {t[0]: (t[1], t[3]) for t in tagged}
        self.decode = self._decode_flexible if flexible else self._decode
        self.encode = self._encode_flexible if flexible else self._encode

    # -- decoding --------------------------------------------------------------------------

    def _decode(self, r: Reader) -> dict:
        body = self._template.copy()
        for fresh, factory in self._factories:
            body[fresh] = factory()
        key: str | None = None
        try:
            for key, dec in self._decode_ops:
                body[key] = dec(r)
        except ProtocolError as e:
            if key is not None:  # a failure before the first field has no path
                e.prepend_path(key)
            raise
        return body

    def _decode_flexible(self, r: Reader) -> dict:
        body = self._decode(r)
        p = r.pos
        count = r.unsigned_varint()
        if not count:
            return body
        if count > r.end - r.pos:
            raise InvalidRequestError(
                f"{count} tagged fields cannot fit in the {r.end - r.pos} bytes remaining", p
            )
        known = self._tagged_by_tag
        unknown = None
        for _ in range(count):
            tag = r.unsigned_varint()
            size = r.unsigned_varint()
            start = r.pos
            if size > r.end - start:
                raise InvalidRequestError(
                    f"tagged field {tag} of {size} bytes exceeds the "
                    f"{r.end - start} bytes remaining",
                    start,
                )
            entry = known.get(tag)
            if entry is None:
                if unknown is None:
                    unknown = body[UNKNOWN_TAGGED_FIELDS] = {}
                unknown[tag] = bytes(r.buf[start:start + size])
            else:
                key, dec = entry
                try:
                    body[key] = dec(Reader(r.buf, start, start + size))
                except ProtocolError as e:
                    e.prepend_path(key)
                    raise
            r.pos = start + size
        return body

    # -- encoding --------------------------------------------------------------------------

    def _encode(self, w: Writer, body: dict) -> None:
        key: str | None = None
        v = None
        try:
            get = body.get
            for key, default, enc in self._encode_ops:
                v = get(key, default)
                enc(w, v)
        except ProtocolError as e:
            if key is not None:  # a failure before the first field has no path
                e.prepend_path(key)
            raise
        except _ENCODE_FAILURES as e:
            if not isinstance(body, dict):
                raise EncodeError(f"expected a dict for struct {self.struct.name}, "
                                  f"not {type(body).__name__}") from e
            raise _encode_failure(e, key, v) from e

    def _encode_flexible(self, w: Writer, body: dict) -> None:
        self._encode(w, body)
        fields = None
        for tag, key, _default, _dec, enc, default_bytes in self._tagged:
            v = body.get(key, _ABSENT)
            if v is _ABSENT:
                continue
            sub = Writer()
            try:
                enc(sub, v)
            except ProtocolError as e:
                e.prepend_path(key)
                raise
            except _ENCODE_FAILURES as e:
                raise _encode_failure(e, key, v) from e
            data = sub.getvalue()
            if data != default_bytes:
                if fields is None:
                    fields = {}
                fields[tag] = data
        unknown = body.get(UNKNOWN_TAGGED_FIELDS)
        if unknown:
            fields = {**unknown, **(fields or {})}
        w.tagged_fields(fields)


def _compiled(struct: Struct, version: int, flexible: bool) -> _StructCodec:
    """``struct`` compiled for ``(version, flexible)``, once (cached on the struct)."""
    codec = struct.codecs.get((version, flexible))
    if codec is None:
        codec = struct.codecs[(version, flexible)] = _StructCodec(struct, version, flexible)
    return codec


def _default_factory(field: Field) -> Callable:
    if field.is_array:
        return list
    if field.struct is None:
        raise ValueError(f"field {field.name}: a {field.type} has no mutable default")
    return field.struct.default_body


# -- public entry points ------------------------------------------------------------------------


def _message_codec(schema: Message, version: int) -> _StructCodec:
    """``schema`` compiled for ``version``: one lookup once the version was checked."""
    codec = schema.version_codecs.get(version)
    if codec is None:
        schema.check_version(version)
        codec = schema.version_codecs[version] = _compiled(
            schema, version, version in schema.flexible_versions)
    return codec


def decode(schema: Message, version: int, reader: Reader) -> dict:
    """Decode a body of ``schema`` at ``version`` from ``reader`` (advanced past it).

    Raises :class:`UnsupportedVersionError` for a version outside ``schema.valid_versions`` and
    :class:`InvalidRequestError` for bytes that do not decode.
    """
    return _message_codec(schema, version).decode(reader)


def encode(schema: Message, version: int, body: dict, writer: Writer) -> None:
    """Encode ``body`` as ``schema`` at ``version`` onto ``writer``.

    Raises :class:`UnsupportedVersionError` for a version outside ``schema.valid_versions`` and
    :class:`EncodeError` for a body that does not fit the schema.
    """
    _message_codec(schema, version).encode(writer, body)


__all__ = ["UNKNOWN_TAGGED_FIELDS", "decode", "encode"]
