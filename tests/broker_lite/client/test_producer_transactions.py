"""Transactions of the producer against a real broker_lite and its transaction coordinator,
read back by librdkafka under read_committed and read_uncommitted: commit and abort, a
transaction ended by another client (as the Spark driver ends its tasks'), fencing by a newer
instance, abort after a failed send, and the coordinator's description of a transaction."""

import pyarrow as pa
import pytest
from librdkafka_reading import consume_all
from producer_checks import unique

from broker_lite.client import (
    KafkaClient,
    Producer,
    ProducerFencedError,
    RecordTooLargeError,
    TopicPartition,
    TransactionState,
    TransactionStateError,
    UnknownTopicOrPartitionError,
    describe_transaction,
    end_transaction,
)
from broker_lite.records import iter_batches
from broker_lite.server.testing import bootstrap
from broker_lite.zk.testing import wait_until


@pytest.fixture
def client(broker):
    with KafkaClient({"bootstrap.servers": bootstrap(broker), "request.timeout.ms": "20000",
                      "retry.backoff.ms": "20"}) as client:
        yield client


def values(n: int, tag: str) -> pa.RecordBatch:
    return pa.record_batch({"key": [b"k%d" % i for i in range(n)],
                            "value": [b"%s-%d" % (tag.encode(), i) for i in range(n)]})


def read(broker, topic: str, partitions: int, isolation_level: str) -> list[bytes]:
    """The values of every partition, sorted."""
    return sorted(m.value() for m in consume_all(bootstrap(broker), topic, partitions,
                                                 isolation_level=isolation_level))


def test_commit_shows_records_to_read_committed_and_abort_hides_them(broker, client):
    topic = unique("txn")
    client.admin.create_topics([(topic, 3, 1)])
    with Producer(client, transactional_id=unique("tx")) as producer:
        producer.init_transactions()
        assert producer.transaction_state is TransactionState.READY
        producer.begin_transaction()
        producer.send_arrow(topic, values(30, "committed"))
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send_arrow(topic, values(20, "aborted"))
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send_batch(topic, 0, values(5, "last"))
        producer.commit_transaction()
        producer_id = producer.producer_id

    committed = sorted([b"committed-%d" % i for i in range(30)] + [b"last-%d" % i
                                                                   for i in range(5)])
    assert read(broker, topic, 3, "read_committed") == committed
    everything = read(broker, topic, 3, "read_uncommitted")
    assert everything == sorted(committed + [b"aborted-%d" % i for i in range(20)])
    batches = [b for chunk in client.read_range(TopicPartition(topic, 0), 0)
               for b in iter_batches(chunk.data)]
    data = [b for b in batches if not b.is_control_batch]
    assert all(b.is_transactional and b.producer_id == producer_id for b in data)
    assert sum(b.is_control_batch for b in batches) >= 2  # the markers


def test_another_client_commits_a_transaction_left_open(broker, client):
    """A task writes and leaves its transaction open; the driver, with a client of its own,
    commits it by transactional id, producer id and epoch."""
    topic, transactional_id = unique("handoff"), unique("task")
    client.admin.create_topics([(topic, 2, 1)])
    with Producer({"bootstrap.servers": bootstrap(broker)},
                  transactional_id=transactional_id) as task:
        task.init_transactions()
        task.begin_transaction()
        task.send_arrow(topic, values(40, "task"))
        handle = task.transaction_handle()
    assert handle.transactional_id == transactional_id and handle.partitions
    assert read(broker, topic, 2, "read_committed") == []  # not visible yet
    assert len(read(broker, topic, 2, "read_uncommitted")) == 40

    description = describe_transaction(client, transactional_id)
    assert description.state == "Ongoing"
    assert (description.producer_id, description.producer_epoch) == \
        (handle.producer_id, handle.producer_epoch)
    assert set(description.partitions) == set(handle.partitions)

    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as driver:
        end_transaction(driver, handle.transactional_id, handle.producer_id,
                        handle.producer_epoch, commit=True)
        # a retried commit (say, after a lost answer) succeeds as well
        end_transaction(driver, handle.transactional_id, handle.producer_id,
                        handle.producer_epoch, commit=True)
    assert read(broker, topic, 2, "read_committed") == sorted(b"task-%d" % i
                                                                  for i in range(40))
    assert describe_transaction(client, transactional_id).state == "CompleteCommit"


def test_a_new_instance_fences_the_old_one(broker, client):
    topic, transactional_id = unique("fenced"), unique("tx")
    client.admin.create_topics([(topic, 1, 1)])
    old = Producer(client, transactional_id=transactional_id)
    new = Producer(client, transactional_id=transactional_id)
    try:
        old.init_transactions()
        old.begin_transaction()
        old.send_batch(topic, 0, values(3, "zombie"))
        new.init_transactions()  # bumps the epoch and aborts the old transaction
        assert new.producer_epoch > old.producer_epoch
        with pytest.raises(ProducerFencedError):
            old.send_batch(topic, 0, values(3, "zombie-again"))
        assert old.transaction_state is TransactionState.FATAL_ERROR
        with pytest.raises(ProducerFencedError):
            old.commit_transaction()  # fatal: every later call says so
        new.begin_transaction()
        new.send_batch(topic, 0, values(2, "new"))
        new.commit_transaction()
    finally:
        old.close()
        new.close()
    assert read(broker, topic, 1, "read_committed") == [b"new-0", b"new-1"]


