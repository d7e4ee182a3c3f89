"""Protobuf's wire rules (the Protocol Buffers guide, "Updating A Message Type"), as a checker.

A reader can read a writer's messages when every field the writer writes is read as what it
is. Fields are matched by number, message by message (by full name, through imports too);
the error types are those of Confluent's ``ProtobufSchema`` diff:

- ``PACKAGE_CHANGED``: a changed package renames every type;
- ``MESSAGE_REMOVED``: a message the writer has and the reader lacks;
- a field in both: ``FIELD_KIND_CHANGED`` (scalar, message or enum no more),
  ``FIELD_SCALAR_KIND_CHANGED`` (scalars outside one wire-compatible family:
  int32/uint32/int64/uint64/bool, sint32/sint64, fixed32/sfixed32, fixed64/sfixed64,
  string/bytes), ``FIELD_NAMED_TYPE_CHANGED`` (another message or enum type),
  ``FIELD_LABEL_CHANGED`` (repeated to singular or back, for scalars);
- a field in one only: removing or adding an optional field is fine (the reader skips or
  defaults it); ``REQUIRED_FIELD_ADDED`` / ``REQUIRED_FIELD_REMOVED`` (proto2 ``required``);
  ``RESERVED_FIELD_REUSED``: a reader field whose number or name the writer reserved (it was
  removed, and its old data may still be read as the new field);
- oneofs: ``MULTIPLE_FIELDS_MOVED_TO_ONEOF``, ``FIELD_MOVED_TO_EXISTING_ONEOF``,
  ``ONEOF_FIELD_REMOVED`` (a field of a writer's oneof gone from the reader). Fields moved
  out of a oneof, or into a new one from the reader's side, read as before.

>>> from broker_lite.registry.schemas.protobuf import ProtobufSchema
>>> def proto(text): return ProtobufSchema.parse('syntax = "proto3";' + text, (), {})
>>> can_read(proto('message M { int64 a = 1; }'), proto('message M { int32 a = 1; }'))
[]
>>> [i.error_type for i in can_read(proto('message M { string a = 1; }'),
...                                 proto('message M { int32 a = 1; }'))]
['FIELD_SCALAR_KIND_CHANGED']
"""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.descriptor_pb2 import DescriptorProto as DP
from google.protobuf.descriptor_pb2 import FieldDescriptorProto as FieldDP

from ..schemas.protobuf import SCALAR_NAMES, ProtobufSchema
from .incompatibility import Incompatibility

#: scalar types whose encodings read as one another
FAMILIES = [
    {"int32", "uint32", "int64", "uint64", "bool"},
    {"sint32", "sint64"},
    {"fixed32", "sfixed32"},
    {"fixed64", "sfixed64"},
    {"string", "bytes"},
]


def can_read(reader: ProtobufSchema, writer: ProtobufSchema) -> list[Incompatibility]:
    """Why a reader of ``reader`` would misread messages written with ``writer``."""
    found: list[Incompatibility] = []
    if reader.descriptor.package != writer.descriptor.package:
        found.append(Incompatibility("PACKAGE_CHANGED", "#/package",
                                     f"the package changed from {writer.descriptor.package!r} "
                                     f"to {reader.descriptor.package!r}"))
        return found
    reader_messages = dict(_messages(reader))
    writer_messages = dict(_messages(writer, own_only=True))
    for name, written in writer_messages.items():
        read = reader_messages.get(name)
        if read is None:
            found.append(Incompatibility("MESSAGE_REMOVED", f"#/{name}",
                                         f"the message {name} is gone"))
            continue
        found.extend(_message(read, written, name))
    return found


def _messages(schema: ProtobufSchema, own_only: bool = False) -> Iterator[tuple[str, DP]]:
    """Every message of the file (and of its imports unless ``own_only``), by full name
    without the leading dot."""
    files = [schema.descriptor] if own_only else \
        [schema.descriptor, *schema.imported().values()]
    for file in files:
        prefix = f"{file.package}." if file.package else ""
        pending = [(prefix + m.name, m) for m in file.message_type]
        while pending:
            name, message = pending.pop()
            if message.options.map_entry:
                continue
            yield name, message
            pending.extend((f"{name}.{n.name}", n) for n in message.nested_type)


def _scalar(field: FieldDP) -> str | None:
    return SCALAR_NAMES.get(field.type)


