"""Protobuf schemas: a ``.proto`` file, as text or as a serialized ``FileDescriptorProto``.

Clients register either form: ``.proto`` text (Confluent's documentation, the REST examples),
or, as confluent-kafka's ``ProtobufSerializer`` does, the file's ``FileDescriptorProto``
serialized and base64-encoded. Both become one ``FileDescriptorProto`` here: text is parsed by
proto-schema-parser and its declarations turned into descriptors (names resolved by Protobuf's
scoping rules, maps into their ``*Entry`` messages, ``optional`` proto3 fields into their
synthetic oneofs, as ``protoc`` does); the descriptor is then built in a protobuf
``DescriptorPool`` with its imports, which checks that every type resolves. The canonical text
is the descriptor written back as ``.proto`` (:func:`to_proto_text`), so both forms of one file
get one id; ``?format=serialized`` serves the descriptor base64-encoded, as Confluent does.

Imports are references: a reference's name is the import path (``other.proto``), its schema
that file. The well-known types (``google/protobuf/*.proto``) need no reference.

>>> schema = ProtobufSchema.parse('syntax = "proto3"; package shop;'
...                               ' message Order { int64 id = 1; repeated string items = 2; }',
...                               (), {})
>>> print(schema.canonical())
syntax = "proto3";
package shop;
<BLANKLINE>
message Order {
  int64 id = 1;
  repeated string items = 2;
}
<BLANKLINE>
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from antlr4.error.ErrorListener import ErrorListener
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor_pb2 import FieldDescriptorProto as FieldDP
from google.protobuf.descriptor_pb2 import FileDescriptorProto as FDP
from google.protobuf.message import DecodeError
from proto_schema_parser import ast
from proto_schema_parser.parser import Parser

from ..errors import InvalidSchema
from .base import ParsedSchema, Reference

#: scalar type names -> FieldDescriptorProto.Type
SCALARS = {
    "double": FieldDP.TYPE_DOUBLE, "float": FieldDP.TYPE_FLOAT, "int64": FieldDP.TYPE_INT64,
    "uint64": FieldDP.TYPE_UINT64, "int32": FieldDP.TYPE_INT32, "fixed64": FieldDP.TYPE_FIXED64,
    "fixed32": FieldDP.TYPE_FIXED32, "bool": FieldDP.TYPE_BOOL, "string": FieldDP.TYPE_STRING,
    "bytes": FieldDP.TYPE_BYTES, "uint32": FieldDP.TYPE_UINT32,
    "sfixed32": FieldDP.TYPE_SFIXED32, "sfixed64": FieldDP.TYPE_SFIXED64,
    "sint32": FieldDP.TYPE_SINT32, "sint64": FieldDP.TYPE_SINT64,
}
SCALAR_NAMES = {number: name for name, number in SCALARS.items()}
MAX_FIELD_NUMBER = 536870911


def well_known(path: str) -> FDP | None:
    """The descriptor of a well-known type's file (``google/protobuf/timestamp.proto``)."""
    if not path.startswith("google/protobuf/"):
        return None
    try:
        found = descriptor_pool.Default().FindFileByName(path)
    except KeyError:
        import importlib

        module = path.removesuffix(".proto").replace("/", ".") + "_pb2"
        try:
            importlib.import_module(module)
            found = descriptor_pool.Default().FindFileByName(path)
        except (ImportError, KeyError):
            return None
    proto = FDP()
    found.CopyToProto(proto)
    return proto


