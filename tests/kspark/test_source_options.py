"""The source's options: Spark's Kafka source names and meanings, and every mistake reported
with the option's name."""

import pytest

from broker_lite.client import EARLIEST, LATEST, TopicPartition
from broker_lite.client.java_settings import JAVA_CONSUMER_SETTINGS
from kspark.options import OptionError, unused_kafka_settings
from kspark.source.options import SOURCE_KAFKA_SETTINGS, parse_source_options

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def parse(**options):
    return parse_source_options({**BOOT, **options})


def test_subscribe_pattern_and_assign():
    assert parse(subscribe="a, b,,c").subscription.topics == ("a", "b", "c")
    pattern = parse(subscribePattern="ev.*").subscription
    assert pattern.matches("events") and not pattern.matches("xevents")
    assigned = parse(assign='{"t": [1, 0], "u": [3]}').subscription
    assert assigned.assigned == (TopicPartition("t", 0), TopicPartition("t", 1),
                                 TopicPartition("u", 3))
    assert assigned.resolve({"t": 5}) == list(assigned.assigned)


def test_subscription_resolves_against_the_cluster_topics():
    topics = {"events": 2, "events-eu": 1, "other": 3}
    assert parse(subscribePattern="events.*").subscription.resolve(topics) == [
        TopicPartition("events", 0), TopicPartition("events", 1), TopicPartition("events-eu", 0)]
    assert parse(subscribe="other,missing").subscription.resolve(topics) == [
        TopicPartition("other", p) for p in range(3)]


def test_options_are_case_insensitive_and_kafka_settings_lose_their_prefix():
    options = parse_source_options({"KAFKA.BOOTSTRAP.SERVERS": "h:1", "Subscribe": "t",
                                    "kafka.client.id": "me", "MAXOFFSETSPERTRIGGER": "10"})
    assert options.client == {"bootstrap.servers": "h:1", "client.id": "me"}
    assert options.max_offsets_per_trigger == 10


def test_positions():
    spec = parse(subscribe="t", startingOffsets='{"t": {"0": 5, "1": -2}}').starting
    assert spec.kind == "offsets"
    assert spec.offsets == {TopicPartition("t", 0): 5, TopicPartition("t", 1): EARLIEST}
    assert parse(subscribe="t", startingOffsets=" Earliest ").starting.kind == "earliest"
    # The most specific way of giving a start wins, as in Spark.
    chosen = parse(subscribe="t", startingOffsets="earliest", startingTimestamp="1000",
                   startingOffsetsByTimestamp='{"t": {"0": 5}}').starting
    assert (chosen.kind, chosen.timestamp) == ("timestamp", 1000)
    by_ts = parse(subscribe="t", startingOffsetsByTimestamp='{"t": {"0": 5}}',
                  startingOffsetsByTimestampStrategy="latest").starting
    assert (by_ts.kind, by_ts.strategy) == ("timestamps", "latest")
    group = parse(subscribe="t", startingOffsets="group",
                  **{"kafka.group.id": "g", "startingOffsets.fallback": "earliest"})
    assert (group.starting.kind, group.starting.fallback, group.group_id) == (
        "group", "earliest", "g")
    ending = parse(subscribe="t", endingOffsets='{"t": {"0": -1}}').ending
    assert ending.offsets == {TopicPartition("t", 0): LATEST}


def test_defaults_depend_on_the_query_kind():
    options = parse(subscribe="t")
    assert options.starting_for(streaming=True).kind == "latest"
    assert options.starting_for(streaming=False).kind == "earliest"
    assert options.ending_for(streaming=False).kind == "latest"
    assert options.fail_on_data_loss and not options.include_headers
    assert options.isolation_level == "read_committed"
    assert options.max_trigger_delay_ms == 15 * 60_000


def test_durations():
    assert [parse(subscribe="t", maxTriggerDelay=v).max_trigger_delay_ms
            for v in ("500", "500ms", "10s", "15m", "2h", "1d")] == [
        500, 500, 10_000, 900_000, 7_200_000, 86_400_000]
    with pytest.raises(OptionError, match="'maxTriggerDelay'"):
        parse(subscribe="t", maxTriggerDelay="ten seconds")


