"""The broker's listeners as Kafka resolves them from its settings (Kafka's ``KafkaConfig``,
``ListenerName``, ``ChannelBuilders.channelBuilderConfigs``, ``JaasContext``).

``listeners`` names where the broker listens (``NAME://host:port``, several comma-separated),
``listener.security.protocol.map`` maps each name to ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT``
or ``SASL_SSL`` (the four names map to themselves by default; a custom map replaces the
default), and ``advertised.listeners`` what clients and other brokers are told (all of
``listeners`` unless set; each name must be a listener's). Other brokers reach this one on the
inter-broker listener: ``inter.broker.listener.name``, or the listener named after
``security.inter.broker.protocol`` (``PLAINTEXT`` by default); one of the two, and an advertised
listener.

Each listener reads its security settings with Kafka's precedence, the listener's own first::

    listener.name.<listener, lower case>.<setting>   listener.name.external.ssl.keystore.location
    <setting>                                        ssl.keystore.location

and its SASL login modules only per listener and mechanism (the unprefixed ``sasl.jaas.config``
is ignored, with Kafka's warning)::

    listener.name.<listener>.<mechanism, lower case>.sasl.jaas.config
    listener.name.<listener>.<mechanism>.connections.max.reauth.ms   (else the listener's, then
                                                                      connections.max.reauth.ms)

=================  ===================================================================
setting            use
=================  ===================================================================
``ssl.*``          the TLS context of ``SSL`` and ``SASL_SSL`` listeners
                   (:func:`broker_lite.security.tls.server_context`): keystore (PEM
                   files, inline PEM, PKCS12), ``ssl.key.password``, truststore,
                   ``ssl.client.auth``, ``ssl.enabled.protocols``, ``ssl.cipher.suites``
``ssl.principal.mapping.rules``  an ``SSL`` client's principal from its certificate
``sasl.enabled.mechanisms``  ``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512``, ``OAUTHBEARER``
``<mech>.sasl.jaas.config``  PLAIN: the users (``user_<name>="<password>"``); OAUTHBEARER:
                   the unsecured validator's options; all: ``username``/``password``
                   the broker authenticates with to other brokers
``oauthbearer.sasl.server.callback.handler.class``, ``sasl.oauthbearer.*``  OAUTHBEARER's
                   validator: Kafka's unsecured one, or signed tokens checked against
                   an identity provider's JWKS (:func:`oauthbearer_validator`)
``sasl.server.max.receive.size``  the largest frame before authentication (512 KiB)
``connections.max.reauth.ms``  the session lifetime (KIP-368; 0: none)
=================  ===================================================================

SCRAM users come from ZooKeeper (:mod:`broker_lite.server.scram_credentials`), not from the
JAAS configuration. Mistakes fail the start with :class:`ListenerConfigError` naming the
setting, never quoting a secret.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.security import SecurityConfigError
from broker_lite.security.jaas import (
    MECHANISM_LOGIN_MODULES,
    JaasEntry,
    jaas_config,
    parse_jaas_config,
)
from broker_lite.security.jwks import JwksError, JwksKeys
from broker_lite.security.oauthbearer import MECHANISM as OAUTHBEARER
from broker_lite.security.oauthbearer import JwtValidator, UnsecuredTokenValidator
from broker_lite.security.plain import MECHANISM as PLAIN
from broker_lite.security.principal import PrincipalMapper
from broker_lite.security.sasl_server import ServerAuthenticator
from broker_lite.security.scram import MECHANISMS as SCRAM_MECHANISMS
from broker_lite.security.tls import server_context
from broker_lite.zk.endpoints import EndPoint, parse_endpoints, parse_protocol_map
from broker_lite.zk.errors import ZooKeeperConfigError

from .network.channel_builders import (
    PLAINTEXT,
    ChannelBuilder,
    SaslChannelBuilder,
    SslChannelBuilder,
)
from .network.sasl import ApiVersionsAnswer

logger = logging.getLogger(__name__)

SASL_MECHANISMS = (PLAIN, *SCRAM_MECHANISMS, OAUTHBEARER)
_SECURITY_PREFIXES = ("ssl.", "sasl.", "oauthbearer.sasl.")
_SECURITY_NAMES = ("connections.max.reauth.ms",)


class ListenerConfigError(ConfigError):
    """Listener settings the broker cannot start with; the message names the setting."""


def listener_prefix(listener_name: str) -> str:
    """``listener.name.<name in lower case>.`` (Kafka's ``ListenerName.configPrefix``)."""
    return f"listener.name.{listener_name.lower()}."


@dataclass(frozen=True)
class SaslSettings:
    """A SASL listener's mechanisms and what each needs."""

    mechanisms: tuple[str, ...]
    jaas: dict[str, JaasEntry] = field(repr=False)  # by mechanism, those configured
    max_receive_size: int = 524288
    max_reauth_ms: dict[str, int] = field(default_factory=dict)  # by mechanism

    def plain_users(self) -> dict[str, str]:
        """PLAIN's users: the ``user_<name>="<password>"`` options of its login module."""
        entry = self.jaas.get(PLAIN)
        if entry is None:
            return {}
        return {name[len("user_"):]: password for name, password in entry.options.items()
                if name.startswith("user_")}


@dataclass(frozen=True)
class ListenerConfig:
    """One listener: where (``endpoint``, port 0 for a free one) and its resolved settings."""

    endpoint: EndPoint
    settings: dict[str, str] = field(repr=False)  # ssl.*, sasl.*, ... with the prefix applied
    sasl: SaslSettings | None = None

    @property
    def name(self) -> str:
        return self.endpoint.listener_name

    @property
    def security_protocol(self) -> str:
        return self.endpoint.security_protocol

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")


def _protocol_map(config: BrokerConfig) -> dict[str, str]:
    try:
        return parse_protocol_map(config["listener.security.protocol.map"])
    except ZooKeeperConfigError as exc:
        raise ListenerConfigError(str(exc)) from None


def _endpoints(config: BrokerConfig, name: str) -> tuple[EndPoint, ...]:
    try:
        return parse_endpoints(config[name] or "", _protocol_map(config))
    except ZooKeeperConfigError as exc:
        raise ListenerConfigError(f"{name}: {exc}") from None


def listener_settings(effective: Mapping[str, str], listener_name: str) -> dict[str, str]:
    """The security settings of a listener: the broker-wide ones, overridden by those with
    the listener's prefix (stripped), as Kafka's ``valuesWithPrefixOverride``."""
    settings = {name: str(value) for name, value in effective.items()
                if name.startswith(_SECURITY_PREFIXES) or name in _SECURITY_NAMES}
    prefix = listener_prefix(listener_name)
    for name, value in effective.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            settings[name[len(prefix):]] = str(value)
    return settings


def _int_setting(settings: Mapping[str, str], name: str, default: int) -> int:
    text = settings.get(name)
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise ListenerConfigError(f"invalid value {text!r} for {name}: expected an integer") \
            from None


def _sasl_settings(listener_name: str, settings: Mapping[str, str]) -> SaslSettings:
    text = settings.get("sasl.enabled.mechanisms", "GSSAPI")
    mechanisms = tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    where = f"{listener_prefix(listener_name)}sasl.enabled.mechanisms"
    if not mechanisms:
        raise ListenerConfigError(f"{where}: no SASL mechanism is enabled")
    unknown = [m for m in mechanisms if m not in SASL_MECHANISMS]
    if unknown:
        why = ("GSSAPI (Kerberos), Kafka's default, needs a Java login context"
               if unknown == ["GSSAPI"] else f"unknown mechanism {', '.join(unknown)}")
        raise ListenerConfigError(f"{where}: {why}; enable some of "
                                  f"{', '.join(SASL_MECHANISMS)}")
    if settings.get("sasl.jaas.config"):
        logger.warning("Server config sasl.jaas.config should be prefixed with SASL mechanism "
                       "name, ignoring config")
    jaas = {}
    for mechanism in mechanisms:
        key = f"{mechanism.lower()}.sasl.jaas.config"
        given = settings.get(key)
        if given is None:
            continue
        text = given
        name = f"{listener_prefix(listener_name)}{key}"
        try:
            entry = parse_jaas_config(text)
        except SecurityConfigError as exc:
            raise ListenerConfigError(f"{name}: {exc}") from None
        module = MECHANISM_LOGIN_MODULES[mechanism]
        if entry.module != module:
            raise ListenerConfigError(f"{name}: {mechanism} takes the {module}, not the "
                                      f"{entry.module}")
        jaas[mechanism] = entry
    if PLAIN in mechanisms and not any(n.startswith("user_")
                                       for n in getattr(jaas.get(PLAIN), "options", {})):
        raise ListenerConfigError(
            f"{listener_prefix(listener_name)}plain.sasl.jaas.config: PLAIN is enabled but has "
            f"no users: give org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'user_<name>="<password>" ...;')
    default_reauth = _int_setting(settings, "connections.max.reauth.ms", 0)
    return SaslSettings(
        mechanisms, jaas,
        _int_setting(settings, "sasl.server.max.receive.size", 524288),
        {m: _int_setting(settings, f"{m.lower()}.connections.max.reauth.ms", default_reauth)
         for m in mechanisms})


def listener_configs(config: BrokerConfig) -> list[ListenerConfig]:
    """Every listener of ``listeners``, with its settings; raises
    :class:`ListenerConfigError`."""
    endpoints = _endpoints(config, "listeners")
    if not endpoints:
        raise ListenerConfigError("listeners: no listener is configured")
    effective = config.effective
    listeners = []
    for endpoint in endpoints:
        settings = listener_settings(effective, endpoint.listener_name)
        if endpoint.security_protocol == "SASL_SSL" and \
                f"{listener_prefix(endpoint.listener_name)}ssl.client.auth" not in effective:
            settings["ssl.client.auth"] = "none"  # KIP-684: only with the listener's prefix
        sasl = _sasl_settings(endpoint.listener_name, settings) \
            if endpoint.security_protocol.startswith("SASL_") else None
        listeners.append(ListenerConfig(endpoint, settings, sasl))
    return listeners


def channel_builder(listener: ListenerConfig, scram_credentials, api_versions: ApiVersionsAnswer
                    ) -> ChannelBuilder:
    """How the listener's connections are built: its TLS context, principal rules and SASL
    mechanisms, checked now (``scram_credentials(mechanism, user)`` looks SCRAM credentials
    up; ``api_versions`` answers ApiVersions before authentication)."""
    prefix = listener_prefix(listener.name)
    context = None
    if listener.uses_tls:
        try:
            context = server_context(listener.settings)
        except SecurityConfigError as exc:
            raise ListenerConfigError(f"listener {listener.name}: {prefix}{exc}") from None
    if listener.security_protocol == "PLAINTEXT":
        return PLAINTEXT
    if listener.security_protocol == "SSL":
        try:
            mapper = PrincipalMapper(listener.settings.get("ssl.principal.mapping.rules"))
        except SecurityConfigError as exc:
            raise ListenerConfigError(f"listener {listener.name}: {prefix}{exc}") from None
        assert context is not None  # SSL uses TLS
        return SslChannelBuilder(context, mapper)
    sasl = listener.sasl
    if sasl is None:  # read for every SASL_ listener (listener_configs)
        raise ListenerConfigError(f"listener {listener.name}: no SASL settings")
    plain_users = sasl.plain_users()
    validator = oauthbearer_validator(listener) if OAUTHBEARER in sasl.mechanisms else None

    def new_server() -> ServerAuthenticator:
        return ServerAuthenticator(sasl.mechanisms, plain_users=plain_users,
                                   scram_credentials=scram_credentials,
                                   oauth_validate=validator.validate if validator else None,
                                   max_receive_size=sasl.max_receive_size)

    return SaslChannelBuilder(context, new_server, api_versions,
                              max_receive_size=sasl.max_receive_size,
                              max_reauth_ms=sasl.max_reauth_ms,
                              close=validator.keys.stop if isinstance(validator, JwtValidator)
                              else None)


# Kafka's server callback handlers for OAUTHBEARER: the unsecured one is the default.
UNSECURED_VALIDATOR_HANDLER = ("org.apache.kafka.common.security.oauthbearer.internals."
                               "unsecured.OAuthBearerUnsecuredValidatorCallbackHandler")
JWT_VALIDATOR_HANDLERS = (  # Kafka 3.4+, and 3.1-3.3's (deprecated) name
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler")


def oauthbearer_validator(listener: ListenerConfig):
    """The OAUTHBEARER token validator of a listener, by its
    ``oauthbearer.sasl.server.callback.handler.class`` (Kafka's JaasContext and
    ConfigurationUtils: the mechanism-prefixed setting first, then the plain one):

    * unset, or Kafka's unsecured handler: :class:`UnsecuredTokenValidator` with the
      ``unsecuredValidator...`` options of the listener's OAUTHBEARER login module;
    * ``OAuthBearerValidatorCallbackHandler`` (KIP-768): :class:`JwtValidator` against the key
      set at ``sasl.oauthbearer.jwks.endpoint.url``, fetched now (a failure stops the start,
      as in Kafka), with ``sasl.oauthbearer.expected.audience``, ``...expected.issuer``,
      ``...scope.claim.name``, ``...sub.claim.name``, ``...clock.skew.seconds`` and the
      ``...jwks.endpoint.refresh.ms`` / ``retry.backoff.ms`` / ``retry.backoff.max.ms``.
    """
    prefix = f"{listener_prefix(listener.name)}oauthbearer."

    def setting(name: str) -> str | None:
        value = listener.settings.get(f"oauthbearer.{name}", listener.settings.get(name))
        return value.strip() if isinstance(value, str) and value.strip() else None

    def number(name: str, default: int) -> int:
        try:
            value = int(setting(name) or default)
        except ValueError:
            raise ListenerConfigError(f"{prefix}{name}: expected an integer") from None
        if value < 0:
            raise ListenerConfigError(f"{prefix}{name}: must be non-negative")
        return value

    handler = setting("sasl.server.callback.handler.class") or UNSECURED_VALIDATOR_HANDLER
    if handler == UNSECURED_VALIDATOR_HANDLER:
        login = listener.sasl.jaas.get(OAUTHBEARER) if listener.sasl is not None else None
        try:
            return UnsecuredTokenValidator(login.options if login else None)
        except ValueError:
            raise ListenerConfigError(f"{prefix}sasl.jaas.config: "
                                      f"unsecuredValidatorAllowableClockSkewMs must be a "
                                      f"number") from None
    if handler not in JWT_VALIDATOR_HANDLERS:
        raise ListenerConfigError(
            f"{prefix}sasl.server.callback.handler.class: {handler} cannot run here; give "
            f"{JWT_VALIDATOR_HANDLERS[0]} (tokens checked against a JWKS endpoint) or leave "
            f"it unset (Kafka's unsecured tokens)")
    url = setting("sasl.oauthbearer.jwks.endpoint.url")
    if url is None:
        raise ListenerConfigError(f"{prefix}sasl.oauthbearer.jwks.endpoint.url: "
                                  f"{handler.rsplit('.', 1)[1]} needs the JWKS endpoint")
    keys = JwksKeys(url, refresh_ms=number("sasl.oauthbearer.jwks.endpoint.refresh.ms",
                                           3600000),
                    retry_backoff_ms=number("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
                                            100),
                    retry_backoff_max_ms=number(
                        "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", 10000))
    audience = tuple(a.strip() for a in (setting("sasl.oauthbearer.expected.audience")
                                         or "").split(",") if a.strip())
    validator = JwtValidator(
        keys, expected_audience=audience,
        expected_issuer=setting("sasl.oauthbearer.expected.issuer"),
        scope_claim=setting("sasl.oauthbearer.scope.claim.name") or "scope",
        sub_claim=setting("sasl.oauthbearer.sub.claim.name") or "sub",
        clock_skew_s=number("sasl.oauthbearer.clock.skew.seconds", 30))
    try:
        keys.start()
    except JwksError as exc:
        raise ListenerConfigError(f"{prefix}sasl.oauthbearer.jwks.endpoint.url: could not "
                                  f"fetch the JWKS: {exc}") from None
    return validator


def advertised_endpoints(config: BrokerConfig, bound_ports: Mapping[str, int]
                         ) -> tuple[EndPoint, ...]:
    """What the broker registers: ``advertised.listeners`` (else ``listeners``), a port 0
    replaced by the port bound for that listener, an empty host by 127.0.0.1."""
    listeners = {e.listener_name: e for e in _endpoints(config, "listeners")}
    advertised = _endpoints(config, "advertised.listeners") if config["advertised.listeners"] \
        else tuple(listeners.values())
    result = []
    for endpoint in advertised:
        if endpoint.listener_name not in listeners:
            raise ListenerConfigError(
                f"advertised.listeners listener names must be equal to or a subset of the ones "
                f"defined in listeners. Found {endpoint.listener_name}; listeners are "
                f"{','.join(listeners)}")
        port = endpoint.port or bound_ports.get(endpoint.listener_name, 0)
        result.append(EndPoint(endpoint.listener_name, endpoint.host or "127.0.0.1", port,
                               endpoint.security_protocol))
    return tuple(result)


def inter_broker_listener_name(config: BrokerConfig) -> str:
    """The listener other brokers use (Kafka's ``interBrokerListenerName``), checked against
    ``advertised.listeners``."""
    originals = config.originals
    if "inter.broker.listener.name" in originals and "security.inter.broker.protocol" in originals:
        raise ListenerConfigError("Only one of inter.broker.listener.name and "
                                  "security.inter.broker.protocol should be set.")
    name = config["inter.broker.listener.name"]
    name = name.strip().upper() if name else config["security.inter.broker.protocol"]
    advertised = [e.listener_name for e in (_endpoints(config, "advertised.listeners")
                                            if config["advertised.listeners"]
                                            else _endpoints(config, "listeners"))]
    if name not in advertised:
        raise ListenerConfigError(
            f"inter.broker.listener.name must be a listener name defined in "
            f"advertised.listeners. The valid options based on currently configured listeners "
            f"are {','.join(advertised)}")
    return name


# The broker as a client of other brokers: the login module of each mechanism, and the settings
# of its inter-broker listener it reuses (Kafka's ChannelBuilders.clientChannelBuilder).
_CLIENT_TLS_SETTINGS = ("ssl.keystore.", "ssl.key.password", "ssl.truststore.",
                        "ssl.enabled.protocols", "ssl.cipher.suites",
                        "ssl.endpoint.identification.algorithm")


def inter_broker_client_settings(config: BrokerConfig) -> dict[str, str]:
    """The client settings this broker connects to other brokers with (transaction markers):
    the inter-broker listener's security protocol, its TLS stores (the keystore as the client
    certificate), and for SASL ``sasl.mechanism.inter.broker.protocol`` with the
    ``username``/``password`` of that mechanism's login module on the listener (OAUTHBEARER:
    its ``unsecuredLogin...`` options), as Kafka's brokers use them."""
    name = inter_broker_listener_name(config)
    listener = next(item for item in listener_configs(config) if item.name == name)
    settings = {"security.protocol": listener.security_protocol}
    if listener.uses_tls:
        settings.update({key: value for key, value in listener.settings.items()
                         if key.startswith(_CLIENT_TLS_SETTINGS)})
    if listener.sasl is None:
        return settings
    mechanism = config["sasl.mechanism.inter.broker.protocol"]
    where = "sasl.mechanism.inter.broker.protocol"
    if mechanism not in listener.sasl.mechanisms:
        raise ListenerConfigError(
            f"{where}: {mechanism} is not among the mechanisms of the inter-broker listener "
            f"{name} ({', '.join(listener.sasl.mechanisms)})")
    entry = listener.sasl.jaas.get(mechanism)
    key = f"{listener_prefix(name)}{mechanism.lower()}.sasl.jaas.config"
    if mechanism == OAUTHBEARER:
        options = {k: v for k, v in (entry.options if entry else {}).items()
                   if k.startswith("unsecuredLogin")}
    else:
        options = {k: entry.options[k] for k in ("username", "password")
                   if entry is not None and k in entry.options}
    if not options or (mechanism != OAUTHBEARER and len(options) != 2):
        raise ListenerConfigError(
            f"{key}: the broker authenticates to other brokers with {mechanism}: give the "
            f"login module's username and password"
            if mechanism != OAUTHBEARER else
            f"{key}: the broker authenticates to other brokers with OAUTHBEARER: give "
            f"unsecuredLoginStringClaim_sub")
    settings.update({"sasl.mechanism": mechanism,
                     "sasl.jaas.config": jaas_config(mechanism, **options)})
    return settings