def _kind(field: FieldDP) -> str:
    if field.type == FieldDP.TYPE_MESSAGE:
        return "message"
    if field.type == FieldDP.TYPE_ENUM:
        return "enum"
    return "scalar"


def _real_oneof(field: FieldDP) -> int | None:
    return field.oneof_index if field.HasField("oneof_index") and not field.proto3_optional \
        else None


def _reserved(message: DP, field: FieldDP) -> bool:
    return field.name in message.reserved_name or any(
        r.start <= field.number < r.end for r in message.reserved_range)


def _message(reader: DP, writer: DP, name: str) -> list[Incompatibility]:
    found: list[Incompatibility] = []
    read = {f.number: f for f in reader.field}
    written = {f.number: f for f in writer.field}
    for number, field in written.items():
        where = f"#/{name}/{number}"
        if number not in read:
            if field.label == FieldDP.LABEL_REQUIRED:
                found.append(Incompatibility("REQUIRED_FIELD_REMOVED", where,
                                             f"the required field {field.name} is gone"))
            continue
        found.extend(_field(read[number], field, where))
    for number, field in read.items():
        if number in written:
            continue
        where = f"#/{name}/{number}"
        if field.label == FieldDP.LABEL_REQUIRED:
            found.append(Incompatibility("REQUIRED_FIELD_ADDED", where,
                                         f"the required field {field.name} is new"))
        if _reserved(writer, field):
            found.append(Incompatibility("RESERVED_FIELD_REUSED", where,
                                         f"the field {field.name} = {number} reuses what the "
                                         f"writer reserved"))
    found.extend(_oneofs(reader, writer, read, written, name))
    return found


def _field(reader: FieldDP, writer: FieldDP, where: str) -> list[Incompatibility]:
    if _kind(reader) != _kind(writer):
        return [Incompatibility("FIELD_KIND_CHANGED", where,
                                f"the field {reader.name} changed from a {_kind(writer)} to a "
                                f"{_kind(reader)}")]
    if _kind(reader) == "scalar":
        before, after = _scalar(writer), _scalar(reader)
        if before != after and not any({before, after} <= family for family in FAMILIES):
            return [Incompatibility("FIELD_SCALAR_KIND_CHANGED", where,
                                    f"the field {reader.name} changed from {before} to "
                                    f"{after}")]
        repeated = (reader.label == FieldDP.LABEL_REPEATED, writer.label == FieldDP.LABEL_REPEATED)
        if repeated[0] != repeated[1] and after not in ("string", "bytes"):
            return [Incompatibility("FIELD_LABEL_CHANGED", where,
                                    f"the field {reader.name} changed between repeated and "
                                    f"singular")]
        return []
    if reader.type_name.lstrip(".") != writer.type_name.lstrip("."):
        return [Incompatibility("FIELD_NAMED_TYPE_CHANGED", where,
                                f"the field {reader.name} changed from {writer.type_name} to "
                                f"{reader.type_name}")]
    return []


def _oneofs(reader: DP, writer: DP, read: dict[int, FieldDP], written: dict[int, FieldDP],
            name: str) -> list[Incompatibility]:
    found: list[Incompatibility] = []
    for index, oneof in enumerate(reader.oneof_decl):
        members = [f for f in reader.field if _real_oneof(f) == index]
        if not members:
            continue
        where = f"#/{name}/{oneof.name}"
        moved = [f for f in members if f.number in written
                 and _real_oneof(written[f.number]) is None]
        existed = any(o.name == oneof.name for o in writer.oneof_decl)
        if len(moved) > 1:
            found.append(Incompatibility("MULTIPLE_FIELDS_MOVED_TO_ONEOF", where,
                                         f"the fields {', '.join(f.name for f in moved)} moved "
                                         f"into the oneof {oneof.name}"))
        elif moved and existed:
            found.append(Incompatibility("FIELD_MOVED_TO_EXISTING_ONEOF", where,
                                         f"the field {moved[0].name} moved into the existing "
                                         f"oneof {oneof.name}"))
    for index, oneof in enumerate(writer.oneof_decl):
        for field in writer.field:
            if _real_oneof(field) != index:
                continue
            if field.number not in read:
                found.append(Incompatibility("ONEOF_FIELD_REMOVED", f"#/{name}/{oneof.name}",
                                             f"the field {field.name} left the oneof "
                                             f"{oneof.name}"))
    return found
