"""What the log's tests share: opening logs for a test and closing them all after it."""

from collections.abc import Callable
from pathlib import Path

from broker_lite.config.topic import LogConfig
from broker_lite.log import Log


class LogOpener:
    """Opens :class:`Log` s in ``root`` with ``clock`` and, unless told otherwise, ``config``;
    each in the directory ``name``, or in a new one per log (``t-0``, ``t-1``, ...) when
    ``name`` is None. A fixture calls :meth:`close_all` after the test."""

    def __init__(self, root: Path, clock: Callable[[], int], config: LogConfig, *,
                 name: str | None = "topic-0"):
        self.root, self.clock, self.config, self.name = root, clock, config, name
        self.opened: list[Log] = []

    def __call__(self, config: LogConfig | None = None, **kwargs) -> Log:
        directory = self.root / (self.name or f"t-{len(self.opened)}")
        log = Log(directory, config or self.config, clock=self.clock, **kwargs)
        self.opened.append(log)
        return log

    def close_all(self) -> None:
        """Close every log opened; one already closed (or failed on purpose) is passed over."""
        for log in self.opened:
            try:
                log.close()
            except Exception:
                pass
