"""The APIs this broker serves, with the versions it advertises (Kafka 3.9's unless noted).

Produce is advertised from version 0 although only 3 and later (record batches) are accepted on
the wire: librdkafka stops compressing when a broker's advertised minimum is above 0.
"""

from broker_lite.protocol import ApiKey

from .dispatcher import ApiHandler
from .handlers import (
    api_versions,
    cluster,
    configs,
    coordinator,
    fetch,
    leader_epoch,
    list_offsets,
    metadata,
    produce,
    topics,
)
from .network import CloseConnection


def _produce(context, body):
    if context.version < 3:
        raise CloseConnection("Produce before version 3 (message sets) is not accepted")
    return produce.handle(context, body)


def handlers() -> dict[ApiKey, ApiHandler]:
    return {
        ApiKey.PRODUCE: ApiHandler(0, 11, _produce),
        ApiKey.FETCH: ApiHandler(4, 17, fetch.handle),
        ApiKey.LIST_OFFSETS: ApiHandler(1, 8, list_offsets.handle),
        ApiKey.METADATA: ApiHandler(0, 12, metadata.handle),
        ApiKey.API_VERSIONS: ApiHandler(0, 3, api_versions.handle),
        ApiKey.FIND_COORDINATOR: ApiHandler(0, 4, coordinator.find_coordinator),
        ApiKey.CREATE_TOPICS: ApiHandler(2, 7, topics.create_topics),
        ApiKey.DELETE_TOPICS: ApiHandler(1, 6, topics.delete_topics),
        ApiKey.CREATE_PARTITIONS: ApiHandler(0, 3, topics.create_partitions),
        ApiKey.DESCRIBE_CONFIGS: ApiHandler(1, 4, configs.describe_configs),
        ApiKey.ALTER_CONFIGS: ApiHandler(0, 2, configs.alter_configs),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: ApiHandler(0, 1, configs.incremental_alter_configs),
        ApiKey.DESCRIBE_CLUSTER: ApiHandler(0, 1, cluster.describe_cluster),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: ApiHandler(2, 4, leader_epoch.handle),
    }
