"""The transaction state machine as a table: which transitions are allowed, and what each
prepared transition leads to."""

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.transaction.state import (
    MAX_PRODUCER_EPOCH,
    VALID_PREVIOUS_STATES,
    IllegalTxnTransitionError,
    TransactionMetadata,
    TxnState,
)

S = TxnState
TP = TopicPartition("t", 0)

# (from, to) pairs Kafka allows; every other pair is refused
ALLOWED = {
    (S.EMPTY, S.EMPTY), (S.COMPLETE_COMMIT, S.EMPTY), (S.COMPLETE_ABORT, S.EMPTY),
    (S.ONGOING, S.ONGOING), (S.EMPTY, S.ONGOING), (S.COMPLETE_COMMIT, S.ONGOING),
    (S.COMPLETE_ABORT, S.ONGOING),
    (S.ONGOING, S.PREPARE_COMMIT),
    (S.ONGOING, S.PREPARE_ABORT), (S.PREPARE_EPOCH_FENCE, S.PREPARE_ABORT),
    (S.PREPARE_COMMIT, S.COMPLETE_COMMIT),
    (S.PREPARE_ABORT, S.COMPLETE_ABORT),
    (S.EMPTY, S.DEAD), (S.COMPLETE_COMMIT, S.DEAD), (S.COMPLETE_ABORT, S.DEAD),
    (S.ONGOING, S.PREPARE_EPOCH_FENCE),
}


@pytest.mark.parametrize("source", list(S), ids=lambda s: s.kafka_name)
@pytest.mark.parametrize("target", list(S), ids=lambda s: s.kafka_name)
def test_the_transition_table_is_kafkas(source, target):
    assert (source in VALID_PREVIOUS_STATES[target]) == ((source, target) in ALLOWED)


def test_state_ids_and_names_are_kafkas():
    assert [(s.value, s.kafka_name) for s in S] == [
        (0, "Empty"), (1, "Ongoing"), (2, "PrepareCommit"), (3, "PrepareAbort"),
        (4, "CompleteCommit"), (5, "CompleteAbort"), (6, "Dead"), (7, "PrepareEpochFence")]
    assert S.from_kafka_name("Ongoing") is S.ONGOING and S.from_kafka_name("ongoing") is None


def metadata(state=S.EMPTY, epoch=0, last_epoch=-1, partitions=()) -> TransactionMetadata:
    return TransactionMetadata("tx", producer_id=10, producer_epoch=epoch, timeout_ms=1000,
                               last_producer_epoch=last_epoch, state=state,
                               partitions=set(partitions), txn_start_timestamp=5)


def apply(meta: TransactionMetadata, transit) -> TransactionMetadata:
    meta.complete_transition(transit)
    return meta


def test_a_transaction_goes_round_the_cycle():
    meta = metadata(epoch=-1)
    apply(meta, meta.prepare_increment_producer_epoch(1000, None, now_ms=1))
    assert (meta.state, meta.producer_epoch) == (S.EMPTY, 0)
    apply(meta, meta.prepare_add_partitions({TP}, now_ms=2))
    assert (meta.state, meta.partitions, meta.txn_start_timestamp) == (S.ONGOING, {TP}, 2)
    apply(meta, meta.prepare_add_partitions({TopicPartition("u", 1)}, now_ms=3))
    assert meta.txn_start_timestamp == 2 and len(meta.partitions) == 2  # started earlier
    apply(meta, meta.prepare_abort_or_commit(S.PREPARE_COMMIT, now_ms=4))
    complete = meta.prepare_complete(now_ms=5)
    assert meta.pending_state is S.COMPLETE_COMMIT  # while the markers are written
    apply(meta, complete)
    assert (meta.state, meta.partitions, meta.pending_state) == (S.COMPLETE_COMMIT, set(), None)


# expected epoch of a resuming producer -> (new epoch, last epoch), or None: fenced
INCREMENTS = [
    ("no expected epoch", 4, 3, None, (5, -1)),
    ("the current epoch", 4, 3, 4, (5, 4)),
    ("the last epoch: a retried bump", 4, 3, 3, (4, 3)),
    ("another epoch", 4, 3, 1, None),
    ("a new id accepts any", -1, -1, 7, (0, -1)),
]


@pytest.mark.parametrize("epoch,last,expected,result", [c[1:] for c in INCREMENTS],
                         ids=[c[0] for c in INCREMENTS])
def test_epoch_increments(epoch, last, expected, result):
    meta = metadata(S.COMPLETE_ABORT, epoch=epoch, last_epoch=last)
    transit = meta.prepare_increment_producer_epoch(1000, expected, now_ms=1)
    if result is None:
        assert transit is None and meta.pending_state is None
    else:
        assert (transit.producer_epoch, transit.last_producer_epoch) == result


def test_fencing_bumps_the_epoch_once_even_after_a_failed_write():
    meta = metadata(S.ONGOING, epoch=3, partitions={TP})
    fence = meta.prepare_fence_producer_epoch()
    assert (fence.state, fence.producer_epoch, fence.partitions) == (
        S.PREPARE_EPOCH_FENCE, 4, frozenset({TP}))
    meta.abandon_transition()
    meta.producer_epoch, meta.has_failed_epoch_fence = 4, True
    assert meta.prepare_fence_producer_epoch().producer_epoch == 4


def test_a_fence_at_the_last_epoch_is_refused():
    with pytest.raises(IllegalTxnTransitionError):
        metadata(S.ONGOING, epoch=MAX_PRODUCER_EPOCH).prepare_fence_producer_epoch()


def test_exhausted_epochs_rotate_the_producer_id():
    meta = metadata(S.COMPLETE_COMMIT, epoch=MAX_PRODUCER_EPOCH - 1)
    assert meta.is_producer_epoch_exhausted
    with pytest.raises(IllegalTxnTransitionError):
        meta.prepare_increment_producer_epoch(1000, None, now_ms=1)
    apply(meta, meta.prepare_producer_id_rotation(11, 1000, now_ms=1, record_last_epoch=True))
    assert (meta.producer_id, meta.producer_epoch, meta.last_producer_id,
            meta.last_producer_epoch) == (11, 0, 10, MAX_PRODUCER_EPOCH - 1)


def test_one_transition_at_a_time_and_only_from_the_table():
    meta = metadata(S.ONGOING, partitions={TP})
    meta.prepare_abort_or_commit(S.PREPARE_ABORT, now_ms=1)
    with pytest.raises(IllegalTxnTransitionError):
        meta.prepare_add_partitions({TP}, now_ms=2)  # a transition is pending
    meta.abandon_transition()
    with pytest.raises(IllegalTxnTransitionError):
        metadata(S.EMPTY).prepare_abort_or_commit(S.PREPARE_COMMIT, now_ms=1)
    with pytest.raises(IllegalTxnTransitionError):
        metadata(S.ONGOING).prepare_complete(now_ms=1)
    meta = metadata(S.ONGOING)
    transit = meta.prepare_abort_or_commit(S.PREPARE_COMMIT, now_ms=1)
    meta.abandon_transition()
    with pytest.raises(IllegalTxnTransitionError):
        meta.complete_transition(transit)  # nothing pending
