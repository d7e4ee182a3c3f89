"""The broker settings Kafka 3.9 defines, each with the type, bounds, default and choices that
Kafka's ``ConfigDef`` gives it (``KafkaConfig``, ``ServerLogConfigs``, ``LogConfig``,
``GroupCoordinatorConfig``, ``TransactionStateManagerConfig``, ``ZkConfigs``): those with an
effect here (:data:`BROKER_CONFIG`) and those accepted for Kafka's sake
(:mod:`.kafka_configs`), and the settings that stand for one value in several units."""

import re

from broker_lite.common.vocabulary import INT32_MAX, INT64_MAX

from .format_versions import message_format_version
from .kafka_configs import KAFKA_ONLY_BROKER_CONFIG
from .parsers import (
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

LONG_MAX = INT64_MAX  # Java's Long.MAX_VALUE, the "no limit" of many settings

#: Kafka's class names of its built-in server-side assignors, and their short names.
_BUILTIN_ASSIGNORS = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def _consumer_assignors(text: str) -> tuple[str, ...]:
    """``group.consumer.assignors``: built-in assignors by name or by Kafka's class name."""
    names = tuple(_BUILTIN_ASSIGNORS.get(n, n) for n in list_of()(text))
    unknown = [n for n in names if n not in _BUILTIN_ASSIGNORS.values()]
    if not names or unknown:
        raise InvalidValue("expected a list of the assignors uniform and range (or their "
                           "class names); no custom assignor can be loaded here", text)
    return names


_consumer_assignors.config_type = "LIST"  # type: ignore[attr-defined]


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
    Setting("schema.registry.listeners", string, None,
            "http(s)://host:port of a schema registry run in the broker's process against its "
            "own cluster (other schema.registry.* settings: the registry's, see "
            "broker_lite.registry.config); unset: none (broker_lite's)"),
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
    # consumer groups (KIP-848): see broker_lite.coordinator.consumer.config
    Setting("group.coordinator.rebalance.protocols", list_of("classic", "consumer", "share",
                                                            "streams"),
            ("classic", "consumer"), "the group protocols served"),
    Setting("group.consumer.session.timeout.ms", int32(1), 45000,
            "a consumer group member silent this long is fenced"),
    Setting("group.consumer.min.session.timeout.ms", int32(1), 45000,
            "lower bound of group.consumer.session.timeout.ms"),
    Setting("group.consumer.max.session.timeout.ms", int32(1), 60000,
            "upper bound of group.consumer.session.timeout.ms"),
    Setting("group.consumer.heartbeat.interval.ms", int32(1), 5000,
            "how often consumer group members heartbeat"),
    Setting("group.consumer.min.heartbeat.interval.ms", int32(1), 5000,
            "lower bound of group.consumer.heartbeat.interval.ms"),
    Setting("group.consumer.max.heartbeat.interval.ms", int32(1), 15000,
            "upper bound of group.consumer.heartbeat.interval.ms"),
    Setting("group.consumer.max.size", int32(1), INT32_MAX, "most members in one consumer group"),
    Setting("group.consumer.assignors", _consumer_assignors, ("uniform", "range"),
            "the server-side assignors of consumer groups, the default first"),
    Setting("group.consumer.migration.policy",
            choice("disabled", "upgrade", "downgrade", "bidirectional", case_sensitive=False),
            "bidirectional", "online conversions between classic and consumer groups"),
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
    # share groups (KIP-932), Kafka 4.2's settings (broker_lite.coordinator.share.config)
    Setting("group.share.enable", boolean, False, "share groups served (KIP-932)"),
    Setting("group.share.record.lock.duration.ms", int32(1000, 3600000), 30000,
            "how long an acquired record is locked"),
    Setting("group.share.min.record.lock.duration.ms", int32(1000, 30000), 15000,
            "the shortest share.record.lock.duration.ms a group may set"),
    Setting("group.share.max.record.lock.duration.ms", int32(30000, 3600000), 60000,
            "the longest share.record.lock.duration.ms a group may set"),
    Setting("group.share.delivery.count.limit", int32(2, 10), 5,
            "deliveries of a record before it is archived"),
    Setting("group.share.min.delivery.count.limit", int32(2, 10), 2,
            "the least share.delivery.count.limit a group may set"),
    Setting("group.share.max.delivery.count.limit", int32(2, 10), 10,
            "the most share.delivery.count.limit a group may set"),
    Setting("group.share.partition.max.record.locks", int32(100, 10000), 2000,
            "records in flight in one share-partition"),
    Setting("group.share.session.timeout.ms", int32(1), 45000,
            "a share group member without a heartbeat for this long leaves"),
    Setting("group.share.min.session.timeout.ms", int32(1), 45000,
            "the shortest share.session.timeout.ms a group may set"),
    Setting("group.share.max.session.timeout.ms", int32(1), 60000,
            "the longest share.session.timeout.ms a group may set"),
    Setting("group.share.heartbeat.interval.ms", int32(1), 5000,
            "how often share group members heartbeat"),
    Setting("group.share.min.heartbeat.interval.ms", int32(1), 5000,
            "the shortest share.heartbeat.interval.ms a group may set"),
    Setting("group.share.max.heartbeat.interval.ms", int32(1), 15000,
            "the longest share.heartbeat.interval.ms a group may set"),
    Setting("group.share.max.size", int32(1, 1000), 200, "members of one share group"),
    Setting("share.coordinator.state.topic.num.partitions", int32(1), 50,
            "partitions of __share_group_state"),
    Setting("share.coordinator.state.topic.replication.factor", int16(1), 3,
            "replicas of __share_group_state (fewer while fewer brokers are alive)"),
    Setting("share.coordinator.state.topic.min.isr", int16(1), 2,
            "min.insync.replicas of __share_group_state"),
    Setting("share.coordinator.state.topic.segment.bytes", int32(1), 104857600,
            "segment size of __share_group_state"),
    Setting("share.coordinator.load.buffer.size", int32(1), 5242880,
            "bytes read at a time when loading __share_group_state"),
    Setting("share.coordinator.snapshot.update.records.per.snapshot", int32(0, 500), 500,
            "updates of a share-partition's state between two snapshots"),
    Setting("share.coordinator.write.timeout.ms", int32(1), 5000,
            "how long a write to __share_group_state waits for the ISR"),
)

#: Every broker config parsed here: broker_lite's own, and Kafka's dynamic ones it has no use
#: for (:mod:`broker_lite.config.kafka_configs`), accepted and stored all the same.
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
