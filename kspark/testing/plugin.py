"""The kpy pytest plugin: local end-to-end pipeline tests with a real ZooKeeper, a real
broker_lite broker and a real SparkSession, from fixtures.

Installing kpy registers the plugin with pytest (entry point ``kpy`` in the ``pytest11``
group); ``-p no:kpy`` turns it off. A pipeline test reads a topic with ``format("kpy")``,
writes another, and compares what arrived with chispa::

    from chispa import assert_df_equality
    from pyspark.sql import functions as F


    def test_uppercase_pipeline(kpy_spark, kpy_broker, kpy_topic, kpy_produce, kpy_read):
        kafka = {"kafka.bootstrap.servers": kpy_broker.bootstrap_servers}
        source, sink = kpy_topic(partitions=3), kpy_topic(partitions=1)
        kpy_produce(source, [("k1", "hello"), ("k2", "kafka"), ("k3", "spark")])
        df = kpy_spark.read.format("kpy").options(**kafka, subscribe=source).load()
        upper = df.select("key", F.upper(F.col("value").cast("string")).alias("value"))
        upper.write.format("kpy").options(**kafka, topic=sink).mode("append").save()
        got = kpy_spark.createDataFrame(kpy_read(sink, as_table=True)).select("key", "value")
        expected = kpy_spark.createDataFrame(
            [(b"k1", b"HELLO"), (b"k2", b"KAFKA"), (b"k3", b"SPARK")], "key binary, value binary")
        assert_df_equality(got, expected, ignore_row_order=True)

Fixtures
--------
kpy_zookeeper (session)
    A :class:`~kspark.testing.zookeeper.ZooKeeperEnsemble`: ``connect_string``, ``server`` (the
    embedded ZooKeeper, None for an external one) and ``chroot()``, a fresh
    ``zookeeper.connect`` under ``/kpy-tests``.
kpy_zookeeper_server (session)
    The embedded ZooKeeper (:class:`broker_lite.zk.server.EmbeddedZooKeeper`), started when
    first needed: one JVM for the whole session.
kpy_zookeeper_connect
    A ``zookeeper.connect`` with a chroot of the test's own.
kpy_broker, kpy_session_broker (session)
    A broker_lite broker on a free loopback port (:class:`~kspark.testing.brokers.KpyBroker`:
    ``bootstrap_servers``, ``port``, ``zookeeper_connect``, ``broker``): a fresh one for the
    test, or one shared by the session (cheaper; topics then outlive tests unless deleted).
kpy_cluster
    A replicated cluster of three broker_lite brokers, each its own process, on the session's
    ZooKeeper (:class:`broker_lite.local.cluster.LocalCluster`): ``bootstrap_servers``,
    ``kill(id)`` (SIGKILL), ``stop_broker(id)`` (a clean, controlled shutdown),
    ``start_broker(id)``, ``leader(topic, partition)``, ``partition_state(...)``,
    ``wait_for_leader(...)``, ``wait_for_isr(...)``; stopped after the test. Internal and
    auto-created topics get three replicas. Parametrize it indirectly with
    ``{"brokers": n, "properties": {...}}`` for another size or settings.
kpy_faulty_cluster
    ``kpy_cluster`` with faults beyond kills (:mod:`broker_lite.local.faults`): every broker
    behind proxies the cluster controls, so ``isolate(id, from_=("zookeeper", "brokers",
    "clients"))`` cuts it off (its links go silent, its process runs on), ``partition(side_a,
    side_b)`` cuts every link between two sets of nodes (broker ids, ``"zookeeper"``,
    ``"clients"``), ``delay(id, ms)`` slows a broker's links, ``heal()`` mends them all;
    ``fail_disk(id, log_dir=0)`` makes writes and syncs of a log directory fail with EIO
    (``repair_disk(id)`` ends it); with ``{"disk_bytes": n}`` each log directory is a tmpfs of
    its own of that size (root only), which ``fill_disk(id, log_dir=0)`` fills and
    ``free_disk`` frees; ``{"log_dirs": n}`` gives each broker ``n`` log directories.
    Parametrized indirectly as ``kpy_cluster``.
kpy_secured_broker (session)
    A ``SASL_SSL`` broker_lite broker shared by the session (a
    :class:`~kspark.testing.brokers.KpyBroker` with ``security``): PLAIN, SCRAM-SHA-256 and
    SCRAM-SHA-512, users ``alice`` and ``bob`` with random passwords
    (``kpy_secured_broker.security.users``), certificates generated for the session
    (``security.ca_pem``); ``client_settings(user, mechanism)`` gives a client's settings,
    Kafka's names (for Spark, prefix them with ``kafka.``).
kpy_secured_brokers
    ``kpy_secured_brokers(security="SASL_SSL", *, users=None, mechanisms=..., client_auth="none",
    count=1, properties=None) -> KpyBroker``: brokers of this test's own (``SSL``,
    ``SASL_PLAINTEXT`` or ``SASL_SSL``; ``client_auth`` gives each user a client certificate),
    stopped after it.
kpy_bootstrap_servers
    Where the helpers below go: ``kpy_cluster``, ``kpy_faulty_cluster`` or ``kpy_broker`` when
    the test uses one, else ``kpy_session_broker``. Override it to run the helpers against
    another cluster.
kpy_client
    A :class:`broker_lite.client.KafkaClient` on ``kpy_bootstrap_servers``.
kpy_topic
    ``kpy_topic(partitions=3, config=None, *, name=None, replication_factor=1, keep=False)
    -> name``: creates a topic named after the test plus a unique suffix, with topic settings
    under Kafka's names; deleted after the test unless ``keep``.
kpy_produce
    ``kpy_produce(topic, rows, **producer_settings)``: writes rows (values, ``(key, value)``
    pairs, dicts with ``key``, ``value``, ``headers``, ``partition``, ``timestamp``, a pyarrow
    Table or a pandas DataFrame; see :mod:`kspark.testing.rows`) with kpy's idempotent producer.
kpy_read
    ``kpy_read(topic, *, isolation_level="read_committed", include_headers=True,
    as_table=False)``: every record now in the topic, as dicts in Spark's Kafka row schema or
    a pyarrow Table (:func:`kspark.testing.topics.read_topic`).
kpy_spark (session)
    A local SparkSession with ``format("kpy")`` registered (:mod:`kspark.testing.spark`).
kpy_schema_registry (session)
    A schema registry (:class:`broker_lite.registry.SchemaRegistry`, Confluent's REST API) on
    ``kpy_session_broker``, shared by the session: ``url`` for confluent-kafka's
    ``SchemaRegistryClient({"url": kpy_schema_registry.url})``. Tests sharing it use subjects
    of their own.
kpy_schema_registries
    ``kpy_schema_registries(bootstrap_servers=None, properties=None) -> SchemaRegistry``:
    registries of this test's own (default: on ``kpy_bootstrap_servers``, with a ``_schemas``
    topic and election group of the test's own unless ``properties`` say otherwise), stopped
    after it; call it twice for two processes sharing one store.

Markers
-------
A test that uses these fixtures is marked ``zookeeper``, ``broker`` or ``spark`` by what they
start (:mod:`kspark.testing.tiers`; ``@needs("broker")`` declares the same of a fixture of your
own), so ``pytest -m "not spark"`` leaves out every test that needs a SparkSession; ``slow`` is
there to be set by hand.

Options
-------
``--kpy-zookeeper-connect=host:port[/chroot]`` (ini: ``kpy_zookeeper_connect``)
    Use a running ZooKeeper ensemble instead of starting one; tests get chroots under
    ``<connect>/kpy-tests``.
``kpy_spark_master`` (ini)
    The master of ``kpy_spark`` (default ``local[2, 4]``).
``kpy_enforce_tiers`` (ini, default false)
    When true, a test that starts a broker_lite broker, an embedded ZooKeeper or a SparkSession
    without the matching tier marker fails (:func:`kspark.testing.tiers.enforce`).
``kpy_ci_skips_fail`` (ini, default false)
    When true and the ``CI`` environment variable is set, a skipped test (doctests included)
    is reported as a failure: in CI, nothing passes by not running.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from . import tiers
from .spark import DEFAULT_MASTER
from .tiers import needs

if TYPE_CHECKING:  # the fixtures import what they use, so loading the plugin stays cheap
    from broker_lite.client import KafkaClient
    from broker_lite.local.cluster import LocalCluster
    from broker_lite.registry import SchemaRegistry
    from broker_lite.zk.server import EmbeddedZooKeeper

    from .brokers import KpyBroker
    from .zookeeper import ZooKeeperEnsemble

ZOOKEEPER_CONNECT_OPTION = "--kpy-zookeeper-connect"
ZOOKEEPER_CONNECT_INI = "kpy_zookeeper_connect"
SPARK_MASTER_INI = "kpy_spark_master"
CI_SKIPS_FAIL_INI = "kpy_ci_skips_fail"
ENFORCE_TIERS_INI = "kpy_enforce_tiers"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kpy", "kpy: ZooKeeper, broker_lite and Spark fixtures")
    group.addoption(ZOOKEEPER_CONNECT_OPTION, dest="kpy_zookeeper_connect", default=None,
                    metavar="HOST:PORT[/CHROOT]",
                    help="use this ZooKeeper ensemble instead of starting an embedded one")
    parser.addini(ZOOKEEPER_CONNECT_INI, "ZooKeeper ensemble for the kpy fixtures "
                                         "(default: an embedded server)", default="")
    parser.addini(SPARK_MASTER_INI, "master of the kpy_spark session", default=DEFAULT_MASTER)
    parser.addini(CI_SKIPS_FAIL_INI, "when the CI environment variable is set, a skipped test "
                                     "fails: nothing passes in CI by not running", type="bool",
                                     default=False)
    parser.addini(ENFORCE_TIERS_INI, "fail a test that starts a broker, ZooKeeper or a "
                                     "SparkSession without the tier marker", type="bool",
                                     default=False)


def external_zookeeper(config: pytest.Config) -> str | None:
    """The external ensemble asked for on the command line or in the ini file, if any."""
    return config.getoption("kpy_zookeeper_connect") or config.getini(ZOOKEEPER_CONNECT_INI) \
        or None


def pytest_configure(config: pytest.Config) -> None:
    tiers.register(config)
    if config.getini(ENFORCE_TIERS_INI):
        tiers.enforce()
    connect = external_zookeeper(config)
    if connect is not None:
        from broker_lite.zk.errors import ZooKeeperConfigError

        from .zookeeper import ZooKeeperEnsemble

        try:
            ZooKeeperEnsemble.external(connect)
        except ZooKeeperConfigError as exc:
            raise pytest.UsageError(f"{ZOOKEEPER_CONNECT_OPTION}: {exc}") from None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tiers.mark_by_fixtures(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    tiers.running.append(item)
    try:
        return (yield)
    finally:
        tiers.running.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get("CI") \
            and item.config.getini(CI_SKIPS_FAIL_INI):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which counts as a failure: {report.longrepr}"


# -- ZooKeeper ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@needs("zookeeper")
def kpy_zookeeper_server(tmp_path_factory: pytest.TempPathFactory
                         ) -> Iterator[EmbeddedZooKeeper]:
    """The embedded ZooKeeper server of the test session, started on first use."""
    from broker_lite.zk.errors import ZooKeeperUnavailableError

    from .zookeeper import start_embedded

    try:
        server = start_embedded(tmp_path_factory.mktemp("kpy-zookeeper"))
    except ZooKeeperUnavailableError as exc:
        pytest.fail(f"cannot start the embedded ZooKeeper the kpy fixtures need: {exc}",
                    pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
@needs("zookeeper")
def kpy_zookeeper(request: pytest.FixtureRequest) -> ZooKeeperEnsemble:
    """The session's ZooKeeper: the external ensemble of ``--kpy-zookeeper-connect``, else the
    embedded server."""
    from .zookeeper import ZooKeeperEnsemble

    connect = external_zookeeper(request.config)
    if connect is not None:
        return ZooKeeperEnsemble.external(connect)
    server = request.getfixturevalue("kpy_zookeeper_server")
    return ZooKeeperEnsemble(server.connect_string, server)


@pytest.fixture
def kpy_zookeeper_connect(kpy_zookeeper: ZooKeeperEnsemble) -> str:
    """A ``zookeeper.connect`` with a chroot of this test's own."""
    return kpy_zookeeper.chroot()


