"""``broker-lite``: the command line, shaped like Kafka's bin/ scripts.

    broker-lite start [PATH/server.properties] [--override key=value ...]
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
is not ``PLAINTEXT`` (``listening on 127.0.0.1:9093 (SASL_SSL)``). Exit status: 0 after a clean
shutdown, 1 when the broker could not start, 2 for a usage error (a missing or malformed
properties file, a bad ``--override``).
"""

import argparse
import logging
import sys
from pathlib import Path

from broker_lite.common.foreground import termination_requested
from broker_lite.config import defaults
from broker_lite.config.broker import BrokerConfig
from broker_lite.config.parsers import ConfigError
from broker_lite.config.properties import read_properties
from broker_lite.tools import TOOLS
from broker_lite.tools.common import ToolError, report_error
from broker_lite.tools.properties import key_value


class UsageError(Exception):
    """A properties file that is missing or cannot be read."""


def start_properties(path: str | None, overrides: dict[str, str]) -> dict[str, str]:
    """The broker properties of ``broker-lite start [path] --override ...``: the file's (the
    shipped defaults without one), then the overrides, and the default data directory as
    ``log.dirs`` when neither ``log.dirs`` nor ``log.dir`` is set."""
    if path is None:
        properties = defaults.server_properties()
    else:
        if not Path(path).is_file():
            raise UsageError(f"no such properties file: {path} (without a file, broker-lite "
                             "start runs with its built-in defaults)")
        try:
            properties = read_properties(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read properties file {path}: {exc}") from None
    properties = {**properties, **overrides}
    if "log.dirs" not in properties and "log.dir" not in properties:
        properties["log.dirs"] = str(defaults.data_dir())
    return properties


def start(args: argparse.Namespace) -> int:
    from broker_lite.server.broker import Broker

    try:
        config = BrokerConfig(start_properties(args.properties, dict(args.override)))
    except (ConfigError, UsageError) as exc:
        print(f"broker-lite: {exc}", file=sys.stderr)
        return 2
    stop = termination_requested()
    try:
        broker = Broker(config).start()
    except Exception as exc:
        logging.getLogger("broker_lite").error("the broker could not start: %s", exc)
        return 1
    broker.on_fatal = stop.set  # every log dir offline: the same clean stop as on SIGTERM
    for listener in broker.listeners:  # the first line is the first listener's
        name = "" if listener.name == "PLAINTEXT" else f" ({listener.name})"
        print(f"broker-lite: broker {broker.broker_id} listening on "
              f"{listener.endpoint.host}:{broker.bound_port(listener.name)}{name}", flush=True)
    print(f"broker-lite: data in {','.join(config.log_dirs)}", flush=True)
    stop.wait()
    logging.getLogger("broker_lite").info("shutting down")
    broker.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="broker-lite", description="A lightweight Kafka broker.")
    commands = parser.add_subparsers(dest="command", required=True)
    start_parser = commands.add_parser(
        "start", help="run a broker in the foreground",
        description="Run a broker in the foreground until Ctrl-C or SIGTERM. Without a "
                    "properties file it runs with the built-in defaults (those of "
                    "conf/server.properties: a loopback listener on 127.0.0.1:9092, an embedded "
                    "ZooKeeper); without log.dirs its data lives in "
                    "$XDG_STATE_HOME/broker-lite (~/.local/state/broker-lite).")
    start_parser.add_argument("properties", nargs="?", default=None,
                              help="a server.properties file (default: the built-in defaults)")
    start_parser.add_argument("--override", action="append", default=[], type=key_value,
                              metavar="KEY=VALUE",
                              help="a broker property, with Kafka's name (repeatable)")
    start_parser.add_argument("--log-level", default="INFO", help="stderr log level")
    start_parser.set_defaults(run=start)
    for tool in TOOLS:
        tool_parser = commands.add_parser(tool.NAME, help=tool.HELP, description=tool.HELP)
        tool.add_arguments(tool_parser)
        tool_parser.set_defaults(run=tool.run, log_level="WARNING")
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
