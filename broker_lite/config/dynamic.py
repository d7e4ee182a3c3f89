"""The rules of dynamic broker configs, as Kafka 3.9's ``DynamicBrokerConfig`` applies them in
ZooKeeper mode.

A broker's dynamic configs live in ``/config/brokers/[id]`` (per broker) and
``/config/brokers/<default>`` (cluster-wide defaults), as strings in Kafka's JSON; which configs
may be set there, and where, is :mod:`broker_lite.config.kafka_configs`. A change is refused
(:class:`DynamicConfigError`, answered INVALID_REQUEST with the message, as Kafka answers since
KAFKA-13609) when it names:

- a read-only config: "Cannot update these configs dynamically: Set(log.dirs)";
- an SSL keystore or truststore config without a listener prefix: "These security configs can
  be dynamically updated only per-listener using the listener prefix: Set(...)";
- a value its type refuses: "Invalid value ten for configuration log.segment.bytes: ...";
- a per-broker config (listeners, ssl.*, sasl.*) for the cluster-wide default: "Cannot update
  these configs at default cluster level, broker id must be specified: Set(...)";
- a thread count more than doubled or less than halved, or a local retention beyond the
  retention: "Invalid dynamic configuration".

Passwords are refused when written (:func:`persistent_configs`): Kafka stores them encrypted
with ``password.encoder.secret``, which broker_lite does not have. Names Kafka does not know are
custom configs, stored as given; ``listener.name.<listener>.<config>`` is checked as
``<config>``. What is read back from ZooKeeper is filtered by the same rules
(:func:`usable_configs`): a config another tool wrote that a broker cannot use is logged and left
out, never fatal.

>>> check_dynamic_change({"log.retention.ms": "60000"}, per_broker=False,
...                      config=BrokerConfig())
>>> try:
...     check_dynamic_change({"log.dirs": "/x"}, per_broker=True, config=BrokerConfig())
... except DynamicConfigError as exc:
...     print(exc)
Cannot update these configs dynamically: Set(log.dirs)
"""

import logging
import re
import warnings
from collections.abc import Iterable, Mapping

from .broker import BrokerConfig
from .definitions import ALL_BROKER_CONFIG
from .kafka_configs import (
    DYNAMIC_UPDATE_MODES,
    KAFKA_READ_ONLY_CONFIG_NAMES,
    LISTENER_ONLY_CONFIGS,
    PER_BROKER,
    THREAD_COUNT_CONFIGS,
)
from .parsers import ConfigError, InvalidValue

logger = logging.getLogger(__name__)

_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")
# Listener configs that stay cluster-wide with a listener prefix (ClusterLevelListenerConfigs).
_CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset({
    "max.connections", "max.connection.creation.rate", "num.network.threads"})


class DynamicConfigError(ConfigError):
    """A dynamic broker config change Kafka refuses (its ``ConfigException``); the message is
    Kafka's."""


def base_name(name: str) -> str:
    """``listener.name.<listener>.<config>`` -> ``<config>``; other names as they are."""
    match = _LISTENER_CONFIG.fullmatch(name)
    return match.group(1) if match else name


def is_dynamic(name: str) -> bool:
    return name in DYNAMIC_UPDATE_MODES


def is_read_only(name: str) -> bool:
    """A config Kafka (or broker_lite) knows that cannot change at run time."""
    return (name in ALL_BROKER_CONFIG or name in KAFKA_READ_ONLY_CONFIG_NAMES) \
        and not is_dynamic(name)


def is_password(name: str) -> bool:
    """Kafka's ``isPasswordConfig``: a dynamic config of type PASSWORD, prefixed or not."""
    definition = ALL_BROKER_CONFIG.get(base_name(name))
    return definition is not None and definition.type == "PASSWORD" and \
        is_dynamic(base_name(name))


def _is_per_broker(name: str) -> bool:
    match = _LISTENER_CONFIG.fullmatch(name)
    if match:
        return match.group(1) not in _CLUSTER_LEVEL_LISTENER_CONFIGS
    return DYNAMIC_UPDATE_MODES.get(name) == PER_BROKER


def _scala_set(names: Iterable[str]) -> str:
    return f"Set({', '.join(names)})"


def _refuse(names: list[str], message: str) -> None:
    if names:
        raise DynamicConfigError(f"{message}: {_scala_set(names)}")


