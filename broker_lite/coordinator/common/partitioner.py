"""Which partition of ``__consumer_offsets`` holds a group: Kafka's ``partitionFor``.

Kafka computes ``Utils.abs(groupId.hashCode) % partitions`` in Java, so the same group lands on
the same partition whichever broker (Kafka or this one) wrote the topic:

- ``String.hashCode`` is ``h = 31 * h + c`` over the string's UTF-16 code units (a character
  outside the Basic Multilingual Plane counts as its two surrogates), in 32-bit two's-complement
  arithmetic;
- ``Utils.abs`` is ``Math.abs`` except for ``Integer.MIN_VALUE`` (whose ``Math.abs`` is itself,
  negative), which it maps to 0.

>>> java_string_hash("my-group"), partition_for("my-group", 50)
(-1906497762, 12)
>>> partition_for("polygenelubricants", 50)  # hashCode is Integer.MIN_VALUE
0
"""

_INT32 = 1 << 32


def java_string_hash(text: str) -> int:
    """``text.hashCode()`` as Java computes it, a signed 32-bit int."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) % _INT32
    return h - _INT32 if h >= 1 << 31 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs`` of a 32-bit int: never negative, ``Integer.MIN_VALUE`` becomes 0."""
    return 0 if n == -(1 << 31) else abs(n)


def partition_for(key: str, partitions: int) -> int:
    """The partition of an internal topic with ``partitions`` partitions that holds ``key`` (a
    group id, or later a transactional id)."""
    if partitions <= 0:
        raise ValueError(f"an internal topic has at least one partition, not {partitions}")
    return kafka_abs(java_string_hash(key)) % partitions
