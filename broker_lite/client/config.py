"""Client settings, under the names Kafka's Java client and librdkafka use.

Settings arrive as strings (Spark options always are; ints and bools are accepted too). Four
kinds of names are known:

* :data:`CLIENT_SETTINGS` -- the settings this client uses, each with its parser and default;
* :data:`PRODUCER_SETTINGS` -- the producer's settings (``acks``, ``compression.type``,
  ``transactional.id``, ...), parsed and checked the same way, and also kept as given in
  :attr:`ClientConfig.extra` with the other producer and consumer settings;
* :data:`PASS_THROUGH_SETTINGS` and every other setting of Kafka's Java consumer and producer
  (:mod:`.java_settings`) -- other Java / librdkafka settings of the producer or consumer
  side (``linger.ms``, ``auto.offset.reset``, ...): accepted and kept in
  :attr:`ClientConfig.extra`, unused here;
* ``ssl.*`` and ``sasl.*`` -- TLS and SASL settings (Kafka's and librdkafka's names), kept in
  :attr:`ClientConfig.security` and checked up front by building the TLS context
  (:func:`broker_lite.security.tls.client_context`) and the SASL mechanism
  (:class:`broker_lite.security.sasl_client.SaslClientFactory`) that ``security.protocol``
  asks for; ``oauth_cb`` (a Python callable, confluent-kafka's name) supplies OAUTHBEARER tokens.

Any other name is a :class:`ConfigError` naming it, so a misspelt option never passes silently.
Values parse as Kafka's ``ConfigDef`` parses them (:mod:`broker_lite.config.parsers`): trimmed,
numbers within their Kafka type (INT or LONG) and bounds, booleans in any case, choices
case-sensitive (``acks=ALL`` and ``isolation.level=READ_COMMITTED`` are refused, as Kafka refuses
them) except ``security.protocol``, which Kafka compares in any case.

>>> config = ClientConfig({"bootstrap.servers": "b1:9092,[::1]:9093", "fetch.max.wait.ms": "100"})
>>> config.bootstrap_servers, config.fetch_max_wait_ms, config.client_id
([('b1', 9092), ('::1', 9093)], 100, 'kpy')
>>> ClientConfig({"bootstrap.servers": "b1:9092",
...               "fetch.max.wait": "1"})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
broker_lite.client.errors.ConfigError: fetch.max.wait: unknown Kafka client setting
(did you mean fetch.max.wait.ms?)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from broker_lite.common.vocabulary import INT32_MAX
from broker_lite.config.parsers import (
    InvalidValue,
    Setting,
    as_text,
    boolean,
    choice,
    int32,
    int64,
    non_empty,
    string,
)
from broker_lite.security import SecurityConfigError
from broker_lite.security.redaction import RedactedSettings

from .errors import ConfigError
from .java_settings import JAVA_CLIENT_SETTINGS, JAVA_SASL_SETTINGS, JAVA_SSL_SETTINGS
from .types import ISOLATION_LEVELS

DEFAULT_PORT = 9092
SPARK_OPTION_PREFIX = "kafka."


# -- parsers of this client's own (the others are broker_lite.config.parsers'), ValueError with the
# reason


_ACKS = choice("all", "-1", "1")


def _acks(text: str) -> int:
    """``all`` / ``-1`` -> -1, ``1`` -> 1 (case-sensitive, as Kafka's ValidString); ``0`` (no
    response at all) is refused: this client reads the answer to every request it sends."""
    if text == "0":
        raise InvalidValue("acks=0 (no answer from the broker) is not supported by this client; "
                           "use 1 or all", None)
    return -1 if _ACKS(text) in ("all", "-1") else 1


def parse_servers(text: str) -> list[tuple[str, int]]:
    """``host:port,...`` (optionally ``PLAINTEXT://host:port``, ``[v6addr]:port``; the port
    defaults to 9092) as a list of (host, port)."""
    servers = []
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            continue
        if "://" in item:
            scheme, item = item.split("://", 1)
            if scheme.upper() not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
                raise ValueError(f"unknown security protocol {scheme}:// (expected PLAINTEXT, "
                                 f"SSL, SASL_PLAINTEXT or SASL_SSL)")
        if item.startswith("["):  # [ipv6]:port
            host, _, rest = item[1:].partition("]")
            port_text = rest[1:] if rest.startswith(":") else ""
        elif item.count(":") == 1:
            host, port_text = item.split(":")
        else:
            host, port_text = item, ""
        try:
            port = int(port_text) if port_text else DEFAULT_PORT
        except ValueError:
            raise ValueError(f"bad port in {item!r}") from None
        if not host or not 0 < port < 65536:
            raise ValueError(f"expected host:port, got {item!r}")
        servers.append((host, port))
    if not servers:
        raise ValueError("expected at least one host:port")
    return servers


#: The settings this client reads: name -> Setting.
CLIENT_SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("bootstrap.servers", parse_servers, None,
            "host:port pairs of brokers to get the cluster metadata from (required)"),
    Setting("client.id", string, "kpy", "client id sent with every request"),
    Setting("request.timeout.ms", int32(1), 30000,
            "longest wait for one response, and for a whole operation including its retries"),
    Setting("socket.connection.setup.timeout.ms", int64(1), 10000,
            "longest wait for a TCP connection to open, at the first attempt"),
    Setting("socket.connection.setup.timeout.max.ms", int64(1), 30000,
            "longest wait for a TCP connection to open, after failed attempts (the wait "
            "doubles from socket.connection.setup.timeout.ms)"),
    Setting("retry.backoff.ms", int64(0), 100, "first wait before a retry"),
    Setting("retry.backoff.max.ms", int64(0), 1000,
            "longest wait between retries (the wait doubles from retry.backoff.ms)"),
    Setting("reconnect.backoff.ms", int64(0), 50,
            "first wait before connecting again to a broker whose connection failed"),
    Setting("reconnect.backoff.max.ms", int64(0), 1000,
            "longest wait before connecting again to a broker (the wait doubles from "
            "reconnect.backoff.ms with every failed attempt in a row)"),
    Setting("connections.max.idle.ms", int64(), 540000,
            "a connection unused this long is closed (and opened again when needed); -1: "
            "never"),
    Setting("metadata.max.age.ms", int64(0), 300000,
            "cluster metadata older than this is refreshed before use"),
    Setting("max.partition.fetch.bytes", int32(1), 1048576,
            "byte limit per partition per Fetch (the first batch always comes whole)"),
    Setting("fetch.max.bytes", int32(1), 52428800, "byte limit per Fetch response"),
    Setting("fetch.min.bytes", int32(0), 1, "bytes a Fetch waits for (up to fetch.max.wait.ms)"),
    Setting("fetch.max.wait.ms", int32(0), 500, "longest wait of a Fetch for fetch.min.bytes"),
    Setting("check.crcs", boolean, True,
            "check the CRC of every fetched record batch, as Kafka's consumer does by default"),
    Setting("isolation.level", choice(*ISOLATION_LEVELS), "read_uncommitted",
            "default isolation level of fetch and list_offsets"),
    Setting("group.id", non_empty, None, "default group of committed() and commit()"),
    Setting("security.protocol", choice("plaintext", "ssl", "sasl_plaintext", "sasl_ssl",
                                        case_sensitive=False), "plaintext",
            "PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL (SASL over TLS)"),
)}

#: The producer's settings (:mod:`broker_lite.client.producer.producer`): name -> Setting.
#: ``batch.size`` defaults to 1 MiB rather than the Java client's 16 KiB: the producer sends whole
#: Arrow inputs at once instead of accumulating records one by one, so batches are cut by size only.
PRODUCER_SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("acks", _acks, -1, "all (-1) or 1: the replicas that must have a batch before the "
                               "broker answers"),
    Setting("compression.type", choice("none", "gzip", "snappy", "lz4", "zstd"), "none",
            "codec of produced record batches"),
    Setting("batch.size", int32(1), 1048576,
            "largest record batch built, in bytes before compression"),
    Setting("max.request.size", int32(1), 1048576,
            "largest Produce request, and so the largest record (with its batch header)"),
    Setting("enable.idempotence", boolean, True,
            "number batches so that brokers drop retried duplicates (needs acks=all)"),
    Setting("transactional.id", non_empty, None,
            "the id of a transactional producer (implies enable.idempotence)"),
    Setting("transaction.timeout.ms", int32(1), 60000,
            "longest a transaction may stay open before the coordinator aborts it"),
    Setting("delivery.timeout.ms", int32(1), 120000,
            "longest time to deliver one round of batches, retries included"),
    Setting("retries", int32(0), INT32_MAX, "retries of a batch after retriable errors"),
)}

#: The settings a client's connections and cluster metadata depend on: clients that agree on
#: them may share their connections (:class:`.cluster.Cluster`, :mod:`.shared`), whatever their
#: other settings (fetch sizes, isolation level, the producer's).
CONNECTION_SETTINGS = (
    "bootstrap.servers", "client.id", "security.protocol", "request.timeout.ms",
    "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
    "retry.backoff.ms", "retry.backoff.max.ms", "reconnect.backoff.ms",
    "reconnect.backoff.max.ms", "connections.max.idle.ms", "metadata.max.age.ms",
)

#: librdkafka's names for settings known under their Java names.
ALIASES = {
    "metadata.broker.list": "bootstrap.servers",
    "request.required.acks": "acks",
    "compression.codec": "compression.type",
    "message.send.max.retries": "retries",
    "message.timeout.ms": "delivery.timeout.ms",
}

#: Java client / librdkafka settings accepted and kept in ``ClientConfig.extra``, unused here.
PASS_THROUGH_SETTINGS = frozenset({
    # producer
    "compression.level", "linger.ms", "queue.buffering.max.ms",
    "batch.num.messages", "buffer.memory", "queue.buffering.max.messages",
    "queue.buffering.max.kbytes", "max.in.flight.requests.per.connection", "max.in.flight",
    "message.max.bytes", "partitioner", "partitioner.class",
    "sticky.partitioning.linger.ms", "max.block.ms", "key.serializer", "value.serializer",
    "interceptor.classes",
    # consumer
    "auto.offset.reset", "enable.auto.commit", "auto.commit.interval.ms",
    "session.timeout.ms", "heartbeat.interval.ms", "max.poll.records", "max.poll.interval.ms",
    "key.deserializer", "value.deserializer", "client.rack",
    "group.instance.id", "partition.assignment.strategy", "exclude.internal.topics",
    "allow.auto.create.topics", "default.api.timeout.ms",
    # network, tuned by the OS or librdkafka here
    "receive.buffer.bytes", "send.buffer.bytes",
    "socket.timeout.ms", "socket.keepalive.enable", "client.dns.lookup", "metrics.recorders",
    "metric.reporters", "metrics.num.samples", "metrics.sample.window.ms", "log_level",
    "debug", "api.version.request", "broker.version.fallback",
})

#: librdkafka's TLS and SASL settings that :mod:`broker_lite.security` reads too.
LIBRDKAFKA_SECURITY_SETTINGS = frozenset({
    "ssl.ca.location", "ssl.ca.pem", "ssl.certificate.location", "ssl.certificate.pem",
    "ssl.key.location", "ssl.key.pem", "enable.ssl.certificate.verification",
    "sasl.mechanisms", "sasl.username", "sasl.password", "sasl.oauthbearer.config",
    "sasl.oauthbearer.method", "sasl.oauthbearer.client.id", "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope", "enable.sasl.oauthbearer.unsecure.jwt",
})
#: The TLS and SASL settings, kept in ``ClientConfig.security``: Kafka's (``SslConfigs``,
#: ``SaslConfigs``) and librdkafka's.
SECURITY_SETTINGS = JAVA_SSL_SETTINGS | JAVA_SASL_SETTINGS | LIBRDKAFKA_SECURITY_SETTINGS


def is_security_setting(name: str) -> bool:
    """Whether ``name`` is a TLS or SASL setting (kept in :attr:`ClientConfig.security`)."""
    return name in SECURITY_SETTINGS or name == "oauth_cb"


def parse_setting(name: str, value: Any, *, shown: str | None = None) -> Any:
    """The value of the client or producer setting ``name``, given as text or as a Python value
    (an int, a bool), parsed as Kafka parses it (trimmed first); a bad value is a
    :class:`ConfigError` naming ``shown`` (by default ``name``).

    >>> parse_setting("acks", "all"), parse_setting("batch.size", 16384)
    (-1, 16384)
    >>> parse_setting("enable.idempotence", "maybe")
    Traceback (most recent call last):
    ...
    broker_lite.client.errors.ConfigError: enable.idempotence: expected true or false, got 'maybe'
    """
    setting = CLIENT_SETTINGS.get(name) or PRODUCER_SETTINGS[name]
    try:
        return setting.value_of(value)
    except ValueError as exc:
        raise ConfigError(shown or name, str(exc)) from None


class ClientConfig:
    """Validated client settings: attributes named after the settings (``request_timeout_ms``,
    ``bootstrap_servers`` as a list of (host, port), ...), the pass-through settings in
    :attr:`extra`, and the settings as given in :attr:`given`.

    ``key_prefix`` is prepended to setting names in error messages (``"kafka."`` for Spark
    options, see :meth:`from_spark_options`).
    """

    # The settings of CLIENT_SETTINGS and PRODUCER_SETTINGS as parsed, set by __init__ (a name's
    # dots made underscores; tests/broker_lite/client/test_client_config.py checks the list).
    bootstrap_servers: list[tuple[str, int]]
    client_id: str
    request_timeout_ms: int
    socket_connection_setup_timeout_ms: int
    socket_connection_setup_timeout_max_ms: int
    retry_backoff_ms: int
    retry_backoff_max_ms: int
    reconnect_backoff_ms: int
    reconnect_backoff_max_ms: int
    connections_max_idle_ms: int
    metadata_max_age_ms: int
    max_partition_fetch_bytes: int
    fetch_max_bytes: int
    fetch_min_bytes: int
    fetch_max_wait_ms: int
    check_crcs: bool
    isolation_level: str
    group_id: str | None
    security_protocol: str
    acks: int
    compression_type: str
    batch_size: int
    max_request_size: int
    enable_idempotence: bool
    transactional_id: str | None
    transaction_timeout_ms: int
    delivery_timeout_ms: int
    retries: int

    def __init__(self, settings: Mapping[str, Any], *, key_prefix: str = ""):
        values = {name: s.default for name, s in (*CLIENT_SETTINGS.items(),
                                                  *PRODUCER_SETTINGS.items())}
        self.extra: dict[str, str] = {}
        self.given: dict[str, str] = RedactedSettings()  # prints with secrets hidden
        self.security: dict[str, str] = {}
        self.oauth_cb = None
        for key, raw in settings.items():
            name = ALIASES.get(key, key)
            shown = key_prefix + key
            if name == "oauth_cb":
                if not callable(raw):
                    raise ConfigError(shown, "expected a callable (config) -> (token, expiry)")
                self.oauth_cb = raw
                continue
            text = as_text(raw)
            self.given[key] = text
            if name in CLIENT_SETTINGS or name in PRODUCER_SETTINGS:
                values[name] = parse_setting(name, text, shown=shown)
                if name in PRODUCER_SETTINGS:
                    self.extra[name] = text
            elif is_security_setting(name):
                self.security[name] = text
            elif name in PASS_THROUGH_SETTINGS or name in JAVA_CLIENT_SETTINGS:
                self.extra[name] = text
            else:
                raise ConfigError(shown, "unknown Kafka client setting" + _suggestion(name,
                                                                                      key_prefix))
        if values["bootstrap.servers"] is None:
            raise ConfigError(key_prefix + "bootstrap.servers", "required, e.g. 127.0.0.1:9092")
        for name, value in values.items():
            setattr(self, name.replace(".", "_"), value)
        self.ssl_context, self.sasl = _security(self.security_protocol, self.security,
                                                self.oauth_cb, key_prefix)

    @classmethod
    def from_spark_options(cls, options: Mapping[str, Any]) -> ClientConfig:
        """The ``kafka.``-prefixed entries of Spark options (others are not the client's);
        errors name the option as given (``kafka.request.timeout.ms``)."""
        settings = {key[len(SPARK_OPTION_PREFIX):]: value for key, value in options.items()
                    if key.startswith(SPARK_OPTION_PREFIX)}
        return cls(settings, key_prefix=SPARK_OPTION_PREFIX)

    @property
    def connection_key(self) -> tuple:
        """The values of :data:`CONNECTION_SETTINGS`, as parsed (so ``PLAINTEXT://b1:9092`` and
        ``b1:9092`` agree): equal keys, shareable connections.

        >>> a = ClientConfig({"bootstrap.servers": "b1", "max.partition.fetch.bytes": "1024"})
        >>> a.connection_key == ClientConfig({"bootstrap.servers": "PLAINTEXT://b1:9092",
        ...                                   "acks": "1"}).connection_key
        True
        >>> a.connection_key == ClientConfig({"bootstrap.servers": "b1",
        ...                                   "client.id": "other"}).connection_key
        False
        """
        return tuple((name, _hashable(getattr(self, name.replace(".", "_"))))
                     for name in CONNECTION_SETTINGS) \
            + tuple(sorted((name, _hashable(value)) for name, value in self.security.items())) \
            + (("oauth_cb", self.oauth_cb),)

    def connection_config(self) -> ClientConfig:
        """A config of this one's :data:`CONNECTION_SETTINGS` and TLS and SASL settings only,
        as given (the others at their defaults): what shared connections are opened with."""
        settings = {key: text for key, text in self.given.items()
                    if ALIASES.get(key, key) in CONNECTION_SETTINGS
                    or is_security_setting(ALIASES.get(key, key))}
        if self.oauth_cb is not None:
            settings["oauth_cb"] = self.oauth_cb
        return ClientConfig(settings)

    def is_set(self, name: str) -> bool:
        """Whether setting ``name`` was given (under its name or a librdkafka alias), rather
        than left to its default."""
        return any(ALIASES.get(key, key) == name for key in self.given)

    @property
    def bootstrap_text(self) -> str:
        """``bootstrap.servers`` as ``host:port,...``, for messages."""
        return ",".join(_address(host, port) for host, port in self.bootstrap_servers)

    def __repr__(self) -> str:
        return f"ClientConfig({self.given!r})"

    def __getstate__(self) -> dict:  # an SSLContext does not pickle: both rebuilt on loading
        return {**self.__dict__, "ssl_context": None, "sasl": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.ssl_context, self.sasl = _security(self.security_protocol, self.security,
                                                self.oauth_cb, "")


def _security(protocol: str, settings: Mapping[str, str], oauth_cb, prefix: str):
    """The TLS context and SASL mechanism ``security.protocol`` asks for (None when not). Their
    modules are imported only then: a PLAINTEXT client (most Spark drivers) loads neither
    :mod:`ssl` nor the SASL mechanisms and the cryptography they use."""
    protocol = protocol.upper()
    try:
        context = sasl = None
        if protocol.endswith("SSL"):
            from broker_lite.security import tls

            context = tls.client_context(settings)
        if protocol.startswith("SASL"):
            from broker_lite.security.sasl_client import SaslClientFactory

            sasl = SaslClientFactory.from_settings(settings, oauth_cb=oauth_cb)
    except SecurityConfigError as exc:
        raise ConfigError(prefix + exc.key, str(exc).split(": ", 1)[-1]) from None
    return context, sasl


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _suggestion(name: str, prefix: str) -> str:
    import difflib  # only for a misspelt name

    known = [*CLIENT_SETTINGS, *PRODUCER_SETTINGS, *PASS_THROUGH_SETTINGS, *ALIASES,
             *sorted(JAVA_CLIENT_SETTINGS), *sorted(LIBRDKAFKA_SECURITY_SETTINGS)]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return f" (did you mean {prefix}{close[0]}?)" if close else ""
