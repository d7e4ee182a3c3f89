"""Broker and topic configuration, with Kafka's own property names, defaults and types.

Broker settings come from a ``server.properties`` file (Java properties syntax); topic settings
(``/config/topics/[topic]`` overrides) use Kafka's topic config names, each falling back to the
broker default it is named after (``segment.bytes`` to ``log.segment.bytes``, ...).

Every topic config of Kafka 3.9 (``TopicConfig``, ``LogConfig``) is accepted with Kafka's type,
bounds and default, falling back to the broker config :data:`TOPIC_TO_BROKER` names (the few
without one have their own default, :data:`TOPIC_ONLY_CONFIG`); those without an effect in
broker_lite are stored and described all the same:

=======================================  ===========================================================
topic config                             effect here
=======================================  ===========================================================
cleanup.policy                           retention (delete) and compaction (compact)
compression.type                         none: batches are stored as the producer compressed them
compression.gzip.level, .lz4.level,      none (no recompression)
compression.zstd.level
delete.retention.ms                      how long compaction keeps tombstones
file.delete.delay.ms                     delay before the files of a deleted segment go
flush.messages, flush.ms                 fsync every so many records, milliseconds
follower.replication.throttled.replicas  none: no replication quotas
index.interval.bytes                     bytes between offset index entries
leader.replication.throttled.replicas    none: no replication quotas
local.retention.bytes, .ms               none: no tiered storage
max.compaction.lag.ms                    dirty records older than this are compacted whatever the
                                         dirty ratio; the active segment of a compacted topic rolls
                                         by then
max.message.bytes                        largest batch accepted
message.downconversion.enable            none
message.format.version                   none (Kafka 3 ignores it too)
message.timestamp.after.max.ms,          CreateTime timestamps outside the bounds are refused
message.timestamp.before.max.ms          (INVALID_TIMESTAMP, naming each record)
message.timestamp.difference.max.ms      both bounds, while they are unset (deprecated)
message.timestamp.type                   CreateTime or LogAppendTime
min.cleanable.dirty.ratio                share of dirty bytes that makes the cleaner pick a log
min.compaction.lag.ms                    records younger than this stay uncompacted
min.insync.replicas                      in-sync replicas an acks=all append needs (else
                                         NOT_ENOUGH_REPLICAS)
preallocate                              none
remote.storage.enable                    true is refused: tiered storage is off
remote.log.copy.disable,                 true is refused, as in ZooKeeper mode
remote.log.delete.on.disable
retention.bytes, retention.ms            retention by size and by time
segment.bytes, segment.ms                segments roll by size and by age
segment.index.bytes                      index size that rolls a segment
segment.jitter.ms                        none: segments roll at segment.ms exactly
unclean.leader.election.enable           the controller may elect a replica outside the ISR
                                         when the whole ISR is down
=======================================  ===========================================================

>>> config = BrokerConfig({"log.segment.bytes": "1048576", "log.retention.hours": "1"})
>>> log = config.log_config({"cleanup.policy": "compact"})
>>> log.segment_bytes, log.retention_ms, log.cleanup_policy
(1048576, 3600000, ('compact',))
"""

import functools
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from broker_lite.vocabulary import INT32_MAX, INT64_MAX

from .kafka_broker_configs import KAFKA_ONLY_BROKER_CONFIG
from .settings import (
    InvalidValue,
    Setting,
    boolean,
    choice,
    double,
    int16,
    int32,
    int64,
    list_of,
    string,
)

LONG_MAX = INT64_MAX


class ConfigError(ValueError):
    """A configuration value that is malformed or out of range; the message names the property."""


# -- Java properties files ------------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: ``key=value`` / ``key: value`` / ``key value`` lines,
    ``#`` and ``!`` comments, trailing-backslash continuations and backslash escapes."""
    result: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes continues the line
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        result[key] = value
        logical = ""
    if logical:
        key, value = _split_property(logical)
        result[key] = value
    return result


def _split_property(line: str) -> tuple[str, str]:
    match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:]?\s*(.*)$", line, re.S)
    assert match is not None  # the pattern matches any string
    return _unescape(match.group(1)), _unescape(match.group(2))


def _unescape(text: str) -> str:
    def replace(match: re.Match) -> str:
        char = match.group(1)
        if char.startswith("u"):
            return chr(int(char[1:], 16))
        return _ESCAPES.get(char, char)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, text)


def read_properties(path: str | Path) -> dict[str, str]:
    return parse_properties(Path(path).read_text(encoding="utf-8"))


# -- message format versions -----------------------------------------------------------------------

