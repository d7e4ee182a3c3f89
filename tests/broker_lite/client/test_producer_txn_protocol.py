"""The producer's side of transactions against a scripted coordinator: what it asks, in which
order, and what it does with each answer (FindCoordinator key type 1, InitProducerId with and
without the current id and epoch, AddPartitionsToTxn before the first write to a partition,
EndTxn, retries of CONCURRENT_TRANSACTIONS and moved coordinators, fencing)."""

import pyarrow as pa
import pytest
from producer_checks import ScriptedPartitions, batch_fields
from scripted_broker import SILENT, ScriptedBroker, all_versions, sequence

from broker_lite.client import (
    InvalidTxnStateError,
    KafkaClient,
    KafkaTimeoutError,
    Producer,
    ProducerFencedError,
    TopicPartition,
    TransactionState,
    TransactionStateError,
    describe_transaction,
    end_transaction,
)
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import RecordBatch

TOPIC = "events"
TXN = "tx-1"


def found(broker, error=0):
    def handle(header, body):
        entry = {"node_id": broker.node_id, "host": "127.0.0.1", "port": broker.port,
                 "error_code": error, "error_message": None}
        if header.api_version >= 4:
            return {"throttle_time_ms": 0,
                    "coordinators": [{"key": k, **entry} for k in body["coordinator_keys"]]}
        return {"throttle_time_ms": 0, **entry}
    return handle


def granted(producer_id=900, epoch=0, error=0):
    return {"throttle_time_ms": 0, "error_code": error, "producer_id": producer_id,
            "producer_epoch": epoch}


def added(code=0):
    def handle(header, body):
        return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": [
            {"name": t["name"], "results_by_partition": [
                {"partition_index": p, "partition_error_code": code} for p in t["partitions"]]}
            for t in body["v3_and_below_topics"]]}
    return handle


def ended(code=0):
    return {"throttle_time_ms": 0, "error_code": code}


@pytest.fixture
def coordinator():
    """One scripted broker that leads the topic and coordinates the transactional id."""
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({TOPIC: 2})
        broker.handlers[ApiKey.FIND_COORDINATOR] = found(broker)
        broker.handlers[ApiKey.INIT_PRODUCER_ID] = lambda h, b: granted()
        broker.handlers[ApiKey.ADD_PARTITIONS_TO_TXN] = added()
        broker.handlers[ApiKey.END_TXN] = lambda h, b: ended()
        broker.partitions = ScriptedPartitions()
        broker.handlers[ApiKey.PRODUCE] = broker.partitions
        yield broker


def transactional(broker, **settings) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap, "retry.backoff.ms": "1",
                     "retry.backoff.max.ms": "5", "request.timeout.ms": "3000",
                     **settings.pop("config", {})}, transactional_id=TXN, **settings)


def rows(n: int) -> pa.RecordBatch:
    return pa.record_batch({"value": [b"v%d" % i for i in range(n)]})


def api_order(broker) -> list[str]:
    wanted = {ApiKey.INIT_PRODUCER_ID, ApiKey.ADD_PARTITIONS_TO_TXN, ApiKey.PRODUCE,
              ApiKey.END_TXN}
    return [ApiKey(h.api_key).name for h, _ in broker.requests if h.api_key in wanted]


