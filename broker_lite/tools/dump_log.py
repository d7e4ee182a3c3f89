"""``broker-lite dump-log``: print the contents of log directory files, as ``kafka-dump-log.sh``.

    broker-lite dump-log --files /var/lib/kafka/events-0/00000000000000000000.log --print-data-log

Files are recognised by their suffix (see :mod:`broker_lite.log.files`), and printed in Kafka's
own format:

* ``.log`` segments: ``Log starting offset: N``, then one line per batch (``baseOffset: ...
  lastOffset: ... count: ... position: ... CreateTime: ... size: ... magic: 2 compresscodec:
  none crc: ... isvalid: true``); with ``--deep-iteration`` one ``| offset: ...`` line per record
  under it, and with ``--print-data-log`` its key and payload too (as UTF-8 text).
* ``.index``: ``offset: N position: P`` per entry; ``.timeindex``: ``timestamp: T offset: N``.
  Every entry is checked against the segment beside it (the offset index must point at a batch
  ending at its offset, the time index at a batch ending at its offset whose largest timestamp
  it holds); ``--verify-index-only`` only checks, ``--index-sanity-check`` checks only the
  entries' order, as a broker does on start-up.
* ``.txnindex``: one line per aborted transaction; ``.snapshot``: one line per producer.

Problems go to stderr: Kafka's own reports for index mismatches and non-consecutive offsets,
then one ``broker-lite dump-log: error: ...`` line per fault that makes a file unreadable or
wrong (a batch that fails its CRC, bytes that are not a batch, a torn tail, an index entry that
does not match its segment), with the file and byte position. The exit status is then 1; the
other files are still dumped. Nothing is ever written to the files.
"""

import argparse
import bisect
import mmap
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from broker_lite.common.vocabulary import INT32_MAX, NO_SEQUENCE
from broker_lite.log.files import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SNAPSHOT_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
)
from broker_lite.log.index import CorruptIndexError
from broker_lite.log.offset_index import OffsetIndex
from broker_lite.log.producer_snapshot import CorruptSnapshotError, decode_snapshot
from broker_lite.log.time_index import TimeIndex
from broker_lite.log.txn_index import ENTRY_SIZE as TXN_ENTRY_SIZE
from broker_lite.log.txn_index import AbortedTxn
from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    LegacyRecordBatch,
    RecordBatch,
    RecordsError,
    TimestampType,
    decompress,
)
from broker_lite.records.control import (
    control_record_type,
    decode_end_transaction_marker,
)
from broker_lite.records.record_batch import DELETE_HORIZON_FLAG

from .common import EXIT_FAILURE, EXIT_OK, report_error

NAME = "dump-log"
HELP = "print the batches, records and index entries of log files (kafka-dump-log)"

DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RECORD_INDENT = "|"
_TIMESTAMP_TYPES = {TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
                    TimestampType.CREATE_TIME: "CreateTime",
                    TimestampType.LOG_APPEND_TIME: "LogAppendTime"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--files", required=True, metavar="PATH[,PATH...]",
                        help="comma-separated .log, .index, .timeindex, .txnindex and .snapshot "
                             "files to dump")
    parser.add_argument("--print-data-log", action="store_true",
                        help="print each record's key and payload (implies --deep-iteration)")
    parser.add_argument("--deep-iteration", action="store_true",
                        help="print every record, not only every batch")
    parser.add_argument("--skip-record-metadata", action="store_true",
                        help="with --print-data-log, print only keys and payloads")
    parser.add_argument("--verify-index-only", action="store_true",
                        help="check index entries against their segment without printing them")
    parser.add_argument("--index-sanity-check", action="store_true",
                        help="check only that index entries are in order, as a broker does "
                             "on start-up")
    parser.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE,
                        metavar="BYTES", help="the largest batch an index entry may point at")
    parser.add_argument("--max-bytes", type=int, default=INT32_MAX, metavar="BYTES",
                        help="dump only this many bytes of each .log file")


