"""The typed setting parsers: tables of texts accepted (with their values) and refused (with the
reason), per kind, and Kafka's trimming in Setting.value_of."""

import math

import pytest

from broker_lite.common.vocabulary import INT32_MAX, INT64_MAX
from broker_lite.config.parsers import (
    InvalidValue,
    Setting,
    as_text,
    boolean,
    choice,
    double,
    duration_ms,
    int16,
    int32,
    int64,
    list_of,
    non_empty,
    string,
)

ACCEPTED = [
    # Java's Integer.parseInt / Long.parseLong: a sign, digits, leading zeros
    (int32(), "0", 0),
    (int32(), "-2147483648", -2**31),
    (int32(), "2147483647", INT32_MAX),
    (int32(), "+7", 7),
    (int32(), "007", 7),
    (int32(-1), "-1", -1),
    (int32(0, 65535), "65535", 65535),
    (int64(0), "3000000000", 3_000_000_000),
    (int64(), "9223372036854775807", INT64_MAX),
    (int64(), "-9223372036854775808", -2**63),
    (int16(1), "32767", 32767),
    # Java's Double.parseDouble, decimal forms
    (double(), "0.5", 0.5),
    (double(), ".5", 0.5),
    (double(), "5.", 5.0),
    (double(), "-1e3", -1000.0),
    (double(), "2.5E-1", 0.25),
    (double(), "0.5d", 0.5),
    (double(), "1f", 1.0),
    (double(), "Infinity", math.inf),
    (double(0, 1), "0", 0.0),
    (double(0, 1), "1.0", 1.0),
    # Kafka's BOOLEAN (equalsIgnoreCase)
    (boolean, "true", True),
    (boolean, "FALSE", False),
    (boolean, "True", True),
    (string, " as given ", " as given "),
    (string, "", ""),
    (non_empty, "x", "x"),
    (list_of(), "", ()),
    (list_of(), "a", ("a",)),
    (list_of(), " /a , /b,,/c ,", ("/a", "/b", "/c")),
    (list_of("compact", "delete"), "compact,delete", ("compact", "delete")),
    (choice("CreateTime", "LogAppendTime"), "LogAppendTime", "LogAppendTime"),
    (choice("PLAINTEXT", "SSL", case_sensitive=False), "ssl", "SSL"),
    (choice("zookeeper", "kafka", case_sensitive=False), "KAFKA", "kafka"),
    # Spark's time strings (JavaUtils.timeStringAsMs): trimmed, any case, ms without a unit
    (duration_ms, "0", 0),
    (duration_ms, "500", 500),
    (duration_ms, "500ms", 500),
    (duration_ms, "10s", 10_000),
    (duration_ms, "15m", 900_000),
    (duration_ms, "15min", 900_000),
    (duration_ms, "2h", 7_200_000),
    (duration_ms, "1d", 86_400_000),
    (duration_ms, "1500us", 1),  # truncated, as TimeUnit converts
    (duration_ms, " 10S ", 10_000),
    (duration_ms, "9223372036854775807d", INT64_MAX),  # capped, as TimeUnit converts
]

