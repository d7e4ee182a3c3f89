"""InitProducerId and FindCoordinator: answers from the producer ids, the transaction
coordinator and the cluster view, and the retriable errors while they are not ready."""

import pytest

from broker_lite.coordinator.transaction.coordinator import InitProducerIdResult
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.zk.errors import ProducerIdsExhaustedError, ProducerIdsUnavailableError
from broker_lite.zk.layout import PartitionState

from .handler_support import BROKER_ID, OTHER_BROKER


def init(harness, version: int = 4, **fields) -> dict:
    body = {"transactional_id": None, "transaction_timeout_ms": 60_000, "producer_id": -1,
            "producer_epoch": -1, **fields}
    return harness.call(ApiKey.INIT_PRODUCER_ID, version, body)


def answer(response) -> tuple:
    return response["error_code"], response["producer_id"], response["producer_epoch"]


def test_idempotent_producers_get_a_new_id_every_time(harness):
    assert answer(init(harness)) == (0, 1000, 0)
    assert answer(init(harness, producer_id=1000, producer_epoch=0)) == (0, 1001, 0)  # KIP-360


@pytest.mark.parametrize("fields", [{"producer_id": 5}, {"producer_epoch": 0},
                                    {"transactional_id": ""}])
def test_invalid_requests(harness, fields):
    assert answer(init(harness, **fields)) == (ErrorCode.INVALID_REQUEST, -1, -1)


@pytest.mark.parametrize("failure,error", [
    (ProducerIdsUnavailableError("ZooKeeper is away"), ErrorCode.COORDINATOR_NOT_AVAILABLE),
    (ProducerIdsExhaustedError("all taken"), ErrorCode.UNKNOWN_SERVER_ERROR),
])
def test_no_producer_id_to_hand_out(harness, failure, error):
    harness.services.producer_ids.failure = failure
    assert answer(init(harness)) == (error, -1, -1)


def test_transactional_ids_go_to_the_transaction_coordinator(harness):
    transactions = harness.services.transactions
    # the first request creates __transaction_state, and is retried
    assert answer(init(harness, transactional_id="txn")) == \
        (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, -1)
    assert transactions.topics_created == 1
    harness.topic("__transaction_state", [BROKER_ID])
    assert answer(init(harness, transactional_id="txn")) == (0, 4000, 0)
    transactions.init_result = InitProducerIdResult(ErrorCode.PRODUCER_FENCED)
    assert init(harness, transactional_id="txn")["error_code"] == ErrorCode.PRODUCER_FENCED
    assert init(harness, version=3, transactional_id="txn")["error_code"] == \
        ErrorCode.INVALID_PRODUCER_EPOCH  # before KIP-588


# -- FindCoordinator ------------------------------------------------------------------------


def find(harness, key: str, key_type: int = 0, version: int = 3) -> dict:
    return harness.call(ApiKey.FIND_COORDINATOR, version, {"key": key, "key_type": key_type})


def test_the_coordinator_is_the_leader_of_the_key_partition(harness):
    harness.topic("__transaction_state", [OTHER_BROKER])
    found = find(harness, "txn", key_type=1)
    assert (found["error_code"], found["node_id"], found["host"], found["port"]) == \
        (0, OTHER_BROKER, "127.0.0.1", 9093)
    many = harness.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 1,
                                                     "coordinator_keys": ["a", "b"]})
    assert [(c["key"], c["node_id"]) for c in many["coordinators"]] == \
        [("a", OTHER_BROKER), ("b", OTHER_BROKER)]


def test_a_coordinator_not_ready_is_retried(harness):
    first = find(harness, "my-group")
    assert (first["error_code"], first["node_id"]) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)
    assert harness.offsets_topic_creations == 1  # the first lookup creates the topic
    # elected here, but this broker has not taken the partition on yet
    harness.cluster.add("__consumer_offsets", [PartitionState(BROKER_ID, 0, (BROKER_ID,), 1)] * 2)
    assert find(harness, "my-group")["error_code"] == ErrorCode.COORDINATOR_NOT_AVAILABLE
    harness.offsets_topic()
    group = next(g for g in (f"g{i}" for i in range(20)) if harness.groups.partition_for(g) == 0)
    assert (find(harness, group)["error_code"], find(harness, group)["node_id"]) == (0, BROKER_ID)
    assert find(harness, "x", key_type=7)["error_code"] == ErrorCode.INVALID_REQUEST
