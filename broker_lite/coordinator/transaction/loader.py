"""Rebuilding the transaction metadata of a partition of ``__transaction_state`` from its log.

The partition is read from its log start to the end it had when loading began,
``transaction.state.log.load.buffer.size`` bytes at a time (:mod:`..partition_replay`), and
replayed in order: a record sets its transactional id's state, a tombstone removes it. Only the
last record of a key counts, which is what compaction keeps. A record that cannot be read is
skipped with a warning naming its offset, so one bad record does not cost every transactional id
of the partition its state.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from broker_lite.log import Log

from ..common.partition_replay import replay_records
from .records import (
    TransactionLogRecordError,
    TxnRecord,
    parse_transaction_log_key,
    parse_transaction_log_value,
)


@dataclass
class LoadedTransactions:
    records: dict[str, TxnRecord] = field(default_factory=dict)
    skipped_records: int = 0


def load_transactions(log: Log, *, buffer_size: int,
                      stopping: Callable[[], bool] = lambda: False) -> LoadedTransactions:
    """Replay ``log`` from its start to the end it had when called."""
    loaded = LoadedTransactions()

    def apply(record) -> None:
        transactional_id = parse_transaction_log_key(record.key)
        value = parse_transaction_log_value(record.value)
        if value is None:
            loaded.records.pop(transactional_id, None)
        else:
            loaded.records[transactional_id] = value

    loaded.skipped_records = replay_records(log, apply, buffer_size=buffer_size,
                                            stopping=stopping,
                                            unreadable=TransactionLogRecordError)
    return loaded
