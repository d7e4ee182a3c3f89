"""The ``broker-lite`` tools, named and shaped like Kafka's bin/ scripts.

Each tool is a module with ``NAME`` (the sub-command), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status); :data:`NAMES` lists them in
the order ``--help`` shows them. Every tool follows the same contract (see
:mod:`broker_lite.tools.common`): results on stdout, diagnostics on stderr as
``broker-lite <tool>: error: ...``, exit status 0 on success, 1 when the work failed (an unknown
topic, a broker that cannot be reached), 2 for a usage error.

A tool's module is imported when the tool runs (:func:`load`), not with this package: the
tools between them import the client, ZooKeeper's, the log's and pyarrow, and a command that
runs one of them, or a broker (``broker-lite start``), starts in a fraction of the time it
would take to import them all. :data:`TOOLS` (every module, in that order) imports them all.
"""

import importlib
from types import ModuleType

NAMES = (
    "topics",
    "configs",
    "acls",
    "delete-records",
    "leader-election",
    "reassign-partitions",
    "consumer-groups",
    "share-groups",
    "zookeeper-shell",
    "console-producer",
    "console-consumer",
    "schemas",
    "dump-log",
    "producer-perf-test",
    "consumer-perf-test",
    "metrics",
)


def load(name: str) -> ModuleType:
    """The module of the tool named ``name`` (one of :data:`NAMES`): ``console-consumer`` is
    :mod:`broker_lite.tools.console_consumer`."""
    if name not in NAMES:
        raise ValueError(f"no broker-lite tool named {name!r}")
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")


def __getattr__(attribute: str) -> tuple[ModuleType, ...]:
    if attribute == "TOOLS":
        return tuple(load(name) for name in NAMES)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
