"""The options of the kpy source, with the names and meanings of Spark's Kafka source.

Every option arrives as a string and is checked here, up front, so a mistake fails when the
DataFrame is loaded with a message that names the option and what it accepts:

* where to read: exactly one of ``subscribe`` (comma-separated topics), ``subscribePattern``
  (a Java-style regular expression, matched as a whole) and ``assign``
  (``{"topicA": [0, 1]}``);
* where to start: ``startingTimestamp`` wins over ``startingOffsetsByTimestamp``, which wins
  over ``startingOffsets`` (``earliest``, ``latest``, ``group`` for the committed offsets of
  ``kafka.group.id`` with ``startingOffsets.fallback`` for partitions without one, or JSON
  ``{"topicA": {"0": 23, "1": -2}}`` where -2 is earliest and -1 latest);
* where to stop (batch reads only): ``endingTimestamp``, ``endingOffsetsByTimestamp``,
  ``endingOffsets`` (``latest`` or JSON with -1);
* how much per micro-batch: ``maxOffsetsPerTrigger``, ``minOffsetsPerTrigger`` with
  ``maxTriggerDelay``; how to split: ``minPartitions``, ``maxRecordsPerPartition``;
* ``failOnDataLoss``, ``includeHeaders``, and ``kafka.*`` settings for the client
  (``kafka.bootstrap.servers`` is required, ``kafka.isolation.level``, ``kafka.group.id``, ...;
  any setting of Kafka's Java consumer is accepted, see :func:`unused_kafka_settings`);
* how the connector talks to Kafka: ``kafkaConsumer.pollTimeoutMs`` (how long an executor's read
  waits for records before it fails; the client's ``request.timeout.ms`` by default),
  ``fetchOffset.numRetries`` and ``fetchOffset.retryIntervalMs`` (attempts at the driver's
  offset lookups and the wait between them, 3 and 1000 by default, as in Spark);
* ``groupIdPrefix`` is accepted and has no effect: the source uses no consumer group but the one
  ``kafka.group.id`` names (see :mod:`kspark.source.stream`).

Spark hands options to a Python data source with lower-cased names; messages use the names as
documented. Values parse as Spark's Kafka source parses them (:mod:`broker_lite.config.parsers`), as
given, untrimmed: booleans in any case, ``minPartitions`` as Java's ``Integer.parseInt`` and the
other counts as ``Long.parseLong`` (so ``" 10"`` is no number), ``maxTriggerDelay`` as Spark's
time strings, ``startingOffsetsByTimestampStrategy`` in any case; the ``kafka.*`` settings parse
as Kafka's client parses them (:class:`~broker_lite.client.ClientConfig`).
"""

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from broker_lite.client import EARLIEST, LATEST, TopicPartition
from broker_lite.client.config import CLIENT_SETTINGS
from broker_lite.config.parsers import boolean, choice, duration_ms, int32, int64, list_of
from broker_lite.security.redaction import RedactedSettings
from kspark.options import OptionError, kafka_options, typed_options
from kspark.structured.options import OPTIONS as STRUCTURED_OPTIONS
from kspark.structured.options import (
    REGISTRY_PREFIX,
    SINK_ONLY,
    StructuredOptions,
    parse_structured,
)

# Documented spelling of every source option, keyed by the lower-cased name Spark passes.
SOURCE_OPTIONS = {name.lower(): name for name in (
    "subscribe", "subscribePattern", "assign",
    "startingOffsets", "startingOffsets.fallback", "startingTimestamp",
    "startingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy",
    "endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp",
    "failOnDataLoss", "includeHeaders",
    "maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay",
    "minPartitions", "maxRecordsPerPartition", "groupIdPrefix",
    "kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs",
    *STRUCTURED_OPTIONS,
)}

# Kafka consumer settings that the source manages itself, with the reason given to the user.
UNSUPPORTED_KAFKA_OPTIONS = {
    "auto.offset.reset": "set the source option 'startingOffsets' instead",
    "key.deserializer": "keys are read as bytes, or decoded per the option 'key.format' "
                        "(string, avro, protobuf, json-schema, json)",
    "value.deserializer": "values are read as bytes, or decoded per the option 'value.format' "
                          "(string, avro, protobuf, json-schema, json)",
    "enable.auto.commit": "the source commits the offsets of each finished micro-batch itself",
    "interceptor.classes": "the source reads raw record batches, there is nothing to intercept",
}

