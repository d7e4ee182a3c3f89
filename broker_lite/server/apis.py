"""The APIs this broker serves, with the versions it serves and advertises: every version a
Kafka 3.9 broker in ZooKeeper mode serves, from version 0 (the versions Kafka 4 dropped,
KIP-896, included: Produce v0-v2 and Fetch v0-v3 with message formats v0/v1, ListOffsets v0,
OffsetCommit v0 and OffsetFetch v0 with offsets in ZooKeeper), up to the newest Kafka 3.9
serves, and ApiVersions v4 and FindCoordinator v5-v6 (Kafka 4's); with ``group.share.enable``
the share-group APIs at Kafka 4.2's versions (KIP-932). Not served:

- ListOffsets v9 (the last tiered offset, KIP-1005: no tiered storage here).

Beside them, the consumer group protocol of Kafka 4 (KIP-848): ConsumerGroupHeartbeat v0-1 and
ConsumerGroupDescribe v0-1, the versions Kafka 4.2 serves.
"""

from broker_lite.protocol import ApiKey

from .dispatcher import ApiHandler
from .handlers import (
    acls,
    api_versions,
    cluster,
    configs,
    consumer_groups,
    controller,
    coordinator,
    delete_records,
    fetch,
    group_offsets,
    groups,
    leader_epoch,
    list_offsets,
    metadata,
    produce,
    producer_ids,
    producers,
    sasl,
    scram_credentials,
    share_fetch,
    share_groups,
    share_offsets,
    share_state,
    topics,
    transactions,
)


def handlers(*, share_groups: bool = False) -> dict[ApiKey, ApiHandler]:
    """The handler table; ``share_groups`` (``group.share.enable``) adds the share-group APIs
    of Kafka 4.2 (KIP-932)."""
    return {
        ApiKey.PRODUCE: ApiHandler(0, 11, produce.handle, produce.handle_run,
                                   produce.run_key),
        ApiKey.FETCH: ApiHandler(0, 17, fetch.handle),
        ApiKey.LIST_OFFSETS: ApiHandler(0, 8, list_offsets.handle),
        ApiKey.METADATA: ApiHandler(0, 12, metadata.handle),
        ApiKey.API_VERSIONS: ApiHandler(0, 4, api_versions.handle),
        ApiKey.FIND_COORDINATOR: ApiHandler(0, 6, coordinator.find_coordinator),
        ApiKey.OFFSET_COMMIT: ApiHandler(0, 9, group_offsets.offset_commit),
        ApiKey.OFFSET_FETCH: ApiHandler(0, 9, group_offsets.offset_fetch),
        ApiKey.OFFSET_DELETE: ApiHandler(0, 0, group_offsets.offset_delete),
        ApiKey.JOIN_GROUP: ApiHandler(0, 9, groups.join_group),
        ApiKey.HEARTBEAT: ApiHandler(0, 4, groups.heartbeat),
        ApiKey.LEAVE_GROUP: ApiHandler(0, 5, groups.leave_group),
        ApiKey.SYNC_GROUP: ApiHandler(0, 5, groups.sync_group),
        ApiKey.DESCRIBE_GROUPS: ApiHandler(0, 5, groups.describe_groups),
        ApiKey.LIST_GROUPS: ApiHandler(0, 5, groups.list_groups),
        ApiKey.DELETE_GROUPS: ApiHandler(0, 2, groups.delete_groups),
        ApiKey.CREATE_TOPICS: ApiHandler(0, 7, topics.create_topics),
        ApiKey.DELETE_TOPICS: ApiHandler(0, 6, topics.delete_topics),
        ApiKey.DELETE_RECORDS: ApiHandler(0, 2, delete_records.handle),
        ApiKey.CREATE_PARTITIONS: ApiHandler(0, 3, topics.create_partitions),
        ApiKey.DESCRIBE_CONFIGS: ApiHandler(0, 4, configs.describe_configs),
        ApiKey.ALTER_CONFIGS: ApiHandler(0, 2, configs.alter_configs),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: ApiHandler(0, 1, configs.incremental_alter_configs),
        ApiKey.DESCRIBE_CLUSTER: ApiHandler(0, 1, cluster.describe_cluster),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: ApiHandler(0, 4, leader_epoch.handle),
        ApiKey.INIT_PRODUCER_ID: ApiHandler(0, 5, producer_ids.init_producer_id),
        ApiKey.DESCRIBE_PRODUCERS: ApiHandler(0, 0, producers.describe_producers),
        ApiKey.ADD_PARTITIONS_TO_TXN: ApiHandler(0, 5, transactions.add_partitions_to_txn),
        ApiKey.ADD_OFFSETS_TO_TXN: ApiHandler(0, 4, transactions.add_offsets_to_txn),
        ApiKey.END_TXN: ApiHandler(0, 4, transactions.end_txn),
        ApiKey.WRITE_TXN_MARKERS: ApiHandler(0, 1, transactions.write_txn_markers),
        ApiKey.TXN_OFFSET_COMMIT: ApiHandler(0, 4, transactions.txn_offset_commit),
        ApiKey.LIST_TRANSACTIONS: ApiHandler(0, 1, transactions.list_transactions),
        ApiKey.DESCRIBE_TRANSACTIONS: ApiHandler(0, 0, transactions.describe_transactions),
        ApiKey.DESCRIBE_ACLS: ApiHandler(0, 3, acls.describe_acls),
        ApiKey.CREATE_ACLS: ApiHandler(0, 3, acls.create_acls),
        ApiKey.DELETE_ACLS: ApiHandler(0, 3, acls.delete_acls),
        ApiKey.CONTROLLED_SHUTDOWN: ApiHandler(0, 3, controller.controlled_shutdown),
        ApiKey.ELECT_LEADERS: ApiHandler(0, 2, controller.elect_leaders),
        ApiKey.ALTER_PARTITION_REASSIGNMENTS: ApiHandler(
            0, 0, controller.alter_partition_reassignments),
        ApiKey.LIST_PARTITION_REASSIGNMENTS: ApiHandler(
            0, 0, controller.list_partition_reassignments),
        ApiKey.SASL_HANDSHAKE: ApiHandler(0, 1, sasl.sasl_handshake),
        ApiKey.SASL_AUTHENTICATE: ApiHandler(0, 2, sasl.sasl_authenticate),
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: ApiHandler(
            0, 0, scram_credentials.describe_user_scram_credentials),
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: ApiHandler(
            0, 0, scram_credentials.alter_user_scram_credentials),
        # the consumer group protocol (KIP-848), at Kafka 4.2's versions
        ApiKey.CONSUMER_GROUP_HEARTBEAT: ApiHandler(
            0, 1, consumer_groups.consumer_group_heartbeat),
        ApiKey.CONSUMER_GROUP_DESCRIBE: ApiHandler(
            0, 1, consumer_groups.consumer_group_describe),
        **(SHARE_GROUP_HANDLERS if share_groups else {}),
    }


