"""One record as a consumer sees it, whatever message format (magic) carried it."""

import enum
from dataclasses import dataclass


class TimestampType(enum.IntEnum):
    """Meaning of a record's timestamp; the values are those of Spark's ``timestampType`` column."""

    NO_TIMESTAMP_TYPE = -1  # magic v0 has no timestamps
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


# The timestamp of a record that has none (magic v0), as Kafka reports it.

Header = tuple[str, bytes | None]


@dataclass(frozen=True, slots=True)
class Record:
    """A decoded record; ``key`` and ``value`` are ``None`` when null on the wire."""

    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
