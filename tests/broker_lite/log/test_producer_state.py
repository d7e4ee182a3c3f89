"""The producer state of a partition: sequence and epoch checks as tables of cases, duplicates of
each remembered batch, and the state carried through appends to a real log."""

import pytest
from manual_clock import NOW

from broker_lite.common.vocabulary import MAX_SEQUENCE
from broker_lite.config.topic import LogConfig
from broker_lite.log import KafkaStorageError, Log
from broker_lite.log.errors import (
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)
from broker_lite.log.producer_state import (
    NUM_BATCHES_TO_RETAIN,
    AppendOrigin,
    DuplicateBatch,
    ProducerBatch,
    ProducerStateManager,
    decrement_sequence,
    increment_sequence,
)
from broker_lite.log.validator import InvalidRecordError
from broker_lite.records import (
    ControlRecordType,
    EndTransactionMarker,
    RecordBatch,
    RecordTooLargeError,
    build_batch,
    build_control_batch,
)

PID = 1000



class Writer:
    """Feeds batches of one producer to a state, giving them consecutive offsets."""

    def __init__(self, state: ProducerStateManager, producer_id: int = PID):
        self.state = state
        self.producer_id = producer_id
        self.next_offset = 0

    def batch(self, epoch: int, first_seq: int, count: int = 1, *, timestamp: int = NOW,
              transactional: bool = False, producer_id: int | None = None) -> ProducerBatch:
        return ProducerBatch(self.producer_id if producer_id is None else producer_id, epoch,
                             first_seq, self.next_offset, count - 1, timestamp,
                             is_transactional=transactional)

    def send(self, epoch: int, first_seq: int, count: int = 1,
             origin: AppendOrigin = AppendOrigin.CLIENT, **kwargs) -> DuplicateBatch | None:
        batch = self.batch(epoch, first_seq, count, **kwargs)
        outcome = self.state.check_and_update(batch, origin)
        if outcome is None:
            self.next_offset = batch.last_offset + 1
        return outcome


@pytest.fixture
def state(tmp_path):
    return ProducerStateManager(tmp_path)


# -- sequence arithmetic --------------------------------------------------------------------------

@pytest.mark.parametrize("sequence,delta,incremented", [
    (0, 0, 0), (0, 4, 4), (MAX_SEQUENCE - 1, 1, MAX_SEQUENCE), (MAX_SEQUENCE, 1, 0),
    (MAX_SEQUENCE - 2, 5, 2),
])
def test_sequences_wrap_at_int32_max(sequence, delta, incremented):
    assert increment_sequence(sequence, delta) == incremented
    assert decrement_sequence(incremented, delta) == sequence


# -- one producer, tables of cases ----------------------------------------------------------------

