"""The share coordinator's side (KIP-932): ``__share_group_state``'s records (Kafka 4.2's
schemas, byte for byte), combining state batches, fencing stale writers, and rebuilding states
from a log as a restarted or newly elected coordinator does."""

import uuid

import pytest

from broker_lite.config.topic import LogConfig
from broker_lite.coordinator.share.records import (
    ShareStateRecordError,
    Snapshot,
    StateKey,
    Update,
    parse_key,
    parse_snapshot_value,
    parse_update_value,
    snapshot_key,
    snapshot_value,
    update_key,
    update_value,
)
from broker_lite.coordinator.share.share_partition import StateBatch
from broker_lite.coordinator.share.state import ShareState, combine_batches
from broker_lite.coordinator.share.state_topic import load_states
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode
from broker_lite.records import build_batch

TOPIC = uuid.UUID("0123456789abcdef0123456789abcdef")
KEY = StateKey("group", TOPIC, 3)


def test_keys_start_with_their_record_type_then_group_topic_id_and_partition():
    body = (b"\x00\x05group" + TOPIC.bytes + b"\x00\x00\x00\x03")
    assert snapshot_key(KEY) == b"\x00\x00" + body
    assert update_key(KEY) == b"\x00\x01" + body
    assert parse_key(snapshot_key(KEY)) == (0, KEY)
    assert parse_key(update_key(KEY)) == (1, KEY)


def test_a_snapshot_value_is_version_0_flexible_with_its_fields_in_kafkas_order():
    snapshot = Snapshot(2, 1, 7, 100, 1000, 2000, (StateBatch(100, 104, 0, 1),))
    data = snapshot_value(snapshot)
    expected = (b"\x00\x00"  # version 0
                + (2).to_bytes(4, "big") + (1).to_bytes(4, "big") + (7).to_bytes(4, "big")
                + (100).to_bytes(8, "big") + (1000).to_bytes(8, "big")
                + (2000).to_bytes(8, "big")
                + b"\x02"  # one batch (compact array: count + 1)
                + (100).to_bytes(8, "big") + (104).to_bytes(8, "big") + b"\x00\x00\x01"
                + b"\x00"  # the batch's tagged fields
                + b"\x00")  # the value's tagged fields (DeliveryCompleteCount at its default)
    assert data == expected
    assert parse_snapshot_value(data) == snapshot


def test_an_update_round_trips_and_a_tombstone_reads_as_none():
    update = Update(2, 8, -1, (StateBatch(5, 5, 4, 3),))
    assert parse_update_value(update_value(update)) == update
    assert parse_snapshot_value(None) is None


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x07" + b"\x00" * 30])
def test_bytes_that_are_no_key_are_refused_with_the_modules_error(data):
    with pytest.raises(ShareStateRecordError):
        parse_key(data)


# (old batches, new batches, start offset, combined as (first, last, state, count))
COMBINATIONS = [
    ([], [StateBatch(0, 4, 0, 1)], 0, [(0, 4, 0, 1)]),
    ([StateBatch(0, 9, 0, 1)], [StateBatch(3, 5, 2, 1)], 0,
     [(0, 2, 0, 1), (3, 5, 2, 1), (6, 9, 0, 1)]),
    ([StateBatch(0, 9, 0, 1)], [StateBatch(3, 5, 2, 1)], 4, [(4, 5, 2, 1), (6, 9, 0, 1)]),
    ([StateBatch(0, 1, 2, 1)], [StateBatch(2, 3, 2, 1)], 0, [(0, 3, 2, 1)]),
    ([StateBatch(0, 1, 0, 1)], [StateBatch(0, 1, 0, 2)], 0, [(0, 1, 0, 2)]),
]


@pytest.mark.parametrize("old,new,start,combined", COMBINATIONS)
def test_newer_batches_win_and_the_start_offset_cuts(old, new, start, combined):
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in combine_batches(old, new, start)] == combined


# (state epoch, leader epoch of a write) against a state of epochs (1, 5)
WRITES = [
    (1, 5, ErrorCode.NONE),
    (2, 6, ErrorCode.NONE),
    (1, 4, ErrorCode.FENCED_LEADER_EPOCH),
    (0, 5, ErrorCode.FENCED_STATE_EPOCH),
]


@pytest.mark.parametrize("state_epoch,leader_epoch,error", WRITES)
def test_a_stale_writer_is_fenced(state_epoch, leader_epoch, error):
    state = ShareState(1, 5, 10)
    assert state.write(state_epoch, leader_epoch, 12, [StateBatch(12, 12, 2, 1)]) == error
    assert state.start_offset == (12 if error == ErrorCode.NONE else 10)


@pytest.fixture
def log(tmp_path):
    log = Log(tmp_path / "__share_group_state-0",
              LogConfig(cleanup_policy=("compact",), segment_bytes=1024 * 1024))
    yield log
    log.close()


def append(log: Log, records: list[tuple[bytes, bytes | None]]) -> None:
    log.append(build_batch(records))


def test_a_partition_replays_into_the_states_it_holds(log):
    other = StateKey("group", TOPIC, 4)
    append(log, [(snapshot_key(KEY), snapshot_value(Snapshot(
        0, 0, 1, 0, 1, 1, (StateBatch(0, 9, 0, 1),))))])
    append(log, [(update_key(KEY), update_value(Update(0, 1, 5, (StateBatch(5, 6, 2, 1),)))),
                 (snapshot_key(other), snapshot_value(Snapshot(0, 0, 1, 3, 1, 1, ())))])
    append(log, [(update_key(KEY), update_value(Update(0, 2, -1, (StateBatch(9, 9, 4, 5),))))])
    append(log, [(b"\x00\x09 not a key", b"x")])  # skipped, with a warning
    append(log, [(snapshot_key(other), None)])  # deleted
    loaded = load_states(log, buffer_size=1 << 20)
    assert set(loaded.states) == {KEY} and loaded.skipped_records == 1
    state = loaded.states[KEY]
    assert (state.start_offset, state.leader_epoch) == (5, 2)
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in state.batches] == [
        (5, 6, 2), (7, 8, 0), (9, 9, 4)]


def test_an_update_of_an_older_snapshot_epoch_is_superseded(log):
    append(log, [(snapshot_key(KEY), snapshot_value(Snapshot(3, 0, 1, 0, 1, 1, ())))])
    append(log, [(update_key(KEY), update_value(Update(2, 1, 8, ())))])
    loaded = load_states(log, buffer_size=1 << 20)
    assert loaded.states[KEY].start_offset == 0