# Share groups (KIP-932) at Kafka 4.2's versions.
SHARE_GROUP_HANDLERS = {
    ApiKey.SHARE_GROUP_HEARTBEAT: ApiHandler(1, 1, share_groups.share_group_heartbeat),
    ApiKey.SHARE_GROUP_DESCRIBE: ApiHandler(1, 1, share_groups.share_group_describe),
    ApiKey.SHARE_FETCH: ApiHandler(1, 2, share_fetch.share_fetch),
    ApiKey.SHARE_ACKNOWLEDGE: ApiHandler(1, 2, share_fetch.share_acknowledge),
    ApiKey.INITIALIZE_SHARE_GROUP_STATE: ApiHandler(0, 0,
                                                    share_state.initialize_share_group_state),
    ApiKey.READ_SHARE_GROUP_STATE: ApiHandler(0, 0, share_state.read_share_group_state),
    ApiKey.WRITE_SHARE_GROUP_STATE: ApiHandler(0, 0, share_state.write_share_group_state),
    ApiKey.DELETE_SHARE_GROUP_STATE: ApiHandler(0, 0, share_state.delete_share_group_state),
    ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: ApiHandler(
        0, 0, share_state.read_share_group_state_summary),
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS: ApiHandler(
        0, 0, share_offsets.describe_share_group_offsets),
    ApiKey.ALTER_SHARE_GROUP_OFFSETS: ApiHandler(0, 0, share_offsets.alter_share_group_offsets),
    ApiKey.DELETE_SHARE_GROUP_OFFSETS: ApiHandler(0, 0,
                                                  share_offsets.delete_share_group_offsets),
}