# The options with a value of a simple type: name -> parser, as Spark's Kafka source reads them.
TYPED_OPTIONS: dict[str, Callable[[str], Any]] = {
    "failOnDataLoss": boolean,
    "includeHeaders": boolean,
    "maxOffsetsPerTrigger": int64(1),
    "minOffsetsPerTrigger": int64(1),
    "maxTriggerDelay": duration_ms,
    "minPartitions": int32(1),
    "maxRecordsPerPartition": int64(1),
    "startingOffsetsByTimestampStrategy": choice("error", "latest", case_sensitive=False),
    "startingOffsets.fallback": choice("earliest", "latest", "error", case_sensitive=False),
    "kafkaConsumer.pollTimeoutMs": int64(1),
    "fetchOffset.numRetries": int32(1),
    "fetchOffset.retryIntervalMs": int64(0),
}

#: The client settings the source has a use for (the others of Kafka's consumer are accepted and
#: reported unused, see :func:`kspark.options.log_unused_kafka_settings`).
SOURCE_KAFKA_SETTINGS = frozenset(CLIENT_SETTINGS)




@dataclass(frozen=True)
class Subscription:
    """Which topic partitions to read: named topics, a pattern, or fixed partitions."""

    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[TopicPartition, ...] = ()

    def matches(self, topic: str) -> bool:
        if self.assigned:
            return any(tp.topic == topic for tp in self.assigned)
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        return topic in self.topics

    def resolve(self, topics: Mapping[str, int]) -> list[TopicPartition]:
        """The partitions to read, given the cluster's topics and their partition counts.

        Assigned partitions are returned as assigned, existing or not (reading them reports
        what is missing)."""
        if self.assigned:
            return sorted(self.assigned)
        return sorted(TopicPartition(topic, p) for topic, count in topics.items()
                      if self.matches(topic) for p in range(count))


@dataclass(frozen=True)
class OffsetSpec:
    """A starting or ending position: ``kind`` is ``earliest``, ``latest``, ``group``,
    ``offsets`` (per partition, -2/-1 allowed), ``timestamps`` (per partition) or
    ``timestamp`` (one for all partitions)."""

    kind: str
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp: int | None = None
    fallback: str = "latest"  # for ``group``: where partitions without a commit start
    strategy: str = "error"  # for timestamps: when no record is that recent, fail or go latest
    option: str = "startingOffsets"  # the option it came from, for messages


@dataclass(frozen=True)
class SourceOptions:
    client: Mapping[str, str]  # kafka.* settings without the prefix (printed redacted)
    subscription: Subscription
    starting: OffsetSpec | None  # None: the default of the query kind
    ending: OffsetSpec | None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60_000
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    group_id: str | None = None  # kafka.group.id
    poll_timeout_ms: int | None = None  # kafkaConsumer.pollTimeoutMs
    fetch_offset_attempts: int = 3  # fetchOffset.numRetries
    fetch_offset_retry_interval_ms: int = 1000  # fetchOffset.retryIntervalMs
    # key.format, value.format, ...
    structured: StructuredOptions = field(default_factory=StructuredOptions)

    @property
    def named_topics(self) -> list[str]:
        """The topics the read names (none for a pattern), for the subjects they name."""
        if self.subscription.assigned:
            return sorted({tp.topic for tp in self.subscription.assigned})
        return list(self.subscription.topics)

    @property
    def isolation_level(self) -> str:
        return self.client.get("isolation.level", "read_committed").strip()

    def starting_for(self, streaming: bool) -> OffsetSpec:
        """The starting position, checked for the query kind (batch reads cannot start at
        ``latest``, as in Spark)."""
        spec = self.starting or OffsetSpec("latest" if streaming else "earliest")
        if not streaming:
            if spec.kind == "latest" or (spec.kind == "group" and spec.fallback == "latest"):
                raise OptionError(spec.option, "a batch read cannot start at 'latest'")
            if spec.kind == "offsets":
                for tp, offset in spec.offsets.items():
                    if offset == LATEST:
                        raise OptionError(spec.option, f"{tp} cannot start at latest (-1) in "
                                                       "a batch read")
        return spec

    def ending_for(self, streaming: bool) -> OffsetSpec:
        if streaming:
            if self.ending is not None:
                raise OptionError(self.ending.option, "ending positions apply to batch reads "
                                                      "only, not to streaming queries")
            return OffsetSpec("latest", option="endingOffsets")
        return self.ending or OffsetSpec("latest", option="endingOffsets")


