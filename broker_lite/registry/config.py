"""The registry's settings, with Confluent Schema Registry's names and defaults
(Confluent's documentation, "Schema Registry Configuration Reference").

=========================================  ==============================================
setting                                    what it does
=========================================  ==============================================
``listeners``                              where it serves (``http://`` or ``https://``,
                                           comma-separated; default
                                           ``http://127.0.0.1:8081``; port 0: a free one)
``host.name``                              the host other registry processes forward to
                                           (default: the listener's)
``kafkastore.bootstrap.servers``           the Kafka cluster keeping ``_schemas`` (required;
                                           ``PLAINTEXT://`` prefixes allowed)
``kafkastore.topic``                       the topic (``_schemas``)
``kafkastore.topic.replication.factor``    its replicas when created (3; fewer when the
                                           cluster has fewer brokers)
``kafkastore.timeout.ms``                  how long a write waits for the store (10000)
``kafkastore.init.timeout.ms``             how long the start waits to read the topic
                                           (60000)
``kafkastore.security.protocol``,          how the store reaches a secured cluster: every
``kafkastore.sasl.*``, ``kafkastore.ssl.*``  Kafka client setting, prefixed ``kafkastore.``
``schema.compatibility.level``             the default level (``backward``; the old name
                                           ``avro.compatibility.level`` too)
``leader.eligibility``                     whether this process may be the primary (true;
                                           the old name ``master.eligibility`` too)
``schema.registry.group.id``               the election's consumer group
                                           (``schema-registry``)
``inter.instance.protocol``                ``http`` or ``https`` between processes (the
                                           listener's scheme by default)
``ssl.keystore.*``, ``ssl.key.password``,  HTTPS: the server's certificate, and the
``ssl.truststore.*``,                      authorities client certificates must come from;
``ssl.client.authentication``              ``NONE``, ``REQUESTED``, ``REQUIRED`` (the old
                                           boolean ``ssl.client.auth`` too)
``authentication.method``                  ``NONE`` or ``BASIC`` (HTTP Basic)
``authentication.realm``                   the JAAS entry naming the users' file
``authentication.roles``                   the roles let in (``*``: any user of the file)
``java.security.auth.login.config``        the JAAS file (Confluent reads it from the
                                           JVM's system property of that name)
=========================================  ==============================================

>>> config = RegistryConfig({"kafkastore.bootstrap.servers": "PLAINTEXT://127.0.0.1:9092",
...                          "kafkastore.security.protocol": "PLAINTEXT"})
>>> config.listeners, config.client_settings()["bootstrap.servers"]
(['http://127.0.0.1:8081'], '127.0.0.1:9092')
>>> RegistryConfig({"kafkastore.bootstrap.servers": "x:1", "leader.eligibility": "maybe"})
Traceback (most recent call last):
...
broker_lite.config.parsers.ConfigError: leader.eligibility: expected true or false, got 'maybe'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from broker_lite.config.parsers import (
    ConfigError,
    InvalidValue,
    Setting,
    boolean,
    choice,
    int32,
    list_of,
    string,
)
from broker_lite.security.redaction import redact

from .compatibility import LEVELS

DEFAULT_LISTENER = "http://127.0.0.1:8081"

SETTINGS = {s.name: s for s in [
    Setting("listeners", list_of(), (DEFAULT_LISTENER,), "where the REST API is served"),
    Setting("host.name", string, "", "the host other processes reach this one at"),
    Setting("kafkastore.bootstrap.servers", list_of(), (), "the cluster keeping the schemas"),
    Setting("kafkastore.topic", string, "_schemas", "the schemas topic"),
    Setting("kafkastore.topic.replication.factor", int32(1), 3, "its replicas"),
    Setting("kafkastore.timeout.ms", int32(1), 10000, "how long a write waits"),
    Setting("kafkastore.init.timeout.ms", int32(1), 60000, "how long the start waits"),
    Setting("schema.compatibility.level",
            choice(*LEVELS, case_sensitive=False), "BACKWARD", "the default level"),
    Setting("leader.eligibility", boolean, True, "whether this process may be the primary"),
    Setting("schema.registry.group.id", string, "schema-registry", "the election's group"),
    Setting("inter.instance.protocol", choice("http", "https", case_sensitive=False), None,
            "the scheme between processes"),
    Setting("ssl.client.authentication", choice("NONE", "REQUESTED", "REQUIRED",
                                                case_sensitive=False), "NONE",
            "whether HTTPS clients must present a certificate"),
    Setting("authentication.method", choice("NONE", "BASIC", case_sensitive=False), "NONE",
            "HTTP authentication"),
    Setting("authentication.realm", string, "", "the JAAS entry with the users' file"),
    Setting("authentication.roles", list_of(), ("*",), "the roles let in"),
    Setting("java.security.auth.login.config", string, "", "the JAAS file"),
]}

#: Older names Confluent still reads -> the current ones.
ALIASES = {"avro.compatibility.level": "schema.compatibility.level",
           "master.eligibility": "leader.eligibility",
           "schema.registry.inter.instance.protocol": "inter.instance.protocol"}

#: The server's TLS settings (Kafka's names, read by broker_lite.security.tls).
SERVER_TLS = ("ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type",
              "ssl.key.password", "ssl.truststore.location", "ssl.truststore.password",
              "ssl.truststore.type", "ssl.keystore.certificate.chain", "ssl.keystore.key",
              "ssl.truststore.certificates", "ssl.enabled.protocols", "ssl.cipher.suites")


#: The prefix of a registry's settings in a broker's ``server.properties``.
BROKER_PREFIX = "schema.registry."


def embedded_properties(broker: Mapping[str, str], bootstrap_servers: str,
                        client_settings: Mapping[str, str]) -> dict[str, str]:
    """The settings of a registry run in a broker's process: its own cluster
    (``bootstrap_servers``, reached with the broker's ``client_settings``), and every
    ``schema.registry.*`` setting of the broker's, unprefixed (``schema.registry.listeners`` is
    ``listeners``) unless the registry knows the prefixed name itself
    (``schema.registry.group.id``).

    >>> embedded_properties({"schema.registry.listeners": "http://127.0.0.1:0",
    ...                      "schema.registry.group.id": "g", "log.dirs": "/x"},
    ...                     "127.0.0.1:9092", {"security.protocol": "SSL"})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'kafkastore.bootstrap.servers': '127.0.0.1:9092', 'kafkastore.security.protocol': 'SSL',
     'listeners': 'http://127.0.0.1:0', 'schema.registry.group.id': 'g'}
    """
    properties = {"kafkastore.bootstrap.servers": bootstrap_servers}
    properties.update({f"kafkastore.{name}": value for name, value in client_settings.items()})
    for name, value in broker.items():
        if name.startswith(BROKER_PREFIX):
            known = name in SETTINGS or name in ALIASES
            properties[name if known else name.removeprefix(BROKER_PREFIX)] = value
    return properties


class RegistryConfig:
    """Settings by Confluent's names, checked when made (:class:`ConfigError` names the
    setting); ``config[name]`` is a setting's parsed value."""

    def __init__(self, properties: Mapping[str, str]):
        self.originals = {ALIASES.get(k, k): str(v) for k, v in properties.items()}
        self._values: dict[str, Any] = {}
        for name, setting in SETTINGS.items():
            text = self.originals.get(name)
            if text is None:
                self._values[name] = setting.default
                continue
            try:
                self._values[name] = setting.value_of(text)
            except InvalidValue as exc:
                raise ConfigError(f"{name}: {exc}") from None
        if "ssl.client.auth" in self.originals and "ssl.client.authentication" \
                not in self.originals:  # the old boolean
            self._values["ssl.client.authentication"] = \
                "REQUIRED" if self.originals["ssl.client.auth"].lower() == "true" else "NONE"
        if not self._values["kafkastore.bootstrap.servers"]:
            raise ConfigError("kafkastore.bootstrap.servers: the Kafka cluster to keep the "
                              "schemas in is required")
        for listener in self.listeners:
            parts = urlsplit(listener)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigError(f"listeners: expected http://host:port or https://host:port, "
                                  f"got {listener!r}")
        if self["authentication.method"] == "BASIC" and not (
                self["authentication.realm"] and self["java.security.auth.login.config"]):
            raise ConfigError("authentication.method=BASIC needs authentication.realm and the "
                              "JAAS file java.security.auth.login.config")

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    @property
    def listeners(self) -> list[str]:
        return list(self["listeners"])

    def client_settings(self) -> dict[str, str]:
        """The store's Kafka client settings: every ``kafkastore.`` setting unprefixed, but
        the registry's own."""
        own = {"kafkastore.topic", "kafkastore.topic.replication.factor",
               "kafkastore.timeout.ms", "kafkastore.init.timeout.ms",
               "kafkastore.bootstrap.servers"}
        settings = {name.removeprefix("kafkastore."): value
                    for name, value in self.originals.items()
                    if name.startswith("kafkastore.") and name not in own}
        settings["bootstrap.servers"] = ",".join(
            server.split("://", 1)[-1] for server in self["kafkastore.bootstrap.servers"])
        return settings

    def tls_settings(self) -> dict[str, str]:
        """The HTTPS listener's settings, as broker_lite.security.tls reads them."""
        settings = {name: self.originals[name] for name in SERVER_TLS if name in self.originals}
        settings["ssl.client.auth"] = self["ssl.client.authentication"].lower()
        return settings

    def __repr__(self) -> str:
        return f"RegistryConfig({redact(self.originals)})"