# Kafka's release lines, as MetadataVersion names them (message.format.version takes them, with an
# optional "-IVn" suffix; a longer version such as 2.8.1 stands for its line, 2.8).
_RELEASE_LINES = ("0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0",
                  "1.0", "1.1", *(f"2.{minor}" for minor in range(9)),
                  *(f"3.{minor}" for minor in range(10)))
_FORMAT_VERSION = re.compile(r"([0-9]+(?:\.[0-9]+)*)(-IV[0-9]+)?")


def _release_line(text: str) -> str | None:
    match = _FORMAT_VERSION.fullmatch(text)
    if match is None:
        return None
    parts = match.group(1).split(".")
    line = ".".join(parts[:3] if parts[0] == "0" else parts[:2])
    return line if line in _RELEASE_LINES else None


def message_format_version(text: str) -> str:
    """A ``message.format.version``: a Kafka version from 0.8.0 to 3.9 (``0.10.2``,
    ``2.8-IV1``, ``3.0``), as Kafka's ``MetadataVersionValidator`` accepts it."""
    if _release_line(text) is None:
        raise InvalidValue(f"expected a Kafka version, one of {', '.join(_RELEASE_LINES)}", text)
    return text


def ignores_message_format_version(inter_broker_protocol: str) -> bool:
    """Whether brokers speaking ``inter_broker_protocol`` write message format v2 whatever
    ``message.format.version`` says: from 3.0 on, as Kafka's
    ``LogConfig.shouldIgnoreMessageFormatVersion`` (KIP-724).

    >>> ignores_message_format_version("2.8-IV1"), ignores_message_format_version("3.9")
    (False, True)
    """
    return _line_index(inter_broker_protocol) >= _RELEASE_LINES.index("3.0")


def _line_index(version: str) -> int:
    return _RELEASE_LINES.index(_release_line(version))


@functools.lru_cache(maxsize=64)  # asked on every append
def record_version(message_format: str) -> int:
    """The message format (magic) a log writes for ``message.format.version``: 0 before 0.10.0,
    1 before 0.11.0, else 2, as Kafka's ``MetadataVersion.highestSupportedRecordVersion``.

    >>> record_version("0.9.0"), record_version("0.10.2-IV0"), record_version("3.0-IV1")
    (0, 1, 2)
    """
    line = _line_index(message_format)
    return 0 if line < _RELEASE_LINES.index("0.10.0") else \
        1 if line < _RELEASE_LINES.index("0.11.0") else 2


# -- typed definitions -----------------------------------------------------------------------------
# Each property with the type, bounds and choices Kafka's ConfigDef gives it (KafkaConfig,
# ServerLogConfigs, LogConfig, GroupCoordinatorConfig, TransactionStateManagerConfig, ZkConfigs).


def _defs(*defs: Setting) -> dict[str, Setting]:
    return {d.name: d for d in defs}


def _int_level(low: int, high: int, default: int):
    """Kafka's compression level validators: an INT in [``low``, ``high``], or ``default``."""
    within = int32(low, high)

    def parse(text: str) -> int:
        if text.strip() == str(default):
            return default
        try:
            return within(text)
        except InvalidValue:
            raise InvalidValue(f"expected an integer in [{low}, {high}] or {default}",
                               text) from None

    parse.config_type = "INT"
    return parse


_REPLICA_PAIR = re.compile(r"([0-9]+:[0-9]+)?")


def _throttled_replicas(text: str) -> tuple[str, ...]:
    """Kafka's ``ThrottledReplicaListValidator``: ``*`` or ``partition:broker`` pairs."""
    items = list_of()(text)
    if items != ("*",) and not all(_REPLICA_PAIR.fullmatch(i) for i in items):
        raise InvalidValue("expected the literal '*' or a list of replicas in the following "
                           "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...", text)
    return items


_throttled_replicas.config_type = "LIST"


ACL_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
# The AclAuthorizer's name before Kafka 2.4 (KIP-504), still found in older server.properties.
SIMPLE_ACL_AUTHORIZER = "kafka.security.auth.SimpleAclAuthorizer"
ACL_AUTHORIZERS = (ACL_AUTHORIZER, SIMPLE_ACL_AUTHORIZER)


def _authorizer_class(text: str) -> str:
    """``authorizer.class.name``: empty for none, or the ZooKeeper-mode ACL authorizer under
    either of its names (broker_lite loads no classes)."""
    name = text.strip()
    if name and name not in ACL_AUTHORIZERS:
        raise InvalidValue(f"the authorizer here is {ACL_AUTHORIZER} (or, by its older name, "
                           f"{SIMPLE_ACL_AUTHORIZER}); empty for none", text)
    return name


_authorizer_class.config_type = "CLASS"


