"""The one place the source makes Kafka clients from its options, and retries the driver's offset
lookups as Spark's Kafka source does.

Executors read ranges with a client whose ``request.timeout.ms`` is ``kafkaConsumer.pollTimeoutMs``
when that is given: the longest a task waits for a fetch to bring the records of its range (a
broker that answers nothing, or nothing below the end of its log) before the read fails, which
is what Spark's poll timeout bounds.

The driver's lookups of offsets and partitions are tried up to ``fetchOffset.numRetries`` times
(3 by default), ``fetchOffset.retryIntervalMs`` apart (1000 ms) with a new client each time, as
Spark's ``KafkaOffsetReader`` retries its own (each attempt already retries within the client's
``request.timeout.ms``). Mistakes in the options are not retried.
"""

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from time import sleep
from typing import TypeVar

from broker_lite.client import KafkaClient, shared_client
from broker_lite.client.errors import ConfigError, InvalidArgumentError, KafkaClientError
from broker_lite.common.vocabulary import INT32_MAX

from .options import SourceOptions

logger = logging.getLogger(__name__)

T = TypeVar("T")

# A task reads one partition range from start to end, so it fetches in bigger steps than a
# consumer's default (1 MiB) unless told otherwise: fewer round trips, larger Arrow batches.
READ_DEFAULTS = {"max.partition.fetch.bytes": str(8 * 1024 * 1024)}


def open_client(options: SourceOptions) -> KafkaClient:
    """A client with the query's ``kafka.*`` settings, for the driver; close it (or use
    ``with``)."""
    return KafkaClient(client_settings(options))


def lease_client(options: SourceOptions, *, reading: bool = False
                 ) -> AbstractContextManager[KafkaClient]:
    """A client with the query's ``kafka.*`` settings over the connections this process keeps
    between tasks and micro-batches (:mod:`broker_lite.client.shared`: Spark reuses its Python
    workers), for a ``with`` block; ``reading`` for an executor's reads (see
    :func:`client_settings`)."""
    return shared_client(client_settings(options, reading=reading))


def client_settings(options: SourceOptions, *, reading: bool = False) -> dict:
    """The client settings of a query: its ``kafka.*`` settings over :data:`READ_DEFAULTS`. For
    an executor's reads (``reading``), ``kafkaConsumer.pollTimeoutMs``, when given, bounds how
    long the client waits for records."""
    settings = {**READ_DEFAULTS, **options.client}
    if reading and options.poll_timeout_ms is not None:
        settings["request.timeout.ms"] = str(min(options.poll_timeout_ms, INT32_MAX))
    return settings


def with_offset_retries(options: SourceOptions, lookup: Callable[[], T],
                        reset: Callable[[], None] | None = None) -> T:
    """``lookup()``, tried up to ``fetchOffset.numRetries`` times; after a failed attempt,
    ``fetchOffset.retryIntervalMs`` of sleep and ``reset()`` (which drops a client kept across
    calls, so that the next attempt makes a new one). The last attempt's error is raised."""
    attempts = options.fetch_offset_attempts
    for attempt in range(1, attempts + 1):
        try:
            return lookup()
        except (ConfigError, InvalidArgumentError):
            raise
        except KafkaClientError as exc:
            if attempt == attempts:
                raise
            logger.warning("attempt %d of %d at getting Kafka offsets failed, retrying in %d ms: "
                           "%s", attempt, attempts, options.fetch_offset_retry_interval_ms, exc)
            sleep(options.fetch_offset_retry_interval_ms / 1000)
            if reset is not None:
                reset()
    raise AssertionError("unreachable: fetchOffset.numRetries is at least 1")
