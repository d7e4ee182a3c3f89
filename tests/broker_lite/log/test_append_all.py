"""Log.append_all: the records of several requests sent together, appended in one write, each
with the outcome Log.append gives it when called on each in turn."""

import pytest
from manual_clock import NOW

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log
from broker_lite.log.segment import LogSegment
from broker_lite.records import build_batch


def plain(i: int, count: int = 2) -> bytes:
    return build_batch([(b"k%d-%d" % (i, j), b"v" * 30) for j in range(count)],
                       timestamp=NOW + i)


def idempotent(seq: int, count: int = 2, producer_id: int = 7, epoch: int = 0,
               transactional: bool = False) -> bytes:
    return build_batch([(None, b"p%d" % (seq + j)) for j in range(count)], timestamp=NOW,
                       producer_id=producer_id, producer_epoch=epoch, base_sequence=seq,
                       is_transactional=transactional)


def corrupt(i: int) -> bytes:
    damaged = bytearray(plain(i))
    damaged[-1] ^= 0xFF  # covered by the CRC
    return bytes(damaged)


def too_large(i: int) -> bytes:
    return build_batch([(b"big", b"x" * 3000)], timestamp=NOW + i)


RUNS = {
    "plain": [plain(i) for i in range(6)],
    "a corrupt one in the middle": [plain(0), plain(1), corrupt(2), plain(3)],
    "all refused": [corrupt(0), too_large(1)],
    "one too large": [plain(0), too_large(1), plain(2)],
    "an idempotent producer": [idempotent(0), idempotent(2), plain(5), idempotent(4)],
    "two producers": [idempotent(0), idempotent(0, producer_id=8), idempotent(2),
                      idempotent(2, producer_id=8)],
    "a retry of a batch in the log": [idempotent(4), idempotent(0, count=4), idempotent(6)],
    "an old sequence": [idempotent(4), idempotent(0), idempotent(6)],
    "a retry of a batch in the run": [idempotent(4), idempotent(4), idempotent(6)],
    "a sequence gap": [idempotent(4), idempotent(9), idempotent(6)],
    "a fenced epoch": [idempotent(4, epoch=1), idempotent(0, epoch=0)],
    "transactions": [idempotent(0, producer_id=9, transactional=True), plain(1),
                     idempotent(2, producer_id=9, transactional=True),
                     idempotent(0, producer_id=10, transactional=True)],
}


def log_with_a_producer(path, **config) -> Log:
    config = {"max_message_bytes": 2048, "index_interval_bytes": 64, **config}
    log = Log(path, LogConfig(**config), clock=lambda: NOW)
    log.append(idempotent(0, count=4))  # the producer 7 the runs go on from
    return log


def outcome(result):
    if isinstance(result, Exception):
        return type(result).__name__, str(result)
    return result.first_offset, result.last_offset, result.record_count, len(result.batches)


def log_files(log: Log) -> list[bytes]:
    """Each segment's records, offset index and time index, as on disk."""
    return [path.read_bytes() for segment in log.segments
            for path in (segment.log_path, segment.offset_index.path, segment.time_index.path)]


@pytest.mark.parametrize("name", RUNS)
def test_each_request_gets_what_appending_it_in_turn_gives(tmp_path, name):
    together = log_with_a_producer(tmp_path / "together-0")
    in_turn = log_with_a_producer(tmp_path / "in-turn-0")
    expected = []
    for records in RUNS[name]:
        try:
            expected.append(in_turn.append(records))
        except Exception as exc:
            expected.append(exc)
    got = together.append_all(RUNS[name])
    assert [outcome(r) for r in got] == [outcome(r) for r in expected]
    assert log_files(together) == log_files(in_turn)
    assert (together.log_end_offset, together.high_watermark) == \
        (in_turn.log_end_offset, in_turn.high_watermark)
    assert together.active_producers() == in_turn.active_producers()
    assert together.ongoing_transactions == in_turn.ongoing_transactions
    assert together.first_unstable_offset == in_turn.first_unstable_offset


def test_the_records_taken_are_written_at_once(tmp_path, monkeypatch):
    log = log_with_a_producer(tmp_path / "t-0")
    writes = []
    original = LogSegment.append
    monkeypatch.setattr(LogSegment, "append",
                        lambda self, chunks, batches: (writes.append(len(batches)),
                                                       original(self, chunks, batches))[1])
    log.append_all([plain(0), corrupt(1), idempotent(4), plain(2)])
    assert writes == [3]


def test_the_run_rolls_the_segment_as_one_append(tmp_path):
    """A run that does not fit the active segment goes whole into a new one, as one request's
    records do."""
    log = log_with_a_producer(tmp_path / "t-0", segment_bytes=600)
    outcomes = log.append_all([plain(i, count=1) for i in range(6)])
    assert [s.base_offset for s in log.segments] == [0, outcomes[0].first_offset]
    assert log.log_end_offset == outcomes[-1].last_offset + 1 == 10