def super_users(text: str | None) -> tuple[str, ...]:
    """``super.users``: principals separated by semicolons (``User:admin;User:broker``), as
    Kafka's AclAuthorizer reads them; each must be ``Type:name``.

    >>> super_users("User:admin; User:CN=broker,O=kpy"), super_users("")
    (('User:admin', 'User:CN=broker,O=kpy'), ())
    """
    principals = tuple(p.strip() for p in (text or "").split(";") if p.strip())
    for principal in principals:
        if ":" not in principal:
            raise InvalidValue("expected principals in format principalType:principalName, "
                               "separated by ';'", principal)
    return principals


def _super_users(text: str) -> str:
    super_users(text)
    return text


_super_users.config_type = "STRING"


# The replica selectors of KIP-392 that broker_lite knows by Kafka's class names.
RACK_AWARE_REPLICA_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
REPLICA_SELECTORS = (RACK_AWARE_REPLICA_SELECTOR,
                     "org.apache.kafka.common.replica.LeaderSelector")

BROKER_CONFIG = _defs(
    Setting("broker.id", int32(-1), -1, "this broker's id; -1 takes one from /brokers/seqid"),
    Setting("listeners", string, "PLAINTEXT://127.0.0.1:9092", "where the broker listens"),
    Setting("advertised.listeners", string, None, "what clients are told; defaults to listeners"),
    Setting("listener.security.protocol.map", string,
            "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
            "listener name -> security protocol"),
    Setting("inter.broker.listener.name", string, None,
            "the listener other brokers reach this one on; unset: security.inter.broker.protocol"),
    Setting("security.inter.broker.protocol",
            choice("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"), "PLAINTEXT",
            "names the inter-broker listener when inter.broker.listener.name is unset"),
    Setting("connections.max.reauth.ms", int64(), 0,
            "SASL session lifetime; a connection not re-authenticated by then is closed (0: none)"),
    Setting("connection.failed.authentication.delay.ms", int32(0), 100,
            "how long a refused client's connection waits before its refusal and close"),
    Setting("sasl.server.max.receive.size", int32(), 524288,
            "largest frame read before a SASL client is authenticated"),
    # OAUTHBEARER tokens from an identity provider (KIP-768): listener.name.<l>.oauthbearer.
    # prefix first, as Kafka's OAuthBearerValidatorCallbackHandler reads them
    Setting("sasl.server.callback.handler.class", string, None,
            "OAUTHBEARER's validator: unset (Kafka's unsecured tokens) or "
            "OAuthBearerValidatorCallbackHandler (signed tokens, a JWKS endpoint)"),
    Setting("sasl.oauthbearer.jwks.endpoint.url", string, None,
            "the identity provider's key set (https, http or file URL)"),
    Setting("sasl.oauthbearer.jwks.endpoint.refresh.ms", int64(0), 3600000,
            "how often the key set is fetched again"),
    Setting("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", int64(0), 100,
            "the first wait before a failed key set fetch is tried again"),
    Setting("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", int64(0), 10000,
            "how long a failed key set fetch is retried, the wait doubling"),
    Setting("sasl.oauthbearer.expected.audience", list_of(), None,
            "audiences a token's aud must name one of"),
    Setting("sasl.oauthbearer.expected.issuer", string, None, "the iss tokens must have"),
    Setting("sasl.oauthbearer.scope.claim.name", string, "scope", "the claim holding scopes"),
    Setting("sasl.oauthbearer.sub.claim.name", string, "sub",
            "the claim naming the principal"),
    Setting("sasl.oauthbearer.clock.skew.seconds", int32(), 30,
            "leeway for exp and nbf between the broker's clock and the provider's"),
    Setting("ssl.principal.mapping.rules", string, "DEFAULT",
            "how a client certificate's subject becomes the principal's name (KIP-371)"),
    Setting("reserved.broker.max.id", int32(0), 1000, "generated broker ids start above this"),
    Setting("broker.rack", string, None, "the rack of this broker"),
    Setting("log.dirs", list_of(), None, "data directories; defaults to log.dir"),
    Setting("log.dir", string, "/tmp/kafka-logs", "data directory when log.dirs is unset"),
    Setting("num.partitions", int32(1), 1, "partitions of auto-created topics"),
    Setting("default.replication.factor", int32(1), 1, "replicas of auto-created topics"),
    Setting("auto.create.topics.enable", boolean, True, "create topics on first use"),
    Setting("delete.topic.enable", boolean, True, "allow topic deletion"),
    # Authorization (Kafka's AclAuthorizer; broker_lite.server.authorizer)
    Setting("authorizer.class.name", _authorizer_class, "",
            "empty: every request allowed; kafka.security.authorizer.AclAuthorizer: ACLs"),
    Setting("super.users", _super_users, None,
            "principals allowed everything, separated by ';' (User:admin;User:broker)"),
    Setting("allow.everyone.if.no.acl.found", boolean, False,
            "allow what no ACL speaks of (the ACL authorizer)"),
    Setting("zookeeper.connect", string, None, "host:port[,host:port][/chroot]; unset: embedded"),
    Setting("zookeeper.port", int32(0, 65535), 0, "embedded ZooKeeper port; 0 picks a free one"),
    Setting("zookeeper.session.timeout.ms", int32(1), 18000, "ZooKeeper session timeout"),
    Setting("zookeeper.connection.timeout.ms", int32(1), None, "defaults to the session timeout"),
    Setting("message.max.bytes", int32(0), 1048588, "largest record batch accepted"),
    Setting("socket.request.max.bytes", int32(1), 104857600, "largest request accepted"),
    Setting("connections.max.idle.ms", int64(-1), 600000, "idle connections are closed after"),
    # The network layer (broker_lite.server.network; Kafka's SocketServerConfigs, ServerConfigs)
    Setting("num.network.threads", int32(1), 3, "processor threads, each serving connections"),
    Setting("num.io.threads", int32(1), 8, "request handler threads"),
    Setting("queued.max.requests", int32(1), 500,
            "requests queued for the handlers before the processors stop reading"),
    Setting("socket.send.buffer.bytes", int32(), 102400, "SO_SNDBUF of connections; -1: the OS's"),
    Setting("socket.receive.buffer.bytes", int32(), 102400,
            "SO_RCVBUF of connections; -1: the OS's"),
    Setting("socket.listen.backlog.size", int32(1), 50, "connections waiting to be accepted"),
    Setting("max.connections", int32(0), INT32_MAX,
            "connections at once; beyond it the listener waits for one to close"),
    Setting("max.connections.per.ip", int32(0), INT32_MAX,
            "connections from one address; beyond it new ones are closed at once"),
    Setting("max.connections.per.ip.overrides", string, "",
            "per-address limits, host:count,ip:count (Kafka's syntax)"),
    Setting("metrics.listener", string, None,
            "http://host:port serving the broker's metrics as JSON; unset: none (broker_lite's)"),
    Setting("offsets.topic.num.partitions", int32(1), 50, "partitions of __consumer_offsets"),
    Setting("offsets.topic.replication.factor", int16(1), 3,
            "replicas of __consumer_offsets (fewer while fewer brokers are alive)"),
    Setting("offsets.topic.segment.bytes", int32(1), 104857600,
            "segment size of __consumer_offsets"),
    Setting("offsets.topic.compression.codec", int32(0, 4), 0,
            "codec of coordinator batches: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd"),
    Setting("offsets.retention.minutes", int32(1), 10080, "how long committed offsets are kept"),
    Setting("offsets.retention.check.interval.ms", int64(1), 600000,
            "how often expired offsets are removed"),
    Setting("offsets.load.buffer.size", int32(1), 5242880,
            "bytes read at a time when loading __consumer_offsets"),
    Setting("offsets.commit.timeout.ms", int32(1), 5000, "how long a commit may wait"),
    Setting("offset.metadata.max.bytes", int32(0), 4096, "longest metadata of a commit"),
    Setting("group.min.session.timeout.ms", int32(0), 6000, "shortest session timeout accepted"),
    Setting("group.max.session.timeout.ms", int32(0), 1800000, "longest session timeout accepted"),
    Setting("group.initial.rebalance.delay.ms", int32(0), 3000,
            "how long a new group waits for more members before its first rebalance"),
    Setting("group.max.size", int32(1), INT32_MAX, "most members in one group"),
    Setting("transaction.state.log.num.partitions", int32(1), 50,
            "partitions of __transaction_state"),
    Setting("transaction.state.log.replication.factor", int16(1), 3,
            "replicas of __transaction_state (fewer while fewer brokers are alive)"),
    Setting("transaction.state.log.segment.bytes", int32(1), 104857600,
            "segment size of __transaction_state"),
    Setting("transaction.state.log.load.buffer.size", int32(1), 5242880,
            "bytes read at a time when loading __transaction_state"),
    Setting("transaction.max.timeout.ms", int32(1), 900000,
            "longest transaction timeout a producer may ask for"),
    Setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", int32(1), 10000,
            "how often transactions open past their timeout are aborted"),
    Setting("transactional.id.expiration.ms", int32(1), 604800000,
            "idle time after which a transactional id may be forgotten"),
    Setting("log.segment.bytes", int32(14), 1073741824, "segment size before a roll"),
    Setting("log.roll.ms", int64(1), None, "segment age before a roll"),
    Setting("log.roll.hours", int32(1), 168, "segment age before a roll, in hours"),
    Setting("log.index.size.max.bytes", int32(4), 10485760, "offset index size before a roll"),
    Setting("log.index.interval.bytes", int32(0), 4096, "bytes between offset index entries"),
    Setting("log.flush.interval.messages", int64(1), LONG_MAX, "records between fsyncs"),
    Setting("log.flush.interval.ms", int64(0), None, "milliseconds between fsyncs"),
    Setting("log.flush.scheduler.interval.ms", int64(0), LONG_MAX, "flush check interval"),
    Setting("log.retention.ms", int64(-1), None, "retention by time; -1 keeps forever"),
    Setting("log.retention.minutes", int32(-1), None, "retention by time, in minutes"),
    Setting("log.retention.hours", int32(-1), 168, "retention by time, in hours"),
    Setting("log.retention.bytes", int64(-1), -1, "retention by size per partition; -1: none"),
    Setting("log.retention.check.interval.ms", int64(1), 300000, "how often retention runs"),
    Setting("log.cleanup.policy", list_of("delete", "compact"), ("delete",), "delete, compact"),
    Setting("log.cleaner.enable", boolean, True, "run log compaction"),
    Setting("log.cleaner.backoff.ms", int64(0), 15000, "pause between compaction passes"),
    Setting("log.cleaner.delete.retention.ms", int64(0), 86400000, "tombstone retention"),
    Setting("log.cleaner.min.compaction.lag.ms", int64(0), 0, "minimum record age to compact"),
    Setting("log.cleaner.min.cleanable.ratio", double(0, 1), 0.5,
            "dirty ratio that triggers cleaning"),
    Setting("log.segment.delete.delay.ms", int64(0), 60000, "delay before a .deleted file goes"),
    Setting("log.message.timestamp.type", choice("CreateTime", "LogAppendTime"), "CreateTime",
            "which timestamp records keep"),
    Setting("log.message.format.version", message_format_version, "3.0-IV1",
            "message format written: v0 before 0.10.0, v1 before 0.11.0, else v2; ignored from "
            "inter.broker.protocol.version 3.0"),
    Setting("inter.broker.protocol.version", message_format_version, "3.9",
            "protocol version among brokers; before 3.0 message.format.version is honoured"),
    Setting("log.message.downconversion.enable", boolean, True,
            "convert to message format v0/v1 for Fetch v0-v3; false answers UNSUPPORTED_VERSION"),
    Setting("compression.type", choice("producer", "none", "gzip", "snappy", "lz4", "zstd"),
            "producer", "codec of stored batches; producer keeps the producer's"),
    # The broker defaults of the other topic configs of Kafka 3.9 (ServerLogConfigs,
    # CleanerConfig, ReplicationConfigs, RemoteLogManagerConfig): see the topic config table.
    Setting("log.roll.jitter.ms", int64(), None, "largest random jitter taken off segment.ms"),
    Setting("log.roll.jitter.hours", int32(0), 0, "log.roll.jitter.ms, in hours"),
    Setting("log.cleaner.max.compaction.lag.ms", int64(1), LONG_MAX,
            "longest time a record stays uncompacted"),
    Setting("unclean.leader.election.enable", boolean, False,
            "elect a replica outside the ISR as a last resort"),
    Setting("min.insync.replicas", int32(1), 1, "in-sync replicas an acks=all produce needs"),
    Setting("compression.gzip.level", _int_level(1, 9, -1), -1, "gzip level of stored batches"),
    Setting("compression.lz4.level", int32(1, 17), 9, "lz4 level of stored batches"),
    Setting("compression.zstd.level", int32(-131072, 22), 3, "zstd level of stored batches"),
    Setting("log.preallocate", boolean, False, "preallocate segment files"),
    Setting("log.message.timestamp.difference.max.ms", int64(0), LONG_MAX,
            "deprecated: both message.timestamp bounds at once"),
    Setting("log.message.timestamp.before.max.ms", int64(0), LONG_MAX,
            "how far in the past a CreateTime timestamp may be"),
    Setting("log.message.timestamp.after.max.ms", int64(0), LONG_MAX,
            "how far in the future a CreateTime timestamp may be"),
    Setting("log.message.downconversion.enable", boolean, True,
            "convert to older message formats for old consumers"),
    Setting("log.local.retention.ms", int64(-2), -2,
            "local retention by time of tiered topics; -2: retention.ms"),
    Setting("log.local.retention.bytes", int64(-2), -2,
            "local retention by size of tiered topics; -2: retention.bytes"),
    # Replication (Kafka's ReplicationConfigs, ServerConfigs; broker_lite.replication)
    Setting("replica.lag.time.max.ms", int64(), 30000,
            "a follower that has not caught up for this long leaves the ISR"),
    Setting("replica.fetch.wait.max.ms", int32(), 500, "how long a follower's fetch may wait"),
    Setting("replica.fetch.min.bytes", int32(), 1, "bytes a follower's fetch waits for"),
    Setting("replica.fetch.max.bytes", int32(0), 1048576,
            "bytes a follower fetches per partition (the first batch whole)"),
    Setting("replica.fetch.response.max.bytes", int32(0), 10485760,
            "bytes a follower's fetch response may carry"),
    Setting("replica.fetch.backoff.ms", int32(0), 1000,
            "pause before a follower fetches again after an error"),
    Setting("replica.socket.timeout.ms", int32(), 30000, "a follower's request timeout"),
    Setting("replica.high.watermark.checkpoint.interval.ms", int64(1), 5000,
            "how often the high watermarks are written to replication-offset-checkpoint"),
    Setting("controlled.shutdown.enable", boolean, True,
            "move leadership away before shutting down"),
    Setting("controlled.shutdown.max.retries", int32(), 3,
            "ControlledShutdown requests tried before shutting down anyway"),
    Setting("controlled.shutdown.retry.backoff.ms", int64(), 5000,
            "pause between ControlledShutdown attempts"),
    Setting("auto.leader.rebalance.enable", boolean, True,
            "the controller moves leadership back to the preferred replicas"),
    Setting("leader.imbalance.check.interval.seconds", int64(1), 300,
            "how often the controller checks the leader balance"),
    Setting("leader.imbalance.per.broker.percentage", int32(), 10,
            "share of a broker's preferred partitions led elsewhere that triggers an election"),
    Setting("offsets.commit.required.acks", int16(-1), -1,
            "acks an offset commit waits for (-1: the whole ISR)"),
    Setting("transaction.state.log.min.isr", int32(1), 2,
            "min.insync.replicas of __transaction_state"),
    Setting("request.timeout.ms", int32(0), 30000,
            "how long the broker's own requests to other brokers may take"),
    Setting("replica.selector.class", choice(*REPLICA_SELECTORS), None,
            "where consumers with a rack read (KIP-392): RackAwareReplicaSelector sends them "
            "to an in-sync replica in their rack; unset: the leader"),
)