def test_fenced_at_commit(broker, client):
    topic, transactional_id = unique("fenced-commit"), unique("tx")
    client.admin.create_topics([(topic, 1, 1)])
    with Producer(client, transactional_id=transactional_id) as old, \
            Producer(client, transactional_id=transactional_id) as new:
        old.init_transactions()
        old.begin_transaction()
        old.send_batch(topic, 0, values(3, "zombie"))
        new.init_transactions()
        with pytest.raises(ProducerFencedError):
            old.commit_transaction()
    assert read(broker, topic, 1, "read_committed") == []


def test_empty_transactions_and_states(broker, client):
    topic = unique("empty")
    client.admin.create_topics([(topic, 1, 1)])
    with Producer(client, transactional_id=unique("tx")) as producer:
        with pytest.raises(TransactionStateError, match="init_transactions"):
            producer.begin_transaction()
        producer.init_transactions()
        with pytest.raises(TransactionStateError, match="begin_transaction"):
            producer.send_batch(topic, 0, values(1, "x"))
        producer.begin_transaction()
        producer.commit_transaction()  # nothing written: nothing to ask the coordinator
        producer.begin_transaction()
        with pytest.raises(TransactionStateError, match="in progress"):
            producer.begin_transaction()
        producer.abort_transaction()
        assert producer.transaction_state is TransactionState.READY


def test_a_failed_send_requires_an_abort_and_the_next_transaction_works(broker, client):
    """The broker refuses a record larger than the topic's max.message.bytes: the transaction
    can only be aborted; the next one works. Bad input caught before sending (a partition that
    does not exist) does not spoil the transaction."""
    topic = unique("abortable")
    client.admin.create_topics([(topic, 1, 1, {"max.message.bytes": "2000"})])
    with Producer(client, transactional_id=unique("tx")) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send_batch(topic, 0, values(2, "first"))
        with pytest.raises(UnknownTopicOrPartitionError):
            producer.send_batch(topic, 5, values(1, "nowhere"))
        assert producer.transaction_state is TransactionState.IN_TRANSACTION
        with pytest.raises(RecordTooLargeError, match="MESSAGE_TOO_LARGE"):
            producer.send_batch(topic, 0, pa.record_batch({"value": [b"x" * 5000]}))
        assert producer.transaction_state is TransactionState.ABORTABLE_ERROR
        with pytest.raises(TransactionStateError, match="abort_transaction"):
            producer.commit_transaction()
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send_batch(topic, 0, values(2, "second"))
        producer.commit_transaction()
    assert read(broker, topic, 1, "read_committed") == [b"second-0", b"second-1"]


def test_describe_an_unknown_transactional_id(client):
    from broker_lite.client import TransactionalIdNotFoundError

    with pytest.raises(TransactionalIdNotFoundError):
        describe_transaction(client, unique("never-used"))


def test_ending_with_wait_for_markers_returns_once_readers_see_the_outcome(broker, client):
    topic = unique("visible")
    client.admin.create_topics([(topic, 3, 1)])
    tps = [TopicPartition(topic, p) for p in range(3)]
    for commit in (True, False):
        with Producer({"bootstrap.servers": bootstrap(broker)},
                      transactional_id=unique("waited")) as task:
            task.init_transactions()
            task.begin_transaction()
            task.send_arrow(topic, values(30, "w"))
            handle = task.transaction_handle()
        end_transaction(client, handle.transactional_id, handle.producer_id,
                        handle.producer_epoch, commit=commit, wait_for_markers=True)
        assert describe_transaction(client, handle.transactional_id).state == (
            "CompleteCommit" if commit else "CompleteAbort")
        # every marker is in: the last stable offset has caught up with the high watermark
        stable = client.list_offsets(dict.fromkeys(tps, -1), isolation_level="read_committed")
        assert stable == client.list_offsets(dict.fromkeys(tps, -1),
                                             isolation_level="read_uncommitted")


@pytest.mark.parametrize("release_broker", ["2.8"], indirect=True)
def test_waiting_for_markers_without_describe_transactions(release_broker):
    """Before Kafka 3.0 no coordinator describes transactions: the end is asked again, which the
    coordinator answers CONCURRENT_TRANSACTIONS until the markers are written, then NONE."""
    servers = bootstrap(release_broker)
    topic = unique("old-visible")
    with KafkaClient({"bootstrap.servers": servers, "retry.backoff.ms": "20"}) as client:
        client.admin.create_topics([(topic, 3, 1)])
        tps = [TopicPartition(topic, p) for p in range(3)]
        assert describe_transaction(client, unique("any")) is None  # Kafka 2.8 cannot
        with Producer({"bootstrap.servers": servers}, transactional_id=unique("old")) as task:
            task.init_transactions()
            task.begin_transaction()
            task.send_arrow(topic, values(30, "w"))
            handle = task.transaction_handle()
        before = end_txn_requests(release_broker)
        end_transaction(client, handle.transactional_id, handle.producer_id,
                        handle.producer_epoch, commit=True, wait_for_markers=True)
        # the broker counts a request once its answer is written, which the client may read
        # first: the count is waited for
        wait_until(lambda: end_txn_requests(release_broker) - before >= 2,
                   message="the end asked again")
        stable = client.list_offsets(dict.fromkeys(tps, -1), isolation_level="read_committed")
        assert stable == client.list_offsets(dict.fromkeys(tps, -1),
                                             isolation_level="read_uncommitted")
        assert sum(stable.values()) == 30 + 3  # the records and a commit marker per partition


def end_txn_requests(broker) -> int:
    return broker.server.metrics.snapshot().get("EndTxn", {}).get("requests", 0)