def test_a_transaction_from_start_to_commit(coordinator):
    with transactional(coordinator, transaction_timeout_ms=45000) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send_batch(TOPIC, 0, rows(3))
        producer.send_batch(TOPIC, 0, rows(2))  # already in the transaction
        producer.send_arrow(TOPIC, pa.record_batch({
            "value": [b"a", b"b"], "partition": pa.array([0, 1], pa.int32())}))
        producer.commit_transaction()
        assert producer.transaction_state is TransactionState.READY

    assert api_order(coordinator) == ["INIT_PRODUCER_ID", "ADD_PARTITIONS_TO_TXN", "PRODUCE",
                                      "PRODUCE", "ADD_PARTITIONS_TO_TXN", "PRODUCE", "END_TXN"]
    (find, *_), = [coordinator.requests_for(ApiKey.FIND_COORDINATOR)]
    assert find.get("key_type") == 1
    assert TXN in (find.get("coordinator_keys") or [find.get("key")])
    (init,) = coordinator.requests_for(ApiKey.INIT_PRODUCER_ID)
    assert (init["transactional_id"], init["transaction_timeout_ms"]) == (TXN, 45000)
    assert (init["producer_id"], init["producer_epoch"]) == (-1, -1)
    first, second = coordinator.requests_for(ApiKey.ADD_PARTITIONS_TO_TXN)
    assert (first["v3_and_below_transactional_id"], first["v3_and_below_producer_id"],
            first["v3_and_below_producer_epoch"]) == (TXN, 900, 0)
    assert first["v3_and_below_topics"] == [{"name": TOPIC, "partitions": [0]}]
    assert second["v3_and_below_topics"] == [{"name": TOPIC, "partitions": [1]}]
    for body in coordinator.requests_for(ApiKey.PRODUCE):
        assert body["transactional_id"] == TXN
    for _, _, data in coordinator.partitions.received:
        assert RecordBatch(data).is_transactional
    sequences = [batch_fields(d)[2] for t, p, d in coordinator.partitions.received if p == 0]
    assert sequences == [0, 3, 5]
    (end,) = coordinator.requests_for(ApiKey.END_TXN)
    assert end == {"transactional_id": TXN, "producer_id": 900, "producer_epoch": 0,
                   "committed": True}


def test_each_transaction_adds_its_partitions_again_and_empty_ones_end_locally(coordinator):
    with transactional(coordinator) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        producer.commit_transaction()  # nothing written: no EndTxn
        producer.begin_transaction()
        producer.send_batch(TOPIC, 1, rows(1))
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send_batch(TOPIC, 1, rows(1))
        producer.commit_transaction()
    assert api_order(coordinator) == ["INIT_PRODUCER_ID", "ADD_PARTITIONS_TO_TXN", "PRODUCE",
                                      "END_TXN", "ADD_PARTITIONS_TO_TXN", "PRODUCE", "END_TXN"]
    assert [b["committed"] for b in coordinator.requests_for(ApiKey.END_TXN)] == [False, True]


