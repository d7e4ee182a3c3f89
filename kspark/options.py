"""What the options of the kpy source and sink share: their error, the ``kafka.*`` settings
for the client, options of simple types, and the report of Kafka client settings kpy accepts but
has no use for. The source's options are :mod:`kspark.source.options`, the sink's
:mod:`kspark.sink.options`.
"""

import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from broker_lite.client import ClientConfig, ConfigError
from broker_lite.client.config import ALIASES, is_security_setting

logger = logging.getLogger(__name__)


class OptionError(ValueError):
    """An option of the kpy source or sink is missing, unknown or has a bad value."""

    def __init__(self, option: str, message: str):
        super().__init__(f"option '{option}': {message}")
        self.option = option


def unused_kafka_settings(client: Mapping[str, str], used: Collection[str]) -> list[str]:
    """The ``kafka.*`` settings of ``client`` (names without the prefix) that kpy accepts, as
    Kafka's Java clients know them, but has no use for: those whose setting (librdkafka aliases
    resolved) is not in ``used``.

    >>> unused_kafka_settings({"bootstrap.servers": "b:1", "max.poll.records": "500"},
    ...                       {"bootstrap.servers"})
    ['kafka.max.poll.records']
    """
    return sorted(f"kafka.{name}" for name in client
                  if ALIASES.get(name, name) not in used and not is_security_setting(name))


def log_unused_kafka_settings(client: Mapping[str, str], used: Collection[str],
                              where: str) -> None:
    """Say once (per query: call it where a query is planned) which ``kafka.*`` settings have no
    effect on ``where``, so that a job moved from ``format("kafka")`` learns what its settings
    do here rather than failing on them."""
    unused = unused_kafka_settings(client, used)
    if unused:
        logger.warning("%s: %s %s accepted as settings of Kafka's Java clients but %s no effect "
                       "in kpy", where, ", ".join(unused), "is" if len(unused) == 1 else "are",
                       "has" if len(unused) == 1 else "have")


def typed_options(text: Callable[[str], str | None],
                  parsers: Mapping[str, Callable[[str], Any]]) -> dict[str, Any]:
    """The options among ``parsers`` (name -> parser) that ``text`` (name -> value or None)
    has, parsed; a value a parser refuses is an :class:`OptionError` naming the option."""
    values = {}
    for name, parse in parsers.items():
        value = text(name)
        if value is not None:
            try:
                values[name] = parse(value)
            except ValueError as exc:
                raise OptionError(name, str(exc)) from None
    return values


def kafka_options(given: Mapping[str, tuple[str, str]],
                  refused: Mapping[str, str]) -> ClientConfig:
    """The client settings of the ``kafka.*`` options (lower-cased name -> (name, value)), their
    prefix removed (:attr:`ClientConfig.given` has them as given); the settings the connector
    manages itself (``refused``: name -> why) are refused."""
    client = {key[len("kafka."):]: value for key, (_, value) in given.items()
              if key.startswith("kafka.")}
    for key, reason in refused.items():
        if key in client:
            raise OptionError(f"kafka.{key}", f"not supported: {reason}")
    if not client.get("bootstrap.servers", "").strip():
        raise OptionError("kafka.bootstrap.servers", "required: the brokers to connect to, "
                                                     "as host:port[,host:port...]")
    try:  # unknown or malformed client settings fail now, not in the first task
        return ClientConfig(client, key_prefix="kafka.")
    except ConfigError as exc:
        raise OptionError(exc.key, str(exc).split(": ", 1)[-1]) from None
