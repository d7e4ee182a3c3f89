"""Why a replica refuses an append, as exceptions the request handlers answer with Kafka's
error codes."""


class ReplicationError(Exception):
    """A partition's replica cannot do what was asked."""


class NotLeaderError(ReplicationError):
    """This broker does not lead the partition (NOT_LEADER_OR_FOLLOWER)."""


class NotEnoughReplicasError(ReplicationError):
    """An acks=all append while the ISR is smaller than ``min.insync.replicas``
    (NOT_ENOUGH_REPLICAS): nothing was appended."""
