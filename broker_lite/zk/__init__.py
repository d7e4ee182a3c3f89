"""Kafka 2.x's ZooKeeper layout and the cluster duties built on it, with a real ZooKeeper.

* :mod:`~broker_lite.zk.server`: an embedded ZooKeeper server (a ``java`` child process running
  the ZooKeeper jars of the pyspark wheel); :mod:`~broker_lite.zk.standalone` runs one in the
  foreground from a Kafka ``zookeeper.properties``.
* :mod:`~broker_lite.zk.client`: kazoo connections from ``zookeeper.connect`` (with chroot).
* :mod:`~broker_lite.zk.layout`: one definition per znode (path, encode, decode).
* :mod:`~broker_lite.zk.registration`: a broker's registration; :mod:`~broker_lite.zk.replicas`:
  the partitions assigned to it; :mod:`~broker_lite.zk.events`: the event loop that handles
  watches (the broker's membership of the cluster, :mod:`broker_lite.server.zk_broker`, and the
  controller, :mod:`broker_lite.controller`, build on them).
* :mod:`~broker_lite.zk.admin`: topic creation, deletion, partitions and configs.
"""

from .admin import (
    add_partitions,
    create_topic,
    delete_topic,
    get_broker_config,
    get_partition_state,
    get_topic_assignment,
    get_topic_config,
    list_topics,
    set_broker_config,
    set_topic_config,
    validate_topic_name,
)
from .assignment import assign_replicas
from .client import (
    ConnectString,
    ZooKeeperConnection,
    connect,
    connect_from_config,
    open_zookeeper,
    parse_connect_string,
)
from .cluster import (
    ensure_persistent_paths,
    generate_cluster_id,
    get_or_create_cluster_id,
)
from .endpoints import EndPoint, parse_endpoints
from .errors import (
    BrokerIdInUseError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    JavaNotFoundError,
    MalformedZnodeError,
    ProducerIdsExhaustedError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
    ZooKeeperConfigError,
    ZooKeeperConnectionError,
    ZooKeeperError,
    ZooKeeperJarsNotFoundError,
    ZooKeeperStartError,
    ZooKeeperUnavailableError,
)
from .layout import (
    BrokerRegistration,
    ControllerInfo,
    PartitionState,
    ProducerIdBlock,
    TopicAssignment,
)
from .producer_ids import allocate_producer_id_block
from .registration import generate_broker_id, live_broker_ids
from .replicas import PartitionListener
from .server import EmbeddedZooKeeper

__all__ = [
    "BrokerIdInUseError", "BrokerRegistration", "ConnectString", "ControllerInfo",
    "EmbeddedZooKeeper", "EndPoint", "InvalidPartitionsError", "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError", "InvalidTopicError", "JavaNotFoundError",
    "MalformedZnodeError", "PartitionListener", "PartitionState", "ProducerIdBlock",
    "ProducerIdsExhaustedError", "TopicAlreadyMarkedForDeletionError", "TopicAssignment",
    "TopicExistsError", "UnknownTopicError", "ZooKeeperConfigError",
    "ZooKeeperConnection", "ZooKeeperConnectionError", "ZooKeeperError",
    "ZooKeeperJarsNotFoundError", "ZooKeeperStartError", "ZooKeeperUnavailableError",
    "add_partitions", "allocate_producer_id_block", "assign_replicas", "connect",
    "connect_from_config", "create_topic", "delete_topic", "ensure_persistent_paths",
    "generate_broker_id", "generate_cluster_id", "get_or_create_cluster_id",
    "get_broker_config", "get_partition_state", "get_topic_assignment", "get_topic_config",
    "list_topics",
    "live_broker_ids", "open_zookeeper", "parse_connect_string", "parse_endpoints",
    "set_broker_config", "set_topic_config", "validate_topic_name",
]
