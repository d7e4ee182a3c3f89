"""The codecs of :mod:`.schema_formats`: Confluent's wire format, one side of a topic in one
format, with the schemas of a registry.

>>> zigzag_varints([0])
b'\\x00'
>>> read_zigzag_varints(memoryview(zigzag_varints([2, 1])), 0)
([2, 1], 3)
"""


from __future__ import annotations

import io
import json
import struct
from collections.abc import Mapping
from typing import Any

import fastavro
import jsonschema
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import Descriptor
from google.protobuf.descriptor_pb2 import FileDescriptorProto
from google.protobuf.message import DecodeError

from broker_lite.registry.client import RegistryClient, RegistryRequestError
from broker_lite.registry.schemas.protobuf import well_known
from broker_lite.serde.errors import NotFramedError
from broker_lite.serde.framing import message_indexes, read_message_indexes
from broker_lite.serde.protobuf import path_of

from .schema_formats import FORMATS, REGISTRY_PROPERTIES, PayloadError

MAGIC = 0


def zigzag_varints(values: list[int]) -> bytes:
    """Protobuf message indexes as Confluent writes them (``[0]`` as one zero byte):
    :func:`broker_lite.serde.framing.message_indexes`."""
    return message_indexes(values)


def read_zigzag_varints(data: memoryview, position: int) -> tuple[list[int], int]:
    """The message indexes at ``position`` and where the message starts; a
    :class:`PayloadError` where they are cut short."""
    try:
        return read_message_indexes(data, position)
    except NotFramedError as exc:
        raise PayloadError(str(exc)) from None


