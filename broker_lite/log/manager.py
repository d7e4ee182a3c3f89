"""The logs of one broker, spread over its ``log.dirs``.

Per log dir it keeps Kafka's checkpoint files (the recovery point, log start offset, high
watermark and clean point of every partition in that dir) and the clean-shutdown marker:
present on start, the logs load without recovery; absent, every log recovers from its recovery
point. The marker is removed once the logs are loaded, so a crash afterwards is seen as one. New
partitions go to the online dir holding the fewest, as Kafka places them.

A write or sync that fails in a log dir (an I/O error, a full disk) takes that dir offline, as
Kafka's ``LogDirFailureChannel`` does (KIP-112): its logs take no write and serve no read
(KAFKA_STORAGE_ERROR), nothing more is written there, not even checkpoints or the clean-shutdown
marker (so the next start recovers its logs), and ``on_offline`` is told, once, on a thread of
its own. The other dirs carry on. A dir is online again only when the broker starts again.
Background tasks flush by time, enforce retention, compact and write the checkpoints, each on
its own interval.
"""

import logging
import shutil
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from broker_lite.common.vocabulary import TopicPartition, now_ms
from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.config.topic import LogConfig

from .checkpoints import OffsetCheckpointFile
from .cleaner import clean, cleaning_due
from .errors import KafkaStorageError
from .files import (
    CLEAN_SHUTDOWN_MARKER,
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    parse_partition_dir,
    partition_dir_name,
)
from .log import Log
from .retention import enforce_retention

logger = logging.getLogger(__name__)

_DELETE_SUFFIX = "-delete"  # a partition dir being removed: <topic>-<p>.<uuid>-delete


