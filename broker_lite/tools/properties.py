"""``key=value`` options and Java properties files, as Kafka's tools take settings.

Kafka's tools take settings three ways, later ones winning: a properties file
(``--producer.config``, ``--consumer.config``, ``--formatter-config``), repeatable
``key=value`` options (``--producer-property``, ``--property``, ...), and the tool's own options
(``--request-required-acks``, ``--isolation-level``, ...).
"""

import argparse
from collections.abc import Iterable

from broker_lite.config.properties import read_properties

from .common import ToolError


def key_value(text: str) -> tuple[str, str]:
    """An argparse ``type`` for ``key=value`` (a usage error otherwise).

    >>> key_value("print.key=true"), key_value("key.separator==")
    (('print.key', 'true'), ('key.separator', '='))
    """
    key, separator, value = text.partition("=")
    if not separator or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def load(path: str | None, option: str) -> dict[str, str]:
    """The properties of file ``path`` given with ``option`` (none when ``path`` is None)."""
    if path is None:
        return {}
    try:
        return read_properties(path)
    except OSError as exc:
        raise ToolError(f"cannot read {option} {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ToolError(f"cannot read {option} {path}: {exc}") from None


def merged(path: str | None, option: str, pairs: Iterable[tuple[str, str]] | None
           ) -> dict[str, str]:
    """The properties of the file, overridden by the ``key=value`` pairs."""
    return {**load(path, option), **dict(pairs or ())}


def client_args(bootstrap_server: str, settings: dict[str, str],
                timeout_ms: int) -> argparse.Namespace:
    """What :func:`.common.kafka_client` takes, for tools whose options differ from
    :func:`.common.add_bootstrap_server`'s: ``settings`` override ``request.timeout.ms``."""
    return argparse.Namespace(bootstrap_server=bootstrap_server, timeout_ms=timeout_ms,
                              command_property=[f"{k}={v}" for k, v in settings.items()])
