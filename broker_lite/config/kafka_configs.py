"""Kafka 3.9's broker configs as its ``DynamicBrokerConfig`` sees them: the ones that change at
run time and where (per broker, or cluster-wide), the definitions of the dynamic ones broker_lite
has no use for, and the names of the read-only ones it does not know.

A dynamic config is set through AlterConfigs / IncrementalAlterConfigs on a broker resource and
stored in ZooKeeper (:mod:`broker_lite.config.dynamic` has the rules). Those broker_lite has take
effect at once, without a restart; the others are accepted, stored and described as Kafka does,
and change nothing here:

=======================================  ============  =========================================
dynamic broker config                    update mode   effect here
=======================================  ============  =========================================
log.segment.bytes, log.roll.ms,          cluster-wide  the defaults of every log's topic configs
log.roll.jitter.ms, log.index.*,                       (see :mod:`.topic`), applied to the running
log.flush.interval.*, log.retention.ms,                logs at once
log.retention.bytes, log.cleanup.policy,
log.cleaner.delete.retention.ms,
log.cleaner.min/max.compaction.lag.ms,
log.cleaner.min.cleanable.ratio,
log.segment.delete.delay.ms,
log.message.timestamp.*, log.preallocate,
log.message.downconversion.enable,
log.local.retention.*, compression.*,
message.max.bytes, min.insync.replicas,
unclean.leader.election.enable
log.cleaner.backoff.ms                   cluster-wide  the pause between compaction passes
listeners, advertised.listeners,         per-broker    stored; used at the next start
listener.security.protocol.map
background.threads, num.io.threads,      cluster-wide  none (thread counts are checked as Kafka
num.network.threads, num.replica.fetch.,               does: at least half, at most double)
num.recovery.threads.per.data.dir
log.cleaner.threads, .dedupe.buffer.size cluster-wide  none
log.cleaner.io.*
max.connections, max.connections.per.ip  cluster-wide  none
(.overrides), max.connection.creation.r.
metric.reporters,                        cluster-wide  none
producer.id.expiration.ms,
transaction.partition.verification.en.,
remote.* (tiered storage)
ssl.*, sasl.*, principal.builder.class   per-broker    stored; the listeners use them at the next
                                                       start (:mod:`broker_lite.server.listeners`);
                                                       passwords are refused, as without
                                                       ``password.encoder.secret``
=======================================  ============  =========================================

Every other Kafka broker config is read-only: changing one at run time is refused with Kafka's
"Cannot update these configs dynamically". Names Kafka does not know are custom configs, stored
as given, as Kafka does for plugins.
"""

from broker_lite.common.vocabulary import INT32_MAX, INT64_MAX

from .parsers import Setting, boolean, choice, double, int16, int32, int64, list_of, string

PER_BROKER, CLUSTER_WIDE = "per-broker", "cluster-wide"


def _class_name(text: str) -> str:
    """Kafka's CLASS: a class name (broker_lite loads none)."""
    return text


_class_name.config_type = "CLASS"


def _password(text: str) -> str:
    """Kafka's PASSWORD: text that is never shown."""
    return text


_password.config_type = "PASSWORD"


def _defs(*defs: Setting) -> dict[str, Setting]:
    return {d.name: d for d in defs}


_NONE_HERE = "accepted and stored; no effect in broker_lite"
_LISTENERS = "read by the listeners at start-up (listener.name.<listener>. prefix first)"