REFUSED = [
    # above INT's largest: an INT setting refuses what a LONG one takes
    (int32(low=0), "3000000000", "expected an integer in [0, 2147483647]"),
    (int32(), "2147483648", "expected an integer in [-2147483648, 2147483647]"),
    (int32(1), "0", "expected an integer in [1, 2147483647]"),
    (int64(), "9223372036854775808", "expected an integer in ["),
    (int16(1), "32768", "expected an integer in [1, 32767]"),
    # Java's parsers take no blanks, underscores, decimals or units (Python's int() would)
    (int32(), " 5", "expected an integer"),
    (int32(), "5 ", "expected an integer"),
    (int32(), "1_000", "expected an integer"),
    (int32(), "1.0", "expected an integer"),
    (int32(), "1e3", "expected an integer"),
    (int32(), "", "expected an integer"),
    (int32(), "ten", "expected an integer"),
    (double(), "0.5dd", "expected a number"),
    (double(), "1_0", "expected a number"),
    (double(), "inf", "expected a number"),
    (double(), "", "expected a number"),
    (double(0, 1), "1.5", "expected a number in [0, 1]"),
    (double(0, 1), "-0.1", "expected a number in [0, 1]"),
    (boolean, "yes", "expected true or false"),
    (boolean, "1", "expected true or false"),
    (boolean, " true", "expected true or false"),  # untrimmed: Setting.value_of trims for Kafka
    (non_empty, "", "cannot be empty"),
    (list_of("compact", "delete"), "compact,shred", "expected each item to be one of "
                                                    "compact, delete, got 'shred'"),
    (list_of("compact", "delete"), "Compact", "one of compact, delete"),  # ValidList: exact case
    # ValidString: exact case
    (choice("CreateTime", "LogAppendTime"), "createtime", "expected one of CreateTime, "
                                                          "LogAppendTime, got 'createtime'"),
    (choice("all", "-1", "1"), "ALL", "expected one of all, -1, 1"),
    (choice("a", "b", case_sensitive=False), "c", "expected one of a, b (in any case)"),
    (duration_ms, "ten seconds", "expected a duration"),
    (duration_ms, "10 s", "expected a duration"),  # no blank between number and unit, as Spark
    (duration_ms, "10sec", "expected a duration"),
    (duration_ms, "1.5s", "expected a duration"),
    (duration_ms, "-5s", "expected a duration"),
    (duration_ms, "", "expected a duration"),
    (duration_ms, "9223372036854775808", "expected a duration"),
]


@pytest.mark.parametrize("parse, text, value", ACCEPTED,
                         ids=[f"{i}-{case[1]!r}" for i, case in enumerate(ACCEPTED)])
def test_accepted(parse, text, value):
    parsed = parse(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize("parse, text, reason", REFUSED,
                         ids=[f"{i}-{case[1]!r}" for i, case in enumerate(REFUSED)])
def test_refused_with_the_reason(parse, text, reason):
    with pytest.raises(InvalidValue) as raised:
        parse(text)
    assert reason in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_the_reason_and_the_text_refused_are_kept_apart():
    with pytest.raises(InvalidValue) as raised:
        int32(0)("-5")
    assert (raised.value.reason, raised.value.text, str(raised.value)) == (
        "expected an integer in [0, 2147483647]", "-5",
        "expected an integer in [0, 2147483647], got '-5'")
    with pytest.raises(InvalidValue, match=r"^cannot be empty$"):
        non_empty("")


def test_nan_passes_bounds_as_it_passes_kafkas_range():
    assert math.isnan(double(0, 1)("NaN"))


@pytest.mark.parametrize("setting, given, value", [
    # Kafka's ConfigDef.parseType trims every value first
    (Setting("n", int32(0), None), " 42\t", 42),
    (Setting("b", boolean, None), " TRUE ", True),
    (Setting("s", string, None), "  spaced  ", "spaced"),
    (Setting("c", choice("all", "-1", "1"), None), " all ", "all"),
    (Setting("l", list_of("compact", "delete"), None), " compact , delete ", ("compact", "delete")),
    # Python values, as Kafka's parseType takes Integer and Boolean values
    (Setting("n", int64(0), None), 3_000_000_000, 3_000_000_000),
    (Setting("b", boolean, None), False, False),
])
def test_setting_values_parse_as_kafka_parses_them(setting, given, value):
    assert setting.value_of(given) == value


def test_setting_refuses_what_its_parser_refuses():
    with pytest.raises(InvalidValue, match="got ''"):
        Setting("n", int32(), None).value_of("   ")
    with pytest.raises(InvalidValue, match="got 'true'"):
        Setting("n", int32(), None).value_of(True)  # a bool is no INT


@pytest.mark.parametrize("parse, config_type", [
    (int16(), "SHORT"), (int32(1), "INT"), (int64(), "LONG"), (double(), "DOUBLE"),
    (boolean, "BOOLEAN"), (list_of(), "LIST"), (string, "STRING"), (non_empty, "STRING"),
    (choice("a"), "STRING"),
])
def test_setting_types_are_kafkas(parse, config_type):
    assert Setting("x", parse, None).type == config_type


def test_as_text():
    assert [as_text(v) for v in (True, False, 5, "x")] == ["true", "false", "5", "x"]