@dataclass
class _Problems:
    """What went wrong, reported after the dump as Kafka reports it, then as errors."""

    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, table: dict, path: Path, pair: tuple[int, int]) -> None:
        table.setdefault(str(path.absolute()), []).append(pair)

    def print(self) -> None:
        err = sys.stderr
        for name, pairs in self.index_mismatches.items():
            print(f"Mismatches in :{name}", file=err)
            for index_offset, log_offset in pairs:
                print(f"  Index offset: {index_offset}, log offset: {log_offset}", file=err)
        for name, pairs in self.time_mismatches.items():
            print(f"Found timestamp mismatch in :{name}", file=err)
            for index_ts, log_ts in pairs:
                print(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}", file=err)
        for name, pairs in self.time_out_of_order.items():
            print(f"Found out of order timestamp in :{name}", file=err)
            for index_ts, previous in pairs:
                print(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {previous}",
                      file=err)
        for pairs in self.time_not_found.values():
            print("The following indexed offsets are not found in the log.", file=err)
            for index_offset, log_offset in pairs:
                print(f"Indexed offset: {index_offset}, found log offset: {log_offset}", file=err)
        for name, pairs in self.non_consecutive.items():
            print(f"Non-consecutive offsets in {name}", file=err)
            for first, second in pairs:
                print(f"  {first} is followed by {second}", file=err)
        for name, pairs in self.index_mismatches.items():
            self.errors.append(f"{name}: {len(pairs)} index entries do not match the segment")
        for table in (self.time_mismatches, self.time_out_of_order, self.time_not_found):
            for name, pairs in table.items():
                self.errors.append(f"{name}: {len(pairs)} time index entries do not match the "
                                   "segment")
        err.flush()
        for message in self.errors:
            report_error(NAME, message)


def run(args: argparse.Namespace) -> int:
    deep = args.deep_iteration or args.print_data_log
    problems = _Problems()
    out = sys.stdout
    try:
        for name in args.files.split(","):
            path = Path(name)
            out.write(f"Dumping {path}\n")
            suffix = path.suffix
            try:
                if suffix == LOG_SUFFIX:
                    _dump_log(path, args, deep, problems, out)
                elif suffix == INDEX_SUFFIX:
                    _dump_offset_index(path, args, problems, out)
                elif suffix == TIME_INDEX_SUFFIX:
                    _dump_time_index(path, args, problems, out)
                elif suffix == TXN_INDEX_SUFFIX:
                    _dump_txn_index(path, out)
                elif suffix == SNAPSHOT_SUFFIX:
                    _dump_snapshot(path, out)
                else:
                    out.flush()
                    print(f"Ignoring unknown file {path}", file=sys.stderr, flush=True)
            except _Unreadable as exc:
                problems.errors.append(str(exc))
        out.flush()
    except BrokenPipeError:  # the reader went away (| head): not a failure of the dump
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_OK
    problems.print()
    return EXIT_FAILURE if problems.errors else EXIT_OK


class _Unreadable(Exception):
    """A file that cannot be dumped any further; the message names it and says why."""


# -- files ----------------------------------------------------------------------------------------