class ProtobufSchema(ParsedSchema):
    """A ``.proto`` file: ``descriptor`` (its FileDescriptorProto)."""

    schema_type = "PROTOBUF"

    def __init__(self, descriptor: FDP, references: tuple[Reference, ...],
                 dependencies: Mapping[str, ParsedSchema]):
        super().__init__(references, dependencies)
        self.descriptor = descriptor

    @classmethod
    def parse(cls, text: str, references: tuple[Reference, ...],
              dependencies: Mapping[str, ParsedSchema]) -> ProtobufSchema:
        imports = {name: d.descriptor for name, d in dependencies.items()
                   if isinstance(d, ProtobufSchema)}
        descriptor = _from_serialized(text)
        if descriptor is None:
            descriptor = from_proto_text(text, imports)
        descriptor.name = descriptor.name or "schema.proto"
        _build(descriptor, imports)
        return cls(descriptor, references, dependencies)

    def canonical(self) -> str:
        return to_proto_text(self.descriptor)

    def normalized(self) -> ProtobufSchema:
        return self

    def formatted(self, fmt: str | None) -> str:
        if fmt == "serialized":
            return base64.standard_b64encode(
                self.descriptor.SerializeToString(deterministic=True)).decode("ascii")
        return self.canonical()

    def imported(self) -> dict[str, FDP]:
        """Every file this one imports, directly or not, by path (well-known types too)."""
        found: dict[str, FDP] = {}
        pending: list[tuple[str, ParsedSchema | None]] = [
            (path, self.dependencies.get(path)) for path in self.descriptor.dependency]
        while pending:
            path, schema = pending.pop()
            if path in found:
                continue
            if isinstance(schema, ProtobufSchema):
                found[path] = schema.descriptor
                pending.extend((p, schema.dependencies.get(p))
                               for p in schema.descriptor.dependency)
            else:
                known = well_known(path)
                if known is not None:
                    found[path] = known
                    pending.extend((p, None) for p in known.dependency)
        return found


def _from_serialized(text: str) -> FDP | None:
    """The FileDescriptorProto of base64 ``text``, or None when ``text`` is not one."""
    stripped = text.strip()
    if not stripped or any(c in stripped for c in " ;{\n"):
        return None
    try:
        raw = base64.b64decode(stripped, validate=True)
        descriptor = FDP()
        descriptor.ParseFromString(raw)
    except (binascii.Error, ValueError, DecodeError):
        return None
    return descriptor if descriptor.message_type or descriptor.enum_type else None


