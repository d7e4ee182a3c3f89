"""Protobuf payloads to Arrow columns and back, by a file's descriptors.

A framed payload is Confluent's header, the message indexes (:mod:`..framing`: the path of the
writer's message in its file), then the message in Protobuf's wire format. Records are read
with the **reader's** message class: Protobuf's wire format names every field by number, so a
writer's schema that added fields (left out), removed them (their defaults) or renamed them
(same number) reads as the reader's, which is Protobuf's own resolution. The writer's message
(by its indexes) must be the reader's message, by full name.

The Spark type of a message is ``from_protobuf``'s (spark-protobuf's ``SchemaConverters``):

==========================================  ================================================
Protobuf                                    Spark (Arrow)
==========================================  ================================================
int32, sint32, sfixed32, uint32, fixed32    int (unsigned values wrap, as in Java)
int64, sint64, sfixed64, uint64, fixed64    bigint (unsigned values wrap)
float, double, bool, string, bytes          float, double, boolean, string, binary
enum                                        string (the value's name; an unknown number: its
                                            digits)
message                                     struct (every field nullable)
repeated T                                  array<T>
map<K, V>                                   map<K, V>
google.protobuf.Timestamp                   timestamp
google.protobuf.Duration                    interval day to second (``duration[us]``)
a oneof                                     its fields, each nullable (at most one set)
a message containing itself                 refused when the read is planned, naming it
==========================================  ================================================

A field without presence (a proto3 scalar, not ``optional``) reads as its value, its default
when absent (0, "", false, the first enum value), as Confluent's deserializer gives it; a
field with presence (a message, an ``optional`` or proto2 field, a oneof's) reads null when
absent. Decoding parses each payload with protobuf's compiled runtime and walks the message:
a Python object per field (there is no compiled twin of this path; see the benchmark).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import os
from typing import Any

import numpy as np
import pyarrow as pa
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.descriptor_pb2 import FileDescriptorProto, FileDescriptorSet
from google.protobuf.message import DecodeError, EncodeError

from broker_lite.registry.errors import InvalidSchema
from broker_lite.registry.schemas import parse_schema
from broker_lite.registry.schemas.protobuf import ProtobufSchema

from .column import encode_column
from .errors import (
    CorruptPayloadError,
    IncompatibleSchemaError,
    PayloadError,
    UnsupportedSchemaError,
)
from .framing import header, message_indexes, read_message_indexes

F = FieldDescriptor
INT32_TYPES = {F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_UINT32, F.TYPE_FIXED32}
INT64_TYPES = {F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT64, F.TYPE_FIXED64}
UNSIGNED = {F.TYPE_UINT32: 32, F.TYPE_FIXED32: 32, F.TYPE_UINT64: 64, F.TYPE_FIXED64: 64}
TIMESTAMP, DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"
SCALARS = {F.TYPE_FLOAT: pa.float32(), F.TYPE_DOUBLE: pa.float64(), F.TYPE_BOOL: pa.bool_(),
           F.TYPE_STRING: pa.string(), F.TYPE_BYTES: pa.binary(), F.TYPE_ENUM: pa.string()}


def descriptor_schema(text: str) -> ProtobufSchema:
    """A Protobuf file from an option: ``.proto`` text, a base64 ``FileDescriptorProto`` or
    ``FileDescriptorSet``, or the path of a descriptor set file (``protoc
    --descriptor_set_out``); its last file is the one read, the others its imports."""
    raw: bytes | None = None
    if os.path.isfile(text.strip()):
        with open(text.strip(), "rb") as file:
            raw = file.read()
    else:
        try:
            raw = base64.b64decode(text.strip(), validate=True) if text.strip() else None
        except (binascii.Error, ValueError):
            raw = None
    if raw is not None:
        found = FileDescriptorSet()
        try:
            found.ParseFromString(raw)
        except DecodeError:
            found = FileDescriptorSet()
        files = list(found.file)
        if files and all(f.name for f in files):
            *imports, main = files
            dependencies = {f.name: ProtobufSchema(f, (), {}) for f in imports}
            return ProtobufSchema(main, (), dependencies)
    try:
        parsed = parse_schema("PROTOBUF", text)
    except InvalidSchema as exc:
        raise UnsupportedSchemaError(f"not a Protobuf file, descriptor or descriptor set file: "
                                     f"{exc}") from None
    assert isinstance(parsed, ProtobufSchema)
    return parsed


def _pool(schema: ProtobufSchema) -> tuple[descriptor_pool.DescriptorPool, Any]:
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    imported = schema.imported()

    def add(proto: FileDescriptorProto) -> None:
        if proto.name in added:
            return
        for dependency in proto.dependency:
            if dependency in imported:
                add(imported[dependency])
        added.add(proto.name)
        pool.Add(proto)

    add(schema.descriptor)
    return pool, pool.FindFileByName(schema.descriptor.name)


def message_of(schema: ProtobufSchema, name: str | None) -> Descriptor:
    """The message ``name`` (full, or short when it is unique) of ``schema``'s file, or its
    first message."""
    _, file = _pool(schema)
    messages = list(file.message_types_by_name.values())
    if not messages:
        raise UnsupportedSchemaError("the Protobuf file defines no message")
    if name is None:
        return messages[0]
    found: list[Descriptor] = []

    def walk(descriptor: Descriptor) -> None:
        if name in (descriptor.full_name, descriptor.name):
            found.append(descriptor)
        for nested in descriptor.nested_types:
            walk(nested)

    for message in messages:
        walk(message)
    if not found:
        raise UnsupportedSchemaError(f"the Protobuf file has no message {name!r}; it has "
                                     + ", ".join(m.full_name for m in messages))
    return found[0]


def path_of(descriptor: Descriptor) -> list[int]:
    """The message indexes of ``descriptor`` in its file."""
    path = []
    while descriptor.containing_type is not None:
        parent = descriptor.containing_type
        path.append(list(parent.nested_types).index(descriptor))
        descriptor = parent
    path.append(list(descriptor.file.message_types_by_name.values()).index(descriptor))
    return path[::-1]


def _message(field: FieldDescriptor) -> Descriptor:
    """The message type of a message field."""
    assert field.message_type is not None, field.full_name
    return field.message_type


def _enum(field: FieldDescriptor) -> Any:
    assert field.enum_type is not None, field.full_name
    return field.enum_type


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == F.TYPE_MESSAGE and _message(field).GetOptions().map_entry


def arrow_of(message: Descriptor, path: tuple[str, ...] = ()) -> pa.DataType:
    """The Spark type (as Arrow) of ``message``, as ``from_protobuf`` maps it."""
    if message.full_name == TIMESTAMP:
        return pa.timestamp("us", tz="UTC")
    if message.full_name == DURATION:
        return pa.duration("us")
    if message.full_name in path:
        through = " -> ".join((*path[path.index(message.full_name):], message.full_name))
        raise UnsupportedSchemaError(
            "Found recursive reference in Protobuf schema, which Spark cannot represent: the "
            f"message {message.full_name} contains itself ({through})")
    inner = (*path, message.full_name)
    fields = []
    for field in message.fields:
        fields.append(pa.field(field.name, _field_type(field, inner), True))
    return pa.struct(fields)


def _field_type(field: FieldDescriptor, path: tuple[str, ...]) -> pa.DataType:
    if _is_map(field):
        key, value = _message(field).fields_by_name["key"], \
            _message(field).fields_by_name["value"]
        return pa.map_(pa.field("key", _single_type(key, path), False),
                       pa.field("value", _single_type(value, path), False))
    single = _single_type(field, path)
    if field.is_repeated:
        return pa.list_(pa.field("element", single, False))
    return single


def _single_type(field: FieldDescriptor, path: tuple[str, ...]) -> pa.DataType:
    if field.type in INT32_TYPES:
        return pa.int32()
    if field.type in INT64_TYPES:
        return pa.int64()
    if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return arrow_of(_message(field), path)
    return SCALARS[field.type]


class ProtobufReader:
    """Payloads read as the message ``message`` (default: the first) of ``schema``'s file."""

    schema_type = "PROTOBUF"

    def __init__(self, schema: ProtobufSchema, message: str | None = None):
        self.schema = schema
        self.message_name = message
        descriptor = message_of(schema, message)
        self.full_name = descriptor.full_name
        self.arrow: pa.DataType = arrow_of(descriptor)

    def fingerprint(self) -> str:
        return f"protobuf:{self.full_name}:{self.schema.canonical()}"

    def decoder(self, writer: ProtobufSchema | None = None) -> ProtobufDecoder:
        return ProtobufDecoder(self, writer, framed=writer is not None)


