"""The options of structured keys and values, shared by the source and the sink.

Per side (``value`` or ``key``):

=================================  =============================================================
``<side>.format``                  ``binary`` (the default: the bytes as they are, as Spark's
                                   Kafka source has them), ``string`` (UTF-8), ``avro``,
                                   ``protobuf``, ``json-schema`` (Confluent's framing with a
                                   schema of the registry, or a schema given below and bare
                                   payloads), ``json`` (plain JSON documents, of the Spark type
                                   ``<side>.schema``)
``<side>.subject``                 the registry subject of the schema (else from the strategy)
``<side>.subject.name.strategy``   ``TopicNameStrategy`` (``<topic>-<side>``, the default),
                                   ``RecordNameStrategy`` (the record's full name),
                                   ``TopicRecordNameStrategy`` (``<topic>-<full name>``); Java's
                                   class names (``io.confluent...TopicNameStrategy``) too
``<side>.record.name``             the record's (message's) full name, for a read with the two
                                   record strategies
``<side>.schema.version``          the reader's schema: this version of the subject (default:
                                   the latest when the read is planned)
``<side>.schema.id``               the reader's schema: this schema id
``<side>.avro.schema``             an Avro schema (JSON): without a registry, the schema of bare
                                   payloads; in a write, the schema to write with
``<side>.protobuf.descriptor``     a Protobuf file: ``.proto`` text, a base64 serialized
                                   ``FileDescriptorProto``/``FileDescriptorSet``, or the path of
                                   a descriptor set file (``protoc --descriptor_set_out``)
``<side>.protobuf.message``        the message of that file (default: its first)
``<side>.schema``                  ``json``: the Spark type as DDL (``a int, b string``); for
                                   ``json-schema`` without a registry, a JSON Schema
=================================  =============================================================

The registry client's settings under ``schema.registry.``, confluent-kafka's
``SchemaRegistryClient`` names (:mod:`broker_lite.registry.client`): ``schema.registry.url``,
``schema.registry.basic.auth.user.info``, ``schema.registry.ssl.ca.location``, ... And
``mode``: ``FAILFAST`` (the default) or ``PERMISSIVE``, as ``from_avro``'s.

The sink adds ``auto.register.schemas`` (``true`` by default, as Confluent's serializers) and
``use.latest.version`` (``false``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from broker_lite.config.parsers import boolean, int32
from broker_lite.registry.client import SETTINGS as REGISTRY_SETTINGS
from broker_lite.security.redaction import RedactedSettings
from kspark.options import OptionError

FORMATS = ("binary", "string", "avro", "protobuf", "json-schema", "json")
#: formats whose payloads carry Confluent's framing when a registry is used
REGISTRY_FORMATS = {"avro": "AVRO", "protobuf": "PROTOBUF", "json-schema": "JSON"}
MODES = ("FAILFAST", "PERMISSIVE")
STRATEGIES = ("TopicNameStrategy", "RecordNameStrategy", "TopicRecordNameStrategy")
SIDES = ("key", "value")

SIDE_OPTIONS = ("format", "subject", "subject.name.strategy", "record.name", "schema.version",
                "schema.id", "avro.schema", "protobuf.descriptor", "protobuf.message", "schema")
REGISTRY_PREFIX = "schema.registry."
SINK_ONLY = ("auto.register.schemas", "use.latest.version")

#: every option this module reads, by its documented spelling (the source's; the sink adds
#: :data:`SINK_ONLY`)
OPTIONS = ([f"{side}.{name}" for side in SIDES for name in SIDE_OPTIONS]
           + [REGISTRY_PREFIX + name for name in REGISTRY_SETTINGS] + ["mode"])


@dataclass(frozen=True)
class SideFormat:
    """How one side of the records (``key`` or ``value``) is written."""

    side: str
    format: str = "binary"
    subject: str | None = None
    strategy: str = "TopicNameStrategy"
    record_name: str | None = None
    version: int | None = None
    schema_id: int | None = None
    avro_schema: str | None = None
    protobuf_descriptor: str | None = None
    protobuf_message: str | None = None
    schema: str | None = None

    @property
    def structured(self) -> bool:
        """Whether the side becomes a struct (not ``binary`` or ``string``)."""
        return self.format not in ("binary", "string")

    @property
    def given_schema(self) -> str | None:
        """The schema given in the options, for its format."""
        return {"avro": self.avro_schema, "protobuf": self.protobuf_descriptor,
                "json-schema": self.schema, "json": self.schema}.get(self.format)

    def option(self, name: str) -> str:
        return f"{self.side}.{name}"

    def subject_for(self, topic: str | None, record_name: str | None) -> str:
        """The subject of this side for ``topic`` and the record's full name, by the strategy
        (or ``<side>.subject``)."""
        if self.subject is not None:
            return self.subject
        if self.strategy == "TopicNameStrategy":
            if topic is None:
                raise OptionError(self.option("subject"), "the subject cannot be named by "
                                  "TopicNameStrategy without one topic: give it")
            return f"{topic}-{self.side}"
        name = record_name or self.record_name
        if name is None:
            raise OptionError(self.option("record.name"),
                              f"{self.strategy} names the subject by the record's full name: "
                              "give it (or the subject, with "
                              f"{self.option('subject')})")
        return name if self.strategy == "RecordNameStrategy" else f"{topic}-{name}"


@dataclass(frozen=True)
class StructuredOptions:
    """The formats of both sides, the registry client's settings (confluent-kafka's names,
    printed redacted) and the mode."""

    key: SideFormat = field(default_factory=lambda: SideFormat("key"))
    value: SideFormat = field(default_factory=lambda: SideFormat("value"))
    registry: Mapping[str, str] = field(default_factory=RedactedSettings)
    mode: str = "FAILFAST"
    auto_register: bool = True
    use_latest_version: bool = False

    @property
    def permissive(self) -> bool:
        return self.mode == "PERMISSIVE"

    @property
    def sides(self) -> tuple[SideFormat, SideFormat]:
        return self.key, self.value

    @property
    def structured(self) -> bool:
        return self.key.structured or self.value.structured


def parse_structured(text: Callable[[str], str | None], registry_given: Mapping[str, str],
                     sink: bool = False) -> StructuredOptions:
    """The structured options among a read's or write's (``text(name)``: the value of the
    option or None; ``registry_given``: the ``schema.registry.*`` options, their prefix
    removed); :class:`OptionError` naming the first bad one."""
    mode = (text("mode") or "FAILFAST").strip().upper()
    if mode not in MODES:
        raise OptionError("mode", f"{text('mode')!r} is none of {', '.join(MODES)}")
    registry = RedactedSettings(registry_given)
    unknown = sorted(set(registry) - set(REGISTRY_SETTINGS))
    if unknown:
        raise OptionError(REGISTRY_PREFIX + unknown[0], "not a setting of the schema registry "
                          "client; known: " + ", ".join(REGISTRY_PREFIX + s
                                                         for s in REGISTRY_SETTINGS))
    sides = {side: _side(side, text, bool(registry.get("url"))) for side in SIDES}
    flags = {}
    for name, default in (("auto.register.schemas", True), ("use.latest.version", False)):
        value = text(name)
        if value is not None and not sink:
            raise OptionError(name, "an option of the sink (df.write), not of reads")
        try:
            flags[name] = default if value is None else boolean(value)
        except ValueError as exc:
            raise OptionError(name, str(exc)) from None
    return StructuredOptions(sides["key"], sides["value"], registry, mode,
                             flags["auto.register.schemas"], flags["use.latest.version"])


def _side(side: str, text: Callable[[str], str | None], has_registry: bool) -> SideFormat:
    def get(name: str) -> str | None:
        value = text(f"{side}.{name}")
        return None if value is None else value

    fmt = (get("format") or "binary").strip().lower()
    if fmt not in FORMATS:
        raise OptionError(f"{side}.format", f"{get('format')!r} is none of {', '.join(FORMATS)}")
    strategy = (get("subject.name.strategy") or "TopicNameStrategy").strip()
    strategy = strategy.rpartition(".")[2]
    if strategy not in STRATEGIES:
        raise OptionError(f"{side}.subject.name.strategy",
                          f"{get('subject.name.strategy')!r} is none of {', '.join(STRATEGIES)}")
    numbers = {}
    for name in ("schema.version", "schema.id"):
        value = get(name)
        if value is not None:
            try:
                numbers[name] = int32(1)(value.strip())
            except ValueError as exc:
                raise OptionError(f"{side}.{name}", str(exc)) from None
    result = SideFormat(side, fmt, get("subject"), strategy, get("record.name"),
                        numbers.get("schema.version"), numbers.get("schema.id"),
                        get("avro.schema"), get("protobuf.descriptor"), get("protobuf.message"),
                        get("schema"))
    given = {name for name in SIDE_OPTIONS if name != "format" and get(name) is not None}
    if not result.structured and given:
        raise OptionError(f"{side}.{sorted(given)[0]}", f"applies only with {side}.format avro, "
                          f"protobuf, json-schema or json, not {fmt}")
    if "schema.version" in numbers and "schema.id" in numbers:
        raise OptionError(f"{side}.schema.id", f"give {side}.schema.version or {side}.schema.id, "
                                               "not both")
    if fmt == "json" and result.schema is None:
        raise OptionError(f"{side}.schema", f"{side}.format json needs the Spark type of the "
                                            "documents as DDL, like 'id bigint, name string'")
    if fmt in REGISTRY_FORMATS and not has_registry and result.given_schema is None:
        needed = {"avro": "avro.schema", "protobuf": "protobuf.descriptor",
                  "json-schema": "schema"}[fmt]
        raise OptionError(f"{side}.format", f"{fmt} needs a schema registry "
                          f"(schema.registry.url) or a schema ({side}.{needed})")
    return result
