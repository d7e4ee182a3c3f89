"""Reading a partition of an internal topic from its log start, to rebuild a coordinator's state.

The partition is read from its log start to the end it had when reading began, ``buffer_size``
bytes at a time (at least one whole batch), and each batch is handed to the caller's replay in
offset order. A batch that fails its checks (CRC, sizes) is skipped with a warning naming its
offsets (:func:`batch_records`), so one bad batch does not cost every key of the partition its
state; bytes that are not even a batch header end the read, since nothing after them can be
found.
"""

import logging
from collections.abc import Callable, Iterable

from broker_lite.log import Log
from broker_lite.records import RecordsError
from broker_lite.records.reader import BatchReader

logger = logging.getLogger(__name__)


def replay_partition(log: Log, replay_batch: Callable[[object, str], None], *, buffer_size: int,
                     stopping: Callable[[], bool] = lambda: False) -> None:
    """Call ``replay_batch(batch, name)`` for each batch of ``log`` from its start to the end it
    had when called (``name``: the log's directory name, for warnings); ``stopping()`` is asked
    before every read."""
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
                replay_batch(batch, name)
                position = batch.next_offset
        except RecordsError as exc:  # not even a batch header: nothing further can be read
            logger.warning("%s: stopped loading at offset %d: %s", name, position, exc)
            break
        if not progressed:
            break


def batch_records(batch, name: str) -> list | None:
    """The records of ``batch``, or None (with a warning) when it fails its checks."""
    try:
        batch.ensure_valid()
        return list(batch)
    except RecordsError as exc:
        logger.warning("%s: skipping the batch at offsets %d-%d while loading: %s", name,
                       batch.base_offset, batch.last_offset, exc)
        return None


def replay_records(log: Log, apply: Callable[[object], None], *, buffer_size: int,
                   stopping: Callable[[], bool] = lambda: False,
                   unreadable: type[Exception] | tuple[type[Exception], ...] = ()) -> int:
    """Call ``apply(record)`` for every record of ``log``'s data batches (control batches are
    left out), in offset order, from its start to the end it had when called; a batch that
    fails its checks, and a record whose ``apply`` raises ``unreadable``, are skipped with a
    warning naming their offsets. How many were skipped."""
    skipped = 0

    def replay_batch(batch, name: str) -> None:
        nonlocal skipped
        if getattr(batch, "is_control_batch", False):
            return
        records: Iterable | None = batch_records(batch, name)
        if records is None:
            skipped += 1
            return
        for record in records:
            try:
                apply(record)
            except unreadable as exc:
                logger.warning("%s: skipping the record at offset %d while loading: %s", name,
                               record.offset, exc)
                skipped += 1

    replay_partition(log, replay_batch, buffer_size=buffer_size, stopping=stopping)
    return skipped