def _build(descriptor: FDP, imports: Mapping[str, FDP]) -> None:
    """Build ``descriptor`` with its imports in a fresh pool: :class:`InvalidSchema` when a
    type does not resolve or an import is missing."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(path: str, proto: FDP | None) -> None:
        if path in added:
            return
        if proto is None:
            proto = imports.get(path) or well_known(path)
            if proto is None:
                raise InvalidSchema(f"Invalid schema: import {path!r} is neither a reference "
                                    "nor a well-known type")
        added.add(path)
        for dependency in proto.dependency:
            add(dependency, None)
        pool.Add(proto)

    try:
        add(descriptor.name, descriptor)
        pool.FindFileByName(descriptor.name)
    except InvalidSchema:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        raise InvalidSchema(f"Invalid schema: {exc}") from None


# -- .proto text -> FileDescriptorProto -----------------------------------------------------------


def from_proto_text(text: str, imports: Mapping[str, FDP]) -> FDP:
    """The FileDescriptorProto of ``.proto`` text; :class:`InvalidSchema` when it does not
    parse or names a type that neither it nor ``imports`` (path -> descriptor) define."""
    try:
        tree = Parser(setup_lexer=_raise_on_errors, setup_parser=_raise_on_errors).parse(text)
    except InvalidSchema:
        raise
    except Exception as exc:  # the parser raises its own error types, unexported
        raise InvalidSchema(f"Invalid schema: {exc}") from None
    descriptor = FDP(name="schema.proto", syntax=tree.syntax or "proto2")
    if tree.syntax and tree.syntax not in ("proto2", "proto3"):
        raise InvalidSchema(f"Invalid schema: unsupported syntax {tree.syntax!r}")
    if descriptor.syntax == "proto2":
        descriptor.ClearField("syntax")  # protoc leaves proto2's syntax unset
    elements = tree.file_elements
    for element in elements:
        if isinstance(element, ast.Package):
            descriptor.package = element.name
        elif isinstance(element, ast.Import):
            if element.public:
                descriptor.public_dependency.append(len(descriptor.dependency))
            if element.weak:
                descriptor.weak_dependency.append(len(descriptor.dependency))
            descriptor.dependency.append(element.name)
        elif isinstance(element, ast.Option):
            _set_option(descriptor.options, element)
    known = _declared_types(descriptor.package, elements)
    for path in descriptor.dependency:
        imported = imports.get(path) or well_known(path)
        if imported is not None:
            known.update(_types_of(imported))
    converter = _Converter(known, descriptor.syntax == "proto3")
    scope = f".{descriptor.package}" if descriptor.package else ""
    for element in elements:
        if isinstance(element, ast.Message):
            descriptor.message_type.append(converter.message(element, scope))
        elif isinstance(element, ast.Enum):
            descriptor.enum_type.append(converter.enum(element))
        elif isinstance(element, ast.Service):
            descriptor.service.append(converter.service(element, scope))
    return descriptor


class _SyntaxErrors(ErrorListener):
    """ANTLR reports syntax errors to stderr and recovers; a schema must not parse then."""

    def syntaxError(self, recognizer: Any, offendingSymbol: Any, line: int,
                    column: int, msg: str, e: Any) -> None:
        raise InvalidSchema(f"Invalid schema: line {line}:{column}: {msg}")


def _raise_on_errors(recognizer: Any) -> None:
    recognizer.removeErrorListeners()
    recognizer.addErrorListener(_SyntaxErrors())


def _declared_types(package: str, elements: Iterable[Any]) -> dict[str, bool]:
    """Full name (with a leading dot) -> is a message, for every type ``elements`` declare."""
    found: dict[str, bool] = {}

    def walk(scope: str, items: Iterable[Any]) -> None:
        for item in items:
            if isinstance(item, ast.Message):
                name = f"{scope}.{item.name}"
                found[name] = True
                walk(name, item.elements)
                for field in item.elements:
                    if isinstance(field, ast.MapField):
                        found[f"{name}.{_entry_name(field.name)}"] = True
            elif isinstance(item, ast.Enum):
                found[f"{scope}.{item.name}"] = False
            elif isinstance(item, ast.OneOf):
                walk(scope, item.elements)

    walk(f".{package}" if package else "", elements)
    return found


def _types_of(descriptor: FDP) -> dict[str, bool]:
    found: dict[str, bool] = {}
    base = f".{descriptor.package}" if descriptor.package else ""

    def walk(scope: str, messages: Iterable[Any], enums: Iterable[Any]) -> None:
        for enum in enums:
            found[f"{scope}.{enum.name}"] = False
        for message in messages:
            name = f"{scope}.{message.name}"
            found[name] = True
            walk(name, message.nested_type, message.enum_type)

    walk(base, descriptor.message_type, descriptor.enum_type)
    return found


def _entry_name(field_name: str) -> str:
    """The name protoc gives a map field's entry message: ``tag_counts`` -> ``TagCountsEntry``."""
    return "".join(part[:1].upper() + part[1:] for part in field_name.split("_")) + "Entry"


def _json_name(field_name: str) -> str:
    parts = field_name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _set_option(options: Any, option: ast.Option) -> None:
    """Set a standard option by name; custom options (``(my.option)``) are not kept."""
    name = option.name
    if name.startswith("(") or "." in name:
        return
    if name not in options.DESCRIPTOR.fields_by_name:
        raise InvalidSchema(f"Invalid schema: unknown option {name!r}")
    field = options.DESCRIPTOR.fields_by_name[name]
    value: Any = option.value
    if field.enum_type is not None and isinstance(value, ast.Identifier | str):
        value = field.enum_type.values_by_name[str(getattr(value, "name", value))].number
    try:
        setattr(options, name, value)
    except (TypeError, ValueError) as exc:
        raise InvalidSchema(f"Invalid schema: option {name}: {exc}") from None


def _ranges(specs: Iterable[str], exclusive_end: bool) -> list[tuple[int, int]]:
    """``["6", "8 to 10", "20 to max"]`` -> ``[(6, 7), (8, 11), (20, 536870912)]`` (the end
    exclusive as messages store it; enums keep it inclusive)."""
    found = []
    for spec in specs:
        low, _, high = str(spec).partition(" to ")
        start = int(low)
        end = MAX_FIELD_NUMBER if high.strip() == "max" else int(high or low)
        found.append((start, end + 1 if exclusive_end else end))
    return found


