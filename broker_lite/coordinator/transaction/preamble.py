"""The checks a request about a transactional id's transaction starts with, in Kafka's order.

1. The id's partition: NOT_COORDINATOR when this broker does not own it,
   COORDINATOR_LOAD_IN_PROGRESS while it loads it (the manager's ``get_state``).
2. The id: INVALID_PRODUCER_ID_MAPPING when it has no metadata (no InitProducerId yet).
3. Under the metadata's lock: NOT_COORDINATOR when the metadata was replaced (unloaded, or
   loaded again in a new coordinator epoch) since it was looked up.
4. The producer: INVALID_PRODUCER_ID_MAPPING when its producer id is not the id's, PRODUCER_FENCED
   (INVALID_PRODUCER_EPOCH on the produce path) when its epoch is not the current one.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from broker_lite.protocol import ErrorCode

from .manager import TransactionStateManager
from .state import TransactionMetadata


def producer_error(metadata: TransactionMetadata, producer_id: int, producer_epoch: int, *,
                   fenced: ErrorCode = ErrorCode.PRODUCER_FENCED) -> ErrorCode:
    """NONE when (``producer_id``, ``producer_epoch``) is the id's current producer, else the
    error a request from it is answered with (check 4; the caller holds the metadata's lock)."""
    if metadata.producer_id != producer_id:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if metadata.producer_epoch != producer_epoch:
        return fenced
    return ErrorCode.NONE


@contextmanager
def locked_transaction(manager: TransactionStateManager, transactional_id: str,
                       producer: tuple[int, int] | None = None, *, current: bool = True
                       ) -> Iterator[tuple[ErrorCode, int, TransactionMetadata | None]]:
    """``(error, coordinator epoch, metadata)`` of ``transactional_id``, the metadata's lock held
    while the block runs; the block answers ``error`` unless it is NONE. Checks 1 and 2, then 3
    unless not ``current``, then 4 for ``producer`` (its id and epoch) when given."""
    error, coordinator_epoch, metadata = manager.get_state(transactional_id)
    if error == ErrorCode.NONE and metadata is None:
        error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if error != ErrorCode.NONE:
        yield error, coordinator_epoch, None
        return
    with metadata.lock:
        if current and not manager.is_current(metadata, coordinator_epoch):
            error = ErrorCode.NOT_COORDINATOR
        elif producer is not None:
            error = producer_error(metadata, *producer)
        yield error, coordinator_epoch, metadata
