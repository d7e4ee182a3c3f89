"""``broker-lite``: the command line, shaped like Kafka's bin/ scripts.

    broker-lite start [PATH/server.properties] [--override key=value ...]
    broker-lite schema-registry [PATH/schema-registry.properties] [--override key=value ...]
    broker-lite <tool> ...        (topics, console-producer, ...: see broker_lite.tools)

``python -m broker_lite`` is the same command.

``start`` runs a broker in the foreground until SIGINT or SIGTERM, logs to stderr, and shuts down
cleanly (the next start then skips log recovery). Without a file it runs with the settings that
ship in the package (:mod:`broker_lite.config.defaults`, the same as ``conf/server.properties``);
``--override`` sets single ones. When neither ``log.dirs`` nor ``log.dir`` is set, the data
lives in :func:`broker_lite.config.defaults.data_dir`. Once the broker serves requests
(registered in ZooKeeper, a controller elected), stdout gets two lines::

    broker-lite: broker 0 listening on 127.0.0.1:9092
    broker-lite: data in /home/me/.local/state/broker-lite

The first line is what scripts wait for; it ends with the address. With several listeners,
each has its line, in the order of ``listeners``, the listener's name after the address when it
is not ``PLAINTEXT`` (``listening on 127.0.0.1:9093 (SASL_SSL)``); with
``schema.registry.listeners``, the registry the broker runs has one too
(``broker-lite: schema registry listening on http://127.0.0.1:8081``). Exit status: 0 after a
clean shutdown, 1 when the broker could not start, 2 for a usage error (a missing or malformed
properties file, a bad ``--override``).

``schema-registry`` runs a schema registry (:mod:`broker_lite.registry`) against any Kafka
cluster, with Confluent's setting names (the shipped ``schema-registry.properties`` without a
file, ``conf/schema-registry.properties`` its template), until SIGINT or SIGTERM. Once it has
read ``_schemas`` to its end and serves, stdout gets one line per listener::

    broker-lite: schema registry listening on http://127.0.0.1:8081

with the same exit statuses as ``start``.
"""

import argparse
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from broker_lite import tools
from broker_lite.common.foreground import termination_requested
from broker_lite.config import defaults
from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.config.properties import read_properties
from broker_lite.tools.common import ToolError, report_error
from broker_lite.tools.properties import key_value


class UsageError(Exception):
    """A properties file that is missing or cannot be read."""