def test_values_parse_as_spark_parses_them():
    # Booleans in any case (Scala's toBoolean); counts as Java's parseInt / parseLong read them:
    # untrimmed, and minPartitions within an int, the others within a long.
    options = parse(subscribe="t", failOnDataLoss="FALSE", includeHeaders="True",
                    maxOffsetsPerTrigger="3000000000", startingOffsetsByTimestampStrategy="Latest",
                    startingOffsetsByTimestamp='{"t": {"0": 5}}')
    assert (options.fail_on_data_loss, options.include_headers, options.max_offsets_per_trigger,
            options.starting.strategy) == (False, True, 3_000_000_000, "latest")
    for option, value in (("minPartitions", "3000000000"), ("maxOffsetsPerTrigger", " 10"),
                          ("failOnDataLoss", " true"), ("fetchOffset.numRetries", "three")):
        with pytest.raises(OptionError) as raised:
            parse(subscribe="t", **{option: value})
        assert raised.value.option == option


def test_kafka_settings_parse_as_kafka_parses_them():
    # trimmed and case-sensitive (Kafka's ValidString), where the source used to compare exactly
    assert parse(subscribe="t", **{"kafka.isolation.level": " read_uncommitted"}
                 ).isolation_level == "read_uncommitted"
    with pytest.raises(OptionError, match=r"'kafka\.isolation\.level'.*READ_COMMITTED"):
        parse(subscribe="t", **{"kafka.isolation.level": "READ_COMMITTED"})


MISTAKES = [
    ({}, "kafka.bootstrap.servers", {"subscribe": "t"}),
    (BOOT, "subscribe", {}),
    (BOOT, "subscribe", {"subscribe": "t", "assign": '{"t": [0]}'}),
    (BOOT, "subscribe", {"subscribe": " , "}),
    (BOOT, "subscribePattern", {"subscribePattern": "(unclosed"}),
    (BOOT, "assign", {"assign": "t:0"}),
    (BOOT, "assign", {"assign": '{"t": [-1]}'}),
    (BOOT, "startingOffsets", {"subscribe": "t", "startingOffsets": "newest"}),
    (BOOT, "startingOffsets", {"subscribe": "t", "startingOffsets": '{"t": {"0": -3}}'}),
    (BOOT, "startingOffsets", {"subscribe": "t", "startingOffsets": '{"t": [0]}'}),
    (BOOT, "startingOffsets", {"subscribe": "t", "startingOffsets": "group"}),
    (BOOT, "startingOffsets.fallback", {"subscribe": "t", "startingOffsets.fallback": "earliest"}),
    (BOOT, "startingTimestamp", {"subscribe": "t", "startingTimestamp": "yesterday"}),
    (BOOT, "startingOffsetsByTimestampStrategy",
     {"subscribe": "t", "startingOffsetsByTimestampStrategy": "closest"}),
    (BOOT, "endingOffsets", {"subscribe": "t", "endingOffsets": "earliest"}),
    (BOOT, "endingOffsets", {"subscribe": "t", "endingOffsets": '{"t": {"0": -2}}'}),
    (BOOT, "failOnDataLoss", {"subscribe": "t", "failOnDataLoss": "yes"}),
    (BOOT, "includeHeaders", {"subscribe": "t", "includeHeaders": "1"}),
    (BOOT, "maxOffsetsPerTrigger", {"subscribe": "t", "maxOffsetsPerTrigger": "0"}),
    (BOOT, "minOffsetsPerTrigger", {"subscribe": "t", "minOffsetsPerTrigger": "10",
                                    "maxOffsetsPerTrigger": "5"}),
    (BOOT, "maxTriggerDelay", {"subscribe": "t", "maxTriggerDelay": "soon"}),
    (BOOT, "minPartitions", {"subscribe": "t", "minPartitions": "-4"}),
    (BOOT, "maxRecordsPerPartition", {"subscribe": "t", "maxRecordsPerPartition": "many"}),
    (BOOT, "kafka.auto.offset.reset", {"subscribe": "t", "kafka.auto.offset.reset": "earliest"}),
    (BOOT, "kafka.key.deserializer", {"subscribe": "t", "kafka.key.deserializer": "x"}),
    (BOOT, "kafka.enable.auto.commit", {"subscribe": "t", "kafka.enable.auto.commit": "true"}),
    (BOOT, "kafka.isolation.level", {"subscribe": "t", "kafka.isolation.level": "dirty"}),
    (BOOT, "maxOffsetPerTrigger", {"subscribe": "t", "maxOffsetPerTrigger": "10"}),
    (BOOT, "kafka.fetch.max.wait", {"subscribe": "t", "kafka.fetch.max.wait": "10"}),
    (BOOT, "kafka.request.timeout.ms", {"subscribe": "t", "kafka.request.timeout.ms": "soon"}),
    (BOOT, "topic", {"topic": "t"}),
]