# -- brokers --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@needs("broker", "zookeeper")
def kpy_session_broker(kpy_zookeeper: ZooKeeperEnsemble,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[KpyBroker]:
    """A broker_lite broker shared by the whole test session."""
    from .brokers import KpyBroker

    broker = KpyBroker.start(kpy_zookeeper.chroot(), tmp_path_factory.mktemp("kpy-broker"))
    yield broker
    broker.stop()


@pytest.fixture
@needs("broker", "zookeeper")
def kpy_broker(kpy_zookeeper_connect: str, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[KpyBroker]:
    """A broker_lite broker of this test's own, stopped after it."""
    from .brokers import KpyBroker

    broker = KpyBroker.start(kpy_zookeeper_connect, tmp_path_factory.mktemp("kpy-broker"))
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
@needs("broker", "zookeeper")
def kpy_secured_broker(kpy_zookeeper: ZooKeeperEnsemble,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[KpyBroker]:
    """A SASL_SSL broker_lite broker shared by the whole test session."""
    import secrets

    from broker_lite.local.security import LocalSecurity

    from .brokers import KpyBroker

    security = LocalSecurity("SASL_SSL", {user: secrets.token_urlsafe(16)
                                          for user in ("alice", "bob")})
    broker = KpyBroker.start(kpy_zookeeper.chroot(), tmp_path_factory.mktemp("kpy-secured"),
                             security=security)
    yield broker
    broker.stop()


@pytest.fixture
@needs("broker", "zookeeper")
def kpy_secured_brokers(kpy_zookeeper: ZooKeeperEnsemble,
                        tmp_path_factory: pytest.TempPathFactory
                        ) -> Iterator[Callable[..., KpyBroker]]:
    """``kpy_secured_brokers(security="SASL_SSL", *, users=None, mechanisms=...,
    client_auth="none", count=1, properties=None)``: secured brokers of this test's own."""
    from broker_lite.local.security import DEFAULT_MECHANISMS, LocalSecurity

    from .brokers import KpyBroker

    started: list[KpyBroker] = []

    def start(security: str = "SASL_SSL", *, users: dict[str, str] | None = None,
              mechanisms=DEFAULT_MECHANISMS, client_auth: str = "none", count: int = 1,
              properties: dict[str, str] | None = None) -> KpyBroker:
        local = LocalSecurity(security, users, mechanisms, client_auth)
        broker = KpyBroker.start(kpy_zookeeper.chroot(), tmp_path_factory.mktemp("kpy-secured"),
                                 count, properties, security=local)
        started.append(broker)
        return broker

    yield start
    for broker in started:
        broker.stop()


@pytest.fixture
@needs("broker", "zookeeper")
def kpy_cluster(request: pytest.FixtureRequest, kpy_zookeeper: ZooKeeperEnsemble,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three brokers as processes, to kill, stop and start again (see the module docstring)."""
    yield from _local_cluster(request, kpy_zookeeper, tmp_path_factory, faults=False)


@pytest.fixture
@needs("broker", "zookeeper")
def kpy_faulty_cluster(request: pytest.FixtureRequest, kpy_zookeeper: ZooKeeperEnsemble,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three brokers as processes behind proxies, to cut off, slow down, and give full or
    failing disks (see the module docstring)."""
    yield from _local_cluster(request, kpy_zookeeper, tmp_path_factory, faults=True)


def _local_cluster(request: pytest.FixtureRequest, kpy_zookeeper: ZooKeeperEnsemble,
                   tmp_path_factory: pytest.TempPathFactory, *,
                   faults: bool) -> Iterator[LocalCluster]:
    from broker_lite.local.cluster import LocalCluster

    options = getattr(request, "param", None) or {}
    cluster = LocalCluster(options.get("brokers", 3), tmp_path_factory.mktemp("kpy-cluster"),
                           options.get("properties"),
                           zookeeper_connect=kpy_zookeeper.chroot(), faults=faults,
                           log_dirs=options.get("log_dirs", 1),
                           disk_bytes=options.get("disk_bytes")).start()
    yield cluster
    cluster.stop()


@pytest.fixture
@needs("broker", "zookeeper")
def kpy_bootstrap_servers(request: pytest.FixtureRequest) -> str:
    """``bootstrap.servers`` for kpy_client, kpy_topic, kpy_produce and kpy_read:
    ``kpy_cluster``'s, ``kpy_faulty_cluster``'s or ``kpy_broker``'s when the test uses one,
    else ``kpy_session_broker``'s."""
    name = next((n for n in ("kpy_cluster", "kpy_faulty_cluster", "kpy_broker")
                 if n in request.fixturenames),
                "kpy_session_broker")
    return request.getfixturevalue(name).bootstrap_servers


@pytest.fixture
def kpy_client(kpy_bootstrap_servers: str) -> Iterator[KafkaClient]:
    """A :class:`broker_lite.client.KafkaClient` on ``kpy_bootstrap_servers``, closed after the
    test."""
    from broker_lite.client import KafkaClient

    with KafkaClient({"bootstrap.servers": kpy_bootstrap_servers}) as client:
        yield client


# -- topics and records ---------------------------------------------------------------------------


@pytest.fixture
def kpy_topic(kpy_client: KafkaClient, request: pytest.FixtureRequest
              ) -> Iterator[Callable[..., str]]:
    """``kpy_topic(partitions=3, config=None, *, name=None, replication_factor=1, keep=False)``
    creates a topic and returns its name; topics are deleted after the test unless ``keep``."""
    from .topics import TopicFactory

    factory = TopicFactory(kpy_client, request.node.name)
    yield factory
    factory.delete_created()


@pytest.fixture
def kpy_produce(kpy_client: KafkaClient) -> Callable[..., Any]:
    """``kpy_produce(topic, rows, **producer_settings) -> {partition: (first offset, count)}``
    writes rows (values, (key, value) pairs, dicts, a pyarrow Table or a pandas DataFrame)."""
    from .topics import produce

    return functools.partial(produce, kpy_client)


@pytest.fixture
def kpy_read(kpy_client: KafkaClient) -> Callable[..., Any]:
    """``kpy_read(topic, *, isolation_level="read_committed", include_headers=True,
    as_table=False)``: every record now in ``topic``, as dicts or a pyarrow Table."""
    from .topics import read_topic

    return functools.partial(read_topic, kpy_client)


# -- schema registries ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
@needs("broker", "zookeeper")
def kpy_schema_registry(kpy_session_broker: KpyBroker) -> Iterator[SchemaRegistry]:
    """A schema registry on the session's broker, shared by the session."""
    from broker_lite.registry import RegistryConfig, SchemaRegistry

    registry = SchemaRegistry(RegistryConfig({
        "kafkastore.bootstrap.servers": kpy_session_broker.bootstrap_servers,
        "listeners": "http://127.0.0.1:0"})).start()
    yield registry
    registry.stop()


@pytest.fixture
@needs("broker", "zookeeper")
def kpy_schema_registries(request: pytest.FixtureRequest
                          ) -> Iterator[Callable[..., SchemaRegistry]]:
    """``kpy_schema_registries(bootstrap_servers=None, properties=None)``: registries of this
    test's own, stopped after it."""
    import uuid

    from broker_lite.registry import RegistryConfig, SchemaRegistry

    started: list[SchemaRegistry] = []
    own = uuid.uuid4().hex[:8]

    def start(bootstrap_servers: str | None = None,
              properties: dict[str, str] | None = None) -> SchemaRegistry:
        bootstrap = bootstrap_servers or request.getfixturevalue("kpy_bootstrap_servers")
        registry = SchemaRegistry(RegistryConfig({
            "kafkastore.bootstrap.servers": bootstrap, "listeners": "http://127.0.0.1:0",
            "kafkastore.topic": f"_schemas-{own}", "schema.registry.group.id": f"registry-{own}",
            **(properties or {})})).start()
        started.append(registry)
        return registry

    yield start
    for registry in reversed(started):
        registry.stop()


# -- Spark ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@needs("spark")
def kpy_spark(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory):
    """A local SparkSession for the whole test session, with ``format("kpy")`` registered;
    stopped at the end if this fixture started it."""
    from .spark import start_test_session

    spark, started = start_test_session(tmp_path_factory.mktemp("kpy-spark-warehouse"),
                                        master=pytestconfig.getini(SPARK_MASTER_INI))
    yield spark
    if started:
        spark.stop()
