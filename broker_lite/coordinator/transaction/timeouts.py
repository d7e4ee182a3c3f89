"""Aborting transactions left open longer than their ``transaction.timeout.ms``.

Every ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` (10 s by default) the
coordinator looks for Ongoing transactions whose start lies further back than their timeout;
each is fenced (its epoch bumped, so the producer that opened it cannot write to it any more)
and aborted: ABORT markers go to its partitions, which lets their last stable offset move on.
"""

import logging

from ..common.timer import Timer

logger = logging.getLogger(__name__)


class TransactionTimeouts:
    """Runs ``coordinator.abort_timed_out_transactions()`` every ``interval_ms``."""

    def __init__(self, coordinator, interval_ms: int, timer=None):
        self.coordinator = coordinator
        self.interval_ms = interval_ms
        self.timer = timer if timer is not None else Timer("txn-timeouts")
        self._task = None
        self._active = False

    def start(self) -> "TransactionTimeouts":
        self.timer.start()
        self._active = True
        self._schedule()
        return self

    def stop(self) -> None:
        self._active = False
        if self._task is not None:
            self._task.cancel()
        self.timer.stop()

    def _schedule(self) -> None:
        self._task = self.timer.schedule(self.interval_ms, self._run)

    def _run(self) -> None:
        if not self._active:
            return
        try:
            self.coordinator.abort_timed_out_transactions()
        except Exception:  # the next check tries again
            logger.exception("aborting timed out transactions failed")
        finally:
            if self._active:
                self._schedule()
