"""Transactions in a partition log: the last stable offset as transactions of several producers
open and close, the aborted transactions of a read_committed read, and the transaction indexes
through rolls, truncation, retention, compaction and restarts (clean, unclean, damaged files)."""

import shutil
from dataclasses import replace

import pytest
from log_support import LogOpener
from manual_clock import NOW, ManualClock

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.cleaner import clean
from broker_lite.log.files import TXN_INDEX_SUFFIX, segment_path
from broker_lite.log.producer_state import AppendOrigin
from broker_lite.log.retention import enforce_retention
from broker_lite.log.txn_index import AbortedTxn
from broker_lite.records import (
    BatchReader,
    ControlRecordType,
    EndTransactionMarker,
    build_batch,
    build_control_batch,
    iter_batches,
)

COMMIT, ABORT = ControlRecordType.COMMIT, ControlRecordType.ABORT
P1, P2, P3 = 1000, 2000, 3000


def config(**overrides) -> LogConfig:
    defaults = dict(segment_bytes=1 << 20, index_interval_bytes=64, file_delete_delay_ms=0)
    return replace(LogConfig(), **{**defaults, **overrides})


class Writer:
    """Appends to a log as producers and a transaction coordinator would, keeping sequences."""

    def __init__(self, log: Log):
        self.log = log
        self.sequences: dict[int, int] = {}

    def txn(self, producer_id: int, count: int = 1, key: bytes = b"k", value: bytes = b"t") -> int:
        """A transactional batch of ``count`` records; returns its first offset."""
        return self._producer_batch(producer_id, count, key, value, True)

    def idempotent(self, producer_id: int, count: int = 1, key: bytes = b"k",
                   value: bytes = b"i") -> int:
        return self._producer_batch(producer_id, count, key, value, False)

    def _producer_batch(self, producer_id, count, key, value, transactional) -> int:
        seq = self.sequences.get(producer_id, 0)
        self.sequences[producer_id] = seq + count
        records = [(key, value + b"-%d" % (seq + i)) for i in range(count)]
        return self.log.append(build_batch(records, timestamp=NOW, producer_id=producer_id,
                                           producer_epoch=0, base_sequence=seq,
                                           is_transactional=transactional)).first_offset

    def plain(self, count: int = 1, key: bytes = b"k", value: bytes = b"p") -> int:
        records = [(key, value) for _ in range(count)]
        return self.log.append(build_batch(records, timestamp=NOW)).first_offset

    def end(self, producer_id: int, kind: ControlRecordType) -> int:
        marker = build_control_batch(EndTransactionMarker(kind, 0), producer_id=producer_id,
                                     producer_epoch=0, timestamp=NOW)
        return self.log.append(marker, origin=AppendOrigin.COORDINATOR).first_offset


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def open_log(tmp_path, clock):
    opener = LogOpener(tmp_path, clock, config(), name="txns-0")
    yield opener
    opener.close_all()


def aborted_entries(log: Log) -> list[tuple[int, AbortedTxn]]:
    return [(s.base_offset, txn) for s in log.segments for txn in s.txn_index]


def fetched_offsets(read) -> list[int]:
    if read.region is None:
        return []
    return [r.offset for b in iter_batches(read.region.read()) if not b.is_control_batch
            for r in b]


# -- the last stable offset -------------------------------------------------------------------


def test_the_lso_follows_the_transactions_of_interleaved_producers(open_log):
    log = open_log()
    w = Writer(log)
    steps = [
        # (action, offset it writes at, LSO after it, open transactions after it)
        (lambda: w.plain(), 0, 1, {}),
        (lambda: w.txn(P1), 1, 1, {P1: 1}),
        (lambda: w.txn(P2, 2), 2, 1, {P1: 1, P2: 2}),
        (lambda: w.txn(P1), 4, 1, {P1: 1, P2: 2}),  # the same transaction goes on
        (lambda: w.idempotent(P3), 5, 1, {P1: 1, P2: 2}),  # not transactional: opens none
        (lambda: w.end(P1, COMMIT), 6, 2, {P2: 2}),
        (lambda: w.txn(P1), 7, 2, {P2: 2, P1: 7}),
        (lambda: w.end(P2, ABORT), 8, 7, {P1: 7}),
        (lambda: w.plain(), 9, 7, {P1: 7}),
        (lambda: w.end(P1, ABORT), 10, 11, {}),
    ]
    for action, offset, lso, ongoing in steps:
        assert action() == offset
        assert (log.last_stable_offset, log.ongoing_transactions) == (lso, ongoing), offset
        expected_first = min(ongoing.values()) if ongoing else None
        assert log.first_unstable_offset == expected_first
    # Each abort is indexed with the LSO right after it: P1's transaction still held it at 7.
    assert aborted_entries(log) == [(0, AbortedTxn(P2, 2, 8, 7)), (0, AbortedTxn(P1, 7, 10, 11))]
    assert log.last_stable_offset == log.high_watermark == log.log_end_offset == 11