@contextmanager
def _mapped(path: Path, limit: int | None = None) -> Iterator[memoryview]:
    """The bytes of ``path`` (at most ``limit``), memory-mapped read-only."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed by the with below; an open error first)
    except OSError as exc:
        raise _Unreadable(f"{path}: cannot open: {exc.strerror or exc}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            yield memoryview(b"")
            return
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(mapped)
        try:
            yield view[:limit] if limit is not None else view
        finally:
            try:
                view.release()
                mapped.close()
            except BufferError:  # views of batches still alive: the mapping goes with them
                pass


def _base_offset(path: Path) -> int:
    """The offset a segment file is named after (``00000000000000000042.log`` -> 42)."""
    try:
        return int(path.name.split(".")[0])
    except ValueError:
        raise _Unreadable(f"{path}: the file name does not start with a base offset") from None


def _segment_of(path: Path) -> Path:
    return path.with_name(path.name.split(".")[0] + LOG_SUFFIX)


# -- .log -----------------------------------------------------------------------------------------


def _dump_log(path: Path, args: argparse.Namespace, deep: bool, problems: _Problems,
              out) -> None:
    out.write(f"Log starting offset: {_base_offset(path)}\n")
    with _mapped(path, args.max_bytes) as data:
        reader = BatchReader(data)
        last_offset = -1
        try:
            for batch in reader:
                out.write(_batch_line(batch) + "\n")
                if not batch.is_valid():
                    problems.errors.append(f"{path}: {_crc_fault(batch)}")
                if deep:
                    last_offset = _dump_records(path, batch, args, last_offset, problems, out)
        except RecordsError as exc:
            problems.errors.append(f"{path}: corrupt data at position {reader.position}: {exc}")
            return
        trailing = len(data) - reader.position
        if trailing > 0 and args.max_bytes == INT32_MAX:
            out.write(f"Found {trailing} invalid bytes at the end of {path.name}\n")
            problems.errors.append(f"{path}: {trailing} bytes at position {reader.position} are "
                                   "not a whole batch (a torn write?)")


def _crc_fault(batch) -> str:
    if isinstance(batch, RecordBatch):
        try:
            batch.ensure_valid()
        except RecordsError as exc:
            return str(exc)
        return f"record batch at position {batch.position} is corrupt"
    return (f"message at position {batch.position} (offset {batch.offset}) is corrupt: stored "
            f"CRC-32 {batch.crc:#010x}, computed {batch.compute_crc():#010x}")


def _batch_line(batch) -> str:
    """One batch in kafka-dump-log's format."""
    if batch.magic >= 2:
        horizon = f"OptionalLong[{batch.base_timestamp}]" \
            if batch.attributes & DELETE_HORIZON_FLAG else "OptionalLong.empty"
        head = (f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} "
                f"count: {batch.record_count} baseSequence: {batch.base_sequence} "
                f"lastSequence: {batch.last_sequence} producerId: {batch.producer_id} "
                f"producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
                f"isTransactional: {_bool(batch.is_transactional)} "
                f"isControl: {_bool(batch.is_control_batch)} deleteHorizonMs: {horizon}")
        max_timestamp = batch.max_timestamp
    else:
        head = f"offset: {batch.last_offset}"
        max_timestamp = batch.timestamp
    return (f"{head} position: {batch.position} {_timestamp_type(batch)}: {max_timestamp} "
            f"size: {batch.size_in_bytes} magic: {batch.magic} "
            f"compresscodec: {_codec(batch)} crc: {batch.crc} "
            f"isvalid: {_bool(batch.is_valid())}")


def _dump_records(path: Path, batch, args: argparse.Namespace, last_offset: int,
                  problems: _Problems, out) -> int:
    """Print the records of ``batch``; returns the offset of the last one."""
    try:
        legacy = _legacy_checksums(batch) if batch.magic < 2 else None
        for i, record in enumerate(batch):
            if last_offset >= 0 and record.offset != last_offset + 1:
                problems.add(problems.non_consecutive, path, (last_offset, record.offset))
            last_offset = record.offset
            parts = []
            if not args.skip_record_metadata:
                parts.append(_record_metadata(batch, record, legacy[i] if legacy else None))
            if args.print_data_log and not batch.is_control_batch:
                if record.key is not None:
                    parts.append(f"key: {_text(record.key)}")
                if record.value is not None:
                    parts.append(f"payload: {_text(record.value)}")
            line = " ".join(parts)
            if args.skip_record_metadata and parts:
                line = f"{RECORD_INDENT} {line}"
            out.write(line + "\n")
    except RecordsError as exc:
        problems.errors.append(f"{path}: the records of the batch at position {batch.position} "
                               f"(base offset {batch.base_offset}) cannot be read: {exc}")
    return last_offset


def _record_metadata(batch, record, legacy_checksum: tuple[bool, int] | None) -> str:
    key_size = -1 if record.key is None else len(record.key)
    value_size = -1 if record.value is None else len(record.value)
    line = (f"{RECORD_INDENT} offset: {record.offset} {_timestamp_type(batch)}: "
            f"{record.timestamp} keySize: {key_size} valueSize: {value_size}")
    if batch.magic >= 2:
        sequence = NO_SEQUENCE if batch.base_sequence == NO_SEQUENCE else \
            (batch.base_sequence + record.offset - batch.base_offset) & INT32_MAX
        line += f" sequence: {sequence} headerKeys: [{','.join(k for k, _ in record.headers)}]"
    if legacy_checksum is not None:
        valid, crc = legacy_checksum
        line += f" isValid: {_bool(valid)} crc: {crc}"
    if batch.is_control_batch:
        line += _control_record(record)
    return line


def _control_record(record) -> str:
    try:
        type_id = control_record_type(record.key)
    except RecordsError:
        return " controlType: UNKNOWN(-1)"
    if type_id in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        try:
            marker = decode_end_transaction_marker(record.key, record.value)
        except RecordsError:
            return f" controlType: {ControlRecordType(type_id).name}({type_id})"
        return f" endTxnMarker: {marker.type.name} coordinatorEpoch: {marker.coordinator_epoch}"
    return f" controlType: UNKNOWN({type_id})"


