"""Rebuilding the transaction metadata of a partition of ``__transaction_state`` from its log.

The partition is read from its log start to the end it had when loading began,
``transaction.state.log.load.buffer.size`` bytes at a time, and replayed in order: a record sets
its transactional id's state, a tombstone removes it. Only the last record of a key counts, which
is what compaction keeps. A record that cannot be read is skipped with a warning naming its
offset, so one bad record does not cost every transactional id of the partition its state.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from broker_lite.log import Log
from broker_lite.records import RecordsError
from broker_lite.records.reader import BatchReader

from .records import (
    TransactionLogRecordError,
    TxnRecord,
    parse_transaction_log_key,
    parse_transaction_log_value,
)

logger = logging.getLogger(__name__)


@dataclass
class LoadedTransactions:
    records: dict[str, TxnRecord] = field(default_factory=dict)
    skipped_records: int = 0


def load_transactions(log: Log, *, buffer_size: int,
                      stopping: Callable[[], bool] = lambda: False) -> LoadedTransactions:
    """Replay ``log`` from its start to the end it had when called."""
    loaded = LoadedTransactions()
    end = log.log_end_offset
    position = log.log_start_offset
    name = log.directory.name
    while position < end and not stopping():
        region = log.read(position, buffer_size, max_offset=end)
        if region is None:
            break
        progressed = False
        try:
            for batch in BatchReader(region.read()):
                progressed = True
                _replay_batch(loaded, batch, name)
                position = batch.next_offset
        except RecordsError as exc:  # not even a batch header: nothing further can be read
            logger.warning("%s: stopped loading at offset %d: %s", name, position, exc)
            break
        if not progressed:
            break
    return loaded


def _replay_batch(loaded: LoadedTransactions, batch, name: str) -> None:
    if getattr(batch, "is_control_batch", False):
        return
    try:
        batch.ensure_valid()
        records = list(batch)
    except RecordsError as exc:
        logger.warning("%s: skipping the batch at offsets %d-%d while loading: %s", name,
                       batch.base_offset, batch.last_offset, exc)
        loaded.skipped_records += 1
        return
    for record in records:
        try:
            transactional_id = parse_transaction_log_key(record.key)
            value = parse_transaction_log_value(record.value)
        except TransactionLogRecordError as exc:
            logger.warning("%s: skipping the record at offset %d while loading: %s", name,
                           record.offset, exc)
            loaded.skipped_records += 1
            continue
        if value is None:
            loaded.records.pop(transactional_id, None)
        else:
            loaded.records[transactional_id] = value