#: Every broker config parsed here: broker_lite's own, and Kafka's dynamic ones it has no use
#: for (:mod:`broker_lite.kafka_broker_configs`), accepted and stored all the same.
ALL_BROKER_CONFIG = {**KAFKA_ONLY_BROKER_CONFIG, **BROKER_CONFIG}

# Broker configs that stand for one value in different units, first the one that wins when
# several are set (KafkaConfig's precedence), each with its factor to milliseconds.
UNIT_SYNONYMS = {
    "log.roll.ms": (("log.roll.ms", 1), ("log.roll.hours", 3_600_000)),
    "log.roll.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", 3_600_000)),
    "log.retention.ms": (("log.retention.ms", 1), ("log.retention.minutes", 60_000),
                         ("log.retention.hours", 3_600_000)),
    "log.flush.interval.ms": (("log.flush.interval.ms", 1),
                              ("log.flush.scheduler.interval.ms", 1)),
}

# Topic config name -> the broker config that provides its default (Kafka's
# ServerTopicConfigSynonyms).
TOPIC_TO_BROKER = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.ms": "log.retention.ms",
    "retention.bytes": "log.retention.bytes",
    "cleanup.policy": "log.cleanup.policy",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "message.format.version": "log.message.format.version",
    "message.downconversion.enable": "log.message.downconversion.enable",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "preallocate": "log.preallocate",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "local.retention.ms": "log.local.retention.ms",
    "local.retention.bytes": "log.local.retention.bytes",
}