def _legacy_checksums(batch: LegacyRecordBatch) -> list[tuple[bool, int]]:
    """(valid, crc) of each message of a v0/v1 entry: itself, or the messages it wraps."""
    if batch.compression is CompressionType.NONE:
        return [(batch.is_valid(), batch.crc)]
    _key, value = batch.key_and_value()
    inner = memoryview(decompress(batch.compression, value or b"", magic=batch.magic))
    checksums, position = [], 0
    while position < len(inner):
        message = LegacyRecordBatch(inner, position)
        checksums.append((message.is_valid(), message.crc))
        position += message.size_in_bytes
    return checksums


def _timestamp_type(batch) -> str:
    return _TIMESTAMP_TYPES[batch.timestamp_type]


def _codec(batch) -> str:
    try:
        return batch.compression.kafka_name
    except RecordsError:  # an unknown codec id: the batch is corrupt, say which id
        return f"unknown({batch.attributes & 0x07})"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# -- .index and .timeindex ------------------------------------------------------------------------


def _entries(path: Path, index_class) -> np.ndarray:
    """The entries of an index file (key and value columns), checked for whole entries."""
    with _mapped(path) as data:
        size = index_class.ENTRY.size
        if len(data) % size:
            raise _Unreadable(f"{path}: {len(data)} bytes is not a whole number of {size}-byte "
                              "entries")
        return np.frombuffer(bytes(data), dtype=index_class.DTYPE)


@dataclass
class _SegmentBatches:
    """The batches of a segment, located by position and by last offset (headers only)."""

    positions: list[int]
    last_offsets: list[int]
    size: int

    @classmethod
    def read(cls, path: Path) -> "_SegmentBatches":
        positions, last_offsets = [], []
        with _mapped(path) as data:
            reader = BatchReader(data)
            try:
                for batch in reader:
                    positions.append(batch.position)
                    last_offsets.append(batch.last_offset)
            except RecordsError:
                pass  # the entries past the fault are reported as not found
            return cls(positions, last_offsets, len(data))


def _sanity_fault(kind: type, keys: np.ndarray, values: np.ndarray,
                  log_size: int) -> str | None:
    """What makes an index untrustworthy (as a broker loading it would judge), or None."""
    if not len(keys):
        return None
    if kind is OffsetIndex:
        if keys[0] < 0 or (np.diff(keys) <= 0).any():
            return "offsets are not increasing"
        if values[0] < 0 or (np.diff(values) < 0).any():
            return "positions are not increasing"
        if values[-1] >= max(log_size, 1):
            return f"position {int(values[-1])} is past the end of the segment ({log_size} bytes)"
        return None
    if values[0] < 0 or (np.diff(values) <= 0).any():
        return "offsets are not increasing"
    if (np.diff(keys) <= 0).any():
        return "timestamps are not increasing"
    return None


def _index_sanity(path: Path, kind: type, keys: np.ndarray, values: np.ndarray,
                  out) -> None:
    log_path = _segment_of(path)
    log_size = log_path.stat().st_size if log_path.exists() else 0
    fault = _sanity_fault(kind, keys, values, log_size)
    if fault is not None:
        raise _Unreadable(f"{path} failed the sanity check: {fault}")
    out.write(f"{path} passed sanity check.\n")


def _dump_offset_index(path: Path, args: argparse.Namespace, problems: _Problems, out) -> None:
    base_offset = _base_offset(path)
    entries = _entries(path, OffsetIndex)
    if not len(entries):
        out.write(f"{path} is empty.\n")
        return
    keys = entries["key"].astype(np.int64)
    positions = entries["value"].astype(np.int64)
    if args.index_sanity_check:
        _index_sanity(path, OffsetIndex, keys, positions, out)
        return
    segment = _load_segment(path)
    by_position = dict(zip(segment.positions, segment.last_offsets, strict=True))
    for i, (relative, position) in enumerate(zip(keys.tolist(), positions.tolist(), strict=True)):
        offset = base_offset + relative
        if i > 0 and offset == base_offset:
            break  # zero entries of a preallocated file after a crash: the end of the entries
        found = by_position.get(position, -1)
        if found != offset or not _fits(segment, position, args.max_message_size):
            problems.add(problems.index_mismatches, path, (offset, found))
        if not args.verify_index_only:
            out.write(f"offset: {offset} position: {position}\n")


