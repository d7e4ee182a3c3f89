"""Errors of the ZooKeeper layer: the server process, the connection, the znode layout and the
cluster operations built on it. Each names the path, directory or connect string involved."""


class ZooKeeperError(Exception):
    """Base class of every error raised by :mod:`broker_lite.zk`."""


# -- the server process ---------------------------------------------------------------------------


class ZooKeeperUnavailableError(ZooKeeperError):
    """An embedded ZooKeeper server cannot be run or did not come up."""


class JavaNotFoundError(ZooKeeperUnavailableError):
    """No ``java`` executable: ZooKeeper is a Java program."""


class ZooKeeperJarsNotFoundError(ZooKeeperUnavailableError):
    """The ZooKeeper jars (shipped inside the pyspark wheel) are missing; names the directory."""


class ZooKeeperStartError(ZooKeeperUnavailableError):
    """The server process exited or did not answer in time; the message ends with its log tail."""


class ZooKeeperConfigError(ZooKeeperError, ValueError):
    """A server setting (``zookeeper.properties``) or a connect string that cannot be used."""


# -- the connection -------------------------------------------------------------------------------


class ZooKeeperConnectionError(ZooKeeperError):
    """No session could be established within the connection timeout; names the connect string."""


class ZooKeeperUnreachableError(ZooKeeperError):
    """The session's connection is down (lost, or the session expired) and what was asked was
    never read before, so nothing in memory answers it."""


# -- the layout -----------------------------------------------------------------------------------


class MalformedZnodeError(ZooKeeperError):
    """A znode's data does not decode as its layout says (bad JSON, missing or mistyped field)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"malformed data in znode {path}: {reason}")
        self.path = path
        self.reason = reason


# -- brokers, topics, producer ids -----------------------------------------------------------------


class BrokerIdInUseError(ZooKeeperError):
    """Another live session already registered this broker id under ``/brokers/ids``."""


class InvalidTopicError(ZooKeeperError, ValueError):
    """A topic name Kafka would refuse (characters, length, ``.``/``..``, collisions)."""


class TopicExistsError(ZooKeeperError):
    """The topic exists already (or is still being deleted)."""


class TopicAlreadyMarkedForDeletionError(ZooKeeperError):
    """The topic already has a marker under ``/admin/delete_topics``."""


class UnknownTopicError(ZooKeeperError):
    """The topic has no ``/brokers/topics/[topic]`` znode."""


class InvalidPartitionsError(ZooKeeperError, ValueError):
    """A partition count that is not positive, or that does not grow the topic."""


class InvalidReplicationFactorError(ZooKeeperError, ValueError):
    """A replication factor that is not positive or exceeds the live brokers."""


class InvalidReplicaAssignmentError(ZooKeeperError, ValueError):
    """An explicit replica assignment with gaps, duplicates or uneven replica counts."""


class ConflictingTopicSettingsError(ZooKeeperError, ValueError):
    """A new topic given a partition count or replication factor and an explicit replica
    assignment: one or the other."""


class ReassignmentInProgressError(ZooKeeperError):
    """The topic's partitions are being reassigned (``adding_replicas`` or ``removing_replicas``
    in its assignment): its partitions cannot be changed now."""


class ProducerIdsExhaustedError(ZooKeeperError):
    """``/latest_producer_id_block`` has reached the end of the 64-bit producer id space."""


class ProducerIdsUnavailableError(ZooKeeperError):
    """No producer id block can be taken now: ZooKeeper cannot be reached, or the broker has no
    id yet. Retriable."""
