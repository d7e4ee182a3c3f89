"""Rebuilding the transaction metadata of a partition of ``__transaction_state`` from its log.

The partition is read from its log start to the end it had when loading began,
``transaction.state.log.load.buffer.size`` bytes at a time (:mod:`..partition_replay`), and
replayed in order: a record sets its transactional id's state, a tombstone removes it. Only the
last record of a key counts, which is what compaction keeps. A record that cannot be read is
skipped with a warning naming its offset, so one bad record does not cost every transactional id
of the partition its state.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from broker_lite.log import Log

from ..common.partition_replay import batch_records, replay_partition
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
    replay_partition(log, lambda batch, name: _replay_batch(loaded, batch, name),
                     buffer_size=buffer_size, stopping=stopping)
    return loaded


def _replay_batch(loaded: LoadedTransactions, batch, name: str) -> None:
    if getattr(batch, "is_control_batch", False):
        return
    records = batch_records(batch, name)
    if records is None:
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
