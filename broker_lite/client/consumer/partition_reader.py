"""Reading partitions forward from positions: the client's one read loop.

A :class:`PartitionReader` keeps, for every partition it reads, a *position* (the offset of the next
record to read) and fetches them all in rounds: :meth:`~PartitionReader.poll` sends one Fetch per
leader broker (:meth:`~broker_lite.client.KafkaClient.fetch`), waiting up to the time it is given
for data (long poll), and turns each partition's answer into a :class:`FetchedChunk`. A partition
may have an end: the reader stops it there (an offset: a range ``[start, end)``; ``LOG_END``:
whatever the log holds when the reader gets there). :func:`read_range` reads one partition so.

What happens to one partition's answer, in order:

1. **Errors.** OFFSET_OUT_OF_RANGE makes the reader ask where the log starts and ends now
   (ListOffsets). A position still outside them, like a range whose end the log does not reach,
   is an :class:`OutOfRange` for the caller's hook, which says where to go on (Kafka's
   ``auto.offset.reset``; Spark's ``failOnDataLoss``) or None to stop reading the partition;
   without a hook it is raised as :class:`OffsetOutOfRangeError`. Other errors are raised.
2. **Scan and check.** The batch headers are walked (:class:`broker_lite.records.BatchReader`)
   and, with ``check.crcs`` (on by default, as in Kafka's consumer), every batch that holds
   records to read is checked: CRC-32C over a v2 batch, CRC-32 of a v0/v1 message. Bad bytes raise
   :class:`CorruptMessageError` naming the partition and the batch's offset ("corrupt record
   batch in events-0 at offset 1234: ..."): nothing is ever skipped. A batch cut short at the
   end of the answer (the byte limit) is fetched again by the next round.
3. **Growth.** Bytes with no complete batch in them are one batch larger than the partition's
   byte limit, from a broker that cuts it (brokers before KIP-74 do): the limit doubles for that
   partition, up to ``fetch.max.bytes``, past which it is a :class:`RecordTooLargeError`. Once
   the batch has come, the limit is ``max.partition.fetch.bytes`` again.
4. **Cut and filter.** Batches that end before the position are left out; one that starts
   before it (a compressed batch comes whole) stays, its earlier records cut when decoded.
   Control batches (transaction markers) are left out, and under ``read_committed`` so are the
   batches of aborted transactions (:mod:`.aborted`). The position moves past every complete
   batch, kept or not.

No record is decoded here, so the reader adds no per-record Python work: a chunk holds views of
the fetched batches, which the caller decodes, whole answers at once into Arrow
(:meth:`FetchedChunk.to_arrow`) or record by record (:meth:`FetchedChunk.records`). And since
positions move on batch headers alone, a round is two steps, :meth:`PartitionReader.fetch` (the
request) and :meth:`PartitionReader.accept` (checking the answer and moving the positions): the
next round's request goes out as soon as ``accept`` returns, while the caller still decodes
(:func:`fetching_ahead`, which :func:`read_range` reads with).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode
from broker_lite.records import BatchReader, Record, RecordsError
from broker_lite.records.arrow import batches_to_arrow
from broker_lite.records.reader import Batch

from ..config import ClientConfig
from ..errors import (
    CorruptMessageError,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    error_of,
    final_error,
)
from ..retry import Backoff, Deadline, timed_out
from ..types import (
    EARLIEST,
    LATEST,
    LOG_END,
    READ_COMMITTED,
    FetchedPartition,
    isolation_level_code,
)
from .aborted import AbortedTransactions


class FetchingClient(Protocol):
    """What the read loop needs of a client: its settings, Fetch and ListOffsets (a
    :class:`~broker_lite.client.KafkaClient` is one)."""

    @property
    def config(self) -> ClientConfig: ...

    def fetch(self, requests: Mapping[TopicPartition, int], *, max_wait_ms: int | None = None,
              min_bytes: int | None = None, isolation_level: str | None = None,
              partition_max_bytes: Mapping[TopicPartition, int] | None = None
              ) -> dict[TopicPartition, FetchedPartition]: ...

    def list_offsets(self, specs: Mapping[TopicPartition, int],
                     isolation_level: str | None = None) -> dict[TopicPartition, int | None]: ...

_OFFSET = struct.Struct(">q")  # every entry of a record buffer starts with its (base) offset


@dataclass(frozen=True)
class OutOfRange:
    """A position the log does not hold: below its start (retention, deletion) or at or past
    its end while records before ``end`` were to be read (the log was truncated, the topic
    deleted and created again). ``log_end`` is the high watermark, or under read_committed the
    last stable offset; ``end`` is where the partition's reading was to stop (None: nowhere)."""

    tp: TopicPartition
    position: int
    log_start: int
    log_end: int
    end: int | None = None

    @property
    def below_start(self) -> bool:
        return self.position < self.log_start

    def __str__(self) -> str:
        if self.below_start:
            last = self.log_start if self.end is None else min(self.log_start, self.end)
            return (f"offsets {self.position} to {last - 1} of {self.tp} are gone (the log now "
                    f"starts at {self.log_start})")
        wanted = f"offset {self.position}" if self.end is None \
            else f"offsets {self.position} to {self.end - 1}"
        return f"{self.tp} ends at offset {self.log_end}, before {wanted} which was to be read"