def _type_errors(props: Mapping[str, str]) -> list[str]:
    errors = []
    for name, value in props.items():
        definition = ALL_BROKER_CONFIG.get(base_name(name))
        if definition is None:
            continue  # a custom config: any text
        try:
            definition.value_of(value)
        except InvalidValue as exc:
            errors.append(f"Invalid value {value} for configuration {name}: {exc.reason}")
    return errors


def _static_errors(props: Mapping[str, str], per_broker: bool) -> list[str]:
    """Kafka's ``validateConfigs``: the checks that need no current config, in its order."""
    names = list(props)
    checks = [
        ([n for n in names if is_read_only(n)], "Cannot update these configs dynamically"),
        ([n for n in names if n in LISTENER_ONLY_CONFIGS],
         "These security configs can be dynamically updated only per-listener using the "
         "listener prefix"),
    ]
    errors = [f"{message}: {_scala_set(found)}" for found, message in checks if found]
    errors += _type_errors(props)
    if not per_broker:
        at_default = [n for n in names if _is_per_broker(n)]
        if at_default:
            errors.append("Cannot update these configs at default cluster level, broker id "
                          f"must be specified: {_scala_set(at_default)}")
    return errors


def check_dynamic_change(props: Mapping[str, str], *, per_broker: bool,
                         config: BrokerConfig) -> None:
    """Kafka's ``DynamicBrokerConfig.validate``: raise :class:`DynamicConfigError` unless
    ``props`` may become the dynamic configs of this broker (``per_broker``) or of the cluster,
    given the broker's ``config`` now."""
    errors = _static_errors(props, per_broker)
    if errors:
        raise DynamicConfigError(errors[0])
    if per_broker:
        merged = config.with_dynamic(config.dynamic_default, props)
    else:
        merged = config.with_dynamic(props, config.dynamic_broker)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # custom configs are no news here
        trial = BrokerConfig(merged)
    problem = _reconfiguration_problem(config, trial)
    if problem is not None:
        logger.info("invalid dynamic broker configuration %s: %s", dict(props), problem)
        raise DynamicConfigError("Invalid dynamic configuration")


def _reconfiguration_problem(current: BrokerConfig, new: BrokerConfig) -> str | None:
    """What Kafka's reconfigurables refuse in a new configuration (their
    ``validateReconfiguration``), or None."""
    for name in THREAD_COUNT_CONFIGS:
        old, value = current[name], new[name]
        if value == old:
            continue
        where = f"Dynamic thread count update validation failed for {name}={value}"
        if value <= 0:
            return f"{where}, value should be at least 1"
        if value < old // 2:
            return f"{where}, value should be at least half the current value {old}"
        if value > old * 2:
            return f"{where}, value should not be greater than double the current value {old}"
    for local, total in (("log.local.retention.ms", new.broker_default("log.retention.ms")),
                         ("log.local.retention.bytes", new["log.retention.bytes"])):
        value = new[local]
        limited = total != -1 if local.endswith(".ms") else total > -1
        if limited and value != -2:
            if value == -1:
                return f"{local}: value must not be -1 as the retention is {total}"
            if value > total:
                return f"{local}: value must not be more than the retention {total}"
    return None


def persistent_configs(props: Mapping[str, str], *, per_broker: bool) -> dict[str, str]:
    """The configs as written to ZooKeeper (Kafka's ``toPersistentProps``): passwords are
    encrypted there with ``password.encoder.secret``, which broker_lite does not have, so they
    are refused."""
    passwords = [n for n, v in props.items() if is_password(n) and v is not None]
    if passwords:
        raise DynamicConfigError("Password config can be defined only at broker level"
                                 if not per_broker else "Password encoder secret not configured")
    return dict(props)


def usable_configs(props: Mapping[str, str], *, per_broker: bool) -> dict[str, str]:
    """The dynamic configs read from ZooKeeper that a broker can use (Kafka's
    ``fromPersistentProps``): the others are logged and left out."""
    where = "broker" if per_broker else "default cluster"
    usable = {}
    for name, value in props.items():
        errors = _static_errors({name: value}, per_broker)
        if is_password(name):
            errors.append(f"dynamic password config {name} could not be decoded")
        if errors:
            logger.error("dynamic %s config %s is ignored: %s", where, name, errors[0])
            continue
        usable[name] = value
    return usable
