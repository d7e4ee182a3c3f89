"""Lines of text to records, as Kafka's console producer reads them (its ``LineMessageReader``).

A line is ``[headers<headers.delimiter>][key<key.separator>]value``; the parts in brackets are
read only when ``parse.headers`` / ``parse.key`` are ``true``. Headers are
``key<headers.key.separator>value`` pairs joined by ``headers.separator`` (a regular expression,
as Kafka splits with one). The reader properties, with Kafka's names and defaults::

    parse.key              false
    key.separator          \\t     (a tab)
    parse.headers          false
    headers.delimiter      \\t     between the headers and the rest of the line
    headers.separator      ,      between header pairs
    headers.key.separator  :      between a header's key and its value
    ignore.error           false  a missing separator gives a null key (or a header without value)
                                  instead of an error
    null.marker            (none) a key, value or header value equal to it is null

Text is handled as UTF-8; bytes that are not valid UTF-8 pass through unchanged.

>>> reader = LineReader({"parse.key": "true", "key.separator": ":",
...                      "parse.headers": "true"})
>>> reader.read("trace:42,tag:x\\tk1:hello", 1)
(b'k1', b'hello', [('trace', b'42'), ('tag', b'x')])
"""

import re
from collections.abc import Mapping

Header = tuple[str, bytes | None]

_DEFAULTS = {
    "key.separator": "\t",
    "headers.delimiter": "\t",
    "headers.separator": ",",
    "headers.key.separator": ":",
}


class LineFormatError(ValueError):
    """A line, or the reader's properties, that cannot be read as asked; says which and why."""


def _flag(properties: Mapping[str, str], name: str) -> bool:
    value = properties.get(name, "false").strip().lower()
    if value not in ("true", "false"):
        raise LineFormatError(f"property {name} must be true or false, got {value!r}")
    return value == "true"


class LineReader:
    """Turns lines into ``(key, value, headers)`` under the reader properties above."""

    def __init__(self, properties: Mapping[str, str]):
        self.parse_key = _flag(properties, "parse.key")
        self.parse_headers = _flag(properties, "parse.headers")
        self.ignore_error = _flag(properties, "ignore.error")
        settings = {name: properties.get(name, default) for name, default in _DEFAULTS.items()}
        for name, value in settings.items():
            if not value:
                raise LineFormatError(f"property {name} cannot be empty")
        self.key_separator = settings["key.separator"]
        self.headers_delimiter = settings["headers.delimiter"]
        self.headers_separator = settings["headers.separator"]
        self.headers_key_separator = settings["headers.key.separator"]
        self.null_marker = properties.get("null.marker")
        try:
            self._split_headers = re.compile(self.headers_separator).split
        except re.error as exc:
            raise LineFormatError(f"property headers.separator is not a valid regular "
                                  f"expression: {exc}") from None
        self._check_distinct()

    def _check_distinct(self) -> None:
        """Separators that would make a line ambiguous, refused as Kafka refuses them."""
        pairs = [("headers.delimiter", self.headers_delimiter, "headers.separator",
                  self.headers_separator),
                 ("headers.delimiter", self.headers_delimiter, "headers.key.separator",
                  self.headers_key_separator),
                 ("headers.separator", self.headers_separator, "headers.key.separator",
                  self.headers_key_separator)]
        if self.null_marker is not None:
            pairs += [("null.marker", self.null_marker, name, value) for name, value in (
                ("key.separator", self.key_separator),
                ("headers.delimiter", self.headers_delimiter),
                ("headers.separator", self.headers_separator),
                ("headers.key.separator", self.headers_key_separator))]
        for name, value, other, other_value in pairs:
            if value == other_value:
                raise LineFormatError(f"properties {name} and {other} may not be equal")

    def read(self, line: str, line_number: int
             ) -> tuple[bytes | None, bytes | None, list[Header]]:
        """``(key, value, headers)`` of one line (without its line terminator)."""
        headers_text = self._part(self.parse_headers, line, 0, self.headers_delimiter,
                                  "headers delimiter", line_number)
        start = 0 if headers_text is None else len(headers_text) + len(self.headers_delimiter)
        key_text = self._part(self.parse_key, line, start, self.key_separator, "key separator",
                              line_number)
        if key_text is not None:
            start += len(key_text) + len(self.key_separator)
        headers = [] if headers_text is None or headers_text == self.null_marker else \
            self._headers(headers_text, line_number)
        return self._bytes(key_text), self._bytes(line[start:]), headers

    def _part(self, enabled: bool, line: str, start: int, separator: str, what: str,
              line_number: int) -> str | None:
        if not enabled:
            return None
        end = line.find(separator, start)
        if end < 0:
            if self.ignore_error:
                return None
            raise LineFormatError(f"No {what} found on line number {line_number}: '{line}'")
        return line[start:end]

    def _headers(self, text: str, line_number: int) -> list[Header]:
        pairs = self._split_headers(text)
        while len(pairs) > 1 and not pairs[-1]:  # Java's split drops trailing empty strings
            pairs.pop()
        headers = []
        for pair in pairs:
            key, separator, value = pair.partition(self.headers_key_separator)
            if not separator:
                if self.ignore_error:
                    headers.append((pair, None))
                    continue
                raise LineFormatError(f"No header key separator found in pair '{pair}' on "
                                      f"line number {line_number}")
            if key == self.null_marker:
                raise LineFormatError(f"Header keys should not be equal to the null marker "
                                      f"'{self.null_marker}' as they can't be null")
            headers.append((key, self._bytes(value)))
        return headers

    def _bytes(self, text: str | None) -> bytes | None:
        if text is None or text == self.null_marker:
            return None
        return text.encode("utf-8", "surrogateescape")