#: What to do at an :class:`OutOfRange`: the position to go on from, or None to stop reading
#: the partition. It may raise instead.
OutOfRangeHook = Callable[[OutOfRange], "int | None"]


def raise_out_of_range(gone: OutOfRange) -> int | None:
    """The hook of readers not given one: :class:`OffsetOutOfRangeError` (as Kafka's
    ``auto.offset.reset=none``)."""
    raise error_of(ErrorCode.OFFSET_OUT_OF_RANGE, str(gone), where=str(gone.tp))


@dataclass(frozen=True, eq=False)
class FetchedChunk:
    """What one round brought for one partition: ``batches`` to read (data batches in offset
    order, whole: the first may start before ``start``, the last end at or past ``end``),
    the position before them (``start``) and after them (``next_position``), and the broker's
    answer (``fetched``: watermarks, aborted transactions, the bytes as sent)."""

    tp: TopicPartition
    batches: list[Batch]
    start: int
    next_position: int
    fetched: FetchedPartition
    end: int | None = None  # records at or past it are not this read's
    complete_bytes: int = field(default=0, repr=False)

    @property
    def data(self) -> memoryview:
        """The complete batches of the answer as the broker sent them, control batches and
        aborted transactions included (for tools that look at them)."""
        return memoryview(self.fetched.records)[:self.complete_bytes]

    def records(self) -> Iterator[Record]:
        """The new records, in offset order, decoded one by one."""
        end = self.end
        try:
            for batch in self.batches:
                for record in batch:
                    if end is not None and record.offset >= end:
                        return
                    if record.offset >= self.start:
                        yield record
        except RecordsError as exc:
            raise _corrupt(self.tp, _offset_of(batch), exc) from exc

    def to_arrow(self, *, include_headers: bool = False) -> pa.RecordBatch:
        """The new records as one Arrow batch of Spark's Kafka schema, decoded whole-batch at a
        time (:func:`broker_lite.records.arrow.batches_to_arrow`)."""
        try:
            return self._arrow(self.batches, include_headers)
        except RecordsError as exc:
            raise self._locate_corruption(exc, include_headers) from exc

    def _arrow(self, batches, include_headers: bool) -> pa.RecordBatch:
        return batches_to_arrow(batches, topic=self.tp.topic, partition=self.tp.partition,
                                start_offset=self.start, end_offset=self.end,
                                include_headers=include_headers)

    def _locate_corruption(self, error: RecordsError, include_headers: bool):
        """The error naming the batch that does not decode (only ever on this failure path)."""
        for batch in self.batches:
            try:
                self._arrow([batch], include_headers)
            except RecordsError as exc:
                return _corrupt(self.tp, _offset_of(batch), exc)
        return _corrupt(self.tp, self.start, error)


@dataclass
class _Partition:
    """What the reader keeps per partition."""

    position: int
    end: int | None  # an offset, LOG_END, or None (no end: follow the log)
    aborted: AbortedTransactions = field(default_factory=AbortedTransactions)
    fetch_bytes: int | None = None  # a limit above max.partition.fetch.bytes, while growing
    stalled: tuple[Deadline, Backoff] | None = None

    def moved_to(self, position: int) -> _Partition:
        """The state at ``position`` reached by seeking (not by reading): aborted transactions
        are learnt again from the next answer, which lists every one it overlaps."""
        return _Partition(position, self.end)


