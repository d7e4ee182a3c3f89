"""Suite-wide fixtures; the ZooKeeper fixtures are shared by every test package. In CI a skipped
test is a failure, so nothing passes by not running: the kpy plugin's ``kpy_ci_skips_fail``,
set in pyproject.toml, so that it covers the doctests outside tests/ too.

Tiers (README, "Running the tests"): the kpy plugin marks a test ``zookeeper``, ``broker`` or
``spark`` from the fixtures it uses (``@needs`` on a fixture declares what it starts); ``slow``
is set by hand. With ``kpy_enforce_tiers`` (pyproject.toml), a test that starts a broker,
ZooKeeper or Spark in this process without the marker fails, so the fast tiers stay fast.
"""

import os
import sys
import time
import uuid

import pytest

from broker_lite.common.tiers import needs

# One real ZooKeeper per test session, and the fixtures built on it, for every test package
# (tests/zookeeper_support.py adds the broker's); hung tests reported with every thread's stack
# (tests/hang_report.py); and Spark drivers started with their JVM's flags and class-data
# archive (tests/spark_archive.py).
pytest_plugins = ["broker_lite.zk.testing", "zookeeper_support", "hang_report", "spark_archive"]

# The suite starts hundreds of Python processes that import this checkout: its test workers,
# brokers and tools run as commands, Spark's Python workers, notebooks' kernels. Where the
# environment sets PYTHONDONTWRITEBYTECODE none of them caches bytecode, so each compiles the
# same few hundred modules again (a broker process spends a third of its start on it), and
# every test worker rewrites and compiles every test module. The suite writes the caches
# (``__pycache__``, ignored by git) whatever that variable says, for this process and those it
# starts; the test workers are started after this file is read.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    sys.dont_write_bytecode = False


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true",
                     help="run the soak loops (leader kills, busy-machine starts, long streaming "
                          "queries, isolated leaders) at their full counts, as before a "
                          "release, instead of the shorter ones of a quick run")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "soak: a soak loop (uses the soak fixture; marked at collection): CI leaves "
                   "it out, a release runs it with --soak")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by markers
def pytest_collection_modifyitems(items):
    for item in items:
        if "soak" in getattr(item, "fixturenames", ()):
            item.add_marker("soak")


@pytest.fixture
def soak(request) -> bool:
    """Whether ``--soak`` asks for the full counts of a soak loop. Without it a loop runs a few
    rounds, enough to break on the same faults, for a quick run by hand; CI leaves the loops out
    (the ``soak`` marker), and the figures quoted in the README come from ``--soak`` runs."""
    return request.config.getoption("--soak")


@pytest.fixture(scope="session")
@needs("zookeeper")
def standalone_zookeeper(standalone_zookeeper):
    """broker_lite.zk.testing's, declared as the ZooKeeper it starts."""
    return standalone_zookeeper


@pytest.fixture(scope="session")
def zookeeper_server(kpy_zookeeper_server):
    """The embedded ZooKeeper is the kpy pytest plugin's (kspark.testing), so the suite's
    fixtures and the plugin's share one server."""
    return kpy_zookeeper_server


@pytest.fixture
def kafka_call():
    """``call(port, api_key, version, body) -> response body``: one request over a fresh
    connection, encoded and decoded with broker_lite.protocol."""
    from broker_lite.server.testing import call

    return call


@pytest.fixture
@needs("broker", "zookeeper")
def broker(zookeeper_connect, tmp_path):
    """One broker_lite broker on an ephemeral port (``bootstrap(broker)`` for clients)."""
    from broker_lite.server.testing import start_brokers, stop_brokers

    brokers = start_brokers(zookeeper_connect, tmp_path)
    yield brokers[0]
    stop_brokers(brokers)


@pytest.fixture
@needs("broker", "zookeeper")
def release_broker(request, zookeeper_connect, tmp_path):
    """A broker_lite broker serving only the APIs and versions of the older Kafka release named
    by the test's indirect parameter (``broker_lite.server.releases.RELEASES``)."""
    from broker_lite.server.releases import RELEASES
    from broker_lite.server.testing import start_brokers, stop_brokers

    brokers = start_brokers(zookeeper_connect, tmp_path, release=RELEASES[request.param])
    yield brokers[0]
    stop_brokers(brokers)


@pytest.fixture
@needs("broker", "zookeeper")
def three_brokers(zookeeper_connect, tmp_path):
    """A three-broker cluster sharing one ZooKeeper."""
    from broker_lite.server.testing import start_brokers, stop_brokers

    brokers = start_brokers(zookeeper_connect, tmp_path, 3)
    yield brokers
    stop_brokers(brokers)


@pytest.fixture
def read_committed():
    """``read_committed(servers, topic, expected=0, *, timeout_s=60, settle_s=2)``: the
    messages a read_committed confluent-kafka consumer (a third party's view) sees of ``topic``
    from its beginning. It reads every partition to its end (the last stable offset: past it,
    read_committed readers see nothing yet), waiting up to ``timeout_s`` until it has
    ``expected`` messages at least, then ``settle_s`` more for any beyond them, so a test sees
    duplicates too. With ``expected=0`` it still reads every partition to its end, so "nothing
    was committed" is a read, not a wait. The consumer is assigned the partitions: it joins no
    group, and waits for no rebalance."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    def read(servers: str, topic: str, expected: int = 0, *, timeout_s: float = 60,
             settle_s: float = 2) -> list:
        consumer = Consumer({"bootstrap.servers": servers, "group.id": f"check-{uuid.uuid4()}",
                             "isolation.level": "read_committed", "enable.auto.commit": False,
                             "enable.partition.eof": True, "log_level": 3})
        deadline = time.monotonic() + timeout_s
        seen: list = []
        try:
            while not (partitions := consumer.list_topics(topic, timeout=10).topics[topic]
                       .partitions):
                assert time.monotonic() < deadline, f"no partitions of {topic} to read"
                time.sleep(0.2)
            consumer.assign([KafkaTopicPartition(topic, p, OFFSET_BEGINNING)
                             for p in partitions])
            at_end: set[int] = set()

            def poll(until: float) -> None:
                while time.monotonic() < until and (len(seen) < expected
                                                    or len(at_end) < len(partitions)):
                    message = consumer.poll(0.2)
                    if message is None:
                        continue
                    if message.error() is None:
                        seen.append(message)
                        at_end.discard(message.partition())
                    elif message.error().code() == KafkaError._PARTITION_EOF:
                        at_end.add(message.partition())

            poll(deadline)
            # Then settle_s more for anything beyond: a partition reports its end again only
            # after new messages, so this waits out settle_s unless every partition gets some.
            at_end.clear()
            poll(time.monotonic() + settle_s)
        finally:
            consumer.close()
        return seen

    return read
