"""The transaction index file (``.txnindex``): Kafka's 34-byte AbortedTxn entries, the overlap
search of a fetch, truncation, and detection of files that cannot be trusted."""

import struct

import pytest

from broker_lite.log.index import CorruptIndexError
from broker_lite.log.txn_index import ENTRY_SIZE, AbortedTxn, TransactionIndex

BASE = 100


@pytest.fixture
def path(tmp_path):
    return tmp_path / "00000000000000000100.txnindex"


def index_with(path, *txns: AbortedTxn) -> TransactionIndex:
    index = TransactionIndex(path, BASE)
    for txn in txns:
        index.append(txn)
    index.flush()
    return index


def test_an_entry_is_kafkas_34_byte_aborted_txn():
    # version int16, producerId int64, firstOffset int64, lastOffset int64, lastStableOffset int64
    txn = AbortedTxn(producer_id=0x0102030405060708, first_offset=100, last_offset=258,
                     last_stable_offset=259)
    assert ENTRY_SIZE == 34
    assert txn.to_bytes() == bytes.fromhex(
        "0000"
        "0102030405060708"
        "0000000000000064"
        "0000000000000102"
        "0000000000000103")
    assert AbortedTxn.from_bytes(txn.to_bytes()) == txn


def test_round_trip_through_the_file(path):
    txns = [AbortedTxn(7, 90, 101, 102), AbortedTxn(8, 103, 110, 95 + 16),
            AbortedTxn(7, 111, 120, 121)]
    index = index_with(path, *txns)
    index.close()
    assert path.read_bytes() == b"".join(t.to_bytes() for t in txns)
    assert path.stat().st_size == 3 * 34
    reopened = TransactionIndex(path, BASE)
    assert list(reopened) == txns and not reopened.needs_rebuild
    reopened.append(AbortedTxn(9, 121, 130, 131))  # appends after what was there
    reopened.close()
    assert TransactionIndex(path, BASE).last_offset == 130


def test_the_file_exists_only_once_there_is_an_abort(path):
    index = TransactionIndex(path, BASE)
    index.flush()
    index.close()
    assert not path.exists()
    index.append(AbortedTxn(1, 100, 101, 102))
    index.flush()
    assert path.exists()
    index.reset()
    assert not path.exists() and len(index) == 0


def test_entries_must_come_in_marker_order(path):
    index = index_with(path, AbortedTxn(1, 100, 105, 106))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(2, 101, 105, 106))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(2, 101, 104, 106))
    assert len(index) == 1


@pytest.mark.parametrize("offset,kept", [(200, 3), (120, 2), (111, 2), (110, 1), (101, 0),
                                          (0, 0)])
def test_truncate_to_drops_aborts_at_or_above_the_offset(path, offset, kept):
    txns = [AbortedTxn(1, 100, 101, 102), AbortedTxn(2, 102, 110, 111),
            AbortedTxn(3, 111, 120, 121)]
    index = index_with(path, *txns)
    index.truncate_to(offset)
    assert list(index) == txns[:kept]
    index.close()
    assert list(TransactionIndex(path, BASE)) == txns[:kept]
    assert path.exists() == (kept > 0)


# Kafka's TransactionIndexTest: aborts (first, last, LSO) and the fetch ranges that see them.
ABORTS = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13), AbortedTxn(2, 18, 35, 25),
          AbortedTxn(3, 32, 50, 40)]


@pytest.mark.parametrize("fetch_offset,upper_bound,producers,complete", [
    (0, 32, [0, 1, 2], True),      # stops at the abort whose LSO (40) reaches 32
    (0, 60, [0, 1, 2, 3], False),  # no LSO reaches 60: a later segment may hold more
    (11, 18, [1], True),           # producer 0 ended at 10; producer 2 starts at 18
    (16, 33, [2, 3], True),
    (51, 60, [], False),           # after every abort
    (0, 1, [0], True),             # LSO 11 >= 1 at the first entry
])
def test_collect_finds_the_aborts_overlapping_a_fetch_range(path, fetch_offset, upper_bound,
                                                            producers, complete):
    index = TransactionIndex(path, 0)
    for txn in ABORTS:
        index.append(txn)
    found, done = index.collect(fetch_offset, upper_bound)
    assert [t.producer_id for t in found] == producers
    assert done is complete


def test_a_torn_file_is_detected(path):
    index_with(path, AbortedTxn(1, 100, 101, 102), AbortedTxn(2, 100, 105, 106)).close()
    path.write_bytes(path.read_bytes()[:-5])  # a write cut short by a crash
    torn = TransactionIndex(path, BASE)
    assert torn.needs_rebuild


def test_an_unknown_entry_version_is_detected(path):
    index_with(path, AbortedTxn(1, 100, 101, 102)).close()
    data = bytearray(path.read_bytes())
    struct.pack_into(">h", data, 0, 1)
    path.write_bytes(bytes(data))
    assert TransactionIndex(path, BASE).needs_rebuild


def test_entries_out_of_order_are_detected(path):
    path.write_bytes(AbortedTxn(1, 100, 110, 111).to_bytes()
                     + AbortedTxn(2, 100, 105, 106).to_bytes())
    assert TransactionIndex(path, BASE).needs_rebuild


@pytest.mark.parametrize("txn", [AbortedTxn(1, 10, 99, 100),    # below the segment
                                 AbortedTxn(1, 100, 150, 151),  # at or past its end
                                 AbortedTxn(1, 120, 110, 121)])  # ends before it starts
def test_the_sanity_check_wants_every_abort_inside_the_segment(path, txn):
    index = index_with(path, txn)
    with pytest.raises(CorruptIndexError):
        index.sanity_check(next_offset=150)


def test_an_abort_may_start_in_an_earlier_segment(path):
    index_with(path, AbortedTxn(1, 10, 120, 121)).sanity_check(next_offset=150)


def test_rename_and_delete_move_the_file(path, tmp_path):
    index = index_with(path, AbortedTxn(1, 100, 101, 102))
    target = tmp_path / "00000000000000000100.txnindex.deleted"
    index.rename(target)
    assert target.exists() and not path.exists()
    index.append(AbortedTxn(2, 102, 103, 104))
    index.flush()
    assert target.stat().st_size == 2 * ENTRY_SIZE
    index.delete()
    assert not target.exists()


def test_renaming_an_index_without_a_file_names_its_future_file(path, tmp_path):
    index = TransactionIndex(path, BASE)
    target = tmp_path / "00000000000000000100.txnindex.swap"
    index.rename(target)
    index.append(AbortedTxn(1, 100, 101, 102))
    index.close()
    assert target.exists() and not path.exists()
