"""Producer id blocks from ``/latest_producer_id_block``, as Kafka's ``ProducerIdManager`` takes
them: read the latest block and its znode version, write the next block conditionally on that
version, and start over when another broker wrote first. Blocks are therefore disjoint and
consecutive across the cluster; the first is ``0 .. block_size - 1``.

A broker hands out the ids of its current block one by one (:class:`ZkProducerIdManager`) and
takes the next free block when it runs out, so ids are unique across the cluster and across
restarts: ids left in a block when the broker stops are never handed out, the next start takes a
new block, as Kafka's ``ZkProducerIdManager`` does.
"""

import logging
import threading
from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError

from .errors import ProducerIdsExhaustedError, ProducerIdsUnavailableError
from .layout import ProducerIdBlock, ProducerIdBlockZNode

logger = logging.getLogger(__name__)

PRODUCER_ID_BLOCK_SIZE = 1000
_LONG_MAX = 2**63 - 1


def allocate_producer_id_block(client: KazooClient, broker_id: int,
                               block_size: int = PRODUCER_ID_BLOCK_SIZE) -> ProducerIdBlock:
    """Take the next block of ``block_size`` producer ids for ``broker_id``."""
    path = ProducerIdBlockZNode.PATH
    while True:
        try:
            data, stat = client.get(path)
        except NoNodeError:
            client.ensure_path(path)
            continue
        latest = ProducerIdBlockZNode.decode(data, path)
        if latest is None:
            block = ProducerIdBlock(broker_id, 0, block_size - 1)
        elif latest.block_end > _LONG_MAX - block_size:
            raise ProducerIdsExhaustedError(
                f"all producer ids are taken: {path} ends at {latest.block_end}")
        else:
            block = ProducerIdBlock(broker_id, latest.block_end + 1, latest.block_end + block_size)
        try:
            client.set(path, ProducerIdBlockZNode.encode(block), version=stat.version)
        except BadVersionError:
            continue  # another broker took a block since we read; read it and go on from there
        return block


class ZkProducerIdManager:
    """The producer ids of one broker, from blocks it takes as it needs them.

    Parameters
    ----------
    client : KazooClient
    broker_id : callable
        This broker's id, -1 until it is known (a generated ``broker.id``): no block is taken
        before.
    block_size : int
    """

    def __init__(self, client: KazooClient, broker_id: Callable[[], int],
                 block_size: int = PRODUCER_ID_BLOCK_SIZE):
        self.client = client
        self.broker_id = broker_id
        self.block_size = block_size
        self.block: ProducerIdBlock | None = None
        self._next = 0
        self._lock = threading.Lock()

    def generate(self) -> int:
        """The next producer id. Raises :class:`ProducerIdsUnavailableError` (retriable) while
        the broker has no id or ZooKeeper cannot be reached, and
        :class:`ProducerIdsExhaustedError` when every id is taken."""
        with self._lock:
            if self.block is None or self._next > self.block.block_end:
                self._take_block()
            producer_id = self._next
            self._next += 1
            return producer_id

    def _take_block(self) -> None:
        broker_id = self.broker_id()
        if broker_id < 0:
            raise ProducerIdsUnavailableError("the broker has no id yet")
        try:
            self.block = allocate_producer_id_block(self.client, broker_id, self.block_size)
        except KazooException as exc:
            raise ProducerIdsUnavailableError(
                f"no producer id block from ZooKeeper: {exc!r}") from exc
        self._next = self.block.block_start
        logger.info("broker %d took producer ids %d-%d", broker_id, self.block.block_start,
                    self.block.block_end)