def test_busy_and_moved_coordinators_are_retried(coordinator):
    coordinator.handlers[ApiKey.INIT_PRODUCER_ID] = sequence(
        granted(-1, -1, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        granted(-1, -1, ErrorCode.CONCURRENT_TRANSACTIONS), granted(900, 7))
    coordinator.handlers[ApiKey.ADD_PARTITIONS_TO_TXN] = sequence(
        added(ErrorCode.NOT_COORDINATOR), added(ErrorCode.CONCURRENT_TRANSACTIONS), added())
    coordinator.handlers[ApiKey.END_TXN] = sequence(
        ended(ErrorCode.CONCURRENT_TRANSACTIONS), ended())
    with transactional(coordinator) as producer:
        producer.init_transactions()
        assert producer.producer_epoch == 7
        producer.begin_transaction()
        producer.send_batch(TOPIC, 0, rows(1))
        producer.commit_transaction()
    assert len(coordinator.requests_for(ApiKey.INIT_PRODUCER_ID)) == 3
    assert len(coordinator.requests_for(ApiKey.ADD_PARTITIONS_TO_TXN)) == 3
    assert len(coordinator.requests_for(ApiKey.END_TXN)) == 2
    assert len(coordinator.requests_for(ApiKey.FIND_COORDINATOR)) == 2  # after NOT_COORDINATOR


@pytest.mark.parametrize("code", [ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH])
def test_fenced_answers_are_fatal(coordinator, code):
    coordinator.handlers[ApiKey.ADD_PARTITIONS_TO_TXN] = added(code)
    with transactional(coordinator) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        with pytest.raises(ProducerFencedError):
            producer.send_batch(TOPIC, 0, rows(1))
        assert producer.transaction_state is TransactionState.FATAL_ERROR
        with pytest.raises(ProducerFencedError):
            producer.abort_transaction()
    assert coordinator.requests_for(ApiKey.PRODUCE) == []


def test_an_unknown_outcome_is_aborted_then_the_epoch_is_bumped(coordinator):
    """A batch without an answer by delivery.timeout.ms may be in the log or not: the
    transaction must be aborted, and the producer asks for a new epoch with its current id
    and epoch (InitProducerId v3+, KIP-360) so that its sequences can start again at 0."""
    coordinator.handlers[ApiKey.INIT_PRODUCER_ID] = sequence(granted(900, 0), granted(900, 1))
    silent = [True]
    coordinator.handlers[ApiKey.PRODUCE] = lambda header, body: \
        SILENT if silent[0] else coordinator.partitions(header, body)
    # The silence lasts the delivery timeout; every request after it (a new connection's
    # handshake, the abort, InitProducerId) has 1.5 s, ample on a busy machine.
    with transactional(coordinator, delivery_timeout_ms=2000,
                       config={"request.timeout.ms": "1500"}) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        with pytest.raises(KafkaTimeoutError):
            producer.send_batch(TOPIC, 0, rows(2))
        assert producer.transaction_state is TransactionState.ABORTABLE_ERROR
        with pytest.raises(TransactionStateError, match="abort_transaction"):
            producer.send_batch(TOPIC, 0, rows(1))
        silent[0] = False
        producer.abort_transaction()
        assert producer.producer_epoch == 1
        producer.begin_transaction()
        producer.send_batch(TOPIC, 0, rows(2))
        producer.commit_transaction()
    _first, bump = coordinator.requests_for(ApiKey.INIT_PRODUCER_ID)
    assert (bump["producer_id"], bump["producer_epoch"]) == (900, 0)
    assert [b["committed"] for b in coordinator.requests_for(ApiKey.END_TXN)] == [False, True]
    (data,) = coordinator.partitions.logs[(TOPIC, 0)]
    assert batch_fields(data) == (900, 1, 0, 2)


def test_end_transaction_of_another_producer(coordinator):
    with KafkaClient({"bootstrap.servers": coordinator.bootstrap}) as client:
        end_transaction(client, TXN, 123, 4, commit=True)
        coordinator.handlers[ApiKey.END_TXN] = lambda h, b: ended(ErrorCode.INVALID_TXN_STATE)
        with pytest.raises(InvalidTxnStateError, match=f"transactional id {TXN}"):
            end_transaction(client, TXN, 123, 4, commit=False)
        coordinator.handlers[ApiKey.END_TXN] = lambda h, b: ended(ErrorCode.PRODUCER_FENCED)
        with pytest.raises(ProducerFencedError):
            end_transaction(client, TXN, 123, 4, commit=True)
    assert coordinator.requests_for(ApiKey.END_TXN)[0] == {
        "transactional_id": TXN, "producer_id": 123, "producer_epoch": 4, "committed": True}
    assert api_order(coordinator) == ["END_TXN"] * 3  # no InitProducerId, no own producer


def test_describe_transaction(coordinator):
    coordinator.handlers[ApiKey.DESCRIBE_TRANSACTIONS] = lambda h, b: {
        "throttle_time_ms": 0, "transaction_states": [{
            "error_code": 0, "transactional_id": TXN, "transaction_state": "Ongoing",
            "transaction_timeout_ms": 60000, "transaction_start_time_ms": 1234,
            "producer_id": 900, "producer_epoch": 2,
            "topics": [{"topic": TOPIC, "partitions": [1, 0]}]}]}
    with KafkaClient({"bootstrap.servers": coordinator.bootstrap}) as client:
        description = describe_transaction(client, TXN)
    assert description.state == "Ongoing"
    assert (description.producer_id, description.producer_epoch) == (900, 2)
    assert description.partitions == (TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1))


def test_describe_transaction_on_a_broker_without_the_api():
    versions = {k: v for k, v in all_versions().items() if k != ApiKey.DESCRIBE_TRANSACTIONS}
    with ScriptedBroker(api_versions=versions) as broker:
        broker.handlers[ApiKey.FIND_COORDINATOR] = found(broker)
        with KafkaClient({"bootstrap.servers": broker.bootstrap}) as client:
            assert describe_transaction(client, TXN) is None
