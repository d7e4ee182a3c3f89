"""Structured keys and values written by the sink: the writer's schema settled on the driver,
each batch's struct columns encoded on the executors.

On the driver, before any task runs (:func:`plan_write`), per structured side:

1. the writer's schema: the one given (``<side>.avro.schema``, ``<side>.protobuf.descriptor``,
   ``<side>.schema`` for JSON Schema), else with ``use.latest.version`` the subject's latest
   version, else one derived from the column's Spark type (spark-avro's derivation for Avro);
2. the column's Spark type checked against it: every field of the schema a field of the
   struct, of a type that fits (a mismatch fails the write, naming the column, the field and
   both types, before anything is written);
3. with a registry, the schema's id under the subject (``<side>.subject``, else the subject
   name strategy's, of the ``topic`` option and the record's name): registered when new with
   ``auto.register.schemas`` (the default, as Confluent's serializers), else looked up.

Executors then only encode, in Confluent's framing with that id (bare without a registry); no
registry is asked from a task. A row that does not fit (a null in a field that is not
nullable) fails its task, and an exactly-once write then leaves nothing visible.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import StructType

from broker_lite.registry.client import RegistryRequestError
from broker_lite.registry.errors import InvalidSchema
from broker_lite.registry.resolver import SchemaNotFound, SchemaResolver
from broker_lite.registry.schemas import ParsedSchema, parse_schema
from broker_lite.serde.errors import EncodeError, PayloadError
from kspark.options import OptionError

from .formats import encoder_for, reader_for, schema_of_type
from .options import REGISTRY_FORMATS, SideFormat, StructuredOptions
from .plan import registry_client, registry_error


class StructuredColumnError(ValueError):
    """A struct column that does not fit the schema it is to be written with."""

    def __init__(self, column: str, message: str):
        super().__init__(f"column '{column}': {message}")
        self.column = column


@dataclass
class SideWrite:
    """How a task encodes one side: the writer's schema, and its id (None: bare payloads)."""

    side: SideFormat
    schema: ParsedSchema | None  # None: plain JSON
    schema_id: int | None
    subject: str | None
    key: str  # names it in each worker's cache of encoders


@dataclass
class WritePlan:
    options: StructuredOptions
    sides: dict[str, SideWrite | None] = field(default_factory=dict)

    @property
    def structured(self) -> bool:
        return any(self.sides.values()) or self.options.key.format == "string" or \
            self.options.value.format == "string"


def plan_write(options: StructuredOptions, schema: StructType, topic: str | None) -> WritePlan:
    """The writers' schemas of a write of rows of ``schema`` to ``topic`` (the ``topic``
    option; None when rows name their topics)."""
    plan = WritePlan(options)
    columns = {f.name.lower(): f for f in schema.fields}
    for side in options.sides:
        column = columns.get(side.side)
        if not side.structured or column is None:
            if side.structured and side.side == "value":
                raise StructuredColumnError("value", "required: a struct to write as "
                                            f"{side.format}")
            plan.sides[side.side] = None
            continue
        arrow = to_arrow_type(column.dataType, timezone="UTC")
        plan.sides[side.side] = side_write(side, options, arrow, column.nullable, topic)
    return plan


def side_write(side: SideFormat, options: StructuredOptions, arrow: pa.DataType,
                nullable: bool, topic: str | None) -> SideWrite:
    if side.format == "json":  # plain JSON documents: no schema, no registry
        misfits = misfit(arrow, reader_for(side, None, side.schema).arrow, side.side)
        if misfits:
            raise StructuredColumnError(side.side, f"does not fit {side.option('schema')}: "
                                                   f"{misfits}")
        return SideWrite(side, None, None, None, f"json:{arrow}")
    use_registry = bool(options.registry.get("url")) and side.format in REGISTRY_FORMATS
    resolver = SchemaResolver(registry_client(options)) if use_registry else None
    schema_type = REGISTRY_FORMATS.get(side.format, "JSON")
    given = side.given_schema
    subject, schema_id = None, None
    if given is not None:
        try:
            schema = reader_for(side, None, given).schema
        except (InvalidSchema, PayloadError, ValueError) as exc:
            raise OptionError(side.option(_schema_option(side)), str(exc)) from None
    elif options.use_latest_version:
        if resolver is None:
            raise OptionError("use.latest.version", "needs a schema registry "
                                                    "(schema.registry.url)")
        subject = side.subject_for(topic, side.record_name)
        try:
            schema_id, _, schema = resolver.by_version(subject, "latest")
        except SchemaNotFound as exc:
            raise OptionError(side.option("subject"), str(exc)) from None
        except RegistryRequestError as exc:
            raise registry_error(exc, options, f"the latest version of {subject!r}") from None
    else:
        try:
            schema = parse_schema(schema_type, schema_of_type(side, arrow, nullable))
        except (PayloadError, InvalidSchema) as exc:
            raise StructuredColumnError(side.side, f"its Spark type has no {side.format} "
                                                   f"schema: {exc}") from None
    _check_fit(side, schema, arrow, schema_id)
    if resolver is not None and schema_id is None:
        subject = side.subject_for(topic, record_name(schema, side))
        client = resolver.client
        text = schema.canonical()
        references = [r.to_json() for r in schema.references] or None
        try:
            found = client.register(subject, text, schema_type, references) \
                if options.auto_register else client.lookup(subject, text, schema_type,
                                                            references)
        except RegistryRequestError as exc:
            if exc.status == 404 and not options.auto_register:
                raise OptionError("auto.register.schemas", f"false, and the schema is not "
                                  f"registered under subject {subject!r}: register it, or "
                                  "set auto.register.schemas true") from None
            if exc.status == 409:
                raise StructuredColumnError(side.side, f"its schema is incompatible with "
                                            f"subject {subject!r}: {exc}") from None
            raise registry_error(exc, options, f"the schema of subject {subject!r}") from None
        schema_id = int(found["id"])
    digest = hashlib.sha256(repr((side.format, schema.canonical(), schema_id)).encode())
    return SideWrite(side, schema, schema_id, subject, digest.hexdigest()[:24])