#: Kafka's dynamic broker configs beside broker_lite's own, with Kafka's types, bounds and
#: defaults (KafkaConfig, SslConfigs, SaslConfigs, SocketServerConfigs, CleanerConfig,
#: RemoteLogManagerConfig): those broker_lite has no use for, and the TLS and SASL settings its
#: listeners read when the broker starts.
KAFKA_ONLY_BROKER_CONFIG = _defs(
    Setting("background.threads", int32(1), 10, _NONE_HERE),
    Setting("num.io.threads", int32(1), 8, _NONE_HERE),
    Setting("num.network.threads", int32(1), 3, _NONE_HERE),
    Setting("num.recovery.threads.per.data.dir", int32(1), 1, _NONE_HERE),
    Setting("num.replica.fetchers", int32(), 1, _NONE_HERE),
    Setting("log.cleaner.threads", int32(0), 1, _NONE_HERE),
    Setting("log.cleaner.dedupe.buffer.size", int64(), 134217728, _NONE_HERE),
    Setting("log.cleaner.io.buffer.load.factor", double(), 0.9, _NONE_HERE),
    Setting("log.cleaner.io.buffer.size", int32(0), 524288, _NONE_HERE),
    Setting("log.cleaner.io.max.bytes.per.second", double(), 1.7976931348623157e308, _NONE_HERE),
    Setting("max.connection.creation.rate", int32(0), INT32_MAX, _NONE_HERE),
    Setting("max.connections", int32(0), INT32_MAX, _NONE_HERE),
    Setting("max.connections.per.ip", int32(0), INT32_MAX, _NONE_HERE),
    Setting("max.connections.per.ip.overrides", string, "", _NONE_HERE),
    Setting("metric.reporters", list_of(), (), _NONE_HERE),
    Setting("producer.id.expiration.ms", int32(1), 86400000, _NONE_HERE),
    Setting("transaction.partition.verification.enable", boolean, True, _NONE_HERE),
    Setting("remote.fetch.max.wait.ms", int32(1), 500, _NONE_HERE),
    Setting("remote.log.index.file.cache.total.size.bytes", int64(1), 1073741824, _NONE_HERE),
    Setting("remote.log.manager.copy.max.bytes.per.second", int64(1), INT64_MAX, _NONE_HERE),
    Setting("remote.log.manager.fetch.max.bytes.per.second", int64(1), INT64_MAX, _NONE_HERE),
    Setting("principal.builder.class", _class_name,
            "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
            _NONE_HERE),
    Setting("sasl.enabled.mechanisms", list_of(), ("GSSAPI",),
            "SASL mechanisms of SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"),
    Setting("sasl.jaas.config", _password, None,
            "ignored on brokers: give listener.name.<listener>.<mechanism>.sasl.jaas.config"),
    Setting("sasl.kerberos.kinit.cmd", string, "/usr/bin/kinit", _NONE_HERE),
    Setting("sasl.kerberos.min.time.before.relogin", int64(), 60000, _NONE_HERE),
    Setting("sasl.kerberos.principal.to.local.rules", list_of(), ("DEFAULT",), _NONE_HERE),
    Setting("sasl.kerberos.service.name", string, None, _NONE_HERE),
    Setting("sasl.kerberos.ticket.renew.jitter", double(), 0.05, _NONE_HERE),
    Setting("sasl.kerberos.ticket.renew.window.factor", double(), 0.8, _NONE_HERE),
    Setting("sasl.login.refresh.buffer.seconds", int16(), 300, _NONE_HERE),
    Setting("sasl.login.refresh.min.period.seconds", int16(), 60, _NONE_HERE),
    Setting("sasl.login.refresh.window.factor", double(), 0.8, _NONE_HERE),
    Setting("sasl.login.refresh.window.jitter", double(), 0.05, _NONE_HERE),
    Setting("sasl.mechanism.inter.broker.protocol", string, "GSSAPI",
            "the mechanism brokers authenticate to one another with"),
    Setting("ssl.cipher.suites", list_of(), (), "TLS 1.2 cipher suites (OpenSSL names)"),
    Setting("ssl.client.auth", choice("required", "requested", "none"), "none",
            "whether TLS listeners ask clients for a certificate"),
    Setting("ssl.enabled.protocols", list_of(), ("TLSv1.2", "TLSv1.3"), _LISTENERS),
    Setting("ssl.endpoint.identification.algorithm", string, "https", _LISTENERS),
    Setting("ssl.engine.factory.class", _class_name, None, _NONE_HERE),
    Setting("ssl.key.password", _password, None, _LISTENERS),
    Setting("ssl.keymanager.algorithm", string, "SunX509", _NONE_HERE),
    Setting("ssl.keystore.certificate.chain", _password, None, _LISTENERS),
    Setting("ssl.keystore.key", _password, None, _LISTENERS),
    Setting("ssl.keystore.location", string, None, _LISTENERS),
    Setting("ssl.keystore.password", _password, None, _LISTENERS),
    Setting("ssl.keystore.type", string, "JKS", _LISTENERS),
    Setting("ssl.protocol", string, "TLSv1.3", _NONE_HERE),
    Setting("ssl.provider", string, None, _NONE_HERE),
    Setting("ssl.secure.random.implementation", string, None, _NONE_HERE),
    Setting("ssl.trustmanager.algorithm", string, "PKIX", _NONE_HERE),
    Setting("ssl.truststore.certificates", _password, None, _LISTENERS),
    Setting("ssl.truststore.location", string, None, _LISTENERS),
    Setting("ssl.truststore.password", _password, None, _LISTENERS),
    Setting("ssl.truststore.type", string, "JKS", _LISTENERS),
)