def test_a_marker_without_an_open_transaction_closes_an_empty_one(open_log):
    log = open_log()
    w = Writer(log)
    w.plain()
    assert w.end(P1, ABORT) == 1
    assert aborted_entries(log) == [(0, AbortedTxn(P1, 1, 1, 2))]
    assert log.last_stable_offset == 2


def test_the_producer_state_and_the_open_transactions_agree(open_log):
    log = open_log()
    w = Writer(log)
    w.txn(P1)
    w.txn(P2)
    w.end(P1, COMMIT)
    states = {p.producer_id: p.current_txn_first_offset for p in log.active_producers()}
    assert states == {P1: -1, P2: 1}
    assert log.ongoing_transactions == {P2: 1}


# -- read_committed reads ---------------------------------------------------------------------


def test_read_committed_stops_at_the_lso_and_lists_the_aborts_it_overlaps(open_log):
    log = open_log()
    w = Writer(log)
    w.plain(2)                     # 0-1
    w.txn(P1, 2)                   # 2-3, aborted below
    w.txn(P2)                      # 4, committed below
    read = log.read_committed(0, 1 << 20)
    assert (fetched_offsets(read), read.aborted_transactions, read.last_stable_offset) == \
        ([0, 1], [], 2)
    assert log.read_committed(2, 1 << 20).region is None  # nothing stable there yet
    w.end(P1, ABORT)               # 5
    w.end(P2, COMMIT)              # 6
    w.plain()                      # 7
    read = log.read_committed(0, 1 << 20)
    assert fetched_offsets(read) == [0, 1, 2, 3, 4, 7]
    assert read.aborted_transactions == [AbortedTxn(P1, 2, 5, 4)]
    assert read.last_stable_offset == 8
    # read_uncommitted sees everything, as before
    everything = iter_batches(log.read(0, 1 << 20).read())
    assert [record.offset for batch in everything for record in batch] == list(range(8))


def test_the_aborts_listed_are_bounded_by_what_the_read_returns(open_log):
    log = open_log()
    w = Writer(log)
    w.txn(P1)                      # 0, aborted at 1
    w.end(P1, ABORT)
    for _ in range(20):            # 2-21
        w.plain(value=b"x" * 40)
    w.txn(P2)                      # 22, aborted at 23
    w.end(P2, ABORT)
    small = log.read_committed(0, 1)  # the first batch only
    assert fetched_offsets(small) == [0]
    assert small.aborted_transactions == [AbortedTxn(P1, 0, 1, 2)]
    everything = log.read_committed(0, 1 << 20)
    assert [t.producer_id for t in everything.aborted_transactions] == [P1, P2]
    later = log.read_committed(10, 1 << 20)
    assert later.aborted_transactions == [AbortedTxn(P2, 22, 23, 24)]


def test_aborted_transactions_are_collected_across_segments(open_log):
    log = open_log()
    w = Writer(log)
    w.txn(P1)                      # 0: P1's transaction starts in segment 0 ...
    w.txn(P2)                      # 1
    w.end(P2, ABORT)               # 2: aborted in segment 0, LSO 0 (P1 still open)
    log.roll()
    w.plain()                      # 3
    log.roll()
    w.txn(P3)                      # 4
    w.end(P1, ABORT)               # 5: ... and is aborted in segment 2, LSO 4 (P3 open)
    w.end(P3, COMMIT)              # 6
    log.roll()
    w.txn(P2)                      # 7
    w.end(P2, ABORT)               # 8: segment 3, LSO 9
    assert [s.base_offset for s in log.segments] == [0, 3, 4, 7]
    assert aborted_entries(log) == [(0, AbortedTxn(P2, 1, 2, 0)), (4, AbortedTxn(P1, 0, 5, 4)),
                                    (7, AbortedTxn(P2, 7, 8, 9))]
    ids = lambda start, end: [(t.producer_id, t.first_offset)  # noqa: E731
                              for t in log.collect_aborted_transactions(start, end)]
    assert ids(0, 9) == [(P2, 1), (P1, 0), (P2, 7)]
    assert ids(3, 4) == [(P1, 0)]  # P1's transaction spans segments 0 to 2
    assert ids(3, 7) == [(P1, 0)]
    assert ids(6, 9) == [(P2, 7)]
    assert ids(0, 1) == [(P1, 0)]
    assert ids(9, 20) == []


