"""``broker-lite``: the command line, shaped like Kafka's bin/ scripts.

    broker-lite start [PATH/server.properties] [--override key=value ...]
    broker-lite <tool> ...        (topics, console-producer, ...: see broker_lite.tools)

``start`` runs a broker in the foreground (conf/server.properties by default) until SIGINT or
SIGTERM, logs to stderr, prints one line saying where it listens once it accepts connections,
and shuts down cleanly (the next start then skips log recovery). Exit status: 0 after a clean
shutdown, 1 when the broker could not start, 2 for a usage error.
"""

import argparse
import logging
import sys
from pathlib import Path

from broker_lite.config import BrokerConfig, ConfigError
from broker_lite.foreground import termination_requested
from broker_lite.tools import TOOLS
from broker_lite.tools.common import ToolError, report_error

DEFAULT_PROPERTIES = Path("conf/server.properties")


def _overrides(pairs: list[str]) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"--override needs key=value, got {pair!r}")
        result[key.strip()] = value
    return result


def start(args: argparse.Namespace) -> int:
    from broker_lite.server.broker import Broker

    path = Path(args.properties)
    try:
        overrides = _overrides(args.override)
        config = BrokerConfig.from_file(path, overrides) if path.exists() else None
    except (ConfigError, argparse.ArgumentTypeError) as exc:
        print(f"broker-lite: {exc}", file=sys.stderr)
        return 2
    if config is None:
        print(f"broker-lite: no such properties file: {path}", file=sys.stderr)
        return 2
    stop = termination_requested()
    try:
        broker = Broker(config).start()
    except Exception as exc:
        logging.getLogger("broker_lite").error("the broker could not start: %s", exc)
        return 1
    print(f"broker-lite: broker {broker.broker_id} listening on "
          f"{broker.server.host}:{broker.port}", flush=True)
    stop.wait()
    logging.getLogger("broker_lite").info("shutting down")
    broker.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="broker-lite", description="A lightweight Kafka broker.")
    commands = parser.add_subparsers(dest="command", required=True)
    start_parser = commands.add_parser("start", help="run a broker in the foreground")
    start_parser.add_argument("properties", nargs="?", default=str(DEFAULT_PROPERTIES),
                              help="server.properties (default: conf/server.properties)")
    start_parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
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
