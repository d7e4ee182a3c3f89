"""Typed setting parsers: a setting's text -> its value, by the rules of Kafka's ``ConfigDef`` (and
of Spark, for Spark's options). Every configuration here parses with them: the broker and topic
configs (:mod:`broker_lite.config.broker`), the client's (:mod:`broker_lite.client.config`), the
ZooKeeper-based consumer's, and kspark's source and sink options.

A parser takes the text exactly as given and returns the value, or raises :class:`InvalidValue`
(a ``ValueError``) with the reason; the configuration that called it raises its own error,
naming the setting.

=================================  ===============================================================
parser                             accepts
=================================  ===============================================================
``int16``, ``int32``, ``int64``    Kafka's SHORT, INT and LONG, as Java's ``Short.parseShort``,
                                   ``Integer.parseInt``, ``Long.parseLong`` read them: an optional
                                   sign and digits, within the type's range and the bounds given
``double``                         Kafka's DOUBLE, as Java's ``Double.parseDouble`` reads decimal
                                   text (``0.5``, ``.5``, ``5e-1``, ``0.5d``, ``NaN``, ``Infinity``)
``boolean``                        ``true`` or ``false`` in any case (Kafka's BOOLEAN; Spark's
                                   options alike)
``string``                         any text (Kafka's STRING)
``non_empty``                      any text but the empty one (Kafka's ``NonEmptyString``)
``list_of(*allowed)``              comma-separated items, blanks around them and empty items left
                                   out (Kafka's ``Csv.parseCsvList``, Spark's ``subscribe``); each
                                   among ``allowed`` when given (Kafka's ``ValidList``, whose items
                                   are case-sensitive)
``choice(*choices)``               one of ``choices``: see the case rules below
``duration_ms``                    Spark's time strings, in milliseconds: ``500`` (no unit: ms),
                                   ``250us``, ``500ms``, ``10s``, ``15m`` or ``15min``, ``1h``,
                                   ``2d``; trimmed and in any case, as Spark's
                                   ``JavaUtils.timeStringAsMs`` reads them
=================================  ===============================================================

Whitespace is the caller's rule, since the two systems differ: Kafka's ``ConfigDef.parseType``
trims every value before parsing it (:meth:`Setting.value_of` does the same), while Spark parses
its Kafka source options as given (Scala's ``toInt``, ``toLong``, ``toBoolean``), so ``" 10"``
is no number there.

Case rules for choices. Kafka's ``ValidString`` (and ``ValidList``) is case-sensitive, and most
settings use it: the producer's ``acks`` and ``compression.type``, the consumer's
``isolation.level`` and ``auto.offset.reset``, the broker's and topics' ``compression.type``,
``log.message.timestamp.type`` / ``message.timestamp.type`` and ``log.cleanup.policy`` /
``cleanup.policy``. ``CaseInsensitiveValidString`` serves a few: ``security.protocol``,
``group.protocol``, ``metadata.recovery.strategy``. Kafka 0.8's ZooKeeper-based consumer
lower-cases ``offsets.storage`` before checking it and matches ``auto.offset.reset`` exactly.
Spark's Kafka source upper-cases ``startingOffsetsByTimestampStrategy``, so its choices ignore
case. Booleans ignore case everywhere.

>>> int32(low=0)("3000000000")
Traceback (most recent call last):
...
broker_lite.config.parsers.InvalidValue: expected an integer in [0, 2147483647], got '3000000000'
>>> int64(low=0)("3000000000"), boolean("TRUE"), list_of("compact", "delete")("compact, delete")
(3000000000, True, ('compact', 'delete'))
>>> Setting("acks", choice("all", "-1", "1"), "all").value_of(" all ")
'all'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from broker_lite.common.vocabulary import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN

INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1

T = TypeVar("T")
Parser = Callable[[str], T]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                      r"[dDfF]?)")
_DURATION = re.compile(r"([0-9]+)([a-z]+)?")
_MICROSECONDS = {"us": 1, "ms": 1_000, "s": 1_000_000, "m": 60_000_000, "min": 60_000_000,
                 "h": 3_600_000_000, "d": 86_400_000_000}


class InvalidValue(ValueError):
    """A setting's text that its parser refuses: ``reason`` says what was expected, ``text`` is
    the text refused (None where showing it adds nothing)."""

    def __init__(self, reason: str, text: str | None):
        super().__init__(reason if text is None else f"{reason}, got {text!r}")
        self.reason = reason
        self.text = text


class ConfigError(ValueError):
    """A configuration value that is malformed or out of range; the message names the property."""


def as_text(value: Any) -> str:
    """A setting given as a Python value (an int, a bool) as the text Kafka would print for it:
    ``True`` -> ``"true"``, ``5`` -> ``"5"``; text stays as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# DescribeConfigs (broker_lite.server.handlers.configs) tells a broker config's type by the
# qualified name of its parser: the numeric, boolean and list parsers are built by functions named
# _int, _double, _bool and _list for it. Setting.type states the type without that convention.


def _int(config_type: str, type_low: int, type_high: int, low: int | None,
         high: int | None) -> Parser[int]:
    low = type_low if low is None else low
    high = type_high if high is None else high
    assert type_low <= low <= high <= type_high, (low, high)

    def parse(text: str) -> int:
        if not _INTEGER.fullmatch(text):
            raise InvalidValue("expected an integer", text)
        value = int(text)
        if not low <= value <= high:
            raise InvalidValue(f"expected an integer in [{low}, {high}]", text)
        return value

    parse.config_type = config_type
    return parse


def int16(low: int | None = None, high: int | None = None) -> Parser[int]:
    """Kafka's SHORT: a 16-bit integer in [``low``, ``high``] (by default the type's range)."""
    return _int("SHORT", INT16_MIN, INT16_MAX, low, high)


