"""``broker-lite metrics``: a broker's request, network and purgatory metrics, as tables.

    broker-lite metrics --metrics-listener http://127.0.0.1:9404 [--json]

Reads the JSON document a broker serves on its ``metrics.listener`` (see
:mod:`broker_lite.server.metrics`; Kafka shows the same figures through JMX) and prints::

    broker 0: 12 connections (3 processors: 4 4 4), 31 threads, 84.2 MB resident, 57 open files
    request queue 0, response queues 0 0 0; connections created 40, closed 28

    API                 REQUESTS  TOTAL-P50  TOTAL-P99  QUEUE-P99  LOCAL-P99  REMOTE-P99  ...
    Produce                 7101      0.403      1.847      0.578      0.392       0.002  ...

    PURGATORY  DELAYED  KEYS
    Fetch            2     2

Latencies are milliseconds over each API's latest requests: TOTAL from the request read to its
response written, then its stages (QUEUE: waiting for a handler; LOCAL: in the handler;
REMOTE: in the purgatory; RESPONSE-QUEUE: waiting for the network thread; SEND: writing).
``--json`` prints the document as served. Exit status 1 when the listener cannot be reached.
"""

import argparse
import json
import urllib.error
import urllib.request

from .common import ToolError

NAME = "metrics"
HELP = "print a broker's request, network and purgatory metrics (its metrics.listener)"

TIMEOUT_S = 10
_STAGES = (("QUEUE-P99", "RequestQueueTimeMs"), ("LOCAL-P99", "LocalTimeMs"),
           ("REMOTE-P99", "RemoteTimeMs"), ("RESPONSE-QUEUE-P99", "ResponseQueueTimeMs"),
           ("SEND-P99", "ResponseSendTimeMs"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics-listener", required=True, metavar="http://HOST:PORT",
                        help="the broker's metrics.listener")
    parser.add_argument("--json", action="store_true", help="print the JSON document as is")


def fetch(url: str) -> dict:
    """The metrics document at ``url`` (``http://host:port``; ``/metrics`` is added)."""
    address = url.rstrip("/")
    if not address.endswith("/metrics"):
        address += "/metrics"
    try:
        with urllib.request.urlopen(address, timeout=TIMEOUT_S) as response:
            return json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ToolError(f"cannot read the metrics at {address}: {exc}") from exc


def _table(header: list[str], rows: list[list]) -> list[str]:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(str(cell).ljust(width) if i == 0 else str(cell).rjust(width)
                      for i, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in [header, *rows]]


def render(document: dict) -> str:
    """The document as the tables of the module docstring."""
    network, process = document["network"], document["process"]
    per_processor = list(network["connections_per_processor"].values())
    memory = (f"{process['rss_bytes'] / 1e6:.1f} MB resident"
              if process.get("rss_bytes") is not None else "resident memory unknown")
    files = (f", {process['open_files']} open files"
             if process.get("open_files") is not None else "")
    lines = [
        f"broker {document['broker_id']}: {network['connections']} connections "
        f"({len(per_processor)} processors: {' '.join(map(str, per_processor))}), "
        f"{process['threads']} threads, {memory}{files}",
        f"request queue {network['request_queue_size']}, response queues "
        f"{' '.join(map(str, network['response_queue_sizes'].values()))}; connections "
        f"created {network['connections_created']}, closed {network['connections_closed']}",
        "",
    ]
    requests = document["requests"]
    lines += _table(
        ["API", "REQUESTS", "TOTAL-P50", "TOTAL-P99", "TOTAL-P999", *(s for s, _ in _STAGES)],
        [[api, figures["requests"], figures["TotalTimeMs"]["p50"],
          figures["TotalTimeMs"]["p99"], figures["TotalTimeMs"]["p999"],
          *(figures[stage]["p99"] for _, stage in _STAGES)]
         for api, figures in sorted(requests.items())]) if requests else ["no requests yet"]
    lines.append("")
    lines += _table(["PURGATORY", "DELAYED", "KEYS"],
                    [[name, figures["delayed"], figures["watched_keys"]]
                     for name, figures in document["purgatory"].items()])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    document = fetch(args.metrics_listener)
    print(json.dumps(document, indent=1) if args.json else render(document))
    return 0