# -- truncation and retention -----------------------------------------------------------------


def test_truncation_removes_the_aborts_above_it_and_reopens_their_transactions(open_log):
    log = open_log()
    w = Writer(log)
    w.txn(P1)                      # 0
    w.end(P1, ABORT)               # 1
    log.roll()
    w.txn(P2)                      # 2
    w.txn(P3)                      # 3
    w.end(P2, ABORT)               # 4
    w.end(P3, COMMIT)              # 5
    log.roll()
    w.plain()                      # 6
    assert log.last_stable_offset == 7
    log.truncate_to(5)             # P3's commit goes
    assert [t for _, t in aborted_entries(log)] == [AbortedTxn(P1, 0, 1, 2),
                                                    AbortedTxn(P2, 2, 4, 3)]
    assert (log.ongoing_transactions, log.last_stable_offset) == ({P3: 3}, 3)
    log.truncate_to(4)             # P2's abort goes too
    assert [t for _, t in aborted_entries(log)] == [AbortedTxn(P1, 0, 1, 2)]
    assert (log.ongoing_transactions, log.last_stable_offset) == ({P2: 2, P3: 3}, 2)
    log.truncate_to(1)
    assert aborted_entries(log) == []
    assert not segment_path(log.directory, 0, TXN_INDEX_SUFFIX).exists()
    assert (log.ongoing_transactions, log.last_stable_offset) == ({P1: 0}, 0)
    w.end(P1, ABORT)               # the log goes on from there
    assert aborted_entries(log) == [(0, AbortedTxn(P1, 0, 1, 2))]


def test_retention_deletes_the_transaction_indexes_of_the_segments_it_deletes(open_log, clock):
    log = open_log(config(retention_ms=1000))
    w = Writer(log)
    for producer_id in (P1, P2, P3):
        w.txn(producer_id)
        w.end(producer_id, ABORT)
        log.roll()
    paths = [segment_path(log.directory, s.base_offset, TXN_INDEX_SUFFIX) for s in log.segments]
    assert [p.exists() for p in paths] == [True, True, True, False]
    clock.now += 10_000
    assert enforce_retention(log) == 3
    assert not any(p.exists() for p in paths)
    assert log.collect_aborted_transactions(log.log_start_offset, log.log_end_offset) == []
    assert not any(n.endswith(TXN_INDEX_SUFFIX + ".deleted") for n in
                   (p.name for p in log.directory.iterdir()))


def test_an_open_transaction_below_the_log_start_holds_the_lso_at_the_log_start(open_log,
                                                                                clock):
    log = open_log(config(retention_ms=1000))
    w = Writer(log)
    w.txn(P1)                      # 0, never ended
    log.roll()
    w.plain()
    log.roll()
    clock.now += 10_000
    enforce_retention(log)
    assert log.log_start_offset == 2
    assert (log.first_unstable_offset, log.last_stable_offset) == (2, 2)


# -- restarts ---------------------------------------------------------------------------------


def fill_with_transactions(log: Log) -> Writer:
    """Transactions across rolls, some open at the end."""
    w = Writer(log)
    w.plain()
    w.txn(P1, 2)
    w.txn(P2)
    w.end(P1, ABORT)
    log.roll()
    w.txn(P3)
    w.txn(P1)
    w.end(P2, COMMIT)
    w.end(P3, ABORT)
    log.roll()
    w.txn(P2)
    w.plain()
    w.end(P1, ABORT)
    w.txn(P3)                      # P2 and P3 stay open
    return w


def observed(log: Log) -> tuple:
    return (log.last_stable_offset, log.ongoing_transactions, aborted_entries(log),
            log.collect_aborted_transactions(0, log.log_end_offset))


def index_files(log: Log) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(log.directory.glob("*" + TXN_INDEX_SUFFIX))}


def test_a_clean_restart_keeps_everything(open_log):
    log = open_log()
    fill_with_transactions(log)
    before, files = observed(log), index_files(log)
    assert before[1] == {P2: 9, P3: 12} and len(before[2]) == 3
    log.close()
    reopened = open_log(clean_shutdown=True)
    assert observed(reopened) == before and index_files(reopened) == files


