"""The one place the source makes Kafka clients from its options."""

from contextlib import AbstractContextManager

from broker_lite.client import KafkaClient, shared_client
from kspark.options import SourceOptions

# A task reads one partition range from start to end, so it fetches in bigger steps than a
# consumer's default (1 MiB) unless told otherwise: fewer round trips, larger Arrow batches.
READ_DEFAULTS = {"max.partition.fetch.bytes": str(8 * 1024 * 1024)}


def open_client(options: SourceOptions) -> KafkaClient:
    """A client with the query's ``kafka.*`` settings; close it (or use ``with``)."""
    return KafkaClient(client_settings(options))


def lease_client(options: SourceOptions) -> AbstractContextManager[KafkaClient]:
    """A client with the query's ``kafka.*`` settings over the connections this process keeps
    between tasks and micro-batches (:mod:`broker_lite.client.shared`: Spark reuses its Python
    workers), for a ``with`` block."""
    return shared_client(client_settings(options))


def client_settings(options: SourceOptions) -> dict:
    return {**READ_DEFAULTS, **options.client}
