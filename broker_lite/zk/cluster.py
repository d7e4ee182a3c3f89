"""The cluster-wide znodes every broker sets up at startup: the persistent directories of
Kafka's layout and ``/cluster/id``.

A cluster id is 16 random bytes (a version 4 UUID) in URL-safe base64 without padding: 22
characters, as Kafka's ``CoreUtils.generateUuidAsBase64``. The first broker to start writes it;
it never changes afterwards.
"""

import base64
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from .layout import PERSISTENT_PATHS, ClusterIdZNode


def ensure_persistent_paths(client: KazooClient) -> None:
    """Create (empty) the directories Kafka's brokers create at startup, if absent."""
    for path in PERSISTENT_PATHS:
        client.ensure_path(path)


def generate_cluster_id() -> str:
    """A new cluster id.

    >>> len(generate_cluster_id())
    22
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        # command-line tools would take an id starting with "-" for an option
        if not cluster_id.startswith("-"):
            return cluster_id


def get_cluster_id(client: KazooClient) -> str | None:
    try:
        data, _stat = client.get(ClusterIdZNode.PATH)
    except NoNodeError:
        return None
    return ClusterIdZNode.decode(data)


def get_or_create_cluster_id(client: KazooClient) -> str:
    """The cluster id, written now if this is the cluster's first start."""
    existing = get_cluster_id(client)
    if existing is not None:
        return existing
    try:
        client.create(ClusterIdZNode.PATH, ClusterIdZNode.encode(generate_cluster_id()),
                      makepath=True)
    except NodeExistsError:
        pass  # another broker won the race; its id is the cluster's
    cluster_id = get_cluster_id(client)
    assert cluster_id is not None  # just created, and never deleted
    return cluster_id