def int32(low: int | None = None, high: int | None = None) -> Parser[int]:
    """Kafka's INT: a 32-bit integer in [``low``, ``high``] (by default the type's range).

    >>> int32(1)("42"), int32(-1)("-1"), int32()("+7")
    (42, -1, 7)
    """
    return _int("INT", INT32_MIN, INT32_MAX, low, high)


def int64(low: int | None = None, high: int | None = None) -> Parser[int]:
    """Kafka's LONG: a 64-bit integer in [``low``, ``high``] (by default the type's range)."""
    return _int("LONG", INT64_MIN, INT64_MAX, low, high)


def _double(low: float | None, high: float | None) -> Parser[float]:
    bounds = f" in [{low:g}, {high:g}]" if low is not None and high is not None else \
        f" >= {low:g}" if low is not None else f" <= {high:g}" if high is not None else ""

    def parse(text: str) -> float:
        if not _DECIMAL.fullmatch(text):
            raise InvalidValue("expected a number", text)
        value = float(text.rstrip("dDfF"))  # Java's type suffix
        # NaN passes the bounds, as it passes Kafka's Range (every comparison with NaN is false)
        if (low is not None and value < low) or (high is not None and value > high):
            raise InvalidValue("expected a number" + bounds, text)
        return value

    parse.config_type = "DOUBLE"
    return parse


def double(low: float | None = None, high: float | None = None) -> Parser[float]:
    """Kafka's DOUBLE, optionally within [``low``, ``high``].

    >>> double(0, 1)("0.5"), double()("1e3")
    (0.5, 1000.0)
    """
    return _double(low, high)


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise InvalidValue("expected true or false", text)
    return lowered == "true"


_bool.config_type = "BOOLEAN"
#: Kafka's BOOLEAN: ``true`` or ``false`` in any case (Kafka's ``equalsIgnoreCase``).
boolean: Parser[bool] = _bool


def string(text: str) -> str:
    """Kafka's STRING: any text."""
    return text


def non_empty(text: str) -> str:
    """Kafka's STRING with ``NonEmptyString``: any text but the empty one."""
    if not text:
        raise InvalidValue("cannot be empty", None)
    return text


def _list(allowed: tuple[str, ...]) -> Parser[tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        items = tuple(item.strip() for item in text.split(",") if item.strip())
        for item in items:
            if allowed and item not in allowed:
                raise InvalidValue(f"expected each item to be one of {', '.join(allowed)}", item)
        return items

    parse.config_type = "LIST"
    return parse


def list_of(*allowed: str) -> Parser[tuple[str, ...]]:
    """Kafka's LIST: comma-separated items, each one of ``allowed`` (case-sensitive, as Kafka's
    ``ValidList``) when any are given.

    >>> list_of()(" /a, /b ,, "), list_of()("")
    (('/a', '/b'), ())
    """
    return _list(allowed)


def choice(*choices: str, case_sensitive: bool = True) -> Parser[str]:
    """One of ``choices``. Case-sensitive by default, as Kafka's ``ValidString``; with
    ``case_sensitive=False`` as Kafka's ``CaseInsensitiveValidString``, returning the spelling
    of ``choices``. Which settings use which: see the module's case rules.

    >>> choice("all", "-1", "1")("ALL")
    Traceback (most recent call last):
    ...
    broker_lite.config.parsers.InvalidValue: expected one of all, -1, 1, got 'ALL'
    >>> choice("PLAINTEXT", "SSL", case_sensitive=False)("plaintext")
    'PLAINTEXT'
    """
    by_key = {(c if case_sensitive else c.lower()): c for c in choices}
    reason = f"expected one of {', '.join(choices)}" + ("" if case_sensitive else " (in any case)")

    def parse(text: str) -> str:
        found = by_key.get(text if case_sensitive else text.lower())
        if found is None:
            raise InvalidValue(reason, text)
        return found

    return parse


def duration_ms(text: str) -> int:
    """Spark's time string (``500``, ``500ms``, ``10s``, ``15m``, ``1h``, ``2d``, ...) in
    milliseconds, truncated and capped at LONG's largest as Java's ``TimeUnit`` converts.
    Negative durations, which Spark's syntax admits, are refused: no option has a use for them.

    >>> [duration_ms(t) for t in ("500", "10s", " 15M ", "1min", "1500us")]
    [500, 10000, 900000, 60000, 1]
    """
    match = _DURATION.fullmatch(text.strip().lower())
    unit = match and (match.group(2) or "ms")
    if unit not in _MICROSECONDS or int(match.group(1)) > INT64_MAX:
        raise InvalidValue("expected a duration such as 500ms, 10s, 15m or 1h "
                           "(units: us, ms, s, m or min, h, d; no unit: ms)", text)
    return min(int(match.group(1)) * _MICROSECONDS[unit] // 1000, INT64_MAX)


@dataclass(frozen=True)
class Setting:
    """One setting of a Kafka configuration: its name, its parser, its default (None: unset)
    and what it does."""

    name: str
    parse: Parser[Any]
    default: Any
    doc: str = ""

    @property
    def type(self) -> str:
        """The setting's type in Kafka's ``ConfigDef.Type``: SHORT, INT, LONG, DOUBLE,
        BOOLEAN, LIST, or STRING for any other parser."""
        return getattr(self.parse, "config_type", "STRING")

    def value_of(self, value: Any) -> Any:
        """``value`` (text, or a Python int or bool) parsed as Kafka's ``ConfigDef.parseType``
        parses it: as text, trimmed. Raises :class:`InvalidValue`."""
        return self.parse(as_text(value).strip())
