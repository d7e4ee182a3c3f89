"""The enumerations and sentinels that requests and responses carry, each declared once, here,
with Kafka's names and codes; every layer above (the client, the broker's handlers, the tools, the
connector) uses these. (The sentinels the record formats need, ``NO_PRODUCER_ID`` and the like,
sit lower still, in :mod:`broker_lite.common.vocabulary`: the records layer is below this one.)

========================  ======================================================================
name                      Kafka's
========================  ======================================================================
``CONSUMER_REPLICA_ID``   ``FetchRequest``'s replica ids that are no broker's
``UNDEFINED_EPOCH``       ``OffsetsForLeaderEpochResponse``'s unknown epoch and its offset
``EARLIEST_TIMESTAMP``..  ``ListOffsetsRequest``'s special timestamps
``IsolationLevel``        ``IsolationLevel`` (Fetch, ListOffsets)
``DELETE_RECORDS_HIGH_WA`` ``DeleteRecordsRequest.HIGH_WATERMARK``
``CoordinatorType``       ``FindCoordinatorRequest.CoordinatorType``
``ConfigResourceType``    ``ConfigResource.Type`` (DescribeConfigs, AlterConfigs)
``ConfigSource``          ``DescribeConfigsResponse.ConfigSource``
``ConfigType``            ``DescribeConfigsResponse.ConfigType`` (v3+)
``AlterConfigOpType``     ``AlterConfigOp.OpType`` (IncrementalAlterConfigs)
``ResourceType``          ``org.apache.kafka.common.resource.ResourceType`` (ACLs)
``PatternType``           ``org.apache.kafka.common.resource.PatternType``
``AclOperation``          ``org.apache.kafka.common.acl.AclOperation``
``AclPermissionType``     ``org.apache.kafka.common.acl.AclPermissionType``
========================  ======================================================================

>>> IsolationLevel.of("read_committed"), IsolationLevel.READ_COMMITTED.setting
(<IsolationLevel.READ_COMMITTED: 1>, 'read_committed')
>>> ConfigSource.of(42)
<ConfigSource.UNKNOWN: 0>
"""

from __future__ import annotations

import enum
from typing import TypeVar

# -- Fetch, ListOffsets, OffsetForLeaderEpoch: who asks -------------------------------------------
# A broker's id (>= 0) marks a follower's request; a client's carries one of these.

#: A consumer (or any client that is not a replica).
CONSUMER_REPLICA_ID = -1
#: A tool that reads as a replica would, for debugging (Fetch: up to the log end).
DEBUGGING_REPLICA_ID = -2

#: OffsetForLeaderEpoch's answer for an epoch the log does not know: no epoch, no end offset.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

# -- ListOffsets ----------------------------------------------------------------------------------
# A partition's timestamp in a ListOffsets request is a time in ms, or one of these.

#: The log start offset.
EARLIEST_TIMESTAMP = -2
#: The high watermark (the offset the next record will get); under read_committed, the last
#: stable offset.
LATEST_TIMESTAMP = -1
#: The offset of the record with the largest timestamp (KIP-734, ListOffsets v7+).
MAX_TIMESTAMP = -3
#: The local log start offset (tiered storage, KIP-405, ListOffsets v8+).
EARLIEST_LOCAL_TIMESTAMP = -4


class IsolationLevel(enum.IntEnum):
    """What a Fetch or ListOffsets may see: every record, or only committed ones."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1

    @property
    def setting(self) -> str:
        """The name the ``isolation.level`` setting gives it: ``read_committed``."""
        return self.name.lower()

    @classmethod
    def of(cls, setting: str) -> IsolationLevel:
        """The level an ``isolation.level`` setting names (ValueError for another name)."""
        for member in cls:
            if member.setting == setting:
                return member
        raise ValueError(f"isolation level must be one of "
                         f"{sorted(m.setting for m in cls)}, got {setting!r}")


# -- DeleteRecords, FindCoordinator --------------------------------------------------------------

#: A DeleteRecords offset meaning "up to the high watermark".
DELETE_RECORDS_HIGH_WATERMARK = -1


class CoordinatorType(enum.IntEnum):
    """Whose coordinator FindCoordinator looks for (its ``key_type``)."""

    GROUP = 0
    TRANSACTION = 1
    SHARE = 2  # a share-partition's share coordinator: "group:topicId:partition" (KIP-932)


# -- configs --------------------------------------------------------------------------------------

class ConfigResourceType(enum.IntEnum):
    """The kind of resource whose configs are described or altered."""

    UNKNOWN = 0
    TOPIC = 2
    GROUP = 32
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16


class ConfigSource(enum.IntEnum):
    """Where a config value comes from."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8

    @classmethod
    def of(cls, code: int) -> ConfigSource:
        """The source with ``code``; UNKNOWN for a code a newer broker may send."""
        return member_of(cls, code)


class ConfigType(enum.IntEnum):
    """A config's type, as DescribeConfigs v3+ states it."""

    UNKNOWN = 0  # a custom config
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class AlterConfigOpType(enum.IntEnum):
    """An edit of IncrementalAlterConfigs (its ``config_operation``)."""

    SET = 0
    DELETE = 1
    APPEND = 2  # list configs: add values not there yet
    SUBTRACT = 3  # list configs: remove values


# -- ACLs -----------------------------------------------------------------------------------------

class ResourceType(enum.IntEnum):
    """The kind of resource an ACL protects."""

    UNKNOWN = 0
    ANY = 1  # filters only
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    """How an ACL's resource name matches names."""

    UNKNOWN = 0
    ANY = 1  # filters: any pattern type, the name exactly
    MATCH = 2  # filters: every pattern that applies to the name
    LITERAL = 3
    PREFIXED = 4

    @property
    def is_specific(self) -> bool:
        """A pattern type an ACL can have (LITERAL, PREFIXED), rather than a filter's."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class AclOperation(enum.IntEnum):
    """What an ACL allows or denies."""

    UNKNOWN = 0
    ANY = 1  # filters only
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


class AclPermissionType(enum.IntEnum):
    """Whether an ACL allows or denies."""

    UNKNOWN = 0
    ANY = 1  # filters only
    DENY = 2
    ALLOW = 3


E = TypeVar("E", bound=enum.IntEnum)


def member_of(kind: type[E], code: int) -> E:
    """The member of ``kind`` with ``code``, its UNKNOWN member for a code this side does not
    know (as Kafka's ``fromCode``): a newer peer may send codes added since."""
    try:
        return kind(code)
    except ValueError:
        return kind["UNKNOWN"]
