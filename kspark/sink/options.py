"""The options and input columns of the kpy sink, as Spark's Kafka sink has them.

Columns: ``value`` (required, string or binary), ``key`` (string or binary), ``headers``
(``array<struct<key: string, value: binary>>``), ``topic`` (string; the ``topic`` option, when
given, wins over it) and ``partition`` (int; rows without one are placed by Kafka's default
partitioner). Other columns are ignored. As in Spark's Kafka sink, a null ``value`` is written
as a record with a null value (a tombstone, which compaction uses to delete the key), a null
``key`` as a record without a key, and a row with a null ``topic`` and no ``topic`` option
fails the write. Options: ``topic``, ``kafka.*`` client and producer
settings (``kafka.bootstrap.servers`` required; ``kafka.compression.type``, ``kafka.acks``,
``kafka.batch.size``, ``kafka.linger.ms``, ...), and ``kpy.sink.guarantee``:
``exactly_once`` (the default: every write in a Kafka transaction, committed by the driver)
or ``at_least_once`` (for brokers without transactions: idempotent producing, as Spark's own
Kafka sink).

Mistakes in options and column types fail before anything is written, naming the option or
column. Bad rows (a header with a null key, a record over ``max.request.size`` or the topic's
``max.message.bytes``, a partition or, on brokers that do not create topics on first use, a
topic that does not exist) fail the write in its tasks, with an error naming the cause; of an
exactly-once write that fails, nothing becomes visible.
"""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    StringType,
    StructType,
)

from broker_lite.client.config import CLIENT_SETTINGS, PRODUCER_SETTINGS
from broker_lite.config.parsers import choice
from broker_lite.security.redaction import RedactedSettings
from kspark.options import OptionError, kafka_options, typed_options
from kspark.structured.options import OPTIONS as STRUCTURED_OPTIONS
from kspark.structured.options import (
    REGISTRY_PREFIX,
    SINK_ONLY,
    StructuredOptions,
    parse_structured,
)

if TYPE_CHECKING:
    from kspark.structured.writing import WritePlan

GUARANTEES = ("exactly_once", "at_least_once")
# The sink's options with a value of a simple type: name -> parser (in any case, as Spark's
# own choices).
TYPED_OPTIONS = {"kpy.sink.guarantee": choice(*GUARANTEES, case_sensitive=False)}
# Options Spark itself passes to streaming sinks along with the user's.
SPARK_OPTIONS = {"checkpointlocation", "path", "queryname"}
SINK_OPTIONS = {name.lower(): name for name in ("topic", "kpy.sink.guarantee",
                                                *STRUCTURED_OPTIONS, *SINK_ONLY)}

# A transaction of a micro-batch stays open from its tasks' writes to the driver's commit; a
# driver that dies in between must be back before the broker aborts it. Kafka's brokers accept
# up to transaction.max.timeout.ms, 15 minutes by default.
DEFAULT_TRANSACTION_TIMEOUT_MS = "900000"

#: The client and producer settings the sink has a use for (the others of Kafka's producer are
#: accepted and reported unused, see :func:`kspark.options.log_unused_kafka_settings`).
SINK_KAFKA_SETTINGS = frozenset(CLIENT_SETTINGS) | frozenset(PRODUCER_SETTINGS)

# Producer settings the sink manages itself, with the reason given to the user.
UNSUPPORTED_KAFKA_OPTIONS = {
    "key.serializer": "keys are written as the bytes of the 'key' column (strings as UTF-8), "
                      "or a struct 'key' encoded per the option 'key.format'",
    "value.serializer": "values are written as the bytes of the 'value' column (strings as "
                        "UTF-8), or a struct 'value' encoded per the option 'value.format'",
    "transactional.id": "the sink derives one per write task; see kpy.sink.guarantee",
    "interceptor.classes": "the sink writes record batches directly",
}

HEADERS_TYPE = ArrayType(StructType().add("key", StringType()).add("value", BinaryType()))


