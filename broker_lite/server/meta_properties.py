"""``meta.properties``: which broker and cluster a log dir belongs to, as Kafka keeps it.

    #
    #<date>
    version=0
    broker.id=1001
    cluster.id=WwXt6UvTQoGqIJy9UxHJdA

Written in every log dir once the broker has registered. On the next start it gives a broker with
``broker.id=-1`` its generated id back, and it refuses log dirs that belong to another broker id or
another cluster, so data is never served under the wrong identity.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

from broker_lite.config.properties import parse_properties

FILE_NAME = "meta.properties"
VERSION = 0


class InconsistentBrokerMetadataError(Exception):
    """Log dirs that disagree with each other, or with the configured broker.id or the cluster
    (Kafka's InconsistentBrokerIdException / InconsistentClusterIdException)."""


@dataclass(frozen=True)
class BrokerMetadata:
    broker_id: int
    cluster_id: str | None


def read(log_dirs: list[Path]) -> BrokerMetadata | None:
    """The identity recorded in the log dirs, None when none has one yet."""
    found: dict[Path, BrokerMetadata] = {}
    for log_dir in log_dirs:
        path = Path(log_dir) / FILE_NAME
        if not path.exists():
            continue
        values = parse_properties(path.read_text(encoding="utf-8"))
        try:
            found[path] = BrokerMetadata(int(values["broker.id"]), values.get("cluster.id"))
        except (KeyError, ValueError):
            raise InconsistentBrokerMetadataError(f"{path} has no valid broker.id") from None
    if len(set(found.values())) > 1:
        listing = ", ".join(f"{p}: {m.broker_id}/{m.cluster_id}" for p, m in found.items())
        raise InconsistentBrokerMetadataError(f"log dirs belong to different brokers: {listing}")
    return next(iter(found.values()), None)


def check(recorded: BrokerMetadata | None, configured_id: int) -> int:
    """The broker id to use: the configured one, or the recorded one when -1 is configured."""
    if recorded is None:
        return configured_id
    if configured_id >= 0 and configured_id != recorded.broker_id:
        raise InconsistentBrokerMetadataError(
            f"configured broker.id {configured_id} does not match broker.id {recorded.broker_id} "
            f"in {FILE_NAME}; the log dirs belong to another broker")
    return recorded.broker_id


def check_cluster(recorded: BrokerMetadata | None, cluster_id: str) -> None:
    if recorded is not None and recorded.cluster_id and recorded.cluster_id != cluster_id:
        raise InconsistentBrokerMetadataError(
            f"the cluster id {cluster_id} in ZooKeeper does not match cluster.id "
            f"{recorded.cluster_id} in {FILE_NAME}; the log dirs belong to another cluster")


def write(log_dirs: list[Path], metadata: BrokerMetadata) -> None:
    """Record the identity in every log dir (atomically: temporary file, fsync, rename)."""
    text = (f"#\n#{time.strftime('%a %b %d %H:%M:%S %Z %Y')}\nversion={VERSION}\n"
            f"broker.id={metadata.broker_id}\ncluster.id={metadata.cluster_id}\n")
    for log_dir in log_dirs:
        path = Path(log_dir) / FILE_NAME
        tmp = path.with_name(FILE_NAME + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
