"""InitProducerId: a producer id and epoch for an idempotent producer.

Producer ids come from blocks taken from ZooKeeper's ``/latest_producer_id_block`` (see
:mod:`broker_lite.zk.producer_ids`), as a Kafka broker in ZooKeeper mode takes them: every broker
hands out ids from its own block and takes the next free block when it runs out, so ids are unique
across the cluster and across restarts (a restarted broker never reuses its earlier block).

Answers, as Kafka 3.9's for a producer without a transactional id:

- a new producer id with epoch 0, every time; also when the request (version 3+) carries the
  producer's current id and epoch to resume with, since only a transaction coordinator keeps
  epochs to bump (KIP-360);
- INVALID_REQUEST when only one of producer id and epoch is given, or the transactional id is
  the empty string;
- COORDINATOR_NOT_AVAILABLE, retriable, while ZooKeeper cannot be reached or the broker is not
  registered yet.

With a transactional id the transaction coordinator answers (see
:meth:`~broker_lite.coordinator.transactions.TransactionCoordinator.handle_init_producer_id`):
the id's producer id with its epoch bumped, fencing earlier instances; the first request for a
transactional id creates ``__transaction_state`` and is answered COORDINATOR_NOT_AVAILABLE,
which clients retry. PRODUCER_FENCED is answered INVALID_PRODUCER_EPOCH before version 4.
"""

import logging
import threading

from kazoo.exceptions import KazooException

from broker_lite.protocol import ErrorCode
from broker_lite.records.record_batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from broker_lite.zk.errors import ProducerIdsExhaustedError
from broker_lite.zk.layout import ProducerIdBlock, TopicZNode
from broker_lite.zk.producer_ids import (
    PRODUCER_ID_BLOCK_SIZE,
    allocate_producer_id_block,
)

logger = logging.getLogger(__name__)


class ProducerIdManager:
    """Hands out the ids of this broker's current block, taking a new block when it is used up.

    Ids left in a block when the broker stops are never handed out: the next start takes a new
    block, as Kafka's ``ZkProducerIdManager`` does.
    """

    def __init__(self, zk, broker_id: int, block_size: int = PRODUCER_ID_BLOCK_SIZE):
        self.zk = zk
        self.broker_id = broker_id
        self.block_size = block_size
        self.block: ProducerIdBlock | None = None
        self._next = 0
        self._lock = threading.Lock()

    def generate(self) -> int:
        with self._lock:
            if self.block is None or self._next > self.block.block_end:
                self.block = allocate_producer_id_block(self.zk, self.broker_id, self.block_size)
                self._next = self.block.block_start
                logger.info("broker %d took producer ids %d-%d", self.broker_id,
                            self.block.block_start, self.block.block_end)
            producer_id = self._next
            self._next += 1
            return producer_id


_create_lock = threading.Lock()


def producer_id_manager(services) -> ProducerIdManager:
    """The broker's manager, created on first use (the broker id is known by then)."""
    with _create_lock:
        if services.producer_ids is None:
            services.producer_ids = ProducerIdManager(services.zk, services.broker_id)
        return services.producer_ids


def init_producer_id(context, body: dict) -> dict:
    transactional_id = body["transactional_id"]
    producer_id = body.get("producer_id", NO_PRODUCER_ID)
    epoch = body.get("producer_epoch", NO_PRODUCER_EPOCH)
    if (producer_id == NO_PRODUCER_ID) != (epoch == NO_PRODUCER_EPOCH):
        return _response(ErrorCode.INVALID_REQUEST)
    if transactional_id is not None:
        expected = None if producer_id == NO_PRODUCER_ID else (producer_id, epoch)
        return _transactional(context, transactional_id, body["transaction_timeout_ms"],
                              expected)
    if context.services.broker_id < 0:
        return _response(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    try:
        new_id = producer_id_manager(context.services).generate()
    except KazooException as exc:
        logger.warning("no producer id block from ZooKeeper: %r", exc)
        return _response(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    except ProducerIdsExhaustedError:
        logger.exception("no producer id left")
        return _response(ErrorCode.UNKNOWN_SERVER_ERROR)
    return _response(ErrorCode.NONE, new_id, 0)


def _transactional(context, transactional_id: str, timeout_ms: int,
                   expected: tuple[int, int] | None) -> dict:
    if transactional_id == "":
        return _response(ErrorCode.INVALID_REQUEST)
    services = context.services
    coordinator = getattr(services, "transaction_coordinator", None)
    if coordinator is None:
        return _response(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    if services.zk.exists(TopicZNode.path(coordinator.topic)) is None:
        try:
            coordinator.create_topic()
        except Exception as exc:  # the client retries; the next request tries again
            logger.warning("could not create %s: %s", coordinator.topic, exc)
        return _response(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    try:
        result = coordinator.handle_init_producer_id(transactional_id, timeout_ms, expected)
    except KazooException as exc:  # a new producer id needs ZooKeeper
        logger.warning("no producer id block from ZooKeeper: %r", exc)
        return _response(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    except ProducerIdsExhaustedError:
        logger.exception("no producer id left")
        return _response(ErrorCode.UNKNOWN_SERVER_ERROR)
    error = result.error
    if error == ErrorCode.PRODUCER_FENCED and context.version < 4:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return _response(error, result.producer_id, result.producer_epoch)


def _response(error: ErrorCode, producer_id: int = NO_PRODUCER_ID,
              epoch: int = NO_PRODUCER_EPOCH) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "producer_id": producer_id,
            "producer_epoch": epoch}