class PartitionReader:
    """Reads ``positions`` forward, in rounds of one Fetch per leader broker.

    ``ends`` optionally gives partitions an end (an offset, or :data:`LOG_END`): the reader
    stops them there. ``isolation_level`` defaults to the client's; ``check.crcs`` is the
    client's setting. ``on_out_of_range`` (see :class:`OutOfRange`) defaults to raising. A
    partition whose fetch failed for good otherwise (the client's retries spent) raises its
    error, unless ``on_error`` is given: it is told, and the partition is fetched again from the
    same position next round, while the others read on.
    """

    def __init__(self, client: FetchingClient, positions: Mapping[TopicPartition, int], *,
                 ends: Mapping[TopicPartition, int] | None = None,
                 isolation_level: str | None = None,
                 on_out_of_range: OutOfRangeHook | None = None,
                 on_error: Callable[[TopicPartition, KafkaClientError], None] | None = None):
        self.client = client
        self.config = client.config
        self.isolation_level = isolation_level or self.config.isolation_level
        self.read_committed = (isolation_level_code(self.isolation_level)
                               == isolation_level_code(READ_COMMITTED))
        self.on_out_of_range = on_out_of_range or raise_out_of_range
        self.on_error = on_error
        self._partitions: dict[TopicPartition, _Partition] = {}
        ends = ends or {}
        for tp, position in positions.items():
            if position < 0:
                raise InvalidArgumentError(f"the position of {tp} must be >= 0, got {position}")
            end = ends.get(tp)
            if end is not None and end != LOG_END and end < position:
                raise InvalidArgumentError(f"bad offset range [{position}, {end}) for {tp}")
            self._partitions[tp] = _Partition(position, end)
        self._drop_finished()

    @property
    def positions(self) -> dict[TopicPartition, int]:
        """The position of every partition still being read."""
        return {tp: p.position for tp, p in self._partitions.items()}

    # -- a round --------------------------------------------------------------------------------

    def poll(self, max_wait_ms: int) -> list[FetchedChunk]:
        """One round over every partition, waiting up to ``max_wait_ms`` for data; the chunks
        of the partitions that moved, in partition order."""
        return self.accept(self.fetch(max_wait_ms))

    def fetch(self, max_wait_ms: int) -> dict[TopicPartition, FetchedPartition]:
        """The Fetch of a round, at the current positions (nothing moves yet)."""
        if not self._partitions:
            return {}
        larger = {tp: p.fetch_bytes for tp, p in self._partitions.items() if p.fetch_bytes}
        return self.client.fetch(self.positions, max_wait_ms=max(0, max_wait_ms),
                                 isolation_level=self.isolation_level,
                                 partition_max_bytes=larger or None)

    def accept(self, fetched: Mapping[TopicPartition, FetchedPartition]) -> list[FetchedChunk]:
        """Check the answers of a round (fetched at the current positions), move the positions
        past them and return the chunks of the partitions that moved. Nothing moves when it
        raises."""
        before = {tp: (p.position, p.end) for tp, p in self._partitions.items()}
        chunks = []
        try:
            for tp in sorted(fetched):
                if tp in before:
                    chunk = self._accept(tp, fetched[tp])
                    if chunk is not None:
                        chunks.append(chunk)
        except BaseException:
            for tp, (position, end) in before.items():
                if tp in fetched:
                    self._partitions[tp] = _Partition(position, end)
            raise
        self._drop_finished()
        return chunks

    def _accept(self, tp: TopicPartition, fetched: FetchedPartition) -> FetchedChunk | None:
        state = self._partitions[tp]
        if isinstance(fetched.error, OffsetOutOfRangeError):
            self._out_of_range(tp, state)
            return None
        if fetched.error is not None:
            if self.on_error is None:
                raise fetched.error
            self.on_error(tp, fetched.error)
            return None
        position = state.position
        keep = _is_data
        if self.read_committed:
            state.aborted.add(fetched.aborted_transactions)
            keep = state.aborted.keep
        kept, next_position, complete = scan_batches(
            tp, fetched.records, position, None if state.end == LOG_END else state.end,
            keep=keep, check_crcs=self.config.check_crcs)
        log_end = fetched.high_watermark
        if self.read_committed and fetched.last_stable_offset >= 0:
            log_end = fetched.last_stable_offset
        if complete == 0 and fetched.records:
            state.fetch_bytes = self._grown(tp, state)
            return None
        if complete and next_position <= position:
            raise InvalidResponseError(f"the Fetch response for {tp} at offset {position} holds "
                                       f"only records before it (up to {next_position - 1})")
        state.fetch_bytes = None
        if next_position == position:
            self._at_log_end_or_stalled(tp, state, log_end, fetched.log_start_offset)
            return None
        state.position, state.stalled = next_position, None
        chunk = FetchedChunk(tp, kept, position, next_position, fetched,
                             None if state.end == LOG_END else state.end, complete)
        if state.end is not None and next_position >= log_end:
            self._at_log_end_or_stalled(tp, state, log_end, fetched.log_start_offset)
        return chunk

    def _at_log_end_or_stalled(self, tp: TopicPartition, state: _Partition, log_end: int,
                               log_start: int) -> None:
        """Nothing more came for ``tp``: at the end of the log, a partition with an end is done
        (``LOG_END``) or out of range (its end is beyond the log's); below the end of the log
        (the broker sent nothing it has), it asks again for a bounded time.

        The end of the log a Fetch answers with is the leader's high watermark, which lags
        right after an election (a follower learns it one fetch late). So before a range
        counts as out of range, its end is looked up with ListOffsets, which a lagging leader
        answers only once it caught up (OFFSET_NOT_AVAILABLE, retried, meanwhile; KIP-207), as
        Spark's Kafka consumer checks the available range before it reports data loss: a log
        that does reach further means the answer lagged, and the read asks again."""
        if state.end is None:
            return  # following the log: nothing new yet
        if state.position >= log_end:
            if state.end == LOG_END:
                state.end = state.position  # done
                return
            if state.position >= state.end:
                return
            listed = self.client.list_offsets({tp: LATEST}, self.isolation_level)[tp] or 0
            if listed <= state.position:
                self._go_on(tp, state, OutOfRange(tp, state.position, log_start, listed,
                                                  state.end))
                return
            log_end = listed  # the answer lagged: below the end of the log
        if state.stalled is None:
            state.stalled = (Deadline(self.config.request_timeout_ms),
                             Backoff(self.config.retry_backoff_ms,
                                     self.config.retry_backoff_max_ms))
        deadline, backoff = state.stalled
        if not backoff.wait(deadline):
            raise timed_out(f"reading {tp} at offset {state.position} (below the end of the "
                            f"log, {log_end})", deadline, None)

    def _out_of_range(self, tp: TopicPartition, state: _Partition) -> None:
        """OFFSET_OUT_OF_RANGE: where the log is now decides; a position back inside it (the log
        moved meanwhile) is simply fetched again."""
        start = self.client.list_offsets({tp: EARLIEST}, self.isolation_level)[tp]
        end = self.client.list_offsets({tp: LATEST}, self.isolation_level)[tp]
        start, end = start or 0, end or 0
        if start <= state.position <= end:
            return
        wanted_end = None if state.end in (None, LOG_END) else state.end
        self._go_on(tp, state, OutOfRange(tp, state.position, start, end, wanted_end))

    def _go_on(self, tp: TopicPartition, state: _Partition, gone: OutOfRange) -> None:
        position = self.on_out_of_range(gone)
        if position is None:
            state.end = state.position  # done
        else:
            self._partitions[tp] = state.moved_to(position)

    def _grown(self, tp: TopicPartition, state: _Partition) -> int:
        limit = state.fetch_bytes or self.config.max_partition_fetch_bytes
        if limit >= self.config.fetch_max_bytes:
            raise RecordTooLargeError(
                f"the record batch of {tp} at offset {state.position} is larger than "
                f"fetch.max.bytes ({self.config.fetch_max_bytes}) and the broker does not send "
                "it whole")
        return min(limit * 2, self.config.fetch_max_bytes)

    def _drop_finished(self) -> None:
        self._partitions = {tp: p for tp, p in self._partitions.items()
                            if p.end in (None, LOG_END) or p.position < p.end}


