"""What every ``broker-lite`` tool shares: the connection options, the error contract, progress.

Exit status: :data:`EXIT_OK` (0) on success, :data:`EXIT_FAILURE` (1) when the work failed (raise
:class:`ToolError`), :data:`EXIT_USAGE` (2) for a usage error (argparse's own status).
"""

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

# Tools answer within this unless told otherwise: a script must not wait the client's default
# 30 s to learn that the broker is down.
DEFAULT_TIMEOUT_MS = 10_000


class ToolError(Exception):
    """The tool cannot do what was asked; the message says why, for a person reading stderr."""


def add_bootstrap_server(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--bootstrap-server host:port[,host:port]``, ``--command-config FILE`` (a properties
    file of client settings, Kafka's names: ``security.protocol``, ``sasl.jaas.config``, ...),
    ``--command-property k=v`` (client settings, repeatable, over the file's) and
    ``--timeout-ms``."""
    parser.add_argument("--bootstrap-server", required=required, metavar="HOST:PORT",
                        help="the broker(s) to connect to")
    parser.add_argument("--command-config", metavar="FILE",
                        help="client settings (a properties file, Kafka's names), e.g. TLS "
                             "and SASL for a secured cluster")
    parser.add_argument("--command-property", action="append", default=[], metavar="KEY=VALUE",
                        help="a client setting, with Kafka's name (repeatable)")
    parser.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS,
                        help=f"how long to wait for the cluster (default {DEFAULT_TIMEOUT_MS})")


def key_values(pairs: list[str], option: str) -> dict[str, str]:
    """``["k=v", ...]`` as a dict; a pair without ``=`` is a :class:`ToolError` naming
    ``option``."""
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ToolError(f"{option} needs key=value, got {pair!r}")
        result[key.strip()] = value
    return result


def command_config(args: argparse.Namespace) -> dict[str, str]:
    """The settings of ``--command-config`` (none without it); a file that cannot be read is a
    :class:`ToolError`."""
    path = getattr(args, "command_config", None)
    if not path:
        return {}
    from broker_lite.config.properties import read_properties

    try:
        return read_properties(path)
    except OSError as exc:
        raise ToolError(f"--command-config: cannot read {path}: {exc.strerror or exc}") \
            from None


@contextmanager
def kafka_client(args: argparse.Namespace) -> Iterator:
    """A :class:`broker_lite.client.KafkaClient` for ``--bootstrap-server``; closed on exit."""
    from broker_lite.client import KafkaClient
    from broker_lite.client.errors import KafkaClientError

    settings = {"bootstrap.servers": args.bootstrap_server, "client.id": "broker-lite-tools",
                "request.timeout.ms": args.timeout_ms, **command_config(args),
                **key_values(args.command_property, "--command-property")}
    settings["bootstrap.servers"] = args.bootstrap_server
    try:
        client = KafkaClient(settings)
    except KafkaClientError as exc:
        raise ToolError(str(exc)) from exc
    try:
        yield client
    finally:
        client.close()


def progress(total: int | None, description: str, unit: str = "records") -> tqdm:
    """A progress bar on stderr, shown only when stderr is a terminal (scripts get clean
    output); ``update(n)`` it and close it (or use it with ``with``)."""
    return tqdm(total=total, desc=description, unit=unit, unit_scale=True, file=sys.stderr,
                disable=not sys.stderr.isatty(), leave=False)


def report_error(tool: str, message: str) -> None:
    print(f"broker-lite {tool}: error: {message}", file=sys.stderr, flush=True)
