"""Dropping the records of aborted transactions, as a read_committed consumer does.

Under ``read_committed`` a Fetch response stops at the last stable offset and lists the aborted
transactions of the range it returns: (producer id, first offset). A producer's transactional
batches are dropped from the first offset of its aborted transaction until its ABORT marker;
control batches (the markers themselves) are never records a consumer sees.
"""

import heapq

from broker_lite.records import ControlRecordType
from broker_lite.records.control import control_record_type
from broker_lite.records.reader import Batch


class AbortedTransactions:
    """Which producers' transactional batches are aborted, as the fetches of one partition
    proceed in offset order: ``add`` each response's aborted transactions, then ask ``keep``
    of each batch in turn."""

    def __init__(self):
        self._pending: list[tuple[int, int]] = []  # (first offset, producer id), a heap
        self._seen: set[tuple[int, int]] = set()
        self._aborting: set[int] = set()

    def add(self, aborted_transactions) -> None:
        """The ``(producer_id, first_offset)`` pairs of a Fetch response (None: none)."""
        for producer_id, first_offset in aborted_transactions or ():
            if (first_offset, producer_id) not in self._seen:
                self._seen.add((first_offset, producer_id))
                heapq.heappush(self._pending, (first_offset, producer_id))

    def keep(self, batch: Batch) -> bool:
        """Whether ``batch`` holds records a read_committed consumer sees."""
        while self._pending and self._pending[0][0] <= batch.last_offset:
            self._aborting.add(heapq.heappop(self._pending)[1])
        if batch.is_control_batch:
            if batch.is_transactional:
                record = next(iter(batch), None)
                if record is not None and \
                        control_record_type(record.key) == ControlRecordType.ABORT:
                    self._aborting.discard(batch.producer_id)
            return False
        return not batch.is_transactional or batch.producer_id not in self._aborting