class _Converter:
    """Declarations -> descriptors, resolving type names against ``known`` (full name -> is a
    message) by Protobuf's scoping rules: innermost scope first."""

    def __init__(self, known: dict[str, bool], proto3: bool):
        self.known = known
        self.proto3 = proto3

    def resolve(self, name: str, scope: str) -> tuple[str, bool]:
        if name.startswith("."):
            if name in self.known:
                return name, self.known[name]
            raise InvalidSchema(f"Invalid schema: unknown type {name}")
        first, _, rest = name.partition(".")
        parts = scope.split(".")
        while True:
            candidate = ".".join(parts) + "." + first
            if candidate in self.known or (rest and any(
                    k.startswith(candidate + ".") for k in self.known)):
                full = candidate + ("." + rest if rest else "")
                if full in self.known:
                    return full, self.known[full]
            if len(parts) <= 1:
                break
            parts.pop()
        raise InvalidSchema(f"Invalid schema: unknown type {name} (in {scope or 'the file'})")

    def field(self, node: ast.Field, scope: str, oneof: int | None = None) -> FieldDP:
        field = FieldDP(name=node.name, number=node.number, json_name=_json_name(node.name))
        cardinality = node.cardinality
        if cardinality == ast.FieldCardinality.REPEATED:
            field.label = FieldDP.LABEL_REPEATED
        elif cardinality == ast.FieldCardinality.REQUIRED:
            if self.proto3:
                raise InvalidSchema(f"Invalid schema: required field {node.name} in proto3")
            field.label = FieldDP.LABEL_REQUIRED
        else:
            field.label = FieldDP.LABEL_OPTIONAL
        if node.type in SCALARS:
            field.type = SCALARS[node.type]
        else:
            full, is_message = self.resolve(node.type, scope)
            field.type = FieldDP.TYPE_MESSAGE if is_message else FieldDP.TYPE_ENUM
            field.type_name = full
        if oneof is not None:
            field.oneof_index = oneof
        for option in node.options:
            if option.name == "default":
                value = option.value
                field.default_value = str(value).lower() if isinstance(value, bool) \
                    else str(getattr(value, "name", value))
            elif option.name == "json_name":
                field.json_name = str(option.value)
            else:
                _set_option(field.options, option)
        return field

    def message(self, node: ast.Message, scope: str) -> descriptor_pb2.DescriptorProto:
        name = f"{scope}.{node.name}"
        message = descriptor_pb2.DescriptorProto(name=node.name)
        synthetic: list[int] = []  # indexes of proto3 optional fields
        for element in node.elements:
            if isinstance(element, ast.Field):
                field = self.field(element, name)
                if self.proto3 and element.cardinality == ast.FieldCardinality.OPTIONAL:
                    field.proto3_optional = True
                    synthetic.append(len(message.field))
                message.field.append(field)
            elif isinstance(element, ast.MapField):
                message.field.append(self.map_field(element, name, message))
            elif isinstance(element, ast.OneOf):
                index = len(message.oneof_decl)
                message.oneof_decl.add(name=element.name)
                for member in element.elements:
                    if isinstance(member, ast.Field):
                        message.field.append(self.field(member, name, index))
            elif isinstance(element, ast.Message):
                message.nested_type.append(self.message(element, name))
            elif isinstance(element, ast.Enum):
                message.enum_type.append(self.enum(element))
            elif isinstance(element, ast.Reserved):
                for start, end in _ranges(element.ranges, exclusive_end=True):
                    message.reserved_range.add(start=start, end=end)
                message.reserved_name.extend(element.names)
            elif isinstance(element, ast.Option):
                _set_option(message.options, element)
            elif isinstance(element, ast.Group):
                raise InvalidSchema("Invalid schema: groups are not supported")
        for index in synthetic:  # after the real oneofs, as protoc orders them
            message.field[index].oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name=f"_{message.field[index].name}")
        return message

    def map_field(self, node: ast.MapField, scope: str,
                  message: descriptor_pb2.DescriptorProto) -> FieldDP:
        entry = descriptor_pb2.DescriptorProto(name=_entry_name(node.name))
        entry.options.map_entry = True
        key = self.field(ast.Field(name="key", number=1, type=node.key_type), scope)
        value = self.field(ast.Field(name="value", number=2, type=node.value_type), scope)
        entry.field.extend([key, value])
        message.nested_type.append(entry)
        field = FieldDP(name=node.name, number=node.number, label=FieldDP.LABEL_REPEATED,
                        type=FieldDP.TYPE_MESSAGE, type_name=f"{scope}.{entry.name}",
                        json_name=_json_name(node.name))
        for option in node.options:
            _set_option(field.options, option)
        return field

    def enum(self, node: ast.Enum) -> descriptor_pb2.EnumDescriptorProto:
        enum = descriptor_pb2.EnumDescriptorProto(name=node.name)
        for element in node.elements:
            if isinstance(element, ast.EnumValue):
                value = enum.value.add(name=element.name, number=element.number)
                for option in element.options:
                    _set_option(value.options, option)
            elif isinstance(element, ast.EnumReserved):
                for start, end in _ranges(element.ranges, exclusive_end=False):
                    enum.reserved_range.add(start=start, end=end)
                enum.reserved_name.extend(element.names)
            elif isinstance(element, ast.Option):
                _set_option(enum.options, element)
        return enum

    def service(self, node: ast.Service, scope: str) -> descriptor_pb2.ServiceDescriptorProto:
        service = descriptor_pb2.ServiceDescriptorProto(name=node.name)
        for element in node.elements:
            if isinstance(element, ast.Method):
                service.method.add(
                    name=element.name,
                    input_type=self.resolve(element.input_type.type, scope)[0],
                    output_type=self.resolve(element.output_type.type, scope)[0],
                    client_streaming=element.input_type.stream or None,
                    server_streaming=element.output_type.stream or None)
        return service