class ProtobufDecoder:
    """Decodes payloads of one writer's file as the reader's message."""

    def __init__(self, reader: ProtobufReader, writer: ProtobufSchema | None, framed: bool):
        self.reader = reader
        self.framed = framed
        descriptor = message_of(reader.schema, reader.message_name)
        self.message_class = message_factory.GetMessageClass(descriptor)
        self.descriptor = descriptor
        self.writer_file = _pool(writer)[1] if writer is not None else None
        self._names: dict[tuple[int, ...], str] = {}

    def writer_message(self, indexes: list[int]) -> str:
        """The full name of the writer's message at ``indexes`` in its file."""
        key = tuple(indexes)
        if key not in self._names:
            assert self.writer_file is not None
            messages = list(self.writer_file.message_types_by_name.values())
            try:
                found = messages[indexes[0]]
                for index in indexes[1:]:
                    found = found.nested_types[index]
            except IndexError:
                raise CorruptPayloadError(f"message indexes {indexes} name no message of the "
                                          "writer's file") from None
            self._names[key] = found.full_name
        return self._names[key]

    def decode(self, data: Any, starts: np.ndarray, ends: np.ndarray,
               permissive: bool) -> tuple[pa.Array, list[int]]:
        view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        rows: list[Any] = []
        failed = []
        for row, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            if start < 0:
                rows.append(None)
                continue
            try:
                rows.append(self.decode_one(view, start, end))
            except PayloadError as exc:
                if not permissive:
                    exc.row = row
                    raise
                rows.append(None)
                failed.append(row)
        return pa.array(rows, type=self.reader.arrow), failed

    def decode_one(self, view: memoryview, start: int, end: int) -> Any:
        if self.framed:
            indexes, start = read_message_indexes(view, start, end)
            name = self.writer_message(indexes)
            if name != self.descriptor.full_name:
                raise IncompatibleSchemaError(f"the writer's message {name} is not the "
                                              f"reader's {self.descriptor.full_name}")
        try:
            message = self.message_class.FromString(bytes(view[start:end]))
        except (DecodeError, RuntimeError, ValueError) as exc:
            raise CorruptPayloadError(f"not a {self.descriptor.full_name} message: {exc}") \
                from None
        return _row(message, self.descriptor)