def parse_source_options(options: Mapping[str, str]) -> SourceOptions:
    """Check the options of a read; raises :class:`OptionError` naming the first bad option.

    >>> opts = parse_source_options({"kafka.bootstrap.servers": "b:9092", "subscribe": "a, b"})
    >>> opts.subscription.topics, opts.client["bootstrap.servers"]
    (('a', 'b'), 'b:9092')
    >>> parse_source_options({"kafka.bootstrap.servers": "b:9092", "subscribe": "a",
    ...                       "maxOffsetPerTrigger": "10"})
    Traceback (most recent call last):
    ...
    kspark.options.OptionError: option 'maxOffsetPerTrigger': unknown option of the kpy source...
    """
    given = {str(k).lower(): (str(k), str(v)) for k, v in options.items()}
    config = kafka_options(given, UNSUPPORTED_KAFKA_OPTIONS)
    for key, (name, _) in given.items():
        if not key.startswith(("kafka.", REGISTRY_PREFIX)) and key not in SOURCE_OPTIONS:
            hint = (" ('topic' is an option of the sink; to read, use 'subscribe')"
                    if key == "topic" else f" ('{name}' is an option of the sink)"
                    if key in SINK_ONLY else "")
            raise OptionError(name, "unknown option of the kpy source; known options: "
                                    + ", ".join(sorted(SOURCE_OPTIONS.values()))
                                    + ", kafka.*, schema.registry.*" + hint)

    def text(name: str) -> str | None:
        entry = given.get(name.lower())
        return None if entry is None else entry[1]

    typed = typed_options(text, TYPED_OPTIONS)
    subscription = _subscription(text)
    starting = _starting(text, typed)
    ending = _ending(text)
    if starting is not None and starting.kind == "group" and config.group_id is None:
        raise OptionError("startingOffsets", "'group' needs the option 'kafka.group.id'")
    min_rows = typed.get("minOffsetsPerTrigger")
    max_rows = typed.get("maxOffsetsPerTrigger")
    if min_rows is not None and max_rows is not None and min_rows > max_rows:
        raise OptionError("minOffsetsPerTrigger", f"{min_rows} is above maxOffsetsPerTrigger "
                                                  f"({max_rows})")
    structured = parse_structured(text, {key[len(REGISTRY_PREFIX):]: value for key, (_, value)
                                         in given.items() if key.startswith(REGISTRY_PREFIX)})
    return SourceOptions(
        structured=structured,
        client=RedactedSettings(config.given),
        subscription=subscription,
        starting=starting,
        ending=ending,
        fail_on_data_loss=typed.get("failOnDataLoss", True),
        include_headers=typed.get("includeHeaders", False),
        max_offsets_per_trigger=max_rows,
        min_offsets_per_trigger=min_rows,
        max_trigger_delay_ms=typed.get("maxTriggerDelay", 15 * 60_000),
        min_partitions=typed.get("minPartitions"),
        max_records_per_partition=typed.get("maxRecordsPerPartition"),
        group_id=config.group_id,
        poll_timeout_ms=typed.get("kafkaConsumer.pollTimeoutMs"),
        fetch_offset_attempts=typed.get("fetchOffset.numRetries", 3),
        fetch_offset_retry_interval_ms=typed.get("fetchOffset.retryIntervalMs", 1000),
    )