def read_range(client: FetchingClient, tp: TopicPartition, start: int, end: int = LOG_END, *,
               isolation_level: str | None = None, on_out_of_range: OutOfRangeHook | None = None,
               max_wait_ms: int = 0) -> Iterator[FetchedChunk]:
    """The chunks of ``tp`` from ``start`` to ``end`` (exclusive), or to the end of the log
    (``LOG_END``: the high watermark, or under read_committed the last stable offset, as the
    fetches find it), with one fetch in flight ahead of the chunk the caller has (see
    :func:`fetching_ahead`), so that memory stays within twice ``max.partition.fetch.bytes``
    (or one batch, when a batch is larger). A bad range is an :class:`InvalidArgumentError` at
    once."""
    reader = PartitionReader(client, {tp: start}, ends={tp: end},
                             isolation_level=isolation_level, on_out_of_range=on_out_of_range)
    return fetching_ahead(reader, max_wait_ms)


def fetching_ahead(reader: PartitionReader, max_wait_ms: int) -> Iterator[FetchedChunk]:
    """The rounds of ``reader`` until it has read everything, each round's Fetch sent while the
    caller still handles (decodes) the chunks of the round before: the broker's answer and the
    caller's work overlap, instead of taking turns. One response is in flight while one is
    handled, no more.

    The Fetch runs on a thread of its own; the positions move (``accept``) on the caller's,
    between the rounds. A caller that stops early (closing the generator) waits for the Fetch
    in flight to end, so the connection is left between requests, ready for its next user.
    """
    if not reader.positions:
        return
    with ThreadPoolExecutor(1, thread_name_prefix="kpy-fetch-ahead") as ahead:
        in_flight: Future | None = ahead.submit(reader.fetch, max_wait_ms)
        while in_flight is not None:
            chunks = reader.accept(in_flight.result())
            in_flight = ahead.submit(reader.fetch, max_wait_ms) if reader.positions else None
            yield from chunks