# Topic configs without a broker default (Kafka's LogConfig defines them alone).
TOPIC_ONLY_CONFIG = _defs(
    Setting("remote.storage.enable", boolean, False, "tiered storage for this topic"),
    Setting("remote.log.copy.disable", boolean, False,
            "stop copying segments to tiered storage"),
    Setting("remote.log.delete.on.disable", boolean, False,
            "delete tiered data when tiered storage is turned off"),
    Setting("leader.replication.throttled.replicas", _throttled_replicas, (),
            "replicas whose leader-side replication is throttled"),
    Setting("follower.replication.throttled.replicas", _throttled_replicas, (),
            "replicas whose follower-side replication is throttled"),
)

#: Every topic config name of Kafka 3.9, sorted.
TOPIC_CONFIG_NAMES = tuple(sorted({*TOPIC_TO_BROKER, *TOPIC_ONLY_CONFIG}))


def topic_config_definition(name: str) -> Setting:
    """The parser, default and doc of topic config ``name`` (KeyError for an unknown name): its
    broker default's, or its own when it has none."""
    if name in TOPIC_TO_BROKER:
        return BROKER_CONFIG[TOPIC_TO_BROKER[name]]
    return TOPIC_ONLY_CONFIG[name]


@dataclass(frozen=True)
class LogConfig:
    """The settings of one partition's log, resolved from topic overrides and broker defaults:
    one field per topic config (its name with dots as underscores)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 168 * 3600 * 1000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_ms: int = 168 * 3600 * 1000
    retention_bytes: int = -1
    cleanup_policy: tuple[str, ...] = ("delete",)
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    file_delete_delay_ms: int = 60000
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    message_timestamp_difference_max_ms: int = LONG_MAX
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    message_format_version: str = "3.0-IV1"
    message_downconversion_enable: bool = True
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    preallocate: bool = False
    unclean_leader_election_enable: bool = False
    min_insync_replicas: int = 1
    local_retention_ms: int = -2
    local_retention_bytes: int = -2
    remote_storage_enable: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    follower_replication_throttled_replicas: tuple[str, ...] = ()

    @property
    def record_version(self) -> int:
        """The message format (magic) appended records are written in."""
        return record_version(self.message_format_version)

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def max_segment_ms(self) -> int:
        """The age at which a segment rolls: ``segment.ms``, or ``max.compaction.lag.ms`` when
        smaller on a compacted topic, so the active segment's records become cleanable in time
        (Kafka's ``maxSegmentMs``)."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def timestamp_before_max_ms(self) -> int:
        """``message.timestamp.before.max.ms``, or the deprecated difference setting while it
        is unset (Kafka's ``getMessageTimestampBeforeMaxMs``)."""
        if self.message_timestamp_before_max_ms != LONG_MAX:
            return self.message_timestamp_before_max_ms
        return self.message_timestamp_difference_max_ms

    @property
    def timestamp_after_max_ms(self) -> int:
        """``message.timestamp.after.max.ms``, or the deprecated difference setting while it is
        unset."""
        if self.message_timestamp_after_max_ms != LONG_MAX:
            return self.message_timestamp_after_max_ms
        return self.message_timestamp_difference_max_ms


def _parse(name: str, definition: Setting, value: str):
    """``value`` of property ``name`` (a broker config, or a topic config parsed as the broker
    config ``definition`` it is named after)."""
    try:
        return definition.value_of(value)
    except InvalidValue as exc:
        raise ConfigError(f"invalid value {value!r} for {name}: {exc.reason}") from None


def _resolve(properties: Mapping[str, str]) -> dict:
    """Every broker config's typed value: its default, or the value ``properties`` give it."""
    values = {name: d.default for name, d in ALL_BROKER_CONFIG.items()}
    for name, value in properties.items():
        if name in ALL_BROKER_CONFIG:
            values[name] = _parse(name, ALL_BROKER_CONFIG[name], value)
    return values


def _override(properties: dict[str, str], overrides: Mapping[str, str]) -> None:
    """Kafka's ``overrideProps``: each override replaces the config and its unit synonyms, so a
    dynamic ``log.retention.hours`` wins over a static ``log.retention.ms``."""
    for name, value in overrides.items():
        group = next((g for g in UNIT_SYNONYMS.values() if name in (n for n, _ in g)),
                     ((name, 1),))
        for synonym, _ in group:
            properties.pop(synonym, None)
        properties[name] = value


_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]+\.(.+)")
_PER_MECHANISM = frozenset({
    "sasl.jaas.config", "connections.max.reauth.ms", "sasl.server.callback.handler.class",
    "sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.clock.skew.seconds"})


