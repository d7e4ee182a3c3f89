"""What the administration tools (topics, configs, consumer-groups) share: client errors as tool
errors, Kafka's topic include lists, and the column layout of Kafka's tables.

Tables are laid out as Kafka's tools print them: each column left-aligned and padded to a width,
one space between columns, the last column unpadded; trailing blanks are dropped.

>>> print(table([("GROUP", "TOPIC"), ("g", "events")], [15]))
GROUP           TOPIC
g               events
>>> include_list("'events.*, logs'").fullmatch("logs") is not None
True
"""

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from broker_lite.client.errors import KafkaClientError

from .common import ToolError

MISSING = "-"  # Kafka's MISSING_COLUMN_VALUE


@contextmanager
def client_errors() -> Iterator[None]:
    """Turn a client error into a :class:`ToolError` with its message (the broker's error code
    and text, or what could not be reached in time)."""
    try:
        yield
    except KafkaClientError as exc:
        raise ToolError(str(exc)) from exc


def include_list(text: str) -> re.Pattern:
    """Kafka's topic ``IncludeList``: a regular expression matched against whole names, where
    ``,`` separates alternatives and blanks and surrounding quotes are ignored."""
    expression = re.sub(r"""^["']+|["']+$""", "", text.strip()).replace(",", "|")
    return re.compile(expression.replace(" ", ""))


def table(rows: Sequence[Sequence[object]], widths: Sequence[int]) -> str:
    """``rows`` (the header first) as lines, cell ``i`` of each padded to ``widths[i]`` (longer
    cells overflow, as with Java's ``%-15s``); the last column is not padded."""
    lines = []
    for row in rows:
        cells = [str(cell) for cell in row]
        padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:-1])] + cells[-1:]
        lines.append(" ".join(padded).rstrip())
    return "\n".join(lines)


def column_width(values: Sequence[str], minimum: int = 15) -> int:
    """Kafka's width of a variable column: its longest value, at least ``minimum``."""
    return max([minimum, *(len(v) for v in values)])