class ColumnError(ValueError):
    """An input column of the sink is missing or has a type the sink cannot write."""

    def __init__(self, column: str, message: str):
        super().__init__(f"column '{column}': {message}")
        self.column = column


@dataclass(frozen=True)
class SinkOptions:
    client: Mapping[str, str]  # kafka.* settings without the prefix (printed redacted)
    topic: str | None
    guarantee: str
    structured_options: StructuredOptions = dataclasses.field(default_factory=StructuredOptions)
    structured: "WritePlan | None" = None  # the writers' schemas, settled on the driver

    @property
    def exactly_once(self) -> bool:
        return self.guarantee == "exactly_once"


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Check the options of a write; raises :class:`OptionError` naming the first bad one.

    >>> parse_sink_options({"kafka.bootstrap.servers": "b:9092", "topic": "out"}).guarantee
    'exactly_once'
    """
    given = {str(k).lower(): (str(k), str(v)) for k, v in options.items()}
    client = RedactedSettings(kafka_options(given, UNSUPPORTED_KAFKA_OPTIONS).given)
    for key, (name, _) in given.items():
        if not key.startswith(("kafka.", REGISTRY_PREFIX)) and key not in SINK_OPTIONS and \
                key not in SPARK_OPTIONS:
            raise OptionError(name, "unknown option of the kpy sink; known options: topic, "
                                    "kpy.sink.guarantee, key.format, value.format (and their "
                                    "key.* and value.* options), auto.register.schemas, "
                                    "use.latest.version, mode, schema.registry.*, kafka.*")
    typed = typed_options(lambda name: given.get(name.lower(), (None, None))[1], TYPED_OPTIONS)
    guarantee = typed.get("kpy.sink.guarantee", "exactly_once")
    if guarantee == "exactly_once":
        client.setdefault("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS)
    topic = given.get("topic", (None, None))[1]
    if topic is not None and not topic.strip():
        raise OptionError("topic", "empty topic name")
    structured = parse_structured(
        lambda name: given.get(name.lower(), (None, None))[1],
        {key[len(REGISTRY_PREFIX):]: value for key, (_, value) in given.items()
         if key.startswith(REGISTRY_PREFIX)}, sink=True)
    return SinkOptions(client=client, topic=topic.strip() if topic else None,
                       guarantee=guarantee, structured_options=structured)


def check_columns(schema: StructType, options: SinkOptions) -> None:
    """Refuse input the sink cannot write, before any task runs.

    >>> from pyspark.sql.types import StructType, LongType
    >>> check_columns(StructType().add("value", LongType()),
    ...               parse_sink_options({"kafka.bootstrap.servers": "b:1", "topic": "t"}))
    Traceback (most recent call last):
    ...
    kspark.sink.options.ColumnError: column 'value': must be string or binary, not bigint
    """
    fields = {f.name.lower(): f for f in schema.fields}

    def check(name: str, allowed: tuple, described: str) -> None:
        field = fields.get(name)
        if field is not None and not isinstance(field.dataType, allowed):
            raise ColumnError(name, f"must be {described}, not {field.dataType.simpleString()}")

    if "value" not in fields:
        raise ColumnError("value", "required: the record values (string or binary); columns "
                                   "given: " + ", ".join(f.name for f in schema.fields))
    structured = options.structured_options
    if not structured.value.structured:
        check("value", (StringType, BinaryType), "string or binary")
    if not structured.key.structured:
        check("key", (StringType, BinaryType), "string or binary")
    check("topic", (StringType,), "string")
    check("partition", (IntegerType,), "int")
    headers = fields.get("headers")
    if headers is not None and headers.dataType.simpleString() != HEADERS_TYPE.simpleString():
        raise ColumnError("headers", "must be array<struct<key: string, value: binary>>, not "
                                     + headers.dataType.simpleString())
    if options.topic is None and "topic" not in fields:
        raise ColumnError("topic", "no 'topic' column and no 'topic' option: say where to write")
