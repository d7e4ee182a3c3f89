"""``kpy``: kspark's command line.

    kpy demo [--records N] [--partitions N] [--rate N] [--seed N] [--data-dir DIR] [--quiet]

``demo`` runs the whole stack on this machine (ZooKeeper, broker_lite, Spark), streams sample
page views through a windowed aggregation from one topic to another, exactly once, and checks
the result (see :mod:`kspark.demo`). Exit status: 0 when the result was verified, 1 when the
verification failed or the demo could not run, 130 when interrupted (Ctrl-C, SIGTERM), 2 for a
usage error.
"""

from __future__ import annotations

import argparse
import signal
import sys
import warnings
from pathlib import Path


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {value}")
        return value

    return parse


def _rate(text: str) -> float:
    try:
        value = float(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected records per second, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a rate >= 0, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    from kspark.demo.run import Settings

    defaults = Settings()
    top = argparse.ArgumentParser(prog="kpy", description="kspark: Kafka-protocol topics from "
                                                          "Spark, in Python.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="stream sample page views through Spark, Kafka to Kafka, exactly once",
        description="Start ZooKeeper and broker_lite, produce sample page views to the topic "
                    "page-views in the background, count views per page per one-minute "
                    "event-time window with a Spark Structured Streaming query "
                    "(format(\"kpy\") in and out, exactly once) into page-view-counts, then "
                    "check the output against counts computed without Spark. Exit status: 0 "
                    "verified, 1 verification failed or error, 130 interrupted.")
    demo.add_argument("--records", type=_count(1), default=defaults.records, metavar="N",
                      help="page views to produce (default: %(default)s)")
    demo.add_argument("--partitions", type=_count(1), default=defaults.partitions, metavar="N",
                      help="partitions of the input and output topics (default: %(default)s)")
    demo.add_argument("--rate", type=_rate, default=defaults.rate, metavar="N",
                      help="page views produced per second, 0 for as fast as possible "
                           "(default: %(default).0f)")
    demo.add_argument("--seed", type=_count(0), default=defaults.seed, metavar="N",
                      help="seed of the sample data: the same seed and --records give the "
                           "same page views (default: %(default)s)")
    demo.add_argument("--data-dir", type=Path, metavar="DIR",
                      help="an empty or new directory for the logs, ZooKeeper's data and the "
                           "query's checkpoint, kept afterwards (default: a temporary "
                           "directory, removed at the end)")
    demo.add_argument("--format", choices=("json", "avro"), default=defaults.format,
                      help="the values' format: JSON text, or Avro records in Confluent's "
                           "framing with a schema registry beside the broker "
                           "(default: %(default)s)")
    demo.add_argument("--quiet", action="store_true",
                      help="no live progress line: a plain line per micro-batch instead "
                           "(for CI logs)")
    demo.set_defaults(handler=_demo)
    return top


def _demo(args: argparse.Namespace) -> int:
    from kspark.demo.run import Settings, run_demo

    # pyspark warns about the installed pandas on import; nothing the demo uses is affected
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    return run_demo(Settings(records=args.records, partitions=args.partitions,
                        data_dir=args.data_dir, seed=args.seed, rate=args.rate,
                        quiet=args.quiet, format=args.format))


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt  # SIGTERM shuts down the way Ctrl-C does


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