def scan_batches(tp: TopicPartition, records, position: int, end: int | None = None, *,
                 keep: Callable[[Batch], bool] | None = None, check_crcs: bool = True
                 ) -> tuple[list[Batch], int, int]:
    """The batches of ``records`` (a Fetch answer for ``tp`` at ``position``) that hold records
    from ``position`` on (up to ``end``, when given) and that ``keep`` keeps (default: the data
    batches), the position after them, and the length of the complete batches in ``records``.

    Only headers are read, and with ``check_crcs`` each of those batches is checked: bad bytes
    raise :class:`CorruptMessageError` naming ``tp`` and the batch's offset.

    >>> from broker_lite.records import build_batch
    >>> whole = build_batch([(None, b"a"), (None, b"b")], base_offset=10)
    >>> cut = build_batch([(None, b"c")], base_offset=12)[:30]  # the byte limit cut it
    >>> batches, position, complete = scan_batches(TopicPartition("t", 0), whole + cut, 11)
    >>> [b.base_offset for b in batches], position, complete == len(whole)
    ([10], 12, True)
    """
    keep = keep or _is_data
    reader = BatchReader(records)
    kept, next_position, checking = [], position, None
    try:
        for batch in reader:
            if end is not None and next_position >= end:
                break  # the rest is not this read's
            if batch.next_offset <= position:
                continue
            if check_crcs:
                checking = batch
                batch.ensure_valid()
                checking = None
            next_position = max(next_position, batch.next_offset)
            if keep(batch):
                kept.append(batch)
    except RecordsError as exc:
        at = checking.position if checking is not None else reader.position
        raise _corrupt(tp, _offset_at(records, at, next_position), exc) from exc
    return kept, next_position, reader.position


def _is_data(batch: Batch) -> bool:
    return not batch.is_control_batch


def _offset_at(records: bytes, position: int, fallback: int) -> int:
    """The offset of the entry at byte ``position`` of ``records`` (every format starts with it:
    a v2 batch's base offset, a v0/v1 message's offset), or ``fallback`` when it is not there."""
    if position + _OFFSET.size <= len(records):
        return _OFFSET.unpack_from(records, position)[0]
    return fallback


def _offset_of(batch: Batch) -> int:
    """``batch``'s offset as its header says, read without decompressing anything."""
    return _OFFSET.unpack_from(batch.raw())[0]


def _corrupt(tp: TopicPartition, offset: int, error: Exception) -> KafkaClientError:
    # Final: the batch is stored so, and fetching it again gives the same bytes.
    return final_error(CorruptMessageError(f"corrupt record batch in {tp} at offset {offset}: "
                                           f"{error}", where=str(tp)))
