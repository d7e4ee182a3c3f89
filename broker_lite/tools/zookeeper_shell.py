"""``broker-lite zookeeper-shell``: read Kafka's ZooKeeper tree, as ``zookeeper-shell.sh``.

    broker-lite zookeeper-shell 127.0.0.1:2181 ls /brokers/ids
    broker-lite zookeeper-shell 127.0.0.1:2181/kafka get /brokers/topics/events
    broker-lite zookeeper-shell 127.0.0.1:2181 stat /controller
    broker-lite zookeeper-shell 127.0.0.1:2181 tree /brokers

The server is ``host:port[,host:port...][/chroot]`` (the broker's ``zookeeper.connect``); paths
are inside the chroot. The tool only reads, and connects with kazoo for one command.

Output (stdout), stable for scripts:

``ls PATH``
    The children's names, sorted, as ZooKeeper's shell prints them: ``[1, 2, 3]``.
``get PATH``
    The znode's data as text (bytes that are not UTF-8 as ``\\xNN``); ``null`` for null data,
    an empty line for empty data.
``stat PATH``
    ZooKeeper's stat lines, ``cZxid = 0x1a`` ... ``numChildren = 2``.
``tree [PATH]``
    PATH (default ``/``) and every znode under it, one a line, each child indented two spaces
    deeper than its parent, in name order (numbers numerically, first). A line is the znode's
    name, `` (ephemeral)`` for an ephemeral znode, then `` = `` and its data when it has any:
    text (JSON included) on one line, cut to 100 characters with ``...``; other bytes as
    ``<N bytes>``. For Kafka's layout (data cut shorter here)::

        /
          brokers
            ids
              1 (ephemeral) = {"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},...
            topics
              events = {"version":3,"topic_id":"9CqjPLxIQsuSPDy1Dzks6w","partitions":...
                partitions
                  0
                    state = {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,...

Errors (stderr, exit status 1): a path that does not exist (``Node does not exist: /path``,
plus `` (in chroot /chroot)`` when there is one), a ZooKeeper that cannot be reached within
``--timeout-ms``. A malformed server or path, or an unknown command, is a usage error (exit
status 2).
"""

import argparse
import logging
import time
import warnings
from collections.abc import Iterator

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import ZnodeStat

from broker_lite.zk.client import parse_connect_string
from broker_lite.zk.errors import ZooKeeperConfigError

from .common import ToolError

NAME = "zookeeper-shell"
HELP = "read the ZooKeeper tree: ls, get, stat, tree (zookeeper-shell)"

DEFAULT_TIMEOUT_MS = 5000
SUMMARY_WIDTH = 100
INDENT = "  "


def connect_string(text: str) -> str:
    """argparse type: a valid ``host:port[/chroot]``, normalised."""
    try:
        return str(parse_connect_string(text))
    except ZooKeeperConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def znode_path(text: str) -> str:
    """argparse type: an absolute znode path (ZooKeeper's rules)."""
    if not text.startswith("/"):
        raise argparse.ArgumentTypeError(f"Path must start with / character: {text!r}")
    if text != "/" and (text.endswith("/") or "//" in text
                        or any(part in (".", "..") for part in text.split("/"))):
        raise argparse.ArgumentTypeError(f"Invalid path string {text!r}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("server", type=connect_string, metavar="HOST:PORT[/CHROOT]",
                        help="the ZooKeeper ensemble, as in zookeeper.connect")
    parser.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS,
                        help=f"how long to wait for ZooKeeper (default {DEFAULT_TIMEOUT_MS})")
    commands = parser.add_subparsers(dest="zk_command", required=True, metavar="COMMAND")
    for name, help_text in (("ls", "list the children of a znode"),
                            ("get", "print the data of a znode"),
                            ("stat", "print the stat of a znode")):
        command = commands.add_parser(name, help=help_text, description=help_text)
        command.add_argument("path", type=znode_path)
    tree = commands.add_parser("tree", help="print a znode and all below it, with their data",
                               description="print a znode and all below it, with their data")
    tree.add_argument("path", type=znode_path, nargs="?", default="/")


