"""How far a micro-batch is behind the latest offsets: the ``minOffsetsBehindLatest``,
``maxOffsetsBehindLatest`` and ``avgOffsetsBehindLatest`` that Spark's Kafka source reports in
its progress ``metrics``, computed from the progress of a kpy source.

Spark asks a source for such metrics through its ``ReportsSourceMetrics`` interface, which
PySpark's Python Data Source API does not expose: the ``metrics`` of a kpy source's progress
stay empty. The progress carries what the figures are made of, though. Next to ``endOffset``
(where the micro-batch ended) is ``latestOffset``, what the source reported as latest when it
planned the batch: the offsets it had just listed, or under Trigger.AvailableNow those latest
when the query started, where it stops (Spark's Kafka source reports the same). Both are Spark's
Kafka offset JSON, the next offset per partition::

    {"events": {"0": 42, "1": 17}}

A progress holds them as JSON text (``query.lastProgress``, a listener's event) or as parsed
JSON (``json.loads(progress.json)``); either form, and a missing offset (``None``, ``"null"``,
or ``"None"`` where PySpark turned a null into text), is accepted.

The figures are those of Spark's ``KafkaMicroBatchStream.metrics``: for every partition of
``latestOffset``, latest minus end; the minimum and maximum as integers and the average as a
Java double, all three as text (``"90"``, ``"270"``, ``"180.0"``), and nothing at all while
either offset is missing. A partition of ``endOffset`` that ``latestOffset`` lacks is left out,
as Spark leaves it out. A partition of ``latestOffset`` that ``endOffset`` lacks never comes
from Spark's source nor from kpy's (a batch ends at an offset for every partition listed as
latest) and would fail Spark's computation; here it counts as unread from offset 0, where a
newly created partition begins.
"""

import json
from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from broker_lite.client import TopicPartition

from .positions import from_json

MIN_BEHIND = "minOffsetsBehindLatest"
MAX_BEHIND = "maxOffsetsBehindLatest"
AVG_BEHIND = "avgOffsetsBehindLatest"


def offsets_behind_latest(source_progress: Any) -> dict[str, str]:
    """Spark's Kafka "offsets behind latest" metrics for one source's progress.

    Parameters
    ----------
    source_progress : dict or SourceProgress
        One entry of a progress's ``sources``: ``query.lastProgress["sources"][0]``, a
        listener event's ``progress.sources[0]``, the parsed JSON of either, or any object
        with ``endOffset`` and ``latestOffset`` attributes.

    Returns
    -------
    dict
        ``minOffsetsBehindLatest``, ``maxOffsetsBehindLatest`` and ``avgOffsetsBehindLatest``
        as text, as Spark's Kafka source reports them; empty while the progress has no
        ``endOffset`` or no ``latestOffset``.

    Examples
    --------
    >>> behind = offsets_behind_latest({"endOffset": '{"t": {"0": 10, "1": 20}}',
    ...                                 "latestOffset": '{"t": {"0": 100, "1": 100}}'})
    >>> behind["minOffsetsBehindLatest"], behind["maxOffsetsBehindLatest"]
    ('80', '90')
    >>> behind["avgOffsetsBehindLatest"]
    '85.0'
    >>> offsets_behind_latest({"endOffset": '{"t": {"0": 10}}', "latestOffset": None})
    {}
    """
    latest = _offsets(source_progress, "latestOffset")
    end = _offsets(source_progress, "endOffset")
    if not latest or end is None:
        return {}
    behind = [until - end.get(tp, 0) for tp, until in latest.items()]
    return {MIN_BEHIND: str(min(behind)),
            MAX_BEHIND: str(max(behind)),
            AVG_BEHIND: java_double_string(sum(behind) / len(behind))}


def _offsets(source_progress: Any, field: str) -> dict[TopicPartition, int] | None:
    """The partition offsets in ``field`` of a source's progress, None where it has none."""
    if isinstance(source_progress, Mapping):
        raw = source_progress.get(field)
    else:
        raw = getattr(source_progress, field, None)
    if isinstance(raw, str):
        if raw.strip() in ("", "null", "None"):
            return None
        raw = json.loads(raw)
    if raw is None:
        return None
    if not (isinstance(raw, Mapping) and all(isinstance(p, Mapping) for p in raw.values())):
        raise ValueError(f"{field} is not a Kafka source offset "
                         f'({{"topic": {{"partition": offset}}}}): {raw!r}')
    return from_json(raw)


def java_double_string(value: float) -> str:
    """``value`` written as Java's ``Double.toString`` writes it, as Spark's metrics are.

    The digits are the fewest that read back as ``value``, as Python's ``repr`` finds them,
    but at least two: where one would do, the two closest to ``value`` (``4.9E-324``, not
    ``5.0E-324``). Plain decimals with at least one digit after the point from 10^-3 up to
    10^7, scientific notation outside (``1.0E7``). This is the specification since Java 19;
    Java 17's older algorithm writes some values with more digits than needed (1e23 as
    ``9.999999999999999E22``).

    >>> [java_double_string(v) for v in (180.0, 1 / 3, 1e7, 0.0005)]
    ['180.0', '0.3333333333333333', '1.0E7', '5.0E-4']
    """
    if value == 0:
        return repr(value)  # "0.0" or "-0.0"
    sign = "-" if value < 0 else ""
    shortest = Decimal(repr(abs(value))).normalize()
    if len(shortest.as_tuple().digits) == 1:
        two_digits = Decimal(1).scaleb(shortest.adjusted() - 1)
        shortest = Decimal(abs(value)).quantize(two_digits, ROUND_HALF_EVEN).normalize()
    digits = "".join(map(str, shortest.as_tuple().digits))
    exponent = shortest.adjusted()  # of the first digit
    if -3 <= exponent < 7:
        plain = format(shortest, "f")
        return sign + (plain if "." in plain else plain + ".0")
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"