def _subscription(text) -> Subscription:
    chosen = [name for name in ("subscribe", "subscribePattern", "assign")
              if text(name) is not None]
    if len(chosen) != 1:
        raise OptionError(
            "subscribe", "exactly one of 'subscribe', 'subscribePattern' and 'assign' must be "
                         "given" + (f", not {len(chosen)} ({', '.join(chosen)})" if chosen else ""))
    (name,) = chosen
    value = text(name)
    if name == "subscribe":
        topics = list_of()(value)
        if not topics:
            raise OptionError(name, "no topic given; expected topic[,topic...]")
        return Subscription(topics=topics)
    if name == "subscribePattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise OptionError(name, f"{value!r} is not a valid regular expression: {exc}") \
                from None
        if not value.strip():
            raise OptionError(name, "empty pattern")
        return Subscription(pattern=value)
    parsed = _json(name, value)
    if not isinstance(parsed, dict) or not parsed or not all(
            isinstance(ps, list) and all(isinstance(p, int) and p >= 0 for p in ps)
            for ps in parsed.values()):
        raise OptionError(name, f'{value!r} is not like {{"topicA": [0, 1], "topicB": [2]}}')
    return Subscription(assigned=tuple(sorted(
        {TopicPartition(t, p) for t, ps in parsed.items() for p in ps})))


def _starting(text, typed: Mapping[str, Any]) -> OffsetSpec | None:
    strategy = typed.get("startingOffsetsByTimestampStrategy", "error")
    fallback = typed.get("startingOffsets.fallback", "latest")
    if text("startingOffsets.fallback") is not None and \
            (text("startingOffsets") or "").strip().lower() != "group":
        raise OptionError("startingOffsets.fallback", "applies only with startingOffsets=group")
    spec = _position(text, "startingTimestamp", "startingOffsetsByTimestamp", "startingOffsets",
                     allowed=("earliest", "latest", "group"))
    if spec is None:
        return None
    return OffsetSpec(spec.kind, spec.offsets, spec.timestamp, fallback, strategy, spec.option)


def _ending(text) -> OffsetSpec | None:
    spec = _position(text, "endingTimestamp", "endingOffsetsByTimestamp", "endingOffsets",
                     allowed=("latest",))
    if spec is not None and spec.kind == "offsets":
        for tp, offset in spec.offsets.items():
            if offset == EARLIEST:
                raise OptionError(spec.option, f"{tp} cannot end at earliest (-2)")
    return spec


def _position(text, timestamp_name: str, by_timestamp_name: str, offsets_name: str,
              allowed: tuple[str, ...]) -> OffsetSpec | None:
    """One position from the three ways of giving it, the most specific winning as in Spark."""
    timestamp = text(timestamp_name)
    if timestamp is not None:
        try:  # trimmed, as Spark trims it
            value = int64(0)(timestamp.strip())
        except ValueError:
            raise OptionError(timestamp_name, f"{timestamp!r} is not a timestamp in "
                                              "milliseconds since the epoch") from None
        return OffsetSpec("timestamp", timestamp=value, option=timestamp_name)
    by_timestamp = text(by_timestamp_name)
    if by_timestamp is not None:
        offsets = _per_partition(by_timestamp_name, by_timestamp, minimum=0)
        return OffsetSpec("timestamps", offsets, option=by_timestamp_name)
    offsets = text(offsets_name)
    if offsets is None:
        return None
    word = offsets.strip().lower()
    if word in allowed:
        return OffsetSpec(word, option=offsets_name)
    if word.startswith("{"):
        return OffsetSpec("offsets", _per_partition(offsets_name, offsets, minimum=EARLIEST),
                          option=offsets_name)
    raise OptionError(offsets_name, f"{offsets!r} is none of {', '.join(allowed)} or JSON like "
                                    '{"topicA": {"0": 23, "1": -2}}')


def _per_partition(name: str, value: str, minimum: int) -> dict[TopicPartition, int]:
    parsed = _json(name, value)
    shape = '{"topicA": {"0": 23, "1": -1}}'
    if not isinstance(parsed, dict) or not parsed:
        raise OptionError(name, f"{value!r} is not like {shape}")
    result = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise OptionError(name, f"{value!r} is not like {shape}")
        for partition, offset in partitions.items():
            if not str(partition).isdigit() or not isinstance(offset, int) or offset < minimum:
                raise OptionError(name, f"bad entry {topic!r}: {{{partition!r}: {offset!r}}} "
                                        f"in {value!r}")
            result[TopicPartition(topic, int(partition))] = offset
    return result


def _json(name: str, value: str):
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise OptionError(name, f"{value!r} is not valid JSON: {exc}") from None