# Each case: the batches already taken in (epoch, first sequence, record count), the next batch,
# and what it gets: "appended", "duplicate", or the exception raised.
SEQUENCE_CASES = [
    ("first batch of an unknown producer at 0", [], (0, 0, 3), "appended"),
    ("unknown producer at any sequence (Kafka 2.5+)", [], (0, 57, 3), "appended"),
    ("next in order", [(0, 0, 3)], (0, 3, 2), "appended"),
    ("many in order", [(0, 0, 3), (0, 3, 2), (0, 5, 1)], (0, 6, 10), "appended"),
    ("a gap", [(0, 0, 3)], (0, 4, 1), OutOfOrderSequenceError),
    ("a sequence going back", [(0, 0, 3), (0, 3, 3)], (0, 2, 1), OutOfOrderSequenceError),
    ("overlapping the last batch", [(0, 0, 3)], (0, 1, 3), OutOfOrderSequenceError),
    ("same first sequence, other last", [(0, 0, 3)], (0, 0, 2), OutOfOrderSequenceError),
    ("retry of the last batch", [(0, 0, 3)], (0, 0, 3), "duplicate"),
    ("older than the five remembered",
     [(0, 0, 1), (0, 1, 1), (0, 2, 1), (0, 3, 1), (0, 4, 1), (0, 5, 1)], (0, 0, 1),
     OutOfOrderSequenceError),
    ("wraps from int32 max to 0", [(0, MAX_SEQUENCE - 1, 2)], (0, 0, 1), "appended"),
    ("a batch spanning the wrap", [(0, MAX_SEQUENCE - 5, 4)], (0, MAX_SEQUENCE - 1, 5),
     "appended"),
    ("after a batch spanning the wrap", [(0, MAX_SEQUENCE - 1, 4)], (0, 2, 1), "appended"),
    ("retry of a batch spanning the wrap", [(0, MAX_SEQUENCE - 1, 4)], (0, MAX_SEQUENCE - 1, 4),
     "duplicate"),
    ("no wrap before int32 max", [(0, MAX_SEQUENCE - 3, 2)], (0, 0, 1), OutOfOrderSequenceError),
    ("new epoch at 0", [(0, 0, 3)], (1, 0, 2), "appended"),
    ("new epoch, far ahead, at 0", [(0, 0, 3)], (9, 0, 2), "appended"),
    ("new epoch not at 0", [(0, 0, 3)], (1, 3, 2), OutOfOrderSequenceError),
    ("older epoch: fenced", [(0, 0, 3), (1, 0, 1)], (0, 3, 1), InvalidProducerEpochError),
    ("older epoch retrying its batch: fenced", [(0, 0, 3), (1, 0, 1)], (0, 0, 3),
     InvalidProducerEpochError),
    ("epoch -1 of a known producer: fenced", [(0, 0, 3)], (-1, 3, 1), InvalidProducerEpochError),
    ("epoch -1 of an unknown producer (Kafka takes it)", [], (-1, 0, 1), "appended"),
    ("epoch below -1 of an unknown producer", [], (-5, 0, 1), InvalidProducerEpochError),
]


@pytest.mark.parametrize("taken,incoming,expected", [c[1:] for c in SEQUENCE_CASES],
                         ids=[c[0] for c in SEQUENCE_CASES])
def test_sequence_checks(state, taken, incoming, expected):
    writer = Writer(state)
    for epoch, seq, count in taken:
        assert writer.send(epoch, seq, count) is None
    before = (state.last_entry(PID) and list(state.last_entry(PID).batches),
              state.map_end_offset)
    if isinstance(expected, type):
        with pytest.raises(expected):
            writer.send(*incoming)
        assert (state.last_entry(PID) and list(state.last_entry(PID).batches),
                state.map_end_offset) == before  # nothing changed
    elif expected == "duplicate":
        assert isinstance(writer.send(*incoming), DuplicateBatch)
    else:
        assert writer.send(*incoming) is None
        epoch, seq, count = incoming
        entry = state.last_entry(PID)
        assert entry.producer_epoch == epoch
        assert entry.last_seq == increment_sequence(seq, count - 1)


@pytest.mark.parametrize("which", range(NUM_BATCHES_TO_RETAIN))
def test_a_retry_of_each_of_the_last_five_batches_gets_its_original_offsets(state, which):
    writer = Writer(state)
    sent = []
    for i in range(7):  # batches of i + 1 records; the last five are remembered
        seq = sum(range(1, i + 1))
        writer.send(0, seq, i + 1, timestamp=NOW + i)
        sent.append((seq, i + 1, writer.next_offset - (i + 1), NOW + i))
    seq, count, first_offset, timestamp = sent[2 + which]
    duplicate = writer.send(0, seq, count)
    assert duplicate == DuplicateBatch(first_offset, first_offset + count - 1, timestamp)
    assert len(state.last_entry(PID).batches) == NUM_BATCHES_TO_RETAIN