def read_command_properties(path: str | None, command: str,
                            shipped: Callable[[], dict[str, str]]) -> dict[str, str]:
    """The properties of ``broker-lite <command> [path]``: the file's, or the ``shipped``
    defaults without one."""
    if path is None:
        return shipped()
    if not Path(path).is_file():
        raise UsageError(f"no such properties file: {path} (without a file, broker-lite "
                         f"{command} runs with its built-in defaults)")
    try:
        return read_properties(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read properties file {path}: {exc}") from None


def start_properties(path: str | None, overrides: dict[str, str]) -> dict[str, str]:
    """The broker properties of ``broker-lite start [path] --override ...``: the file's (the
    shipped defaults without one), then the overrides, and the default data directory as
    ``log.dirs`` when neither ``log.dirs`` nor ``log.dir`` is set."""
    properties = {**read_command_properties(path, "start", defaults.server_properties),
                  **overrides}
    if "log.dirs" not in properties and "log.dir" not in properties:
        properties["log.dirs"] = str(defaults.data_dir())
    return properties


def run_in_foreground(what: str, configure: Callable[[], Any], launch: Callable[[Any], Any],
                      announce: Callable[[Any, Any, threading.Event], None]) -> int:
    """Run a server until SIGINT or SIGTERM: ``configure()`` its config (a usage error: 2),
    ``launch(config)`` it (a failure: 1), ``announce(config, server, stop)`` it on stdout (and
    wire what stops it on its own to ``stop``), stop it cleanly (0)."""
    try:
        config = configure()
    except (ConfigError, UsageError) as exc:
        print(f"broker-lite: {exc}", file=sys.stderr)
        return 2
    stop = termination_requested()
    try:
        server = launch(config)
    except Exception as exc:
        logging.getLogger("broker_lite").error("the %s could not start: %s", what, exc)
        return 1
    announce(config, server, stop)
    stop.wait()
    logging.getLogger("broker_lite").info("shutting down")
    server.stop()
    return 0


def start(args: argparse.Namespace) -> int:
    from broker_lite.server.broker import Broker

    def announce(config: BrokerConfig, broker: Broker, stop: threading.Event) -> None:
        broker.on_fatal = stop.set  # every log dir offline: the same clean stop as on SIGTERM
        for listener in broker.listeners:  # the first line is the first listener's
            name = "" if listener.name == "PLAINTEXT" else f" ({listener.name})"
            print(f"broker-lite: broker {broker.broker_id} listening on "
                  f"{listener.endpoint.host}:{broker.bound_port(listener.name)}{name}",
                  flush=True)
        print(f"broker-lite: data in {','.join(config.log_dirs)}", flush=True)
        if broker.schema_registry is not None:
            _print_registry_urls(broker.schema_registry.urls)

    return run_in_foreground(
        "broker", lambda: BrokerConfig(start_properties(args.properties, dict(args.override))),
        lambda config: Broker(config).start(), announce)


def _print_registry_urls(urls: list[str]) -> None:
    for url in urls:
        print(f"broker-lite: schema registry listening on {url}", flush=True)


def schema_registry(args: argparse.Namespace) -> int:
    from broker_lite.registry.config import RegistryConfig
    from broker_lite.registry.server import SchemaRegistry

    def configure() -> RegistryConfig:
        properties = read_command_properties(args.properties, "schema-registry",
                                             defaults.registry_properties)
        return RegistryConfig({**properties, **dict(args.override)})

    return run_in_foreground("schema registry", configure,
                             lambda config: SchemaRegistry(config).start(),
                             lambda config, registry, _stop: _print_registry_urls(registry.urls))


def _add_server_command(commands: Any, name: str, run: Callable[[argparse.Namespace], int],
                        help: str, description: str, file_help: str,
                        setting_help: str) -> None:
    parser = commands.add_parser(name, help=help, description=description)
    parser.add_argument("properties", nargs="?", default=None, help=file_help)
    parser.add_argument("--override", action="append", default=[], type=key_value,
                        metavar="KEY=VALUE", help=setting_help)
    parser.add_argument("--log-level", default="INFO", help="stderr log level")
    parser.set_defaults(run=run)


def _add_tool_commands(commands: Any, command: str | None) -> None:
    """A sub-command per tool. Only the tool that ``command`` names is imported to take its
    arguments (see :mod:`broker_lite.tools`); the others are names alone, unless no tool is
    named (``--help``, a mistyped command), when every one is listed with its help line."""
    for name in tools.NAMES:
        if command in tools.NAMES and name != command:
            commands.add_parser(name)
            continue
        tool = tools.load(name)
        tool_parser = commands.add_parser(tool.NAME, help=tool.HELP, description=tool.HELP)
        tool.add_arguments(tool_parser)
        tool_parser.set_defaults(run=tool.run, log_level="WARNING")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="broker-lite", description="A lightweight Kafka broker.")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_server_command(
        commands, "start", start, "run a broker in the foreground",
        "Run a broker in the foreground until Ctrl-C or SIGTERM. Without a "
        "properties file it runs with the built-in defaults (those of "
        "conf/server.properties: a loopback listener on 127.0.0.1:9092, an embedded "
        "ZooKeeper); without log.dirs its data lives in "
        "$XDG_STATE_HOME/broker-lite (~/.local/state/broker-lite).",
        "a server.properties file (default: the built-in defaults)",
        "a broker property, with Kafka's name (repeatable)")
    _add_server_command(
        commands, "schema-registry", schema_registry,
        "run a schema registry (Confluent's REST API) in the foreground",
        "Run a schema registry in the foreground until Ctrl-C or SIGTERM, keeping its schemas "
        "in the _schemas topic of kafkastore.bootstrap.servers. Without a properties file it "
        "runs with the built-in defaults (those of conf/schema-registry.properties: "
        "http://127.0.0.1:8081, the cluster on 127.0.0.1:9092).",
        "a schema-registry.properties file (default: the built-in defaults)",
        "a registry setting, with Confluent's name (repeatable)")
    argv = sys.argv[1:] if argv is None else argv
    _add_tool_commands(commands, argv[0] if argv else None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="[%(asctime)s] %(levelname)s %(name)s: %(message)s")
    try:
        return args.run(args)
    except ToolError as exc:
        report_error(args.command, str(exc))
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
