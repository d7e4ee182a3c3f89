"""A ZooKeeper server in the foreground, configured by a Kafka ``zookeeper.properties`` file, as
Kafka's ``zookeeper-server-start.sh`` runs one:
``python -m broker_lite.zk conf/zookeeper.properties``.

Keys read (the rest go to ``zoo.cfg`` unchanged, as ZooKeeper would read them)::

    dataDir             snapshots and transaction logs       (default /tmp/zookeeper)
    clientPort          the client port                      (default 2181)
    clientPortAddress   the address to bind                  (default 127.0.0.1, loopback only)
    maxClientCnxns      connections per client address       (default 60; 0 is unlimited)
    admin.enableServer  must be false: no Jetty in the jars  (default false)
    tickTime            ZooKeeper's time unit, in ms         (default 3000)

SIGINT and SIGTERM stop the server and exit with status 0.
"""

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from broker_lite.common.foreground import termination_requested
from broker_lite.config.properties import read_properties

from .errors import ZooKeeperConfigError, ZooKeeperUnavailableError
from .server import EmbeddedZooKeeper, log_tail

_OWN_KEYS = ("dataDir", "clientPort", "clientPortAddress", "maxClientCnxns", "tickTime")


def _int_setting(properties: Mapping[str, str], key: str, default: int) -> int:
    text = properties.get(key)
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise ZooKeeperConfigError(f"{key}={text!r} is not an integer") from None


def server_from_properties(properties: Mapping[str, str]) -> EmbeddedZooKeeper:
    """An (unstarted) server configured by Kafka's ``zookeeper.properties`` keys."""
    settings = {k: v for k, v in properties.items() if k not in _OWN_KEYS}
    return EmbeddedZooKeeper(
        Path(properties.get("dataDir", "/tmp/zookeeper").strip()),
        _int_setting(properties, "clientPort", 2181),
        host=properties.get("clientPortAddress", "127.0.0.1").strip(),
        tick_ms=_int_setting(properties, "tickTime", 3000),
        max_client_cnxns=_int_setting(properties, "maxClientCnxns", 60),
        settings=settings,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m broker_lite.zk",
        description="Run a ZooKeeper server in the foreground until SIGINT or SIGTERM.")
    parser.add_argument("config", type=Path, help="a Kafka zookeeper.properties file")
    args = parser.parse_args(argv)
    try:
        server = server_from_properties(read_properties(args.config))
    except (OSError, ZooKeeperConfigError) as exc:
        print(f"error: {args.config}: {exc}", file=sys.stderr)
        return 2

    stopping = termination_requested()
    try:
        server.start()
    except ZooKeeperUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"ZooKeeper serving on {server.connect_string} (dataDir {server.data_dir}, "
          f"log {server.log_path}); started in {server.startup_seconds:.2f} s", flush=True)
    try:
        while not stopping.wait(0.5):
            if server.poll() is not None:
                print(f"error: ZooKeeper exited with status {server.poll()}\n"
                      f"{log_tail(server.log_path)}", file=sys.stderr)
                return 1
    finally:
        server.stop()
    print("ZooKeeper stopped", flush=True)
    return 0