@pytest.mark.parametrize("checkpointed", [False, True])
def test_an_unclean_restart_rebuilds_the_same_state(open_log, tmp_path, checkpointed):
    log = open_log()
    w = fill_with_transactions(log)
    recovery_point = 0
    if checkpointed:
        log.flush()
        recovery_point = log.recovery_point
        w.txn(P1)                  # written after the last flush
        w.end(P2, ABORT)
    before, files = observed(log), index_files(log)
    # The files as a killed broker leaves them: no snapshot at the end, nothing closed.
    crashed = tmp_path / "crashed" / "txns-0"
    shutil.copytree(log.directory, crashed)
    reopened = Log(crashed, config(), clock=ManualClock(), recovery_point=recovery_point)
    try:
        assert observed(reopened) == before
        assert index_files(reopened) == files
    finally:
        reopened.close()


def test_an_unclean_restart_from_the_log_start_rewrites_lost_index_files(open_log, tmp_path):
    log = open_log()
    fill_with_transactions(log)
    before = observed(log)
    crashed = tmp_path / "crashed" / "txns-0"
    shutil.copytree(log.directory, crashed)
    for path in crashed.glob("*" + TXN_INDEX_SUFFIX):
        path.unlink()
    reopened = Log(crashed, config(), clock=ManualClock(), recovery_point=0)
    try:
        assert observed(reopened) == before
    finally:
        reopened.close()


@pytest.mark.parametrize("damage", ["torn", "outside the segment", "bad version"])
def test_a_damaged_index_is_rebuilt_after_a_clean_restart(open_log, damage):
    log = open_log()
    fill_with_transactions(log)
    before, files = observed(log), index_files(log)
    log.close()
    path = segment_path(log.directory, log.segments[1].base_offset, TXN_INDEX_SUFFIX)
    data = path.read_bytes()
    if damage == "torn":
        path.write_bytes(data[:-3])
    elif damage == "outside the segment":
        path.write_bytes(data + AbortedTxn(P1, 0, 10_000, 10_001).to_bytes())
    else:
        path.write_bytes(b"\x00\x07" + data[2:])
    reopened = open_log(clean_shutdown=True)
    assert observed(reopened) == before and index_files(reopened) == files


# -- compaction -------------------------------------------------------------------------------


def compacted(open_log):
    return open_log(config(cleanup_policy=("compact",), segment_bytes=1 << 20))


def live_records(log: Log) -> dict[bytes, bytes]:
    """What a read_committed consumer would end up with per key, reading segment by segment."""
    latest, offset = {}, log.log_start_offset
    while (read := log.read_committed(offset, 1 << 30)).region is not None:
        aborted = [(t.producer_id, t.first_offset, t.last_offset)
                   for t in read.aborted_transactions]
        for batch in BatchReader(read.region.read()):
            offset = batch.last_offset + 1
            if batch.is_control_batch or any(
                    p == batch.producer_id and first <= batch.base_offset <= last
                    for p, first, last in aborted):
                continue
            for record in batch:
                latest[record.key] = record.value
    return latest


def test_compaction_drops_aborted_records_but_not_what_they_would_have_replaced(open_log):
    log = compacted(open_log)
    w = Writer(log)
    w.plain(key=b"a", value=b"a1")           # 0
    w.plain(key=b"b", value=b"b1")           # 1
    w.txn(P1, key=b"a", value=b"a2")         # 2: aborted, so a1 stays the value of a
    w.txn(P2, key=b"b", value=b"b2")         # 3: committed, replaces b1
    w.end(P1, ABORT)                         # 4
    w.end(P2, COMMIT)                        # 5
    log.roll()
    w.plain(key=b"c", value=b"c1")
    before = live_records(log)
    assert before == {b"a": b"a1", b"b": b"b2-0", b"c": b"c1"}
    assert clean(log).segments_cleaned == 1
    offsets = [(b.base_offset, b.is_control_batch) for s in log.segments
               for b in BatchReader(s.read_bytes(0, s.size))]
    # a1 kept; b1 replaced; the aborted a2 gone; the markers kept
    kept_data = [r.offset for s in log.segments for b in BatchReader(s.read_bytes(0, s.size))
                 if not b.is_control_batch for r in b]
    assert kept_data == [0, 3, 6]
    assert (4, True) in offsets and (5, True) in offsets
    assert live_records(log) == before
    assert aborted_entries(log) == [(0, AbortedTxn(P1, 2, 4, 3))]
    log.close()
    reopened = open_log(clean_shutdown=True)
    assert aborted_entries(reopened) == [(0, AbortedTxn(P1, 2, 4, 3))]
    reopened.close()
    # Rebuilt from the log, the abort starts where P1's data now does: at its marker.
    recovered = open_log(clean_shutdown=False, recovery_point=0)
    assert aborted_entries(recovered) == [(0, AbortedTxn(P1, 4, 4, 3))]
    assert live_records(recovered) == before


