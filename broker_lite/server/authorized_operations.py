"""Authorized operations as Kafka reports them (KIP-430): a 32-bit field with bit ``code`` set
for each ``AclOperation`` allowed on a resource.

Without an authorizer Kafka allows every operation a resource type supports
(``AclEntry.supportedOperations``), so that is what broker_lite reports until it has one;
``NOT_REQUESTED`` (-2**31) fills the field when the request did not ask for it.

>>> authorized_operations(TOPIC) == sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
True
>>> [AclOperation(op).name for op in range(32) if CLUSTER_OPERATIONS >> op & 1]
... # doctest: +NORMALIZE_WHITESPACE
['CREATE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS',
 'IDEMPOTENT_WRITE']
"""

from enum import IntEnum

NOT_REQUESTED = -(2**31)


class AclOperation(IntEnum):
    """Kafka's ``AclOperation`` codes."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


TOPIC, GROUP, CLUSTER = "TOPIC", "GROUP", "CLUSTER"

_SUPPORTED = {
    TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
            AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
            AclOperation.ALTER_CONFIGS),
    GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE),
    CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
              AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
              AclOperation.DESCRIBE),
}


def authorized_operations(resource_type: str) -> int:
    """The operations allowed on a resource of ``resource_type`` (every supported one), as
    Kafka's bit field (``Utils.to32BitField``)."""
    return sum(1 << operation for operation in _SUPPORTED[resource_type])


CLUSTER_OPERATIONS = authorized_operations(CLUSTER)
TOPIC_OPERATIONS = authorized_operations(TOPIC)
