"""The ``broker-lite`` tools, named and shaped like Kafka's bin/ scripts.

Each tool is a module with ``NAME`` (the sub-command), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status); :data:`TOOLS` lists them in
the order ``--help`` shows them. Every tool follows the same contract (see
:mod:`broker_lite.tools.common`): results on stdout, diagnostics on stderr as
``broker-lite <tool>: error: ...``, exit status 0 on success, 1 when the work failed (an unknown
topic, a broker that cannot be reached), 2 for a usage error.
"""

from . import (
    acls,
    configs,
    console_consumer,
    console_producer,
    consumer_groups,
    consumer_perf_test,
    delete_records,
    dump_log,
    leader_election,
    metrics,
    producer_perf_test,
    reassign_partitions,
    schemas,
    share_groups,
    topics,
    zookeeper_shell,
)

TOOLS = (
    topics,
    configs,
    acls,
    delete_records,
    leader_election,
    reassign_partitions,
    consumer_groups,
    share_groups,
    zookeeper_shell,
    console_producer,
    console_consumer,
    schemas,
    dump_log,
    producer_perf_test,
    consumer_perf_test,
    metrics,
)