def test_a_new_epoch_forgets_the_batches_of_the_old_one(state):
    writer = Writer(state)
    writer.send(0, 0, 2)
    writer.send(1, 0, 2)
    entry = state.last_entry(PID)
    assert entry.producer_epoch == 1 and len(entry.batches) == 1
    # the old epoch's batch, retried, is fenced rather than answered as a duplicate
    with pytest.raises(InvalidProducerEpochError):
        writer.send(0, 0, 2)


def test_producers_are_independent(state):
    one, two = Writer(state, 1), Writer(state, 2)
    assert one.send(0, 0, 5) is None
    two.next_offset = one.next_offset
    assert two.send(3, 100, 2) is None
    one.next_offset = two.next_offset
    assert one.send(0, 5, 1) is None
    with pytest.raises(OutOfOrderSequenceError):
        two.send(3, 0, 1)
    assert sorted(state.producers) == [1, 2]


# -- one append of several batches ----------------------------------------------------------------

def test_batches_of_one_append_are_checked_in_order_and_applied_together(state):
    writer = Writer(state)
    writer.send(0, 0, 2)
    batches = [ProducerBatch(PID, 0, 2, 2, 1, NOW), ProducerBatch(PID, 0, 4, 4, 0, NOW)]
    update = state.prepare(batches)
    assert state.last_entry(PID).last_seq == 1  # nothing applied before apply()
    state.apply(update)
    assert state.last_entry(PID).last_seq == 4
    # a gap inside one append fails the whole append
    with pytest.raises(OutOfOrderSequenceError):
        state.prepare([ProducerBatch(PID, 0, 5, 5, 0, NOW), ProducerBatch(PID, 0, 7, 6, 0, NOW)])
    assert state.last_entry(PID).last_seq == 4


def test_a_duplicate_anywhere_in_an_append_answers_for_the_whole_append(state):
    writer = Writer(state)
    writer.send(0, 0, 2)
    outcome = state.prepare([ProducerBatch(PID, 0, 2, 2, 0, NOW),
                             ProducerBatch(PID, 0, 0, 3, 1, NOW)])
    assert outcome == DuplicateBatch(0, 1, NOW)


# -- bad input and origins ------------------------------------------------------------------------

@pytest.mark.parametrize("sequence", [-1, -2, -(2**31)])
def test_a_client_batch_with_a_producer_id_needs_a_sequence(state, sequence):
    with pytest.raises(InvalidRecordError):
        Writer(state).send(0, sequence, 1)
    assert state.producers == {}


def test_batches_without_a_producer_id_are_ignored(state):
    outcome = state.prepare([ProducerBatch(-1, -1, -1, 0, 3, NOW)])
    state.apply(outcome)
    assert state.producers == {}


def test_coordinator_appends_check_epochs_but_not_sequences(state):
    writer = Writer(state)
    writer.send(2, 0, 1)
    assert writer.send(2, -1, 1, origin=AppendOrigin.COORDINATOR) is None  # no sequence
    with pytest.raises(InvalidProducerEpochError):
        writer.send(1, -1, 1, origin=AppendOrigin.COORDINATOR)


def test_replication_takes_everything(state):
    writer = Writer(state)
    writer.send(2, 0, 1)
    assert writer.send(1, 77, 1, origin=AppendOrigin.REPLICATION) is None
    assert writer.send(1, 77, 1, origin=AppendOrigin.REPLICATION) is None  # no duplicate check


# -- transactions: the fields the state carries for them ------------------------------------------

def marker_batch(epoch: int, coordinator_epoch: int, offset: int) -> ProducerBatch:
    control = RecordBatch(build_control_batch(
        EndTransactionMarker(ControlRecordType.COMMIT, coordinator_epoch), producer_id=PID,
        producer_epoch=epoch, timestamp=NOW))
    return ProducerBatch.of(control, first_offset=offset)


