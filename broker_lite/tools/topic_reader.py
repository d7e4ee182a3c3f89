"""Reading topics from the command line: which partitions, where to start, and fetch rounds.

A :class:`TopicReader` keeps one position per partition (the offset of the next record to
read) and fetches all of them at once, one Fetch per leader broker (``KafkaClient.fetch``),
long-polling up to the wait it is given. What comes back is checked (CRCs, as Kafka consumers
check them by default), cut at the position (a compressed batch may start before it), and
rid of what a consumer never sees: control batches and, under ``read_committed``, the
batches of aborted transactions. A position the log no longer holds (retention, truncation)
is reset to the earliest or latest offset, as ``auto.offset.reset`` says.
"""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from broker_lite.records import BatchReader, Record, RecordsError
from broker_lite.records.reader import Batch
from broker_lite.client import (
    EARLIEST,
    LATEST,
    READ_COMMITTED,
    KafkaClient,
    OffsetOutOfRangeError,
    TopicPartition,
    UnknownTopicOrPartitionError,
)
from broker_lite.client.aborted import AbortedTransactions

from .common import ToolError

#: ``auto.offset.reset`` values -> the ListOffsets spec to reset to (None: fail instead).
RESET_POLICIES = {"earliest": EARLIEST, "latest": LATEST, "none": None}


def topic_partitions(client: KafkaClient, topics: Iterable[str],
                     partition: int | None = None) -> list[TopicPartition]:
    """The partitions of ``topics`` (only ``partition`` when given); a topic or partition that
    does not exist is a :class:`ToolError` naming it."""
    result = []
    for topic in topics:
        try:
            partitions = client.partitions(topic)
        except UnknownTopicOrPartitionError:
            raise ToolError(f"topic {topic} does not exist") from None
        if partition is not None:
            if partition not in partitions:
                raise ToolError(f"topic {topic} has no partition {partition} (it has "
                                f"{len(partitions)})")
            partitions = [partition]
        result.extend(TopicPartition(topic, p) for p in partitions)
    return result


def start_positions(client: KafkaClient, tps: list[TopicPartition], default: int, *,
                    explicit: int | None = None, group: str | None = None,
                    isolation_level: str) -> dict[TopicPartition, int]:
    """Where each partition starts: ``explicit`` (an offset, or EARLIEST / LATEST) when given,
    else the offset ``group`` committed, else ``default`` (EARLIEST or LATEST)."""
    if explicit is not None and explicit >= 0:
        return dict.fromkeys(tps, explicit)
    positions: dict[TopicPartition, int] = {}
    if explicit is None and group is not None:
        committed = client.committed(group, tps)
        positions = {tp: offset for tp, offset in committed.items() if offset is not None}
    spec = default if explicit is None else explicit
    missing = {tp: spec for tp in tps if tp not in positions}
    if missing:
        found = client.list_offsets(missing, isolation_level)
        positions.update({tp: found[tp] if found[tp] is not None else 0 for tp in missing})
    return {tp: positions[tp] for tp in tps}


@dataclass
class PartitionChunk:
    """What one fetch round brought for one partition: whole data batches, the position before
    them (records below it were read before) and the position after them."""

    tp: TopicPartition
    batches: list[Batch]
    start: int
    next_position: int

    def records(self) -> Iterator[Record]:
        """The new records, in offset order."""
        for batch in self.batches:
            for record in batch:
                if record.offset >= self.start:
                    yield record


class TopicReader:
    """Fetches ``positions`` forward; :meth:`poll` returns the chunks of one round."""

    def __init__(self, client: KafkaClient, positions: Mapping[TopicPartition, int], *,
                 isolation_level: str, reset: str = "latest"):
        if reset not in RESET_POLICIES:
            raise ToolError(f"auto.offset.reset must be one of {', '.join(RESET_POLICIES)}, "
                            f"got {reset!r}")
        self.client = client
        self.positions = dict(positions)
        self.isolation_level = isolation_level
        self.reset = reset
        self._aborted = {tp: AbortedTransactions() for tp in self.positions}

    def poll(self, max_wait_ms: int) -> list[PartitionChunk]:
        """One fetch round over every partition, waiting up to ``max_wait_ms`` for data."""
        fetched = self.client.fetch(self.positions, max_wait_ms=max(0, max_wait_ms),
                                    min_bytes=1, isolation_level=self.isolation_level)
        chunks = []
        for tp, data in sorted(fetched.items()):
            if isinstance(data.error, OffsetOutOfRangeError):
                self._reset(tp)
                continue
            if data.error is not None:
                raise data.error
            chunk = self._chunk(tp, data)
            self.positions[tp] = chunk.next_position
            if chunk.batches:
                chunks.append(chunk)
        return chunks

    def _chunk(self, tp: TopicPartition, data) -> PartitionChunk:
        position = self.positions[tp]
        aborted = self._aborted[tp]
        aborted.add(data.aborted_transactions)
        reader = BatchReader(data.records, validate=True)
        kept, next_position = [], position
        try:
            for batch in reader:
                if batch.next_offset <= position:
                    continue
                next_position = max(next_position, batch.next_offset)
                if self.isolation_level == READ_COMMITTED:
                    if aborted.keep(batch):
                        kept.append(batch)
                elif not batch.is_control_batch:
                    kept.append(batch)
        except RecordsError as exc:
            raise ToolError(f"corrupt record data from {tp} at offset {next_position}: "
                            f"{exc}") from exc
        return PartitionChunk(tp, kept, position, next_position)

    def _reset(self, tp: TopicPartition) -> None:
        spec = RESET_POLICIES[self.reset]
        if spec is None:
            raise ToolError(f"offset {self.positions[tp]} is out of range for {tp} and "
                            "auto.offset.reset is none")
        found = self.client.list_offsets({tp: spec}, self.isolation_level)[tp]
        self.positions[tp] = found if found is not None else 0