def _schema_option(side: SideFormat) -> str:
    return {"avro": "avro.schema", "protobuf": "protobuf.descriptor"}.get(side.format, "schema")


def record_name(schema: ParsedSchema, side: SideFormat) -> str | None:
    """The full name of the record (message) a schema writes, for the record strategies."""
    raw = getattr(schema, "raw", None)
    if isinstance(raw, dict) and raw.get("type") == "record":
        name = raw["name"]
        namespace = raw.get("namespace")
        return name if "." in name or not namespace else f"{namespace}.{name}"
    if schema.schema_type == "PROTOBUF":
        return reader_for(side, schema, None).full_name
    if schema.schema_type == "JSON":
        title = getattr(schema, "value", {}).get("title")
        return title if isinstance(title, str) else side.record_name
    return side.record_name


def _check_fit(side: SideFormat, schema: ParsedSchema, arrow: pa.DataType,
               schema_id: int | None) -> None:
    """The column's type against the schema's Spark type: a :class:`StructuredColumnError`
    naming the first field that does not fit."""
    try:
        expected = reader_for(side, schema, None).arrow
    except PayloadError as exc:
        raise StructuredColumnError(side.side, f"cannot be written with the schema: {exc}") \
            from None
    problem = misfit(arrow, expected, side.side)
    if problem:
        named = f"schema id {schema_id}" if schema_id is not None else "the schema"
        raise StructuredColumnError(side.side, f"does not fit {named}: {problem}")


#: Spark types that fit a wider one of the schema
WIDENINGS = {(pa.int8(), pa.int32()), (pa.int16(), pa.int32()), (pa.int8(), pa.int64()),
             (pa.int16(), pa.int64()), (pa.int32(), pa.int64()), (pa.float32(), pa.float64())}


def misfit(given: pa.DataType, expected: pa.DataType, where: str) -> str | None:
    """Why a column of Spark type ``given`` cannot be written as ``expected``, or None."""
    if pa.types.is_struct(expected):
        if not pa.types.is_struct(given):
            return f"{where} is {given}, the schema has a struct"
        names = {f.name for f in given}
        for f in expected:
            if f.name not in names:
                return f"{where} has no field {f.name!r} ({f.type})"
            problem = misfit(given.field(f.name).type, f.type, f"{where}.{f.name}")
            if problem:
                return problem
        extra = sorted(names - {f.name for f in expected})
        if extra:
            return f"{where}.{extra[0]} is not in the schema"
        return None
    if pa.types.is_list(expected):
        if not pa.types.is_list(given):
            return f"{where} is {given}, the schema has an array"
        return misfit(given.value_type, expected.value_type, f"{where}[]")
    if pa.types.is_map(expected):
        if not pa.types.is_map(given):
            return f"{where} is {given}, the schema has a map"
        return misfit(given.key_type, expected.key_type, f"{where} key") or \
            misfit(given.item_type, expected.item_type, f"{where}[]")
    if given == expected or (given, expected) in WIDENINGS or pa.types.is_null(given):
        return None
    return f"{where} is {given}, the schema has {expected}"


# -- executors ----------------------------------------------------------------------------------

_ENCODERS: dict[str, Any] = {}


def encode_batch(batch: pa.RecordBatch, plan: WritePlan) -> pa.RecordBatch:
    """``batch`` with its structured key and value columns encoded as payloads."""
    names = [n.lower() for n in batch.schema.names]
    columns = list(batch.columns)
    for side in ("key", "value"):
        if side not in names:
            continue
        index = names.index(side)
        write = plan.sides.get(side)
        if write is None:
            continue
        encoder = _ENCODERS.get(write.key)
        if encoder is None:
            encoder = _ENCODERS[write.key] = encoder_for(write.side, write.schema,
                                                         write.schema_id)
        try:
            columns[index] = encoder.encode(columns[index])
        except EncodeError as exc:
            raise EncodeError(f"the {side} column, {exc}") from None
    fields = [pa.field(n, c.type) for n, c in zip(batch.schema.names, columns, strict=True)]
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields))
