"""Benchmark: confluent-kafka producing and consuming through broker_lite, against librdkafka's
built-in mock broker as the peer, in one run, in the spirit of Kafka's producer-perf-test and
consumer-perf-test.

    python -m broker_lite.server.bench [--records 1000000] [--repeat 5]

For each codec (none, lz4): a producer sends ``--records`` records of 100 random-ish bytes
(acks=1) to one partition, timed from the first ``produce`` to the end of ``flush``; then a
consumer reads them all back from offset 0, timed until the last one arrives. broker_lite runs
as its own process (``broker-lite start``, embedded ZooKeeper, data written to its log dir on
disk); the mock broker is the C in-memory broker librdkafka starts for a client configured with
``test.mock.num.brokers``; it keeps only a few megabytes per partition, so the consume phase
reads whatever each broker holds and rates are compared per record. The same client code
drives both, in alternating order from round to round; figures are medians over ``--repeat``
rounds, and ratios are broker_lite / mock.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

RECORD_BYTES = 100


def payloads(count: int) -> list[bytes]:
    block = os.urandom(RECORD_BYTES * 1024)
    return [block[(i % 1024) * RECORD_BYTES:(i % 1024 + 1) * RECORD_BYTES] for i in range(count)]


def produce(bootstrap: str | None, topic: str, values: list[bytes], codec: str,
            producer: Producer | None = None) -> float:
    producer = producer or Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    start = time.perf_counter()
    send = producer.produce
    for value in values:
        while True:
            try:
                send(topic, value, partition=0)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.001)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - start
    if remaining:
        raise RuntimeError(f"{remaining} records were not delivered")
    return elapsed


def producer_config(codec: str) -> dict:
    return {"acks": "1", "compression.type": codec, "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000, "log_level": 3}


def consume(bootstrap: str, topic: str) -> tuple[float, int]:
    """Read the partition from its earliest to its latest offset; (seconds, records read).
    The mock broker keeps only a few megabytes per partition, so each broker is read for what
    it holds and the rates compared per record."""
    # When the broker outpaces the application, librdkafka's local queue fills and it pauses
    # fetching for fetch.queue.backoff.ms (1 s by default); the mock broker holds too little to
    # ever fill it, so a short pause keeps the comparison about the brokers.
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "fetch.queue.backoff.ms": 5,
                         "log_level": 3})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    count = high - low
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    received = 0
    start = time.perf_counter()
    deadline = start + 300
    try:
        while received < count and time.perf_counter() < deadline:
            # never ask for more than remain: consume() waits until it has them all
            for message in consumer.consume(min(10_000, count - received), 1.0):
                if message.error() is None:
                    received += 1
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if received < count:
        raise RuntimeError(f"consumed {received} of {count} records")
    return elapsed, count


def process_stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name: state, ppid, ...; utime,
    stime, cutime and cstime (clock ticks) are ``[11:15]``."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` (every thread), from /proc."""
    fields = process_stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class BrokerLiteProcess:
    """``broker-lite start`` in ``directory``, on a free port; ``properties`` add to (or
    override) the broker's settings, ``env`` is the process's environment."""

    def __init__(self, directory: Path, properties: dict[str, str] | None = None,
                 env: dict[str, str] | None = None):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        settings = {"broker.id": "0", "listeners": "PLAINTEXT://127.0.0.1:0",
                    "log.dirs": str(directory / "logs"), "num.partitions": "1",
                    **(properties or {})}
        path = directory / "server.properties"
        path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "broker_lite", "start", str(path), "--log-level",
             "WARNING"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
            cwd=directory,  # not the caller's directory, which `-m` would put first on the path
            start_new_session=True)  # a process group: stop() can end it with its children
        stdout = self.process.stdout
        assert stdout is not None  # stdout=PIPE
        line = stdout.readline()
        if "listening on" not in line:
            self.process.kill()
            raise RuntimeError(f"broker-lite did not start: {line!r}")
        self.bootstrap = line.rsplit(" ", 1)[-1].strip()

    def cpu_seconds(self) -> float:
        """The user and system CPU time the broker process has used so far, all its threads
        (``/proc/<pid>/stat``)."""
        return process_cpu_seconds(self.process.pid)

    def stop(self, timeout_s: float = 60) -> None:
        """Stop the broker; killed (with its embedded ZooKeeper, its process group) when it
        has not ended within ``timeout_s`` (a broker with a thread per connection may not)."""
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def run_round(values: list[bytes], codec: str, broker: BrokerLiteProcess,
              mock_first: bool = False) -> dict:
    """Records per second for each phase against each broker; ``mock_first`` swaps the order,
    so that alternating rounds cancel what running first or second does to a broker's figures."""
    topic = f"bench-{codec}-{uuid.uuid4().hex[:8]}"

    def against_broker_lite() -> dict:
        producer = Producer({"bootstrap.servers": broker.bootstrap, **producer_config(codec)})
        producer.list_topics(topic, timeout=10)  # auto-create before timing
        time.sleep(0.5)
        produced = len(values) / produce(None, topic, values, codec, producer)
        seconds, count = consume(broker.bootstrap, topic)
        return {"lite_produce": produced, "lite_consume": count / seconds}

    def against_mock() -> dict:
        producer = Producer({"test.mock.num.brokers": 1, **producer_config(codec)})
        mock = next(iter(producer.list_topics(timeout=10).brokers.values()))
        produced = len(values) / produce(None, topic, values, codec, producer)
        seconds, count = consume(f"{mock.host}:{mock.port}", topic)
        del producer  # the mock broker stops with its producer
        return {"mock_produce": produced, "mock_consume": count / seconds}

    ways = (against_mock, against_broker_lite) if mock_first else (against_broker_lite,
                                                                   against_mock)
    return {key: rate for way in ways for key, rate in way().items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    values = payloads(args.records)
    print(f"{args.records:,} records of {RECORD_BYTES} bytes to one partition, acks=1, "
          f"confluent-kafka; broker_lite (own process, on disk) vs librdkafka's mock broker; "
          f"median of {args.repeat} rounds")
    with tempfile.TemporaryDirectory(prefix="kpy-bench-") as tmp:
        broker = BrokerLiteProcess(Path(tmp))
        try:
            for codec in ("none", "lz4"):
                rounds = [run_round(values, codec, broker, mock_first=i % 2 == 1)
                          for i in range(args.repeat)]
                median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
                for phase in ("produce", "consume"):
                    lite, mock = median[f"lite_{phase}"], median[f"mock_{phase}"]
                    print(f"{phase:<8} {codec:<5} broker_lite {lite:>11,.0f} rec/s "
                          f"{lite * RECORD_BYTES / 1e6:>7.1f} MB/s | mock {mock:>11,.0f} rec/s "
                          f"{mock * RECORD_BYTES / 1e6:>7.1f} MB/s | ratio {lite / mock:.2f}")
        finally:
            broker.stop()
    print("target: broker_lite >= 0.8x the mock broker for produce and consume")


if __name__ == "__main__":
    main()
