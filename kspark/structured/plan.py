"""What the driver decides about structured keys and values when a read is planned: the
reader's schema, its Spark type, and the writers' schemas it can already name.

The reader's schema is the subject's latest version when the read is planned (the DataFrame
loaded, or the streaming query started), or the one ``<side>.schema.version`` or
``<side>.schema.id`` names; without a registry, the schema given in the options. Every version
registered under the subject is fetched too: those are the writers' schemas the records most
likely carry, so that executors seldom need the registry at all (an id not among them is
fetched once per Python worker, :mod:`.reading`). The plan travels to the executors with the
read, pickled; the registry is never asked per record.

A streaming query keeps the plan it started with: a version registered while it runs changes
neither its Spark schema nor how its records are read. Records of the new version are read
with the query's reader schema by the resolution rules (a field the new version added is left
out, a field it removed takes the reader's default); a restarted query plans again, from the
latest version then (``<side>.schema.version`` pins it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_type
from pyspark.sql.types import DataType

from broker_lite.registry.client import RegistryClient, RegistryRequestError
from broker_lite.registry.errors import InvalidSchema
from broker_lite.registry.resolver import SchemaNotFound, SchemaResolver
from broker_lite.registry.schemas import ParsedSchema
from broker_lite.serde.errors import PayloadError
from kspark.options import OptionError

from .formats import reader_for
from .options import REGISTRY_FORMATS, REGISTRY_PREFIX, SideFormat, StructuredOptions


@dataclass
class SidePlan:
    """How an executor reads one side: the reader (a format's reader object, its schema and
    Spark type), the writers' schemas known when planning (id -> schema), whether payloads
    are framed (a registry) and the registry's settings for ids met later."""

    side: SideFormat
    reader: Any
    writers: dict[int, ParsedSchema]
    framed: bool
    registry: Mapping[str, str]
    spark_type: DataType
    arrow: pa.DataType  # the Arrow type Spark expects of the column
    key: str  # names this plan in each worker's cache of decoders
    reader_id: int | None = None
    subject: str | None = None


@dataclass
class StructuredPlan:
    """Both sides' plans (None: bytes as they are, or ``string``) and the mode."""

    options: StructuredOptions
    sides: dict[str, SidePlan | None] = field(default_factory=dict)

    @property
    def permissive(self) -> bool:
        return self.options.permissive


def registry_client(options: StructuredOptions) -> RegistryClient:
    try:
        return RegistryClient(options.registry)
    except RegistryRequestError as exc:
        raise OptionError(REGISTRY_PREFIX + "url", str(exc)) from None


def registry_error(exc: RegistryRequestError, options: StructuredOptions,
                   what: str) -> OptionError:
    """A registry's refusal or silence as an error naming the option to look at."""
    if exc.unreachable:
        return OptionError(REGISTRY_PREFIX + "url", f"{exc}, while looking up {what}")
    if exc.status in (401, 403):
        return OptionError(REGISTRY_PREFIX + "basic.auth.user.info",
                           f"the schema registry refused the login ({exc.status}: {exc}) while "
                           f"looking up {what}")
    return OptionError(REGISTRY_PREFIX + "url", f"the schema registry answered {exc.status} "
                       f"({exc}) while looking up {what}")


def plan_read(options: StructuredOptions, topics: Sequence[str]) -> StructuredPlan:
    """The plan of a read of ``topics`` (the subscribed ones, where named)."""
    plan = StructuredPlan(options)
    resolver = None
    for side in options.sides:
        if not side.structured:
            plan.sides[side.side] = None
            continue
        if options.registry.get("url") and side.format in REGISTRY_FORMATS:
            if resolver is None:
                resolver = SchemaResolver(registry_client(options))
            plan.sides[side.side] = _from_registry(side, options, resolver, topics)
        else:
            plan.sides[side.side] = _from_options(side, options)
    return plan