def test_a_transaction_first_offset_is_kept_until_its_marker(state):
    writer = Writer(state)
    writer.send(0, 0, 2)
    writer.send(0, 2, 2, transactional=True)
    writer.send(0, 4, 1, transactional=True)
    entry = state.last_entry(PID)
    assert entry.current_txn_first_offset == 2
    assert state.check_and_update(marker_batch(0, 5, writer.next_offset),
                                  AppendOrigin.COORDINATOR) is None
    assert entry.current_txn_first_offset is None and entry.coordinator_epoch == 5
    with pytest.raises(TransactionCoordinatorFencedError):
        state.check_and_update(marker_batch(0, 4, writer.next_offset + 1),
                               AppendOrigin.COORDINATOR)


def test_producers_in_a_transaction_do_not_expire(state):
    writer = Writer(state)
    writer.send(0, 0, 1, timestamp=NOW)
    Writer(state, 2).send(0, 0, 1, timestamp=NOW, transactional=True)
    Writer(state, 3).send(0, 0, 1, timestamp=NOW + 10)
    state.remove_expired_producers(NOW + state.expiration_ms)
    assert sorted(state.producers) == [2, 3]


# -- through a real log ---------------------------------------------------------------------------

def producer_batch(seq: int, count: int = 1, epoch: int = 0, producer_id: int = PID) -> bytes:
    return build_batch([(None, b"v%d" % i) for i in range(count)], timestamp=NOW,
                       producer_id=producer_id, producer_epoch=epoch, base_sequence=seq)


def test_the_log_writes_a_retried_batch_once(tmp_path):
    log = Log(tmp_path / "t-0", LogConfig(), clock=lambda: NOW)
    first = log.append(producer_batch(0, 3))
    second = log.append(producer_batch(3, 2))
    size = log.size
    retried = log.append(producer_batch(0, 3))
    assert (retried.first_offset, retried.last_offset, retried.batches) == (0, 2, [])
    assert (log.log_end_offset, log.size) == (5, size)
    assert log.append(producer_batch(3, 2)).first_offset == second.first_offset == 3
    with pytest.raises(OutOfOrderSequenceError):
        log.append(producer_batch(7, 1))
    assert (log.log_end_offset, log.size) == (5, size)
    assert log.append(producer_batch(5, 1)).first_offset == 5
    assert first.first_offset == 0
    log.close()


def test_a_refused_append_leaves_the_state_unchanged(tmp_path):
    log = Log(tmp_path / "t-0", LogConfig(max_message_bytes=200), clock=lambda: NOW)
    log.append(producer_batch(0, 1))
    with pytest.raises(RecordTooLargeError):
        log.append(producer_batch(1, 50))  # refused by validation, before the producer check
    assert log.producer_state.last_entry(PID).last_seq == 0
    assert log.append(producer_batch(1, 1)).first_offset == 1
    log.close()


def test_a_failed_write_leaves_the_state_unchanged(tmp_path, monkeypatch):
    log = Log(tmp_path / "t-0", LogConfig(), clock=lambda: NOW)
    log.append(producer_batch(0, 1))

    def disk_full(chunks, batches):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(log.active_segment, "append", disk_full)
        with pytest.raises(KafkaStorageError):
            log.append(producer_batch(1, 2))
    assert log.producer_state.last_entry(PID).last_seq == 0
    assert log.producer_state.map_end_offset == log.log_end_offset == 1
    assert log.append(producer_batch(1, 2)).first_offset == 1  # the retry is new, not a duplicate
    log.close()


def test_legacy_and_plain_batches_leave_the_state_alone(tmp_path):
    from broker_lite.records import build_message_set

    log = Log(tmp_path / "t-0", LogConfig(), clock=lambda: NOW)
    log.append(build_message_set([(b"k", b"v")], magic=1, timestamp=NOW))
    log.append(build_batch([(b"k", b"v")], timestamp=NOW))
    assert log.producer_state.producers == {}
    assert log.producer_state.map_end_offset == log.log_end_offset == 2
    log.close()