def is_listener_config(name: str) -> bool:
    """A setting of one listener: ``listener.name.<listener>.<config>``, or
    ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (and
    ``...<mechanism>.connections.max.reauth.ms``), as Kafka's ``ListenerName.configPrefix``
    and ``JaasContext.loadServerContext`` name them.

    >>> is_listener_config("listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config")
    True
    >>> is_listener_config("listener.name.ssl.ssl.keystore.location"), is_listener_config("x.y")
    (True, False)
    """
    match = _LISTENER_CONFIG.fullmatch(name)
    if match is None:
        return False
    config = match.group(1)
    return config in ALL_BROKER_CONFIG or config.partition(".")[2] in _PER_MECHANISM


class BrokerConfig(Mapping):
    """Typed broker settings. Unknown names are kept (plugins, client settings) with a warning,
    as Kafka does; malformed values of known names raise :class:`ConfigError`.

    ``originals`` are the static settings (server.properties and command-line overrides).
    Dynamic broker configs, set at run time and kept in ZooKeeper, override them once
    :meth:`update_dynamic` is told of them: the broker's own (``dynamic_broker``) over the
    cluster-wide defaults (``dynamic_default``) over the static settings, as Kafka's
    ``DynamicBrokerConfig`` orders them. The object is updated in place, so every part of the
    broker holding it reads the new values.

    >>> config = BrokerConfig({"log.retention.ms": "1000"})
    >>> config.update_dynamic({"log.retention.hours": "2"}, {})
    >>> config["log.retention.hours"], config["log.retention.ms"]
    (2, None)
    """

    def __init__(self, properties: Mapping[str, str] | None = None):
        self.originals = dict(properties or {})
        self.dynamic_default: dict[str, str] = {}
        self.dynamic_broker: dict[str, str] = {}
        self._values = _resolve(self.originals)
        for name in self.originals:
            if name not in ALL_BROKER_CONFIG and not is_listener_config(name):
                warnings.warn(f"unknown broker config {name!r} is ignored", stacklevel=2)

    def with_dynamic(self, default: Mapping[str, str], broker: Mapping[str, str]) -> dict:
        """The settings in force with these dynamic layers: the static ones overridden by the
        cluster-wide defaults, then by the broker's own (Kafka's ``updateCurrentConfig``)."""
        merged = dict(self.originals)
        _override(merged, default)
        _override(merged, broker)
        return merged

    def update_dynamic(self, default: Mapping[str, str], broker: Mapping[str, str]) -> None:
        """Put new dynamic layers in force, all values at once. Raises :class:`ConfigError`
        for a malformed value (the layers are checked before they are stored, so this
        means a bug)."""
        values = _resolve(self.with_dynamic(default, broker))
        self.dynamic_default, self.dynamic_broker = dict(default), dict(broker)
        self._values = values

    @property
    def effective(self) -> dict[str, str]:
        """The settings in force, as text (custom names included)."""
        return self.with_dynamic(self.dynamic_default, self.dynamic_broker)

    @classmethod
    def from_file(cls, path: str | Path, overrides: Mapping[str, str] | None = None):
        return cls({**read_properties(path), **(overrides or {})})

    def __getitem__(self, name: str):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self["log.dirs"] or (self["log.dir"],)

    def broker_default(self, broker_name: str):
        """A broker config's value, with Kafka's precedence among its unit variants
        (:data:`UNIT_SYNONYMS`): ``log.retention.ms`` set wins over ``log.retention.minutes``,
        which wins over ``log.retention.hours``; a negative value means "none" in any unit."""
        for name, factor in UNIT_SYNONYMS.get(broker_name, ((broker_name, 1),)):
            value = self[name]
            if value is not None:
                return value if factor == 1 or value < 0 else value * factor
        return None

    def log_config(self, topic_overrides: Mapping[str, str] | None = None) -> LogConfig:
        """A partition's :class:`LogConfig`: topic overrides first, then the broker defaults."""
        values = {}
        overrides = dict(topic_overrides or {})
        unknown = set(overrides) - set(TOPIC_CONFIG_NAMES)
        if unknown:
            raise ConfigError(f"unknown topic config {sorted(unknown)[0]!r}; known: "
                              f"{', '.join(TOPIC_CONFIG_NAMES)}")
        for topic_name in TOPIC_CONFIG_NAMES:
            field = topic_name.replace(".", "_")
            if topic_name in overrides:
                values[field] = _parse(topic_name, topic_config_definition(topic_name),
                                       overrides[topic_name])
            elif topic_name in TOPIC_TO_BROKER:
                values[field] = self.broker_default(TOPIC_TO_BROKER[topic_name])
            else:
                values[field] = TOPIC_ONLY_CONFIG[topic_name].default
        values["message_format_version"] = self._message_format_version(overrides)
        assert set(values) == {f.name for f in fields(LogConfig)}
        return LogConfig(**values)

    def _message_format_version(self, overrides: Mapping[str, str]) -> str:
        """The message format version a log writes, as Kafka 3.9's ``KafkaConfig`` and
        ``TopicConfigHandler.excludedConfigs`` decide it: the default (3.0-IV1) from
        inter-broker protocol 3.0 on; before, a topic's own unless newer than the protocol."""
        protocol = self["inter.broker.protocol.version"]
        if ignores_message_format_version(protocol):
            return BROKER_CONFIG["log.message.format.version"].default
        topic = overrides.get("message.format.version")
        if topic is not None and _line_index(topic) <= _line_index(protocol):
            return topic
        return self["log.message.format.version"]