def _from_options(side: SideFormat, options: StructuredOptions) -> SidePlan:
    text = side.given_schema
    assert text is not None  # checked with the options
    try:
        reader = reader_for(side, None, text)
    except (InvalidSchema, PayloadError, ValueError) as exc:
        name = {"avro": "avro.schema", "protobuf": "protobuf.descriptor"}.get(side.format,
                                                                              "schema")
        raise OptionError(side.option(name), str(exc)) from None
    return _side_plan(side, reader, {}, framed=False, registry={}, reader_id=None, subject=None)


def _from_registry(side: SideFormat, options: StructuredOptions, resolver: SchemaResolver,
                   topics: Sequence[str]) -> SidePlan:
    topic = topics[0] if len(topics) == 1 else None
    if side.subject is None and side.schema_id is None and topic is None and \
            side.strategy != "RecordNameStrategy":
        raise OptionError(side.option("subject"), f"{side.strategy} names a subject per topic, "
                          f"and this read has {len(topics) or 'a pattern of'} topics: give the "
                          f"subject ({side.option('subject')}) or the schema "
                          f"({side.option('schema.id')})")
    subject = None
    if side.schema_id is not None:
        schema_id = reader_id = side.schema_id
        schema = _lookup(lambda: resolver.by_id(schema_id), options,
                         f"schema id {schema_id} ({side.option('schema.id')})",
                         side.option("schema.id"))
        if side.subject is not None or (topic is not None and side.strategy ==
                                        "TopicNameStrategy"):
            subject = side.subject_for(topic, None)
    else:
        subject = named = side.subject_for(topic, None)
        version = side.version if side.version is not None else "latest"
        what = f"version {version} of subject {subject!r}" + (
            "" if side.subject else f" ({side.strategy} of topic {topic!r}; "
                                    f"{side.option('subject')} names another)")
        reader_id, _, schema = _lookup(lambda: resolver.by_version(named, version), options,
                                       what, side.option("schema.version" if side.version
                                                         else "subject"))
    expected = REGISTRY_FORMATS[side.format]
    if schema.schema_type != expected:
        raise OptionError(side.option("format"), f"{side.format}, but the reader's schema "
                          f"(id {reader_id}) is of type {schema.schema_type}")
    try:
        reader = reader_for(side, schema, None)
    except PayloadError as exc:
        raise OptionError(side.option("format"), f"the schema (id {reader_id}) of "
                          f"{subject or 'the read'}: {exc}") from None
    writers: dict[int, ParsedSchema] = {reader_id: schema}
    if subject is not None:
        versions = _lookup(lambda: resolver.versions(subject), options,
                           f"the versions of subject {subject!r}", side.option("subject"),
                           missing_ok=True) or []
        for version in versions:
            writer_id, _, writer = _lookup(lambda v=version: resolver.by_version(subject, v),
                                           options, f"version {version} of {subject!r}",
                                           side.option("subject"))
            writers[writer_id] = writer
    return _side_plan(side, reader, writers, framed=True, registry=dict(options.registry),
                      reader_id=reader_id, subject=subject)


def _lookup(call: Any, options: StructuredOptions, what: str, option: str,
            missing_ok: bool = False) -> Any:
    try:
        return call()
    except SchemaNotFound as exc:
        if missing_ok:
            return None
        raise OptionError(option, str(exc)) from None
    except RegistryRequestError as exc:
        raise registry_error(exc, options, what) from None
    except InvalidSchema as exc:
        raise OptionError(option, str(exc)) from None


def _side_plan(side: SideFormat, reader: Any, writers: dict[int, ParsedSchema], *,
               framed: bool, registry: Mapping[str, str], reader_id: int | None,
               subject: str | None) -> SidePlan:
    spark_type = from_arrow_type(reader.arrow)
    arrow = to_arrow_type(spark_type, timezone="UTC")
    digest = hashlib.sha256(repr((side, reader.fingerprint(), framed, sorted(registry.items()),
                                  str(arrow))).encode()).hexdigest()[:24]
    return SidePlan(side, reader, writers, framed, registry, spark_type, arrow, digest,
                    reader_id, subject)
