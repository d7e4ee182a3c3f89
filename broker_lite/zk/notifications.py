"""Following sequential change notifications in ZooKeeper, as Kafka's
``ZkNodeChangeNotificationListener`` does (ACL changes use it).

Whoever changes shared state writes it, then creates a persistent sequential znode under a
changes path (``/kafka-acl-changes/acl_changes_0000000042``) naming what changed. Every broker
watches the path's children and hands each notification newer than the last one it processed,
in sequence order, to a handler with the notification's data; a handler's failure is logged
and the next notification still processed. The notifications there when the listener starts
are taken as processed: the caller reads the whole state after :meth:`start`, so nothing
announced before is missed, and nothing after (its notification is newer). Notifications
older than ``expiration_ms`` (Kafka's 15 minutes) are deleted by whoever processes the next
ones, so the path does not grow without end.
"""

import logging
import time
from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

logger = logging.getLogger(__name__)

EXPIRATION_MS = 15 * 60 * 1000  # ZkNodeChangeNotificationListener.changeExpirationMs


def sequence_of(child: str, prefix: str) -> int | None:
    """The sequence number of a notification named ``<prefix><10 digits>``, else None."""
    digits = child[len(prefix):]
    return int(digits) if child.startswith(prefix) and digits.isdigit() else None


class ChangeNotificationListener:
    """Calls ``handler(path, data)`` for each new notification ``<path>/<prefix><seq>``, in
    sequence order, from kazoo's event thread."""

    def __init__(self, client: KazooClient, path: str, prefix: str,
                 handler: Callable[[str, bytes], None], *,
                 expiration_ms: int = EXPIRATION_MS, clock_ms: Callable[[], float] | None = None):
        self.client = client
        self.path = path
        self.prefix = prefix
        self.handler = handler
        self.expiration_ms = expiration_ms
        self._clock_ms = clock_ms or (lambda: time.time() * 1000)
        self._last = -1
        self._stopped = False

    def start(self) -> None:
        """Take the notifications there now as processed and watch for new ones."""
        self.client.ensure_path(self.path)
        existing = (sequence_of(c, self.prefix) for c in self.client.get_children(self.path))
        self._last = max((s for s in existing if s is not None), default=-1)
        self.client.ChildrenWatch(self.path, self._on_children)

    def stop(self) -> None:
        self._stopped = True

    def _on_children(self, children: list[str]) -> bool:
        if self._stopped:
            return False  # ends the watch
        numbered = sorted((s, c) for c in children
                          if (s := sequence_of(c, self.prefix)) is not None)
        for sequence, child in numbered:
            if sequence > self._last:
                self._last = sequence
                self._process(f"{self.path}/{child}")
        self._purge(child for _, child in numbered)
        return True

    def _process(self, path: str) -> None:
        try:
            data, _ = self.client.get(path)
        except NoNodeError:
            return  # purged meanwhile: the state it announced was read since
        try:
            self.handler(path, data)
        except Exception:  # one bad notification must not stop the others
            logger.exception("change notification %s could not be processed", path)

    def _purge(self, children) -> None:
        """Delete notifications older than the expiration (Kafka's
        ``purgeObsoleteNotifications``)."""
        now = self._clock_ms()
        for child in children:
            path = f"{self.path}/{child}"
            try:
                _, stat = self.client.get(path)
                if now - stat.ctime > self.expiration_ms:
                    self.client.delete(path)
            except NoNodeError:
                pass  # another broker purged it
