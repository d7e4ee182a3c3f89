"""Helpers of the tests of replicated clusters whose brokers are processes
(:class:`broker_lite.local.cluster.LocalCluster`): topics created and waited for, partitions read
back whole, and a producer that remembers what was acknowledged where."""

import threading
import time
import uuid

from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(cluster, name: str, *, partitions: int = 1, replication_factor: int = 3,
                 config: dict | None = None, assignment: list[list[int]] | None = None) -> str:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 3})
    topic = NewTopic(name, partitions, replication_factor, config=config or {}) \
        if assignment is None else NewTopic(name, num_partitions=len(assignment),
                                            replica_assignment=assignment, config=config or {})
    admin.create_topics([topic])[name].result(30)
    for partition in range(partitions if assignment is None else len(assignment)):
        cluster.wait_for_isr(name, partition)
    return name


def read_all(cluster, topic: str, partition: int = 0, timeout_s: float = 60) -> list[bytes]:
    """Every record of the partition, from its start to its high watermark, in order."""
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers,
                         "group.id": f"check-{uuid.uuid4().hex}", "enable.auto.commit": False,
                         "enable.partition.eof": True, "log_level": 3})
    try:
        _low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
        consumer.assign([TopicPartition(topic, partition, 0)])
        values, deadline = [], time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF and \
                        message.offset() >= high:
                    return values
                continue
            values.append(message.value())
        raise AssertionError(f"read {len(values)} of {high} records in {timeout_s} s")
    finally:
        consumer.close()


class SequenceProducer:
    """An idempotent acks=all producer writing ``start``, ``start`` + 1, ... on a thread,
    remembering which numbers were acknowledged, and at which offsets (``settings`` over its
    own). A fatal error (an idempotent producer's, after a loss it cannot explain) stops it:
    ``fatal`` says which, and what it acknowledged before stays recorded."""

    def __init__(self, bootstrap: str, topic: str, *, start: int = 0, **settings):
        self.topic = topic
        self.fatal: KafkaError | None = None
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                                  "enable.idempotence": True, "linger.ms": 5,
                                  "message.timeout.ms": 300000, "log_level": 0,
                                  "error_cb": self._error, **settings})
        self.acknowledged: list[int] = []
        self.offsets: list[tuple[int, int]] = []  # (offset, number) of each acknowledgement
        self.times: list[float] = []  # when each acknowledgement came (seconds since the epoch)
        self.failed: list[tuple[int, str]] = []
        self.sent = start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, error, message) -> None:
        number = int(message.value())
        if error is None:
            self.acknowledged.append(number)
            self.times.append(time.time())
            self.offsets.append((message.offset(), number))
        else:
            self.failed.append((number, str(error)))

    def _error(self, error: KafkaError) -> None:
        if error.fatal():
            self.fatal = error

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.fatal is None:
                try:
                    self.producer.produce(self.topic, value=b"%d" % self.sent,
                                          on_delivery=self._delivered)
                    self.sent += 1
                except BufferError:
                    self.producer.poll(0.1)
                    continue
                self.producer.poll(0)
                if self.sent % 50 == 0:
                    time.sleep(0.01)  # a steady stream rather than a flood of batches
        except KafkaException as exc:  # produce() and poll() raise once the producer failed
            error = exc.args[0]
            if not error.fatal() and error.code() != KafkaError._FATAL:
                raise
            self.fatal = self.fatal or error

    def __enter__(self) -> "SequenceProducer":
        self._thread.start()
        return self

    def wait_for_acks(self, more_than: int, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while len(self.acknowledged) <= more_than:
            assert self.fatal is None, f"the producer failed: {self.fatal}"
            assert time.monotonic() < deadline, \
                f"no acknowledgement past {more_than} in {timeout_s} s"
            time.sleep(0.05)

    def finish(self, *, fatal_ok: bool = False) -> None:
        """Stop writing and wait for every answer (``fatal_ok``: a fatal error stopped it, as
        the test expects)."""
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), "the producing thread still running 30 s after its stop"
        assert self.producer.flush(300) == 0
        assert fatal_ok or self.fatal is None, f"the producer failed: {self.fatal}"

    def abandon(self) -> None:
        """Stop writing without waiting for the answers still due: what was acknowledged so
        far stays recorded. For a producer that may fail fatally meanwhile (after an unclean
        election), whose flush then raises an error object that is no exception."""
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), "the producing thread still running 30 s after its stop"

    def __exit__(self, *exc_info) -> None:
        if not self._stop.is_set():
            self.finish()


def acknowledged_twice(offsets: list[tuple[int, int]]) -> dict[int, set[int]]:
    """The offsets acknowledged for more than one record (of ``(offset, number)`` pairs)."""
    at_offset: dict[int, set[int]] = {}
    for offset, number in offsets:
        at_offset.setdefault(offset, set()).add(number)
    return {o: n for o, n in at_offset.items() if len(n) > 1}


def check_acknowledged(cluster, topic: str,
                       writers: SequenceProducer | list[SequenceProducer]) -> list[int]:
    """Every record a writer acknowledged is read back once, at the offset acknowledged, and
    no offset was acknowledged for two records; the records read."""
    if isinstance(writers, SequenceProducer):
        writers = [writers]
    read = [int(v) for v in read_all(cluster, topic)]
    acknowledged = [n for writer in writers for n in writer.acknowledged]
    offsets = [pair for writer in writers for pair in writer.offsets]
    failed = sum(len(writer.failed) for writer in writers)
    twice = acknowledged_twice(offsets)
    lost = sorted(set(acknowledged) - set(read))
    duplicates = len(read) - len(set(read))
    print(f"\nacknowledged: {len(acknowledged)}, read: {len(read)}, lost: {len(lost)}, "
          f"duplicates: {duplicates}, offsets acknowledged twice: {len(twice)}, "
          f"failed deliveries: {failed}")
    assert twice == {}
    assert lost == []
    assert duplicates == 0
    for offset, number in offsets:
        assert read[offset] == number, f"offset {offset} holds {read[offset]}, not {number}"
    return read