_PER_BROKER = {
    "listeners", "advertised.listeners", "listener.security.protocol.map",
    "principal.builder.class", *(n for n in KAFKA_ONLY_BROKER_CONFIG
                                 if n.startswith(("ssl.", "sasl.")))}
_CLUSTER_WIDE = {
    *(n for n in KAFKA_ONLY_BROKER_CONFIG if not n.startswith(("ssl.", "sasl.", "principal."))),
    "log.segment.bytes", "log.roll.ms", "log.roll.jitter.ms", "log.index.size.max.bytes",
    "log.index.interval.bytes", "log.flush.interval.messages", "log.flush.interval.ms",
    "log.retention.bytes", "log.retention.ms", "log.cleanup.policy",
    "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms",
    "log.cleaner.max.compaction.lag.ms", "log.cleaner.min.cleanable.ratio",
    "log.cleaner.backoff.ms", "log.segment.delete.delay.ms", "log.message.timestamp.type",
    "log.message.timestamp.difference.max.ms", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms", "log.message.downconversion.enable",
    "log.preallocate", "log.local.retention.ms", "log.local.retention.bytes", "compression.type",
    "compression.gzip.level", "compression.lz4.level", "compression.zstd.level",
    "message.max.bytes", "min.insync.replicas", "unclean.leader.election.enable",
}
#: Every dynamic broker config of Kafka 3.9 (``DynamicBrokerConfig.AllDynamicConfigs``) and its
#: update mode: per-broker ones cannot be set as cluster-wide defaults.
DYNAMIC_UPDATE_MODES = {**dict.fromkeys(sorted(_CLUSTER_WIDE), CLUSTER_WIDE),
                        **dict.fromkeys(sorted(_PER_BROKER), PER_BROKER)}

#: Security configs that change only per listener (``listener.name.<l>.<config>``): Kafka's
#: ``SslConfigs.RECONFIGURABLE_CONFIGS``.
LISTENER_ONLY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates"})

#: Thread counts a dynamic change may at most double or halve (``DynamicThreadPool``, and the
#: network threads of ``DataPlaneAcceptor``).
THREAD_COUNT_CONFIGS = ("background.threads", "num.io.threads", "num.network.threads",
                        "num.recovery.threads.per.data.dir", "num.replica.fetchers")