class LogManager:
    """Opens, creates and deletes the partition logs of a broker.

    >>> import tempfile
    >>> manager = LogManager(BrokerConfig({"log.dirs": tempfile.mkdtemp()}))
    >>> manager.get_or_create("events", 0).log_end_offset
    0
    >>> manager.shutdown()
    """

    def __init__(self, config: BrokerConfig, *, clock: Callable[[], int] = now_ms):
        self.config = config
        self.clock = clock
        self.log_dirs = [Path(d) for d in config.log_dirs]
        self._logs: dict[TopicPartition, Log] = {}
        self._dir_of: dict[TopicPartition, Path] = {}
        self._cleaned_to: dict[TopicPartition, int] = {}  # the clean point of compacted logs
        self._overrides: dict[str, dict[str, str]] = {}  # topic -> its config overrides
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.offline_dirs: set[Path] = set()
        self.on_offline: Callable[[Path], None] = lambda log_dir: None
        for log_dir in self.log_dirs:
            self._load_dir(log_dir)

    # -- loading ------------------------------------------------------------------------------
    def _load_dir(self, log_dir: Path) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        marker = log_dir / CLEAN_SHUTDOWN_MARKER
        clean_shutdown = marker.exists()
        recovery_points = OffsetCheckpointFile(log_dir / RECOVERY_POINT_CHECKPOINT).read()
        start_offsets = OffsetCheckpointFile(log_dir / LOG_START_OFFSET_CHECKPOINT).read()
        # Kafka's: a partition missing from the checkpoint starts at 0 (a leader with itself
        # alone in sync moves it to its log end at once); a dir without the file never ran
        # replicated, and its logs keep theirs at the log end.
        hw_file = OffsetCheckpointFile(log_dir / REPLICATION_OFFSET_CHECKPOINT)
        high_watermarks = hw_file.read() if hw_file.path.exists() else None
        self._cleaned_to.update(OffsetCheckpointFile(log_dir / CLEANER_OFFSET_CHECKPOINT).read())
        for child in sorted(log_dir.iterdir()):
            if not child.is_dir():
                continue
            if child.name.endswith(_DELETE_SUFFIX):  # a deletion interrupted by a crash
                shutil.rmtree(child, ignore_errors=True)
                continue
            parsed = parse_partition_dir(child.name)
            if parsed is None:
                continue
            log = Log(child, self.config.log_config(), clock=self.clock,
                      recovery_point=recovery_points.get(parsed, 0),
                      log_start_offset=start_offsets.get(parsed, 0),
                      high_watermark=None if high_watermarks is None
                      else high_watermarks.get(parsed, 0),
                      clean_shutdown=clean_shutdown)
            log.on_storage_error = self.log_dir_failed
            self._logs[parsed] = log
            self._dir_of[parsed] = log_dir
        if not clean_shutdown and self._logs:
            logger.info("%s: loaded after an unclean shutdown; logs were recovered", log_dir)
        marker.unlink(missing_ok=True)

    # -- partitions ---------------------------------------------------------------------------
    def get(self, topic: str, partition: int) -> Log | None:
        return self._logs.get((topic, partition))

    def get_or_create(self, topic: str, partition: int,
                      topic_config: Mapping[str, str] | None = None) -> Log:
        """The partition's log, created in the least loaded log dir when new."""
        with self._lock:
            key = TopicPartition(topic, partition)
            if key in self._logs:
                if topic_config is not None:
                    self.update_config(topic, topic_config)
                return self._logs[key]
            online = [d for d in self.log_dirs if d not in self.offline_dirs]
            if not online:
                raise KafkaStorageError(f"every log dir is offline: {self.log_dirs}")
            log_dir = min(online, key=lambda d: sum(1 for v in self._dir_of.values() if v == d))
            if topic_config is not None:
                self._overrides[topic] = dict(topic_config)
            try:
                log = Log(log_dir / partition_dir_name(topic, partition),
                          self.config.log_config(topic_config), clock=self.clock)
            except OSError as exc:
                self.log_dir_failed(log_dir)
                raise KafkaStorageError(f"{log_dir}: creating {topic}-{partition} failed: "
                                        f"{exc}") from exc
            log.on_storage_error = self.log_dir_failed
            self._logs[key] = log
            self._dir_of[key] = log_dir
            return log

    def update_config(self, topic: str, topic_config: Mapping[str, str]) -> LogConfig:
        """Apply new topic-level overrides to every partition of ``topic``."""
        config = self.config.log_config(topic_config)
        with self._lock:
            self._overrides[topic] = dict(topic_config)
            for (t, _), log in self._logs.items():
                if t == topic:
                    log.config = config
        return config

    def reconfigure(self) -> None:
        """The broker defaults changed (dynamic broker configs): every log's config again,
        from its topic's overrides and the new defaults, as Kafka's ``DynamicLogConfig``."""
        with self._lock:
            topics = {t for t, _ in self._logs}
            for topic in topics:
                try:
                    self.update_config(topic, self._overrides.get(topic, {}))
                except ConfigError:  # overrides the new defaults conflict with: keep the old
                    logger.exception("could not reconfigure the logs of topic %s", topic)

    def delete(self, topic: str, partition: int) -> None:
        """Remove a partition's log from disk (topic deletion): renamed out of the way first, so
        a crash midway leaves a ``-delete`` dir that the next start removes."""
        with self._lock:
            key = TopicPartition(topic, partition)
            log = self._logs.pop(key, None)
            self._dir_of.pop(key, None)
            self._cleaned_to.pop(key, None)
            if log is None:
                return
            for segment in log.segments:
                segment.close()
            doomed = log.directory.with_name(
                f"{log.directory.name}.{uuid.uuid4().hex}{_DELETE_SUFFIX}")
            log.directory.rename(doomed)
            shutil.rmtree(doomed, ignore_errors=True)

    def partitions(self) -> list[TopicPartition]:
        return sorted(self._logs)

    def log_dir_failed(self, log_dir: Path) -> None:
        """Take ``log_dir`` offline (see the module docstring); at once, on the thread whose
        write failed, so no other write starts there."""
        log_dir = Path(log_dir)
        with self._lock:
            if log_dir in self.offline_dirs or log_dir not in self.log_dirs:
                return
            self.offline_dirs.add(log_dir)
            for tp, log in self._logs.items():
                if self._dir_of[tp] == log_dir:
                    log.offline = True
        logger.error("log dir %s is offline: a write or sync failed there; its partitions are "
                     "not served until the broker starts again", log_dir)
        threading.Thread(target=self.on_offline, args=(log_dir,), daemon=True,
                         name="log-dir-failure").start()

    # -- periodic work --------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write every log dir's recovery points and log start offsets."""
        with self._lock:
            for log_dir, mine in self._logs_by_dir().items():
                OffsetCheckpointFile(log_dir / RECOVERY_POINT_CHECKPOINT).write(
                    {tp: log.recovery_point for tp, log in mine.items()})
            self.checkpoint_log_start_offsets()

    def checkpoint_high_watermarks(self) -> None:
        """Write every log dir's ``replication-offset-checkpoint`` (Kafka's high watermark
        checkpoint, every ``replica.high.watermark.checkpoint.interval.ms``)."""
        with self._lock:
            for log_dir, mine in self._logs_by_dir().items():
                OffsetCheckpointFile(log_dir / REPLICATION_OFFSET_CHECKPOINT).write(
                    {tp: log.high_watermark for tp, log in mine.items()})

    def checkpoint_log_start_offsets(self) -> None:
        """Write every log dir's log start offsets (at once after DeleteRecords, so records
        deleted stay deleted whatever happens next)."""
        with self._lock:
            for log_dir, mine in self._logs_by_dir().items():
                OffsetCheckpointFile(log_dir / LOG_START_OFFSET_CHECKPOINT).write(
                    {tp: log.log_start_offset for tp, log in mine.items()})

    def _logs_by_dir(self) -> dict[Path, dict[TopicPartition, Log]]:
        return {log_dir: {tp: log for tp, log in self._logs.items()
                          if self._dir_of[tp] == log_dir}
                for log_dir in self.log_dirs if log_dir not in self.offline_dirs}

    def _each_log(self, task: Callable[[Log], object], what: str) -> None:
        for tp, log in list(self._logs.items()):
            if log.offline:
                continue
            try:
                task(log)
            except Exception:  # one bad partition must not stop the others' upkeep
                logger.exception("%s failed for %s-%d", what, *tp)

    def flush_by_time(self) -> None:
        self._each_log(lambda log: log.maybe_flush_by_time(), "flush")

    def enforce_retention(self) -> None:
        self._each_log(enforce_retention, "retention")

    def compact(self) -> None:
        """Clean the compacted logs that are due (:func:`.cleaner.cleaning_due`), then write
        the clean points of the log dirs."""
        if not self.config["log.cleaner.enable"]:
            return
        cleaned = False
        for tp, log in list(self._logs.items()):
            if log.offline:
                continue
            try:
                if cleaning_due(log, self._cleaned_to.get(tp, 0)):
                    result = clean(log)
                    if result.end_offset >= 0:
                        self._cleaned_to[tp] = result.end_offset
                        cleaned = True
            except Exception:  # one bad partition must not stop the others' upkeep
                logger.exception("compaction failed for %s-%d", *tp)
        if cleaned:
            with self._lock:
                for log_dir in self.log_dirs:
                    OffsetCheckpointFile(log_dir / CLEANER_OFFSET_CHECKPOINT).write(
                        {tp: offset for tp, offset in self._cleaned_to.items()
                         if self._dir_of.get(tp) == log_dir})

    def start_background_tasks(self, *, cleaner_interval_ms: int | None = None,
                               checkpoint_interval_ms: int = 60_000) -> None:
        """Start the upkeep threads. The cleaner pauses ``log.cleaner.backoff.ms`` between
        passes, read before each pause (a dynamic config), unless ``cleaner_interval_ms``
        fixes it."""
        config = self.config

        def cleaner_backoff() -> int:
            return config["log.cleaner.backoff.ms"] if cleaner_interval_ms is None \
                else cleaner_interval_ms

        schedule = [
            (self.flush_by_time, lambda: min(config["log.flush.scheduler.interval.ms"], 2**31)),
            (self.enforce_retention, lambda: config["log.retention.check.interval.ms"]),
            (self.compact, cleaner_backoff),
            (self.checkpoint, lambda: checkpoint_interval_ms),
            (self.checkpoint_high_watermarks,
             lambda: config["replica.high.watermark.checkpoint.interval.ms"]),
        ]
        for task, interval_ms in schedule:
            thread = threading.Thread(target=self._repeat, args=(task, interval_ms),
                                      name=f"log-{task.__name__}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _repeat(self, task: Callable[[], None], interval_ms: Callable[[], int]) -> None:
        while not self._stop.wait(interval_ms() / 1000):
            task()

    # -- shutdown -----------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Flush and close every log, write the checkpoints and the clean-shutdown markers."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        with self._lock:
            for log in self._logs.values():
                if not log.offline:  # an offline log's files are left as they are
                    log.close()
            self.checkpoint()
            self.checkpoint_high_watermarks()
            for log_dir in self.log_dirs:
                if log_dir not in self.offline_dirs:
                    (log_dir / CLEAN_SHUTDOWN_MARKER).touch()