# -- FileDescriptorProto -> .proto text -----------------------------------------------------------


def to_proto_text(descriptor: FDP) -> str:
    """``descriptor`` written as a ``.proto`` file (the canonical text)."""
    lines = [f'syntax = "{descriptor.syntax or "proto2"}";']
    if descriptor.package:
        lines.append(f"package {descriptor.package};")
    public, weak = set(descriptor.public_dependency), set(descriptor.weak_dependency)
    for index, path in enumerate(descriptor.dependency):
        kind = "public " if index in public else "weak " if index in weak else ""
        lines.append(f'import {kind}"{path}";')
    lines.extend(_options(descriptor.options, ""))
    proto3 = descriptor.syntax == "proto3"
    for message in descriptor.message_type:
        lines.append("")
        lines.extend(_message_text(message, "", proto3))
    for enum in descriptor.enum_type:
        lines.append("")
        lines.extend(_enum_text(enum, ""))
    for service in descriptor.service:
        lines.append("")
        lines.append(f"service {service.name} {{")
        for method in service.method:
            stream_in = "stream " if method.client_streaming else ""
            stream_out = "stream " if method.server_streaming else ""
            lines.append(f"  rpc {method.name}({stream_in}{method.input_type}) returns "
                         f"({stream_out}{method.output_type});")
        lines.append("}")
    return "\n".join(lines) + "\n"


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _options(options: Any, indent: str) -> list[str]:
    found = []
    for field, value in options.ListFields():
        if field.name == "map_entry":
            continue
        if field.enum_type is not None:
            value = field.enum_type.values_by_number[value].name
            found.append(f"{indent}option {field.name} = {value};")
        else:
            found.append(f"{indent}option {field.name} = {_literal(value)};")
    return found