#: Kafka 3.9's read-only broker configs that broker_lite does not define (it refuses to change
#: them at run time, as Kafka does, though it never reads them).
KAFKA_READ_ONLY_CONFIG_NAMES = frozenset({
    "alter.config.policy.class.name", "alter.log.dirs.replication.quota.window.num",
    "alter.log.dirs.replication.quota.window.size.seconds",
    "auto.include.jmx.reporter", "auto.leader.rebalance.enable", "broker.heartbeat.interval.ms",
    "broker.id.generation.enable", "broker.session.timeout.ms", "client.quota.callback.class",

    "control.plane.listener.name", "controlled.shutdown.enable", "controlled.shutdown.max.retries",
    "controlled.shutdown.retry.backoff.ms", "controller.listener.names",
    "controller.quorum.append.linger.ms", "controller.quorum.bootstrap.servers",
    "controller.quorum.election.backoff.max.ms", "controller.quorum.election.timeout.ms",
    "controller.quorum.fetch.timeout.ms", "controller.quorum.request.timeout.ms",
    "controller.quorum.retry.backoff.ms", "controller.quorum.voters",
    "controller.quota.window.num", "controller.quota.window.size.seconds",
    "controller.socket.timeout.ms", "create.topic.policy.class.name",
    "delegation.token.expiry.check.interval.ms", "delegation.token.expiry.time.ms",
    "delegation.token.master.key", "delegation.token.max.lifetime.ms",
    "delegation.token.secret.key", "delete.records.purgatory.purge.interval.requests",
    "early.start.listeners", "eligible.leader.replicas.enable", "fetch.max.bytes",
    "fetch.purgatory.purge.interval.requests", "group.consumer.assignors",
    "group.consumer.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
    "group.consumer.max.session.timeout.ms", "group.consumer.max.size",
    "group.consumer.min.heartbeat.interval.ms", "group.consumer.min.session.timeout.ms",
    "group.consumer.session.timeout.ms", "group.coordinator.append.linger.ms",
    "group.coordinator.rebalance.protocols", "group.coordinator.threads",
    "group.share.max.groups", "initial.broker.registration.timeout.ms",
    "inter.broker.protocol.version",
    "kafka.metrics.polling.interval.secs", "kafka.metrics.reporters",
    "leader.imbalance.check.interval.seconds", "leader.imbalance.per.broker.percentage",
    "log.dir.failure.timeout.ms", "log.flush.offset.checkpoint.interval.ms",
    "log.flush.start.offset.checkpoint.interval.ms", "max.incremental.fetch.session.cache.slots",
    "max.request.partition.size.limit", "metadata.log.dir",
    "metadata.log.max.record.bytes.between.snapshots", "metadata.log.max.snapshot.interval.ms",
    "metadata.log.segment.bytes", "metadata.log.segment.ms", "metadata.max.idle.interval.ms",
    "metadata.max.retention.bytes", "metadata.max.retention.ms", "metrics.num.samples",
    "metrics.recording.level", "metrics.sample.window.ms", "node.id",
    "num.replica.alter.log.dirs.threads", "offsets.commit.required.acks",
    "password.encoder.cipher.algorithm", "password.encoder.iterations",
    "password.encoder.key.length", "password.encoder.keyfactory.algorithm",
    "password.encoder.old.secret", "password.encoder.secret", "process.roles",
    "producer.purgatory.purge.interval.requests", "queued.max.request.bytes",
    "queued.max.requests", "quota.window.num", "quota.window.size.seconds",
    "remote.log.manager.copier.thread.pool.size", "remote.log.manager.copy.quota.window.num",
    "remote.log.manager.copy.quota.window.size.seconds",
    "remote.log.manager.expiration.thread.pool.size", "remote.log.manager.fetch.quota.window.num",
    "remote.log.manager.fetch.quota.window.size.seconds", "remote.log.manager.task.interval.ms",
    "remote.log.manager.thread.pool.size", "remote.log.metadata.custom.metadata.max.bytes",
    "remote.log.metadata.manager.class.name", "remote.log.metadata.manager.class.path",
    "remote.log.metadata.manager.impl.prefix", "remote.log.metadata.manager.listener.name",
    "remote.log.reader.max.pending.tasks", "remote.log.reader.threads",
    "remote.log.storage.manager.class.name", "remote.log.storage.manager.class.path",
    "remote.log.storage.manager.impl.prefix", "remote.log.storage.system.enable",
    "replica.fetch.backoff.ms", "replica.fetch.max.bytes", "replica.fetch.min.bytes",
    "replica.fetch.response.max.bytes", "replica.fetch.wait.max.ms",
    "replica.high.watermark.checkpoint.interval.ms", "replica.lag.time.max.ms",
    "replica.selector.class", "replica.socket.receive.buffer.bytes", "replica.socket.timeout.ms",
    "replication.quota.window.num", "replication.quota.window.size.seconds", "request.timeout.ms",
    "sasl.client.callback.handler.class", "sasl.login.callback.handler.class", "sasl.login.class",
    "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.max.ms", "sasl.login.retry.backoff.ms",
    "sasl.mechanism.controller.protocol", "sasl.oauthbearer.token.endpoint.url",
    "security.providers",
    "socket.connection.setup.timeout.max.ms", "socket.connection.setup.timeout.ms",
    "socket.listen.backlog.size", "socket.receive.buffer.bytes", "socket.send.buffer.bytes",
    "ssl.allow.dn.changes", "ssl.allow.san.changes",
    "telemetry.max.bytes", "transaction.remove.expired.transaction.cleanup.interval.ms",
    "transaction.state.log.min.isr", "zookeeper.clientCnxnSocket",
    "zookeeper.max.in.flight.requests", "zookeeper.metadata.migration.enable", "zookeeper.set.acl",
    "zookeeper.ssl.cipher.suites", "zookeeper.ssl.client.enable", "zookeeper.ssl.crl.enable",
    "zookeeper.ssl.enabled.protocols", "zookeeper.ssl.endpoint.identification.algorithm",
    "zookeeper.ssl.keystore.location", "zookeeper.ssl.keystore.password",
    "zookeeper.ssl.keystore.type", "zookeeper.ssl.ocsp.enable", "zookeeper.ssl.protocol",
    "zookeeper.ssl.truststore.location", "zookeeper.ssl.truststore.password",
    "zookeeper.ssl.truststore.type",
})