def test_compaction_stops_below_the_first_open_transaction(open_log):
    log = compacted(open_log)
    w = Writer(log)
    w.plain(key=b"a", value=b"a1")           # 0
    log.roll()
    w.txn(P1, key=b"a", value=b"a2")         # 1: open, may yet be aborted
    log.roll()
    w.plain(key=b"b", value=b"b1")
    log.roll()
    assert clean(log).segments_cleaned == 1  # only the segment before the transaction
    assert [r.value for s in log.segments for b in BatchReader(s.read_bytes(0, s.size))
            for r in b][:2] == [b"a1", b"a2-0"]
    w.end(P1, ABORT)
    log.roll()
    assert clean(log).segments_cleaned == 4
    assert live_records(log) == {b"a": b"a1", b"b": b"b1"}


def test_a_cleaned_segment_carries_the_aborts_of_the_segments_it_replaces(open_log):
    log = compacted(open_log)
    w = Writer(log)
    w.txn(P1, key=b"x")
    w.end(P1, ABORT)                         # 1, segment 0
    log.roll()
    w.txn(P2, key=b"y")
    w.end(P2, ABORT)                         # 3, segment 2
    log.roll()
    w.plain(key=b"z")
    before = aborted_entries(log)
    assert [base for base, _ in before] == [0, 2]
    clean(log)
    assert [s.base_offset for s in log.segments] == [0, 4]
    assert [t for _, t in aborted_entries(log)] == [t for _, t in before]
    assert [base for base, _ in aborted_entries(log)] == [0, 0]
    assert not segment_path(log.directory, 2, TXN_INDEX_SUFFIX).exists()


class Crash(Exception):
    pass


@pytest.mark.parametrize("clean_shutdown", [False, True])
@pytest.mark.parametrize("step", ["cleaned", "swap", "deleted", "log renamed"])
def test_a_crash_while_swapping_in_a_cleaned_segment_keeps_its_aborts(tmp_path, clock, step,
                                                                     clean_shutdown):
    cfg = config(cleanup_policy=("compact",))
    log = Log(tmp_path / "txns-0", cfg, clock=clock)
    w = Writer(log)
    w.plain(key=b"a", value=b"a1")           # 0
    w.txn(P1, key=b"a", value=b"a2")         # 1
    w.end(P1, ABORT)                         # 2
    log.roll()
    w.txn(P2, key=b"b")                      # 3
    w.end(P2, ABORT)                         # 4
    log.roll()
    w.plain(key=b"c")                        # 5
    before = live_records(log)
    aborts = [(t.producer_id, t.last_offset) for _, t in aborted_entries(log)]
    assert aborts == [(P1, 2), (P2, 4)]

    def crash(reached):
        if reached == ("deleted" if step == "log renamed" else step):
            raise Crash(step)

    with pytest.raises(Crash):
        clean(log, on_step=crash)
    if step == "log renamed":  # killed between renaming the new segment's log and its indexes
        swapped = segment_path(log.directory, 0)
        swapped.with_name(swapped.name + ".swap").rename(swapped)
    # the process dies here: nothing of the old Log object is used again

    reopened = Log(tmp_path / "txns-0", cfg, clock=clock, clean_shutdown=clean_shutdown)
    try:
        names = [p.name for p in reopened.directory.iterdir()]
        assert not any(n.endswith((".cleaned", ".swap", ".deleted")) for n in names)
        assert [(t.producer_id, t.last_offset) for _, t in aborted_entries(reopened)] == aborts
        assert live_records(reopened) == before
        assert reopened.last_stable_offset == reopened.log_end_offset == 6
    finally:
        reopened.close()


def test_a_control_batch_without_a_marker_is_corrupt(open_log):
    """What a client sends as a control batch reaches the log only with a transactional id
    (Produce refuses it otherwise, as Kafka does); one whose record is no marker is refused."""
    from broker_lite.records import CorruptRecordError, RecordBatchBuilder

    log = open_log()
    builder = RecordBatchBuilder(producer_id=P1, producer_epoch=0, is_transactional=True,
                                 is_control_batch=True)
    builder.append(b"?", key=b"\x00")
    with pytest.raises(CorruptRecordError, match="control record"):
        log.append(builder.build())
    assert log.log_end_offset == 0