def _compact_options(field: FieldDP) -> str:
    parts = [f"{f.name} = {_literal(v)}" for f, v in field.options.ListFields()]
    if field.HasField("default_value"):
        value = field.default_value
        shown = _literal(value) if field.type == FieldDP.TYPE_STRING else value
        parts.insert(0, f"default = {shown}")
    if field.json_name and field.json_name != _json_name(field.name):
        parts.append(f"json_name = {_literal(field.json_name)}")
    return f" [{', '.join(parts)}]" if parts else ""


def _type_text(field: FieldDP) -> str:
    return SCALAR_NAMES.get(field.type, field.type_name)


def _field_text(field: FieldDP, proto3: bool, in_oneof: bool) -> str:
    label = ""
    if field.label == FieldDP.LABEL_REPEATED:
        label = "repeated "
    elif field.label == FieldDP.LABEL_REQUIRED:
        label = "required "
    elif field.proto3_optional or (not proto3 and not in_oneof):
        label = "optional "
    return f"{label}{_type_text(field)} {field.name} = {field.number}{_compact_options(field)};"


def _message_text(message: descriptor_pb2.DescriptorProto, indent: str,
                  proto3: bool) -> list[str]:
    inner = indent + "  "
    lines = [f"{indent}message {message.name} {{"]
    lines.extend(_options(message.options, inner))
    entries = {n.name: n for n in message.nested_type if n.options.map_entry}
    real_oneofs = {f.oneof_index for f in message.field
                   if f.HasField("oneof_index") and not f.proto3_optional}
    written_oneofs: set[int] = set()
    for field in message.field:
        entry = entries.get(field.type_name.rpartition(".")[2]) \
            if field.type == FieldDP.TYPE_MESSAGE and field.label == FieldDP.LABEL_REPEATED \
            else None
        if entry is not None:
            key, value = entry.field[0], entry.field[1]
            lines.append(f"{inner}map<{_type_text(key)}, {_type_text(value)}> {field.name} = "
                         f"{field.number}{_compact_options(field)};")
        elif field.HasField("oneof_index") and field.oneof_index in real_oneofs:
            if field.oneof_index in written_oneofs:
                continue
            written_oneofs.add(field.oneof_index)
            lines.append(f"{inner}oneof {message.oneof_decl[field.oneof_index].name} {{")
            lines.extend(f"{inner}  {_field_text(member, proto3, True)}"
                         for member in message.field if member.HasField("oneof_index")
                         and member.oneof_index == field.oneof_index)
            lines.append(f"{inner}}}")
        else:
            lines.append(f"{inner}{_field_text(field, proto3, False)}")
    for nested in message.nested_type:
        if not nested.options.map_entry:
            lines.extend(_message_text(nested, inner, proto3))
    for enum in message.enum_type:
        lines.extend(_enum_text(enum, inner))
    if message.reserved_range:
        lines.append(f"{inner}reserved " + ", ".join(
            str(r.start) if r.end == r.start + 1 else
            f"{r.start} to {'max' if r.end > MAX_FIELD_NUMBER else r.end - 1}"
            for r in message.reserved_range) + ";")
    if message.reserved_name:
        lines.append(f"{inner}reserved " + ", ".join(_literal(n) for n in message.reserved_name)
                     + ";")
    lines.append(f"{indent}}}")
    return lines


def _enum_text(enum: descriptor_pb2.EnumDescriptorProto, indent: str) -> list[str]:
    inner = indent + "  "
    lines = [f"{indent}enum {enum.name} {{"]
    lines.extend(_options(enum.options, inner))
    for value in enum.value:
        options = ", ".join(f"{f.name} = {_literal(v)}" for f, v in value.options.ListFields())
        lines.append(f"{inner}{value.name} = {value.number}{f' [{options}]' if options else ''};")
    if enum.reserved_range:
        lines.append(f"{inner}reserved " + ", ".join(
            str(r.start) if r.end == r.start else f"{r.start} to {r.end}"
            for r in enum.reserved_range) + ";")
    if enum.reserved_name:
        lines.append(f"{inner}reserved " + ", ".join(_literal(n) for n in enum.reserved_name)
                     + ";")
    lines.append(f"{indent}}}")
    return lines