def _row(message: Any, descriptor: Descriptor) -> Any:
    if descriptor.full_name == TIMESTAMP:
        return message.seconds * 1_000_000 + message.nanos // 1000
    if descriptor.full_name == DURATION:
        return datetime.timedelta(seconds=message.seconds, microseconds=message.nanos // 1000)
    row: dict[str, Any] = {}
    for field in descriptor.fields:
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = _message(field).fields_by_name["value"]
            row[field.name] = [(k, _single(value[k], value_field)) for k in value]
        elif field.is_repeated:
            row[field.name] = [_single(v, field) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            row[field.name] = None
        else:
            row[field.name] = _single(value, field)
    return row


def _single(value: Any, field: FieldDescriptor) -> Any:
    if field.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return _row(value, _message(field))
    if field.type == F.TYPE_ENUM:
        known = _enum(field).values_by_number.get(value)
        return known.name if known is not None else str(value)
    bits = UNSIGNED.get(field.type)
    if bits and value >= 1 << (bits - 1):
        return value - (1 << bits)  # as Java reads an unsigned value into its signed type
    return value


# -- encoding -----------------------------------------------------------------------------------


class ProtobufEncoder:
    """Values of the Spark type of ``message`` (of ``schema``'s file) as payloads: framed with
    ``schema_id`` and the message's indexes, or bare when ``schema_id`` is None."""

    def __init__(self, schema: ProtobufSchema, message: str | None, schema_id: int | None):
        descriptor = message_of(schema, message)
        self.descriptor = descriptor
        self.message_class = message_factory.GetMessageClass(descriptor)
        self.prefix = b"" if schema_id is None else \
            header(schema_id) + message_indexes(path_of(descriptor))
        self.schema_id = schema_id

    def encode(self, column: pa.Array) -> pa.Array:
        def encode_one(value: Any) -> bytes:
            message = self.message_class()
            _fill(message, self.descriptor, value, "value")
            return self.prefix + message.SerializeToString()

        return encode_column(column, encode_one, "does not fit the Protobuf message "
                             f"{self.descriptor.full_name}",
                             (ValueError, TypeError, KeyError, AttributeError, EncodeError))


def _fill(message: Any, descriptor: Descriptor, value: dict, where: str) -> None:
    for field in descriptor.fields:
        item = value.get(field.name)
        if item is None:
            continue
        target = getattr(message, field.name)
        if _is_map(field):
            value_field = _message(field).fields_by_name["value"]
            for k, v in item:
                if value_field.type == F.TYPE_MESSAGE:
                    _fill(target[k], _message(value_field), v, f"{where}.{field.name}[{k!r}]")
                else:
                    target[k] = _scalar(v, value_field)
        elif field.is_repeated:
            for v in item:
                if field.type == F.TYPE_MESSAGE:
                    _fill_message(target.add(), _message(field), v,
                                  f"{where}.{field.name}[]")
                else:
                    target.append(_scalar(v, field))
        elif field.type == F.TYPE_MESSAGE:
            _fill_message(target, _message(field), item, f"{where}.{field.name}")
        else:
            setattr(message, field.name, _scalar(item, field))


def _fill_message(message: Any, descriptor: Descriptor, value: Any, where: str) -> None:
    if descriptor.full_name == TIMESTAMP:
        micros = int(value.timestamp() * 1_000_000) if isinstance(value, datetime.datetime) \
            else int(value)
        message.seconds, message.nanos = micros // 1_000_000, (micros % 1_000_000) * 1000
        return
    if descriptor.full_name == DURATION:
        micros = value // datetime.timedelta(microseconds=1)
        message.seconds, message.nanos = micros // 1_000_000, (micros % 1_000_000) * 1000
        return
    message.SetInParent()
    _fill(message, descriptor, value, where)


def _scalar(value: Any, field: FieldDescriptor) -> Any:
    if field.type == F.TYPE_ENUM:
        known = _enum(field).values_by_name.get(value)
        return known.number if known is not None else int(value)
    bits = UNSIGNED.get(field.type)
    if bits and value < 0:
        return value + (1 << bits)
    return value


def proto_of_type(arrow: pa.DataType, name: str) -> str:
    """A proto3 file whose message ``name`` has the Spark type ``arrow`` (a struct): fields
    numbered in order, nullable scalars ``optional``, structs nested messages, timestamps
    ``google.protobuf.Timestamp``."""
    if not pa.types.is_struct(arrow):
        raise UnsupportedSchemaError(f"a Protobuf message is written from a struct, not {arrow}")
    imports: set[str] = set()
    body = _message_text(arrow, name.rpartition(".")[2], imports, "")
    package = name.rpartition(".")[0]
    head = ['syntax = "proto3";'] + ([f"package {package};"] if package else []) + \
        [f'import "{i}";' for i in sorted(imports)]
    return "\n".join(head) + "\n\n" + body


def _message_text(arrow: pa.DataType, name: str, imports: set[str], indent: str) -> str:
    lines = [f"{indent}message {name} {{"]
    for number, field in enumerate(arrow, start=1):
        kind, nested = _proto_type(field.type, field.name, imports, indent + "  ")
        if nested:
            lines.append(nested)
        optional = "optional " if field.nullable and not kind.startswith(("repeated ",
                                                                          "map<")) and \
            not pa.types.is_struct(field.type) and not pa.types.is_timestamp(field.type) else ""
        lines.append(f"{indent}  {optional}{kind} {field.name} = {number};")
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def _proto_type(arrow: pa.DataType, name: str, imports: set[str], indent: str
                ) -> tuple[str, str]:
    if pa.types.is_struct(arrow):
        nested = name[:1].upper() + name[1:]
        return nested, _message_text(arrow, nested, imports, indent)
    if pa.types.is_list(arrow):
        inner, nested = _proto_type(arrow.value_type, name, imports, indent)
        if inner.startswith(("repeated ", "map<")):
            raise UnsupportedSchemaError(f"{name}: Protobuf has no array of arrays or maps")
        return f"repeated {inner}", nested
    if pa.types.is_map(arrow):
        key, _ = _proto_type(arrow.key_type, name, imports, indent)
        value, nested = _proto_type(arrow.item_type, name, imports, indent)
        return f"map<{key}, {value}>", nested
    if pa.types.is_timestamp(arrow):
        imports.add("google/protobuf/timestamp.proto")
        return "google.protobuf.Timestamp", ""
    scalars = {pa.bool_(): "bool", pa.int8(): "int32", pa.int16(): "int32", pa.int32(): "int32",
               pa.int64(): "int64", pa.float32(): "float", pa.float64(): "double",
               pa.string(): "string", pa.binary(): "bytes"}
    if arrow not in scalars:
        raise UnsupportedSchemaError(f"{name}: no Protobuf type for Spark's {arrow}")
    return scalars[arrow], ""