@pytest.mark.parametrize("base, option, options", MISTAKES,
                         ids=[f"{m[1]}-{i}" for i, m in enumerate(MISTAKES)])
def test_every_mistake_names_its_option(base, option, options):
    with pytest.raises(OptionError) as raised:
        parse_source_options({**base, **options})
    assert raised.value.option == option
    assert f"option '{option}'" in str(raised.value)


def test_batch_and_streaming_rules():
    with pytest.raises(OptionError, match=r"'startingOffsets'.*batch"):
        parse(subscribe="t", startingOffsets="latest").starting_for(streaming=False)
    with pytest.raises(OptionError, match=r"'startingOffsets'.*t-0 cannot start at latest"):
        parse(subscribe="t", startingOffsets='{"t": {"0": -1}}').starting_for(streaming=False)
    with pytest.raises(OptionError, match=r"'endingOffsets'.*streaming"):
        parse(subscribe="t", endingOffsets="latest").ending_for(streaming=True)
    with pytest.raises(OptionError, match=r"'endingTimestamp'.*streaming"):
        parse(subscribe="t", endingTimestamp="5").ending_for(streaming=True)


def test_every_setting_of_kafkas_java_consumer_is_accepted():
    # A job moved from format("kafka") keeps its kafka.* settings (Kafka 3.9's ConsumerConfig);
    # those the source manages itself are refused as Spark refuses them (security.protocol is
    # left out only because the value given here is not a protocol).
    refused = {"auto.offset.reset", "key.deserializer", "value.deserializer",
               "enable.auto.commit", "interceptor.classes", "security.protocol"}
    values = {"isolation.level": "read_committed", "check.crcs": "true",
              "bootstrap.servers": "h:1", "group.id": "g"}
    for name in sorted(JAVA_CONSUMER_SETTINGS - refused):
        options = parse(subscribe="t", **{f"kafka.{name}": values.get(name, "1000")})
        assert options.client[name] == values.get(name, "1000")


@pytest.mark.parametrize("name, message, others", [
    ("kafka.max.poll.record", "unknown Kafka client setting (did you mean "
                              "kafka.max.poll.records?)", {}),
    ("kafka.ssl.truststore.location", "JKS stores (Kafka's default type) are Java-only",
     {"kafka.security.protocol": "SSL"}),
    ("kafka.sasl.mechanism", "X is not supported by this client",
     {"kafka.security.protocol": "SASL_PLAINTEXT"}),
])
def test_unknown_names_and_unusable_security_settings_are_refused_by_name(name, message, others):
    with pytest.raises(OptionError) as raised:
        parse(subscribe="t", **{**others, name: "x"})
    assert message in str(raised.value)
    assert raised.value.option == (name if "truststore" not in name
                                   else "kafka.ssl.truststore.type")


def test_security_protocols():
    assert parse(subscribe="t", **{"kafka.security.protocol": "PLAINTEXT"}).client
    with pytest.raises(OptionError, match=r"'kafka\.security\.protocol'"):
        parse(subscribe="t", **{"kafka.security.protocol": "TLS"})
    with pytest.raises(OptionError, match=r"'kafka\.sasl\.mechanism': GSSAPI is not supported"):
        parse(subscribe="t", **{"kafka.security.protocol": "SASL_SSL"})


def test_settings_without_effect_are_told_apart():
    options = parse(subscribe="t", **{"kafka.max.poll.records": "10", "kafka.linger.ms": "5",
                                      "kafka.request.timeout.ms": "100"})
    assert unused_kafka_settings(options.client, SOURCE_KAFKA_SETTINGS) == [
        "kafka.linger.ms", "kafka.max.poll.records"]


def test_connection_options_of_sparks_kafka_source():
    defaults = parse(subscribe="t")
    assert (defaults.poll_timeout_ms, defaults.fetch_offset_attempts,
            defaults.fetch_offset_retry_interval_ms) == (None, 3, 1000)
    options = parse(subscribe="t", **{"kafkaConsumer.pollTimeoutMs": "5000",
                                      "fetchOffset.numRetries": "5",
                                      "fetchOffset.retryIntervalMs": "10"})
    assert (options.poll_timeout_ms, options.fetch_offset_attempts,
            options.fetch_offset_retry_interval_ms) == (5000, 5, 10)
    for option in ("kafkaConsumer.pollTimeoutMs", "fetchOffset.numRetries"):
        with pytest.raises(OptionError) as raised:
            parse(subscribe="t", **{option: "0"})
        assert raised.value.option == option