class SchemaFormat:
    """One side (key or value) of a topic in one format: encodes lines, decodes payloads."""

    def __init__(self, fmt: str, registry: RegistryClient, subject: str,
                 properties: Mapping[str, str], prefix: str = "value"):
        if fmt not in FORMATS:
            raise PayloadError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
        self.fmt = fmt
        self.schema_type = FORMATS[fmt]
        self.registry = registry
        self.subject = subject
        self.properties = properties
        self.prefix = prefix
        self._writer: tuple[int, Any] | None = None
        self._readers: dict[int, Any] = {}

    # -- the writer's schema --------------------------------------------------------------------

    def writer(self) -> tuple[int, Any]:
        """The writer's schema id and parsed schema, found or registered once."""
        if self._writer is None:
            properties, prefix = self.properties, self.prefix
            text = properties.get(f"{prefix}.schema")
            if text is None and properties.get(f"{prefix}.schema.file"):
                with open(properties[f"{prefix}.schema.file"], encoding="utf-8") as file:
                    text = file.read()
            references = json.loads(properties.get(f"{prefix}.refs", "[]") or "[]")
            if properties.get(f"{prefix}.schema.id"):
                schema_id = int(properties[f"{prefix}.schema.id"])
            elif text is not None:
                schema_id = int(self.registry.register(self.subject, text, self.schema_type,
                                                       references)["id"])
            else:
                schema_id = int(self.registry.version(self.subject)["id"])
            self._writer = (schema_id, self._parsed(schema_id))
        return self._writer

    def _parsed(self, schema_id: int) -> Any:
        if schema_id not in self._readers:
            self._readers[schema_id] = self._parse(schema_id)
        return self._readers[schema_id]

    def _parse(self, schema_id: int) -> Any:
        if self.schema_type == "PROTOBUF":
            return self._protobuf_file(self.registry.schema(schema_id, "serialized"),
                                       f"schema-{schema_id}.proto")
        found = self.registry.schema(schema_id)
        if self.schema_type == "JSON":
            return json.loads(found["schema"])
        named: dict[str, Any] = {}
        self._avro_references(found.get("references") or [], named)
        return fastavro.parse_schema(json.loads(found["schema"]), named_schemas=named)

    def _avro_references(self, references: list[dict[str, Any]], named: dict[str, Any]) -> None:
        for reference in references:
            found = self.registry.version(reference["subject"], reference["version"])
            self._avro_references(found.get("references") or [], named)
            fastavro.parse_schema(json.loads(found["schema"]), named_schemas=named)

    def _protobuf_file(self, found: Mapping[str, Any], name: str) -> FileDescriptorProto:
        """The file's descriptor, with every file it imports added to :attr:`pool`."""
        if not hasattr(self, "pool"):
            self.pool = descriptor_pool.DescriptorPool()
        for reference in found.get("references") or []:
            try:
                self.pool.FindFileByName(reference["name"])
                continue
            except KeyError:
                pass
            dependency = self.registry.version(reference["subject"], reference["version"],
                                               "serialized")
            self._protobuf_file(dependency, reference["name"])
        import base64

        proto = FileDescriptorProto()
        proto.ParseFromString(base64.b64decode(found["schema"]))
        proto.name = name
        for dependency in proto.dependency:
            try:
                self.pool.FindFileByName(dependency)
            except KeyError:
                known = well_known(dependency)
                if known is not None:
                    self.pool.Add(known)
        try:
            self.pool.FindFileByName(name)
        except KeyError:
            self.pool.Add(proto)
        return proto

    def _message(self, proto: FileDescriptorProto, indexes: list[int]) -> Descriptor:
        file = self.pool.FindFileByName(proto.name)
        descriptor = list(file.message_types_by_name.values())[indexes[0]]
        for index in indexes[1:]:
            descriptor = descriptor.nested_types[index]
        return descriptor

    # -- lines -> payloads ----------------------------------------------------------------------

    def encode(self, line: str) -> bytes:
        try:
            schema_id, schema = self.writer()
        except RegistryRequestError as exc:
            raise PayloadError(f"the {self.prefix} schema of {self.subject}: {exc}") from None
        header = struct.pack(">bI", MAGIC, schema_id)
        try:
            if self.schema_type == "AVRO":
                record = next(iter(fastavro.json_reader(io.StringIO(line), schema)))
                out = io.BytesIO()
                fastavro.schemaless_writer(out, schema, record)
                return header + out.getvalue()
            document = json.loads(line)
            if self.schema_type == "JSON":
                jsonschema.validate(document, schema)
                return header + json.dumps(document, separators=(",", ":")).encode()
            name = self.properties.get(f"{self.prefix}.schema.message")
            descriptor = self._message(schema, [0])
            if name:
                descriptor = self.pool.FindMessageTypeByName(name)
            message = message_factory.GetMessageClass(descriptor)()
            json_format.ParseDict(document, message)
            return header + zigzag_varints(path_of(descriptor)) + message.SerializeToString()
        except (ValueError, TypeError, KeyError, StopIteration, jsonschema.ValidationError,
                json_format.ParseError, AttributeError) as exc:
            raise PayloadError(f"the line does not fit the {self.prefix} schema "
                               f"{schema_id}: {exc}") from None

    # -- payloads -> JSON text ------------------------------------------------------------------

    def decode(self, data: bytes) -> str:
        view = memoryview(data)
        if len(view) < 5 or view[0] != MAGIC:
            raise PayloadError("not in Confluent's wire format (no magic byte 0 and schema id)")
        schema_id = struct.unpack_from(">I", view, 1)[0]
        try:
            schema = self._parsed(schema_id)
        except RegistryRequestError as exc:
            raise PayloadError(f"schema {schema_id}: {exc}") from None
        body = bytes(view[5:])
        try:
            if self.schema_type == "AVRO":
                record = fastavro.schemaless_reader(io.BytesIO(body), schema, None)
                out = io.StringIO()
                fastavro.json_writer(out, schema, [record])
                return out.getvalue().strip()
            if self.schema_type == "JSON":
                return json.dumps(json.loads(body), separators=(",", ":"))
            indexes, position = read_zigzag_varints(view, 5)
            message = message_factory.GetMessageClass(self._message(schema, indexes))()
            message.ParseFromString(bytes(view[position:]))
            return json.dumps(json_format.MessageToDict(message), separators=(",", ":"))
        except (ValueError, EOFError, DecodeError, IndexError, StopIteration) as exc:
            raise PayloadError(f"the payload does not decode with schema {schema_id}: "
                               f"{exc}") from None


def topic_formats(topic: str, key_format: str | None, value_format: str | None,
                  properties: Mapping[str, str]
                  ) -> tuple[SchemaFormat | None, SchemaFormat | None]:
    """The key's and the value's formats of ``topic`` (None: bytes as they are), their subjects
    ``<topic>-key`` and ``<topic>-value``; the registry from ``schema.registry.url``."""
    if key_format is None and value_format is None:
        return None, None
    settings = {ours: properties[theirs] for theirs, ours in REGISTRY_PROPERTIES.items()
                if theirs in properties}
    if "url" not in settings:
        raise PayloadError("--key-format and --value-format need --property "
                           "schema.registry.url=<the registry's URL>")
    try:
        registry = RegistryClient(settings)
    except (RegistryRequestError, OSError) as exc:
        raise PayloadError(str(exc)) from None
    key = SchemaFormat(key_format, registry, f"{topic}-key", properties, "key") \
        if key_format else None
    value = SchemaFormat(value_format, registry, f"{topic}-value", properties, "value") \
        if value_format else None
    return key, value
