r"""Java ``.properties`` files, the syntax of Kafka's ``server.properties`` and of every settings
file its tools read: ``key=value`` / ``key: value`` / ``key value`` lines, ``#`` and ``!``
comments, trailing-backslash continuations and backslash escapes (``java.util.Properties``).

>>> parse_properties("# a comment\nlog.dirs=/tmp/a,\\\n    /tmp/b\nbroker.id: 1")
{'log.dirs': '/tmp/a,/tmp/b', 'broker.id': '1'}
"""

import re
from pathlib import Path

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: ``key=value`` / ``key: value`` / ``key value`` lines,
    ``#`` and ``!`` comments, trailing-backslash continuations and backslash escapes."""
    result: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes continues the line
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        result[key] = value
        logical = ""
    if logical:
        key, value = _split_property(logical)
        result[key] = value
    return result


def _split_property(line: str) -> tuple[str, str]:
    match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:]?\s*(.*)$", line, re.S)
    assert match is not None  # the pattern matches any string
    return _unescape(match.group(1)), _unescape(match.group(2))


def _unescape(text: str) -> str:
    def replace(match: re.Match) -> str:
        char = match.group(1)
        if char.startswith("u"):
            return chr(int(char[1:], 16))
        return _ESCAPES.get(char, char)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, text)


def read_properties(path: str | Path) -> dict[str, str]:
    return parse_properties(Path(path).read_text(encoding="utf-8"))