def _fits(segment: _SegmentBatches, position: int, max_message_size: int) -> bool:
    i = bisect.bisect_left(segment.positions, position)
    end = segment.positions[i + 1] if i + 1 < len(segment.positions) else segment.size
    return end - position <= max_message_size


def _dump_time_index(path: Path, args: argparse.Namespace, problems: _Problems, out) -> None:
    base_offset = _base_offset(path)
    entries = _entries(path, TimeIndex)
    timestamps = entries["key"].astype(np.int64)
    relative = entries["value"].astype(np.int64)
    if args.index_sanity_check:
        _index_sanity(path, TimeIndex, timestamps, relative, out)
        return
    if not len(entries):
        return
    log_path = _segment_of(path)
    segment = _load_segment(path)
    previous = -1
    with _mapped(log_path) as data:
        pairs = zip(timestamps.tolist(), relative.tolist(), strict=True)
        for i, (timestamp, rel) in enumerate(pairs):
            offset = base_offset + rel
            if i > 0 and offset == base_offset:
                break
            j = bisect.bisect_left(segment.last_offsets, offset)
            if j == len(segment.last_offsets):
                problems.add(problems.time_not_found, path, (offset, -1))
            elif segment.last_offsets[j] != offset:
                problems.add(problems.time_not_found, path, (offset, segment.last_offsets[j]))
            else:
                largest = _largest_timestamp(data, segment.positions[j], log_path, problems)
                if largest != timestamp:
                    problems.add(problems.time_mismatches, path, (timestamp, largest))
                if previous >= timestamp:
                    problems.add(problems.time_out_of_order, path, (timestamp, previous))
            if not args.verify_index_only:
                out.write(f"timestamp: {timestamp} offset: {offset}\n")
            previous = timestamp


def _largest_timestamp(data: memoryview, position: int, log_path: Path,
                       problems: _Problems) -> int:
    try:
        batch = next(iter(BatchReader(data[position:])))
        return max((record.timestamp for record in batch), default=-1)
    except (RecordsError, StopIteration) as exc:
        problems.errors.append(f"{log_path}: the batch at position {position} cannot be read: "
                               f"{exc}")
        return -1


def _load_segment(index_path: Path) -> _SegmentBatches:
    log_path = _segment_of(index_path)
    if not log_path.exists():
        raise _Unreadable(f"{index_path}: its segment {log_path.name} does not exist")
    return _SegmentBatches.read(log_path)


# -- .txnindex and .snapshot ----------------------------------------------------------------------


def _dump_txn_index(path: Path, out) -> None:
    with _mapped(path) as data:
        raw = bytes(data)
    if len(raw) % TXN_ENTRY_SIZE:
        raise _Unreadable(f"{path}: {len(raw)} bytes is not a whole number of "
                          f"{TXN_ENTRY_SIZE}-byte entries")
    for position in range(0, len(raw), TXN_ENTRY_SIZE):
        try:
            txn = AbortedTxn.from_bytes(raw, position)
        except CorruptIndexError as exc:
            raise _Unreadable(f"{path} at byte {position}: {exc}") from None
        out.write(f"version: 0 producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
                  f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}\n")


def _dump_snapshot(path: Path, out) -> None:
    with _mapped(path) as data:
        raw = bytes(data)
    try:
        entries = decode_snapshot(raw, str(path))
    except CorruptSnapshotError as exc:
        raise _Unreadable(str(exc)) from None
    for e in entries:
        txn_first = f"OptionalLong[{e.current_txn_first_offset}]" \
            if e.current_txn_first_offset >= 0 else "OptionalLong.empty"
        first_sequence = e.last_sequence - e.offset_delta
        if e.last_sequence < e.offset_delta:  # sequences wrap at 2^31 - 1
            first_sequence = INT32_MAX - (e.offset_delta - e.last_sequence) + 1
        out.write(f"producerId: {e.producer_id} producerEpoch: {e.epoch} "
                  f"coordinatorEpoch: {e.coordinator_epoch} "
                  f"currentTxnFirstOffset: {txn_first} lastTimestamp: {e.timestamp} "
                  f"firstSequence: {first_sequence} lastSequence: {e.last_sequence} "
                  f"lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} "
                  f"timestamp: {e.timestamp}\n")
