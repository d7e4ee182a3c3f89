"""A share-partition's records as a state machine (KIP-932), as tables: acquisition,
acknowledgements, lock expiry, delivery counts and the start offset, without a log or a clock."""

import pytest

from broker_lite.coordinator.share.share_partition import (
    ACKNOWLEDGE_TRANSITIONS,
    AcknowledgeType,
    AcquiredRange,
    RecordState,
    ShareAcknowledgeError,
    SharePartition,
    SharePartitionLimits,
    StateBatch,
)
from broker_lite.protocol import ErrorCode

ACCEPT, RELEASE, REJECT, GAP, RENEW = (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE,
                                       AcknowledgeType.REJECT, AcknowledgeType.GAP,
                                       AcknowledgeType.RENEW)
AVAILABLE, ACQUIRED, ACKNOWLEDGED, ARCHIVED = (RecordState.AVAILABLE, RecordState.ACQUIRED,
                                               RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


def partition(start: int = 0, lock_ms: int = 1000, limit: int = 3,
              max_in_flight: int = 100) -> SharePartition:
    return SharePartition(start, SharePartitionLimits(lock_ms, limit, max_in_flight))


def states(sp: SharePartition, offsets) -> list:
    return [sp.state_of(o) for o in offsets]


# (acknowledgement, state after it, start offset after acknowledging offset 0 of 0-1)
ACKNOWLEDGEMENTS = [
    (ACCEPT, ACKNOWLEDGED, 1),
    (REJECT, ARCHIVED, 1),
    (GAP, ARCHIVED, 1),
    (RELEASE, AVAILABLE, 0),
    (RENEW, ACQUIRED, 0),
]


@pytest.mark.parametrize("kind,after,start", ACKNOWLEDGEMENTS)
def test_an_acknowledgement_moves_an_acquired_record(kind, after, start):
    sp = partition()
    sp.acquire("m", [(0, 1)], max_records=10, now_ms=0)
    sp.acknowledge("m", 0, 0, [kind], now_ms=500)
    assert ACKNOWLEDGE_TRANSITIONS[kind] == after
    assert sp.start_offset == start
    if start == 0:  # still in flight
        assert sp.state_of(0) is after
    else:  # done with: it left the in-flight records
        assert 0 not in sp.in_flight
    assert sp.state_of(1) is ACQUIRED


def test_renew_extends_the_lock():
    sp = partition(lock_ms=1000)
    sp.acquire("m", [(0, 0)], max_records=10, now_ms=0)
    sp.acknowledge("m", 0, 0, [RENEW], now_ms=900)
    assert not sp.expire_locks(1000)  # renewed at 900: locked until 1900
    assert sp.state_of(0) is ACQUIRED
    assert sp.expire_locks(1900) and sp.state_of(0) is AVAILABLE


# (who acknowledges, which offsets, the state they are in) -> INVALID_RECORD_STATE
NOT_ACQUIRED = [
    ("other", 0, 0, "acquired by another member"),
    ("m", 5, 5, "never fetched"),
    ("m", 2, 2, "available (released)"),
    ("m", 0, 2, "a batch with one record not acquired"),
]


@pytest.mark.parametrize("member,first,last,why", NOT_ACQUIRED)
def test_acknowledging_what_the_member_did_not_acquire_is_invalid_record_state(
        member, first, last, why):
    sp = partition()
    sp.acquire("m", [(0, 2)], max_records=10, now_ms=0)
    sp.acknowledge("m", 2, 2, [RELEASE])
    before = states(sp, range(0, 6))
    with pytest.raises(ShareAcknowledgeError) as raised:
        sp.acknowledge(member, first, last, [ACCEPT])
    assert raised.value.code == ErrorCode.INVALID_RECORD_STATE, why
    assert states(sp, range(0, 6)) == before  # nothing applied


@pytest.mark.parametrize("first,last,types", [
    (3, 2, [ACCEPT]),  # an empty range
    (0, 2, [ACCEPT, ACCEPT]),  # neither one type nor one per offset
    (0, 0, [9]),  # not a type
])
def test_a_malformed_acknowledgement_is_invalid_request(first, last, types):
    sp = partition()
    sp.acquire("m", [(0, 2)], max_records=10, now_ms=0)
    with pytest.raises(ShareAcknowledgeError) as raised:
        sp.acknowledge("m", first, last, types)
    assert raised.value.code == ErrorCode.INVALID_REQUEST


def test_one_type_per_offset():
    sp = partition()
    sp.acquire("m", [(0, 3)], max_records=10, now_ms=0)
    sp.acknowledge("m", 0, 3, [ACCEPT, RELEASE, REJECT, ACCEPT])
    assert sp.start_offset == 1
    assert states(sp, range(1, 4)) == [AVAILABLE, ARCHIVED, ACKNOWLEDGED]


def test_a_released_record_is_acquired_again_with_its_delivery_count_raised():
    sp = partition()
    assert sp.acquire("m1", [(0, 1)], max_records=10, now_ms=0) == [AcquiredRange(0, 1, 1)]
    sp.acknowledge("m1", 0, 0, [ACCEPT])
    sp.acknowledge("m1", 1, 1, [RELEASE])
    assert sp.fetch_offset() == 1  # the redelivery is read first
    assert sp.acquire("m2", [(0, 1)], max_records=10, now_ms=5) == [AcquiredRange(1, 1, 2)]


def test_a_record_whose_lock_expires_is_available_again_until_the_delivery_limit():
    sp = partition(lock_ms=100, limit=2)
    sp.acquire("m", [(0, 0)], max_records=10, now_ms=0)
    assert not sp.expire_locks(99)
    assert sp.expire_locks(100) and sp.state_of(0) is AVAILABLE
    assert sp.acquire("m", [(0, 0)], max_records=10, now_ms=100) == [AcquiredRange(0, 0, 2)]
    assert sp.expire_locks(200)
    assert sp.state_of(0) is ARCHIVED and sp.start_offset == 1  # delivered twice: the limit
    assert sp.acquire("m", [(0, 0)], max_records=10, now_ms=200) == []


def test_release_at_the_delivery_limit_archives():
    sp = partition(limit=1)
    sp.acquire("m", [(0, 0)], max_records=10, now_ms=0)
    sp.acknowledge("m", 0, 0, [RELEASE])
    assert sp.state_of(0) is ARCHIVED and sp.start_offset == 1


def test_a_member_leaving_releases_what_it_holds_and_nothing_else():
    sp = partition()
    sp.acquire("a", [(0, 1)], max_records=10, now_ms=0)
    sp.acquire("b", [(2, 3)], max_records=10, now_ms=0)
    assert sp.release_member("a")
    assert states(sp, range(4)) == [AVAILABLE, AVAILABLE, ACQUIRED, ACQUIRED]
    assert not sp.release_member("a")


def test_two_members_never_hold_the_same_record():
    sp = partition()
    first = sp.acquire("a", [(0, 4)], max_records=10, now_ms=0)
    second = sp.acquire("b", [(0, 4)], max_records=10, now_ms=0)
    assert first == [AcquiredRange(0, 4, 1)] and second == []
    assert sp.acquire("b", [(5, 9)], max_records=10, now_ms=0) == [AcquiredRange(5, 9, 1)]


def test_max_records_stops_at_a_batch_boundary_for_new_records():
    sp = partition()
    assert sp.acquire("m", [(0, 2), (3, 5)], max_records=2, now_ms=0) == [AcquiredRange(0, 2, 1)]
    assert sp.end_offset == 3


def test_the_record_limit_mode_stops_at_max_records_within_a_batch():
    sp = partition()
    assert sp.acquire("m", [(0, 2), (3, 5)], max_records=2, now_ms=0, record_limit=True) == \
        [AcquiredRange(0, 1, 1)]
    assert sp.state_of(2) is None and sp.end_offset == 2  # not acquired: read again next
    assert sp.acquire("m", [(0, 2), (3, 5)], max_records=2, now_ms=0, record_limit=True) == \
        [AcquiredRange(2, 3, 1)]


def test_records_in_flight_are_capped():
    sp = partition(max_in_flight=4)
    assert sp.acquire("m", [(0, 1), (2, 3), (4, 5)], max_records=100, now_ms=0) == \
        [AcquiredRange(0, 3, 1)]
    sp.acknowledge("m", 0, 1, [ACCEPT])
    assert sp.acquire("m", [(4, 5)], max_records=100, now_ms=0) == [AcquiredRange(4, 5, 1)]


def test_records_not_to_deliver_are_archived_not_acquired():
    sp = partition()
    got = sp.acquire("m", [(0, 2), (3, 3)], max_records=10, now_ms=0, not_deliverable={3})
    assert got == [AcquiredRange(0, 2, 1)]
    sp.acknowledge("m", 0, 2, [ACCEPT])
    assert sp.start_offset == 4  # the control record's offset is done with too


def test_the_start_offset_moves_past_what_is_done_only_from_the_front():
    sp = partition()
    sp.acquire("m", [(0, 3)], max_records=10, now_ms=0)
    sp.acknowledge("m", 1, 3, [ACCEPT])
    assert sp.start_offset == 0
    sp.acknowledge("m", 0, 0, [REJECT])
    assert sp.start_offset == 4 and sp.in_flight == {}


def test_the_log_start_moving_past_the_start_offset_drops_those_records():
    sp = partition()
    sp.acquire("m", [(0, 3)], max_records=10, now_ms=0)
    sp.move_start_offset(2)
    assert sp.start_offset == 2 and sorted(sp.in_flight) == [2, 3]
    with pytest.raises(ShareAcknowledgeError):
        sp.acknowledge("m", 0, 0, [ACCEPT])


def test_state_batches_persist_acquired_records_as_available_and_round_trip():
    sp = partition(start=10)
    sp.acquire("m", [(10, 15)], max_records=10, now_ms=0)
    sp.acknowledge("m", 10, 15, [RELEASE, ACCEPT, ACCEPT, REJECT, RENEW, RENEW])
    assert sp.state_of(14) is ACQUIRED
    batches = sp.state_batches()
    assert batches == [StateBatch(10, 10, 0, 1), StateBatch(11, 12, 2, 1),
                       StateBatch(13, 13, 4, 1), StateBatch(14, 15, 0, 1)]
    again = SharePartition.from_state(sp.start_offset, batches, sp.limits)
    assert again.state_batches() == batches
    assert again.fetch_offset() == 10 and again.end_offset == 16

