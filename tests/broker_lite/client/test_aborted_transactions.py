"""read_committed filtering of one partition's batches (broker_lite.client.consumer.aborted), as a
table: which batches a consumer keeps given the aborted transactions the broker listed."""

from broker_lite.client.consumer.aborted import AbortedTransactions
from broker_lite.records import (
    ControlRecordType,
    EndTransactionMarker,
    RecordBatch,
    build_batch,
    build_control_batch,
    build_message_set,
)
from broker_lite.records.reader import iter_batches


def data(offset: int, producer_id: int = -1, transactional: bool = False) -> RecordBatch:
    raw = build_batch([(None, b"x")], base_offset=offset, producer_id=producer_id,
                      producer_epoch=0 if producer_id >= 0 else -1,
                      is_transactional=transactional)
    return RecordBatch(raw)


def marker(offset: int, producer_id: int, kind: ControlRecordType) -> RecordBatch:
    return RecordBatch(build_control_batch(EndTransactionMarker(kind, 0), producer_id=producer_id,
                                           producer_epoch=0, base_offset=offset))


def kept(aborted: list[tuple[int, int]], batches: list) -> list[int]:
    filtering = AbortedTransactions()
    filtering.add(aborted)
    return [b.base_offset for b in batches if filtering.keep(b)]


def test_an_aborted_transaction_is_dropped_up_to_its_marker_only():
    batches = [data(0, 7, True), data(1, 8, True), marker(2, 7, ControlRecordType.ABORT),
               data(3, 7, True), marker(4, 8, ControlRecordType.COMMIT), data(5)]
    assert kept([(7, 0)], batches) == [1, 3, 5]


def test_without_aborted_transactions_every_data_batch_is_kept_and_no_marker():
    batches = [data(0, 7, True), marker(1, 7, ControlRecordType.COMMIT), data(2)]
    assert kept([], batches) == [0, 2]


def test_an_abort_listed_again_by_a_later_fetch_counts_once():
    filtering = AbortedTransactions()
    filtering.add([(7, 0)])
    assert not filtering.keep(data(0, 7, True))
    assert not filtering.keep(marker(1, 7, ControlRecordType.ABORT))
    filtering.add([(7, 0)])  # the next response repeats the transaction it overlapped
    assert filtering.keep(data(2, 7, True))


def test_legacy_message_sets_are_kept():
    (legacy,) = iter_batches(build_message_set([(None, b"old")], magic=1))
    assert kept([(7, 0)], [legacy]) == [0]
