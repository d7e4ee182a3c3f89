"""The console producer's line reader: Kafka's LineMessageReader properties, as cases."""

import pytest

from broker_lite.tools.line_reader import LineFormatError, LineReader

KEYS = {"parse.key": "true"}
HEADERS = {"parse.headers": "true"}


@pytest.mark.parametrize("properties, line, expected", [
    ({}, "plain value", (None, b"plain value", [])),
    ({}, "a\tb", (None, b"a\tb", [])),
    ({}, "", (None, b"", [])),
    (KEYS, "k\tv", (b"k", b"v", [])),
    (KEYS, "k\tv\twith tab", (b"k", b"v\twith tab", [])),
    (KEYS, "\tv", (b"", b"v", [])),
    ({**KEYS, "key.separator": "::"}, "k::v::w", (b"k", b"v::w", [])),
    (HEADERS, "h1:v1,h2:v2\tvalue", (None, b"value", [("h1", b"v1"), ("h2", b"v2")])),
    (HEADERS, "h1:\tvalue", (None, b"value", [("h1", b"")])),
    (HEADERS, "h1:a:b\tvalue", (None, b"value", [("h1", b"a:b")])),
    (HEADERS, "h1:v1,\tvalue", (None, b"value", [("h1", b"v1")])),  # trailing separator
    ({**HEADERS, **KEYS}, "h:1\tk\tv", (b"k", b"v", [("h", b"1")])),
    ({**HEADERS, **KEYS, "key.separator": "|", "headers.delimiter": "#",
      "headers.separator": ";", "headers.key.separator": "="},
     "a=1;b=2#key|value", (b"key", b"value", [("a", b"1"), ("b", b"2")])),
    ({**HEADERS, "headers.separator": "[,;]"}, "a:1;b:2,c:3\tv",
     (None, b"v", [("a", b"1"), ("b", b"2"), ("c", b"3")])),
    ({**KEYS, "null.marker": "<null>"}, "<null>\t<null>", (None, None, [])),
    ({**KEYS, **HEADERS, "null.marker": "N"}, "h:N\tk\tv", (b"k", b"v", [("h", None)])),
    ({**KEYS, **HEADERS, "null.marker": "N"}, "N\tk\tv", (b"k", b"v", [])),
    ({**KEYS, "ignore.error": "true"}, "no separator", (None, b"no separator", [])),
    ({**HEADERS, "ignore.error": "true"}, "lonely\tv", (None, b"v", [("lonely", None)])),
    (KEYS, "caf\u00e9\t\u00fcber", ("caf\u00e9".encode(), "\u00fcber".encode(), [])),
])
def test_lines(properties, line, expected):
    assert LineReader(properties).read(line, 1) == expected


def test_bytes_that_are_not_utf8_pass_through():
    line = b"k\t\xff\xfe".decode("utf-8", "surrogateescape")
    assert LineReader(KEYS).read(line, 1) == (b"k", b"\xff\xfe", [])


@pytest.mark.parametrize("properties, line, message", [
    (KEYS, "no separator", "No key separator found on line number 7: 'no separator'"),
    (HEADERS, "no delimiter", "No headers delimiter found on line number 7"),
    (HEADERS, "h1:v1,h2\tv", "No header key separator found in pair 'h2' on line number 7"),
    ({**HEADERS, "null.marker": "N"}, "N:v\tx", "Header keys should not be equal to the null"),
])
def test_unreadable_lines(properties, line, message):
    with pytest.raises(LineFormatError, match=message.replace("(", r"\(")):
        LineReader(properties).read(line, 7)


@pytest.mark.parametrize("properties, message", [
    ({"parse.key": "yes"}, "parse.key must be true or false"),
    ({"headers.delimiter": ","}, "headers.delimiter and headers.separator may not be equal"),
    ({"headers.key.separator": ","}, "headers.separator and headers.key.separator"),
    ({"headers.delimiter": ":"}, "headers.delimiter and headers.key.separator"),
    ({"null.marker": "\t"}, "null.marker and key.separator may not be equal"),
    ({"key.separator": ""}, "key.separator cannot be empty"),
    ({"headers.separator": "("}, "headers.separator is not a valid regular expression"),
])
def test_bad_properties(properties, message):
    with pytest.raises(LineFormatError, match=message):
        LineReader(properties)
