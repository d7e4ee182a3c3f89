"""Message format versions: which Kafka release a ``message.format.version`` (or
``inter.broker.protocol.version``) names, and which record format (magic 0, 1 or 2) a log writes
for it, as Kafka's ``MetadataVersion`` decides."""

import functools
import re

from .parsers import InvalidValue

# Kafka's release lines, as MetadataVersion names them (message.format.version takes them, with an
# optional "-IVn" suffix; a longer version such as 2.8.1 stands for its line, 2.8).
_RELEASE_LINES = ("0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0",
                  "1.0", "1.1", *(f"2.{minor}" for minor in range(9)),
                  *(f"3.{minor}" for minor in range(10)))
_FORMAT_VERSION = re.compile(r"([0-9]+(?:\.[0-9]+)*)(-IV[0-9]+)?")


def _release_line(text: str) -> str | None:
    match = _FORMAT_VERSION.fullmatch(text)
    if match is None:
        return None
    parts = match.group(1).split(".")
    line = ".".join(parts[:3] if parts[0] == "0" else parts[:2])
    return line if line in _RELEASE_LINES else None


def message_format_version(text: str) -> str:
    """A ``message.format.version``: a Kafka version from 0.8.0 to 3.9 (``0.10.2``,
    ``2.8-IV1``, ``3.0``), as Kafka's ``MetadataVersionValidator`` accepts it."""
    if _release_line(text) is None:
        raise InvalidValue(f"expected a Kafka version, one of {', '.join(_RELEASE_LINES)}", text)
    return text


def ignores_message_format_version(inter_broker_protocol: str) -> bool:
    """Whether brokers speaking ``inter_broker_protocol`` write message format v2 whatever
    ``message.format.version`` says: from 3.0 on, as Kafka's
    ``LogConfig.shouldIgnoreMessageFormatVersion`` (KIP-724).

    >>> ignores_message_format_version("2.8-IV1"), ignores_message_format_version("3.9")
    (False, True)
    """
    return release_line_index(inter_broker_protocol) >= _RELEASE_LINES.index("3.0")


def release_line_index(version: str) -> int:
    """The place of ``version``'s release line among Kafka's, oldest first."""
    return _RELEASE_LINES.index(_release_line(version))


@functools.lru_cache(maxsize=64)  # asked on every append
def record_version(message_format: str) -> int:
    """The message format (magic) a log writes for ``message.format.version``: 0 before 0.10.0,
    1 before 0.11.0, else 2, as Kafka's ``MetadataVersion.highestSupportedRecordVersion``.

    >>> record_version("0.9.0"), record_version("0.10.2-IV0"), record_version("3.0-IV1")
    (0, 1, 2)
    """
    line = release_line_index(message_format)
    return 0 if line < _RELEASE_LINES.index("0.10.0") else \
        1 if line < _RELEASE_LINES.index("0.11.0") else 2
