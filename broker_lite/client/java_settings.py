"""The setting names of Kafka's Java clients (Kafka 3.9): every name that ``ConsumerConfig`` and
``ProducerConfig`` define, with the TLS and SASL names that both add
(``SslConfigs.addClientSslSupport``, ``SaslConfigs.addClientSaslSupport``).

A job moved from another Kafka client (Spark's ``format("kafka")``, say) brings such settings
along; :class:`~broker_lite.client.config.ClientConfig` accepts every one of them, uses those it
has a meaning for and keeps the others in ``extra``, and still refuses names that no Kafka client
knows, so a misspelt setting is never silently dropped.

The lists are Kafka's own, taken from the ``define`` calls of those classes in Kafka 3.9's
``clients`` module; they are the documented consumer and producer configurations of Kafka's
documentation (3.4 Producer Configs, 3.5 Consumer Configs).
"""

#: The settings of Kafka 3.9's ``KafkaConsumer`` (``ConsumerConfig``), TLS and SASL aside.
JAVA_CONSUMER_SETTINGS = frozenset({
    "allow.auto.create.topics", "auto.commit.interval.ms", "auto.include.jmx.reporter",
    "auto.offset.reset", "bootstrap.servers", "check.crcs", "client.dns.lookup", "client.id",
    "client.rack", "connections.max.idle.ms", "default.api.timeout.ms", "enable.auto.commit",
    "enable.metrics.push", "exclude.internal.topics", "fetch.max.bytes", "fetch.max.wait.ms",
    "fetch.min.bytes", "group.id", "group.instance.id", "group.protocol",
    "group.remote.assignor", "heartbeat.interval.ms", "interceptor.classes", "isolation.level",
    "key.deserializer", "max.partition.fetch.bytes", "max.poll.interval.ms",
    "max.poll.records", "metadata.max.age.ms", "metadata.recovery.strategy",
    "metric.reporters", "metrics.num.samples", "metrics.recording.level",
    "metrics.sample.window.ms", "partition.assignment.strategy", "receive.buffer.bytes",
    "reconnect.backoff.max.ms", "reconnect.backoff.ms", "request.timeout.ms",
    "retry.backoff.max.ms", "retry.backoff.ms", "security.protocol", "security.providers",
    "send.buffer.bytes", "session.timeout.ms", "socket.connection.setup.timeout.max.ms",
    "socket.connection.setup.timeout.ms", "value.deserializer"
})

#: The settings of Kafka 3.9's ``KafkaProducer`` (``ProducerConfig``), TLS and SASL aside.
JAVA_PRODUCER_SETTINGS = frozenset({
    "acks", "auto.include.jmx.reporter", "batch.size", "bootstrap.servers", "buffer.memory",
    "client.dns.lookup", "client.id", "compression.gzip.level", "compression.lz4.level",
    "compression.type", "compression.zstd.level", "connections.max.idle.ms",
    "delivery.timeout.ms", "enable.idempotence", "enable.metrics.push", "interceptor.classes",
    "key.serializer", "linger.ms", "max.block.ms", "max.in.flight.requests.per.connection",
    "max.request.size", "metadata.max.age.ms", "metadata.max.idle.ms",
    "metadata.recovery.strategy", "metric.reporters", "metrics.num.samples",
    "metrics.recording.level", "metrics.sample.window.ms",
    "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
    "partitioner.class", "partitioner.ignore.keys", "receive.buffer.bytes",
    "reconnect.backoff.max.ms", "reconnect.backoff.ms", "request.timeout.ms", "retries",
    "retry.backoff.max.ms", "retry.backoff.ms", "security.protocol", "security.providers",
    "send.buffer.bytes", "socket.connection.setup.timeout.max.ms",
    "socket.connection.setup.timeout.ms", "transaction.timeout.ms", "transactional.id",
    "value.serializer"
})

#: The TLS settings both clients define (``SslConfigs``).
JAVA_SSL_SETTINGS = frozenset({
    "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.endpoint.identification.algorithm",
    "ssl.engine.factory.class", "ssl.key.password", "ssl.keymanager.algorithm",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.keystore.location",
    "ssl.keystore.password", "ssl.keystore.type", "ssl.protocol", "ssl.provider",
    "ssl.secure.random.implementation", "ssl.trustmanager.algorithm",
    "ssl.truststore.certificates", "ssl.truststore.location", "ssl.truststore.password",
    "ssl.truststore.type"
})

#: The SASL settings both clients define (``SaslConfigs``).
JAVA_SASL_SETTINGS = frozenset({
    "sasl.client.callback.handler.class", "sasl.jaas.config", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.callback.handler.class", "sasl.login.class", "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms", "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter", "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms", "sasl.mechanism", "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.header.urlencode", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.token.endpoint.url"
})

#: Every setting name Kafka's Java consumer or producer knows.
JAVA_CLIENT_SETTINGS = (JAVA_CONSUMER_SETTINGS | JAVA_PRODUCER_SETTINGS | JAVA_SSL_SETTINGS
                        | JAVA_SASL_SETTINGS)