def run(args: argparse.Namespace) -> int:
    # kazoo logs every failed connection attempt; the outcome is reported here instead
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)
    client = KazooClient(args.server, timeout=max(args.timeout_ms, 1000) / 1000,
                         connection_retry={"max_tries": -1, "delay": 0.1, "max_delay": 1.0})
    try:
        with warnings.catch_warnings():  # a missing chroot shows as a missing node below
            warnings.simplefilter("ignore")
            client.start(timeout=args.timeout_ms / 1000)
    except KazooTimeoutError:
        client.close()
        raise ToolError(f"could not connect to ZooKeeper at {args.server} within "
                        f"{args.timeout_ms} ms; is it running?") from None
    try:
        for line in COMMANDS[args.zk_command](client, args.path):
            print(line)
    except NoNodeError:
        chroot = parse_connect_string(args.server).chroot
        raise ToolError(f"Node does not exist: {args.path}"
                        + (f" (in chroot {chroot})" if chroot else "")) from None
    except KazooException as exc:
        raise ToolError(f"ZooKeeper failed {args.zk_command} {args.path}: "
                        f"{type(exc).__name__} {exc}") from None
    finally:
        client.stop()
        client.close()
    return 0


# -- commands -------------------------------------------------------------------------------------


def ls(client: KazooClient, path: str) -> Iterator[str]:
    yield "[" + ", ".join(sorted(client.get_children(path))) + "]"


def get(client: KazooClient, path: str) -> Iterator[str]:
    data, _ = client.get(path)
    yield "null" if data is None else data.decode("utf-8", errors="backslashreplace")


def stat(client: KazooClient, path: str) -> Iterator[str]:
    found = client.exists(path)
    if found is None:
        raise NoNodeError(path)
    yield from stat_lines(found)


def stat_lines(s: ZnodeStat) -> list[str]:
    """ZooKeeper's shell layout of a stat (times in local time, as Java's ``Date``)."""
    return [f"cZxid = {s.czxid:#x}", f"ctime = {_java_date(s.ctime)}",
            f"mZxid = {s.mzxid:#x}", f"mtime = {_java_date(s.mtime)}",
            f"pZxid = {s.pzxid:#x}", f"cversion = {s.cversion}",
            f"dataVersion = {s.version}", f"aclVersion = {s.aversion}",
            f"ephemeralOwner = {s.ephemeralOwner:#x}", f"dataLength = {s.dataLength}",
            f"numChildren = {s.numChildren}"]


def _java_date(ms: int) -> str:
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(ms / 1000))


def tree(client: KazooClient, path: str) -> Iterator[str]:
    yield from _subtree(client, path, path, 0)


def _subtree(client: KazooClient, path: str, label: str, depth: int) -> Iterator[str]:
    data, node = client.get(path)
    line = INDENT * depth + label
    if node.ephemeralOwner:
        line += " (ephemeral)"
    if data:
        line += " = " + summary(data)
    yield line
    for child in sorted(client.get_children(path), key=natural_order):
        try:
            yield from _subtree(client, path.rstrip("/") + "/" + child, child, depth + 1)
        except NoNodeError:
            continue  # gone since it was listed (an ephemeral node, a deleted topic)


def natural_order(name: str) -> tuple:
    """Numbers (broker ids, partitions) in numeric order, before other names.

    >>> sorted(["10", "topics", "2", "1"], key=natural_order)
    ['1', '2', '10', 'topics']
    """
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def summary(data: bytes, width: int = SUMMARY_WIDTH) -> str:
    """Data on one line: text (JSON included) cut to ``width`` characters, else its size.

    >>> summary(b'{"version":1,"brokerid":1}')
    '{"version":1,"brokerid":1}'
    >>> summary(bytes(range(200, 210)))
    '<10 bytes>'
    >>> summary(b"x" * 120, width=10)
    'xxxxxxx...'
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"<{len(data)} bytes>"
    if not text.isprintable():
        text = " ".join(text.split())  # newlines and tabs, as in a properties file
        if not text.isprintable():
            return f"<{len(data)} bytes>"
    return text if len(text) <= width else text[:width - 3] + "..."


COMMANDS = {"ls": ls, "get": get, "stat": stat, "tree": tree}
